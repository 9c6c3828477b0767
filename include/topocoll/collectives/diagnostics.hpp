#pragma once
// Readable errors for the mistakes users make calling a collective. Without
// these, g++ answers a forgotten topology, a const output buffer or an
// operator of the wrong signature with "no matching function" and a page of
// candidates and unsatisfied constraints; with them, its first lines are a
// static_assert that states the rule and the fix (KaMPIng's habit).
//
// Two overloads per collective, each viable exactly when the real one is not,
// so a correct call never sees them and a wrong one gets no ambiguity:
//  - a catch-all without a topology: `template <int = 0, Transport C, ...>`.
//    An explicit type argument (all_reduce<Ring>) cannot bind to the int, so
//    it applies only to calls that forgot the topology;
//  - the real signature with its requires-clause negated; its body checks
//    the clauses one by one, so only the broken rule is reported.
// (A `= delete("reason")` would do this in C++26; the library is C++20.)
//
// Included by <topocoll/collectives.hpp> (and so <topocoll/topocoll.hpp>);
// compile_fail.* in test/CMakeLists.txt holds every message to its words.

#include <concepts>
#include <cstddef>

#include "../core/concepts.hpp"
#include "../core/options.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::diagnose {

template <class...>
inline constexpr bool always_false = false;

// Checked only once both buffers are ranges (each check reports its own rule).
template <class In, class Out>
constexpr bool same_elements() {
  if constexpr (InputBuffer<In> && InputBuffer<Out>) {
    return std::same_as<buffer_value_t<In>, buffer_value_t<Out>>;
  } else {
    return true;
  }
}
template <class Op, class Out>
constexpr bool op_fits() {
  if constexpr (InputBuffer<Out>) {
    return ReductionOp<Op, buffer_value_t<Out>>;
  } else {
    return true;
  }
}

template <class R>
concept count_buffer = InputBuffer<R> && std::same_as<buffer_value_t<R>, std::size_t>;

// The real overloads' requirements, as concepts so that their negation is
// false, not a substitution failure, when a type is no range at all.
template <class C, class In, class Out>
concept pair_call = Transport<C> && BufferPair<In, Out>;
template <class C, class In, class Out, class Op>
concept reduction_call = Transport<C> && ReductionBuffers<In, Out, Op>;
template <class C, class Buf>
concept in_place_call = Transport<C> && OutputBuffer<Buf>;
template <class C, class In, class Counts>
concept v_call = Transport<C> && InputBuffer<In> && count_buffer<Counts>;
template <class C, class In, class SendCounts, class Out, class RecvCounts>
concept v_out_call =
    Transport<C> && BufferPair<In, Out> && count_buffer<SendCounts> && count_buffer<RecvCounts>;

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::diagnose

// static_assert needs a string literal in C++20, so the collective's name is
// pasted in by the preprocessor. #undef'd at the end of this file.
#define TOPOCOLL_NEEDS_TOPOLOGY(name, args)                                                     \
  static_assert(::topocoll::detail::diagnose::always_false<C, Args...>,                         \
                "topocoll::" #name " needs its topology as the first template argument: " #name \
                "<topocoll::Ring>" args " (or Mesh<K>, Hypercube<D>, Tree<K>)")
#define TOPOCOLL_CHECK_TRANSPORT(name)                                      \
  static_assert(::topocoll::Transport<C>,                                   \
                "topocoll::" #name                                          \
                ": c must be a topocoll::Transport (rank(), size(), send, " \
                "recv, sendrecv; core/concepts.hpp), e.g. a topocoll::loopback::Comm&")
#define TOPOCOLL_CHECK_IN(name, arg, R)                                                \
  static_assert(::topocoll::InputBuffer<R>, "topocoll::" #name ": " #arg               \
                                            " must be a contiguous sized range: pass " \
                                            "std::span<const T>, std::vector<T> or "   \
                                            "std::array<T, N>")
#define TOPOCOLL_CHECK_OUT(name, arg, R)                                                 \
  static_assert(::topocoll::OutputBuffer<R>,                                             \
                "topocoll::" #name ": " #arg                                             \
                " is written, so it must be a writable "                                 \
                "contiguous range: pass std::span<T> or a non-const std::vector<T>& or " \
                "std::array<T, N>&, not std::span<const T>, a const container or a temporary")
