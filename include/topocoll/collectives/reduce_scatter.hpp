#pragma once
// topocoll::reduce_scatter: all-to-all reduction (every rank the root of one
// all-to-one reduction), the dual of all_gather.
//
//   topocoll::reduce_scatter<topocoll::Ring>(comm, std::span<const T>(in), std::span<T>(out), op);
//
// in: p*m elements on every rank, block j destined for rank j; out: m elements
// (it may be in's first block, MPI_IN_PLACE), out[i] = in_0[r*m + i] op
// in_1[r*m + i] op ... op in_{p-1}[r*m + i], rank order.
//   Ring       Algorithm 4.5 (p - 1 steps of t_s + t_w m) for a commutative
//              operator; otherwise the order-keeping linear-array variant (the
//              partial for rank d built from both ends, same words, up to two
//              messages per step).
//   Mesh<K>    the reverse of the mesh all-gather (Problem 4.4): one such ring
//              reduction per dimension, with the consolidated message.
//   Hypercube  Algorithm 4.8: messages p m / 2, p m / 4, ..., m; a p that is no
//              power of two folds into 2^floor(log p) ranks first.
//   Tree<K>    p = r K^j, r <= K: the reverse of all_gather's recursive
//              multiplying; otherwise reduce to rank 0 along the k-nomial
//              tree, scatter.
// With a non-commutative operator the dimensions are walked low to high, so
// every partial covers a contiguous range of ranks, with the blocks laid out
// digit-reversed (kernels/all_to_all_broadcast.hpp).
// options::algo: algorithm::fold (the above), algorithm::tree (reduce to rank
// 0 along the k-nomial tree of any topology, then scatter), or automatic: the
// one the cost model prices lower.

#include "../kernels/all_to_all_broadcast.hpp"
#include "../plan/all_to_all_broadcast.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// The algorithm a reduce_scatter of blocks of m elements of T runs over l:
// the forced one, or automatic's; chosen at every call, or once at init
// (persistent.hpp).
template <Topology Topo, class T, class Op>
algorithm reduce_scatter_choice(const layout& l, std::size_t m, const options& opt) {
  return plan::all_to_all_broadcast::choose_reduce_scatter<Topo, T, Op>(l, m, opt);
}

// reduce_scatter's checks (stage::check), the whole call (stage::run), or the call
// without its checks (stage::started), at a persistent request's start with the
// layout and the algorithm fixed at init (planned_start).
template <Topology Topo, Transport C, class In, class Out, class Op, collective_stage Stage>
[[gnu::always_inline]] inline void checked_reduce_scatter(C& c, In&& input, Out&& output, Op op,
                                                          const options& opt, Stage s) {
  const auto [call, in, out] = open_call<Topo>("reduce_scatter", c, input, output);
  const collective_scope scope(c, call.info(out, opt.algo), s);
  if (scope.checking()) {
    call.cost(opt.cost);
    call.size("in (p * out.size())", in.size(), static_cast<std::size_t>(call.p()) * out.size());
    check_algorithm<Topo>(call, opt.algo);
    call.in_place(in, out, 0);
  }
  if (!scope.proceed()) return;
  if (out.empty()) return;
  if (call.p() == 1) return copy_to(in, out);
  const layout& l = laid_out<Topo>(s, call.p());
  using T = buffer_value_t<Out>;
  const algorithm a = call.template chosen<Topo>(
      s, l, out.size(), sizeof(T), opt,
      [](const layout& at, std::size_t m, const options& o)
          __attribute__((always_inline)) { return reduce_scatter_choice<Topo, T, Op>(at, m, o); });
  all_to_all_broadcast::reduce_scatter<kernel_topology<Topo>>(c, l, in, out, op, a, opt.cost);
}

}  // namespace detail

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op>
void reduce_scatter(C& c, In&& input, Out&& output, Op op,
                    const options& opt = detail::default_options) {
  detail::checked_reduce_scatter<Topo>(c, input, output, op, opt, detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
