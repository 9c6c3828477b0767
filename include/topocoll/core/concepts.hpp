#pragma once
// The concepts every layer agrees on. A transport is anything with rank(),
// size() and typed point-to-point calls on contiguous buffers; the library's
// own transports (loopback, mpi) and decorators (model::Counting) model it, and
// so can a user's.

#include <concepts>
#include <cstddef>
#include <ranges>
#include <span>
#include <type_traits>

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {
// A probe element type: a transport must move any trivially copyable T, so it
// is checked with one the library cannot have special-cased.
struct transport_probe {
  double x;
  int y;
};
}  // namespace detail

template <class C>
concept Transport = requires(C& c, const C& cc, int peer, int tag,
                             std::span<const detail::transport_probe> out,
                             std::span<detail::transport_probe> in) {
  { cc.rank() } -> std::convertible_to<int>;
  { cc.size() } -> std::convertible_to<int>;
  c.send(peer, tag, out);
  c.recv(peer, tag, in);
  c.sendrecv(peer, out, peer, in, tag);
};

// A transport that forms sub-communicators: c.split(color, key) returns a
// communicator of its own type over the ranks that pass the same color,
// ranked by key (loopback::Comm, mpi::Comm; MPI_Comm_split's meaning).
template <class C>
concept SplittableTransport = Transport<C> && requires(C& c, int color, int key) {
  { c.split(color, key) } -> std::same_as<C>;
};

// An operator usable in a reduction over T: T op(const T&, const T&).
template <class Op, class T>
concept ReductionOp = std::copy_constructible<std::remove_cvref_t<Op>> &&
    requires(const Op& op, const T& a, const T& b) {
  { op(a, b) } -> std::convertible_to<T>;
};

// A buffer a collective reads: a contiguous sized range (std::span,
// std::vector, std::array, ...).
template <class R>
concept InputBuffer = std::ranges::contiguous_range<R> && std::ranges::sized_range<R>;

// A buffer a collective writes: contiguous, sized, not const, and not a
// temporary container whose contents would be lost.
template <class R>
concept OutputBuffer = InputBuffer<R> && std::ranges::borrowed_range<R> &&
    !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

template <class R>
using buffer_value_t = std::remove_cv_t<std::ranges::range_value_t<R>>;

// A collective's input and output buffers, of one element type.
template <class In, class Out>
concept BufferPair =
    InputBuffer<In> && OutputBuffer<Out> && std::same_as<buffer_value_t<In>, buffer_value_t<Out>>;

// ... and an operator that reduces that element type.
template <class In, class Out, class Op>
concept ReductionBuffers = BufferPair<In, Out> && ReductionOp<Op, buffer_value_t<Out>>;

namespace detail {
template <InputBuffer R>
std::span<const buffer_value_t<R>> in_span(R&& r) {
  return {std::ranges::data(r), std::ranges::size(r)};
}
template <OutputBuffer R>
std::span<buffer_value_t<R>> out_span(R&& r) {
  return {std::ranges::data(r), std::ranges::size(r)};
}

// A collective's input and output (they may be the same elements where the
// collective allows in-place use).
template <class T>
struct in_out {
  std::span<const T> in;
  std::span<T> out;
};
// in_out{in, out} names T where a compiler does not deduce an aggregate's
// arguments (Clang before 17).
template <class T>
in_out(std::span<const T>, std::span<T>) -> in_out<T>;
}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