#define TOPOCOLL_CHECK_SAME(name, In, Out)                              \
  static_assert(::topocoll::detail::diagnose::same_elements<In, Out>(), \
                "topocoll::" #name ": in and out must hold the same element type T")
#define TOPOCOLL_CHECK_OP(name, Op, Out)                                          \
  static_assert(::topocoll::detail::diagnose::op_fits<Op, Out>(),                 \
                "topocoll::" #name                                                \
                ": op must be callable as T op(const T& a, const T& b) for "      \
                "the buffers' element type T, and copyable: e.g. std::plus<>{}, " \
                "topocoll::ops::max{} or a lambda [](const T& a, const T& b) { return a + b; }")
#define TOPOCOLL_CHECK_COUNTS(name, arg, R)                    \
  static_assert(::topocoll::detail::diagnose::count_buffer<R>, \
                "topocoll::" #name ": " #arg                   \
                " must be a contiguous range of std::size_t, " \
                "e.g. std::vector<std::size_t> or std::span<const std::size_t>")

// in, out: the two-buffer collectives without an operator.
#define TOPOCOLL_DIAGNOSE_PAIR(name, args, ...)                             \
  template <int = 0, ::topocoll::Transport C, class... Args>                \
  void name(C&, Args&&...) {                                                \
    TOPOCOLL_NEEDS_TOPOLOGY(name, args);                                    \
  }                                                                         \
  template <::topocoll::Topology Topo, class C, class In, class Out>        \
  requires(!::topocoll::detail::diagnose::pair_call<C, In, Out>) void name( \
      C&, In&&, Out&&, __VA_ARGS__ const ::topocoll::options& = {}) {       \
    TOPOCOLL_CHECK_TRANSPORT(name);                                         \
    TOPOCOLL_CHECK_IN(name, in, In);                                        \
    TOPOCOLL_CHECK_OUT(name, out, Out);                                     \
    TOPOCOLL_CHECK_SAME(name, In, Out);                                     \
  }

// in, out, op: the reductions.
#define TOPOCOLL_DIAGNOSE_REDUCTION(name, args, ...)                                 \
  template <int = 0, ::topocoll::Transport C, class... Args>                         \
  void name(C&, Args&&...) {                                                         \
    TOPOCOLL_NEEDS_TOPOLOGY(name, args);                                             \
  }                                                                                  \
  template <::topocoll::Topology Topo, class C, class In, class Out, class Op>       \
  requires(!::topocoll::detail::diagnose::reduction_call<C, In, Out, Op>) void name( \
      C&, In&&, Out&&, Op&&, __VA_ARGS__ const ::topocoll::options& = {}) {          \
    TOPOCOLL_CHECK_TRANSPORT(name);                                                  \
    TOPOCOLL_CHECK_IN(name, in, In);                                                 \
    TOPOCOLL_CHECK_OUT(name, out, Out);                                              \
    TOPOCOLL_CHECK_SAME(name, In, Out);                                              \
    TOPOCOLL_CHECK_OP(name, Op, Out);                                                \
  }

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

TOPOCOLL_DIAGNOSE_REDUCTION(reduce, "(c, in, out, op, root)", int, )
TOPOCOLL_DIAGNOSE_REDUCTION(all_reduce, "(c, in, out, op)", )
TOPOCOLL_DIAGNOSE_REDUCTION(reduce_scatter, "(c, in, out, op)", )
TOPOCOLL_DIAGNOSE_REDUCTION(scan, "(c, in, out, op)", )
TOPOCOLL_DIAGNOSE_REDUCTION(exclusive_scan, "(c, in, out, op)", )
TOPOCOLL_DIAGNOSE_PAIR(all_gather, "(c, in, out)", )
TOPOCOLL_DIAGNOSE_PAIR(all_to_all, "(c, in, out)", )
TOPOCOLL_DIAGNOSE_PAIR(scatter, "(c, in, out, root)", int, )
TOPOCOLL_DIAGNOSE_PAIR(gather, "(c, in, out, root)", int, )

// broadcast: one buffer, in place.
template <int = 0, Transport C, class... Args>
void broadcast(C&, Args&&...) {
  TOPOCOLL_NEEDS_TOPOLOGY(broadcast, "(c, buf, root)");
}
template <Topology Topo, class C, class Buf>
requires(!detail::diagnose::in_place_call<C, Buf>) void broadcast(C&, Buf&&, int,
                                                                  const options& = {}) {
  TOPOCOLL_CHECK_TRANSPORT(broadcast);
  TOPOCOLL_CHECK_OUT(broadcast, buf, Buf);
}

// all_to_all_v: the counts, and the overload that returns its result.
template <int = 0, Transport C, class... Args>
void all_to_all_v(C&, Args&&...) {
  TOPOCOLL_NEEDS_TOPOLOGY(all_to_all_v, "(c, in, send_counts)");
}
template <Topology Topo, class C, class In, class Counts>
requires(!detail::diagnose::v_call<C, In, Counts>) void all_to_all_v(C&, In&&, Counts&&,
                                                                     const options& = {}) {
  TOPOCOLL_CHECK_TRANSPORT(all_to_all_v);
  TOPOCOLL_CHECK_IN(all_to_all_v, in, In);
  TOPOCOLL_CHECK_COUNTS(all_to_all_v, send_counts, Counts);
}
template <Topology Topo, class C, class In, class SendCounts, class Out, class RecvCounts>
requires(!detail::diagnose::v_out_call<C, In, SendCounts, Out, RecvCounts>) void all_to_all_v(
    C&, In&&, SendCounts&&, Out&&, RecvCounts&&, const options& = {}) {
  TOPOCOLL_CHECK_TRANSPORT(all_to_all_v);
  TOPOCOLL_CHECK_IN(all_to_all_v, in, In);
  TOPOCOLL_CHECK_COUNTS(all_to_all_v, send_counts, SendCounts);
  TOPOCOLL_CHECK_OUT(all_to_all_v, out, Out);
  TOPOCOLL_CHECK_SAME(all_to_all_v, In, Out);
  TOPOCOLL_CHECK_COUNTS(all_to_all_v, recv_counts, RecvCounts);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE

#undef TOPOCOLL_DIAGNOSE_REDUCTION
#undef TOPOCOLL_DIAGNOSE_PAIR
#undef TOPOCOLL_CHECK_COUNTS
#undef TOPOCOLL_CHECK_OP
#undef TOPOCOLL_CHECK_SAME
#undef TOPOCOLL_CHECK_OUT
#undef TOPOCOLL_CHECK_IN
#undef TOPOCOLL_CHECK_TRANSPORT
#undef TOPOCOLL_NEEDS_TOPOLOGY
