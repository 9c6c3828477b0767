#pragma once
// Elementwise combination and block copies, the only data work the collectives
// do. `lo` always holds the lower ranks' partial: the operand order of the
// seeds' "sum := sum + X" made explicit so non-commutative operators keep rank
// order. Trivially copyable blocks move as raw bytes; an inert type
// (core/inert.hpp) is neither copied nor combined.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include "../version.hpp"
#include "inert.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

// The three shapes of a combine: acc op= x in place, with x on the right or
// on the left, and out = lo op hi into a third buffer.
enum class combine_shape { right, left, into };

template <combine_shape S, class T, class Op>
void combine_loop(std::span<T> out, const T* x, const T* y, const Op& op) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    if constexpr (S == combine_shape::right)
      out[i] = op(std::as_const(out[i]), x[i]);
    else if constexpr (S == combine_shape::left)
      out[i] = op(x[i], std::as_const(out[i]));
    else
      out[i] = op(x[i], y[i]);
  }
}

// Over more than combine_inline_elements the loop runs in a function of its
// own: inlined into a kernel whose other values fill the registers, GCC can
// spill a vector register to the stack inside the vectorized loop, a store
// per iteration; on its own the loop keeps its values in registers.
inline constexpr std::size_t combine_inline_elements = 16;
template <combine_shape S, class T, class Op>
[[gnu::noinline]] void combine_apart(std::span<T> out, const T* x, const T* y, const Op& op) {
  combine_loop<S>(out, x, y, op);
}
template <combine_shape S, class T, class Op>
[[gnu::always_inline]] inline void combine_of(std::span<T> out, const T* x, const T* y,
                                              const Op& op) {
  if constexpr (inert_element<T>) return;
  if (out.size() > combine_inline_elements)
    combine_apart<S>(out, x, y, op);
  else
    combine_loop<S>(out, x, y, op);
}

// acc[i] = acc[i] op x[i]   (acc covers lower ranks than x)
template <class T, class Op>
[[gnu::always_inline]] inline void combine_right(std::span<T> acc, std::span<const T> x,
                                                 const Op& op) {
  combine_of<combine_shape::right>(acc, x.data(), x.data(), op);
}

// acc[i] = x[i] op acc[i]   (x covers lower ranks than acc)
template <class T, class Op>
[[gnu::always_inline]] inline void combine_left(std::span<T> acc, std::span<const T> x,
                                                const Op& op) {
  combine_of<combine_shape::left>(acc, x.data(), x.data(), op);
}

// acc op= x, with x on the left when x_is_lower
template <class T, class Op>
void combine(std::span<T> acc, std::span<const T> x, bool x_is_lower, const Op& op) {
  if (x_is_lower)
    combine_left(acc, x, op);
  else
    combine_right(acc, x, op);
}

// dst[i] = lo[i] op hi[i]: a combination written straight into a third buffer,
// which saves the copy that an in-place combine would need first.
template <class T, class Op>
[[gnu::always_inline]] inline void combine_into(std::span<T> dst, std::span<const T> lo,
                                                std::span<const T> hi, const Op& op) {
  combine_of<combine_shape::into>(dst, lo.data(), hi.data(), op);
}

// to = from (to.size() == from.size()), copying or (move_to) moving; nothing
// when they are the same elements. The two never overlap otherwise (the
// aliasing rule of collectives/arguments.hpp and the kernels' own buffers).
enum class assign_by { copy, move };
template <assign_by K, class T, class U>
void assign_elements(std::span<U> from, std::span<T> to) {
  if (from.data() == to.data() || from.empty()) return;
  if constexpr (copy_counted<T>)
    T::topocoll_copied(from.size());
  else if constexpr (inert_element<T>)
    return;
  else if constexpr (std::is_trivially_copyable_v<T>)
    std::memcpy(to.data(), from.data(), from.size_bytes());
  else if constexpr (K == assign_by::move)
    std::move(from.begin(), from.end(), to.begin());
  else
    std::copy(from.begin(), from.end(), to.begin());
}
template <class T>
void copy_to(std::span<const T> from, std::span<T> to) {
  assign_elements<assign_by::copy>(from, to);
}
template <class T>
void copy_to(std::span<T> from, std::span<T> to) {
  assign_elements<assign_by::copy>(from, to);
}
template <class T>
void move_to(std::span<T> from, std::span<T> to) {
  assign_elements<assign_by::move>(from, to);
}

template <class T>
std::span<const T> cspan(std::span<T> s) {
  return s;
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
