#pragma once
// topocoll::all_reduce: every rank gets the reduction of all ranks' inputs.
//
//   topocoll::all_reduce<topocoll::Hypercube<>>(comm, std::span<const T>(in),
//                                              std::span<T>(out), op);
//
// in, out: m elements (out may be in itself, MPI_IN_PLACE); out[i] = in_0[i] op
// in_1[i] op ... op in_{p-1}[i] in rank order, on every rank. Algorithms
// (options::algo; kernels/all_reduce.hpp):
//   recursive_doubling         the all-to-all broadcast pattern with a message of
//                              constant size (the lecture's "all-reduce"): per
//                              dimension, the partners' totals are combined in
//                              coordinate order. Hypercube: (t_s + t_w m) log p;
//                              ring/mesh: sum_j (s_j - 1)(t_s + t_w m).
//   reduce_scatter_all_gather  bandwidth-optimal ("Improving the speed"): the
//                              all-to-all reduction of m split into p nearly equal
//                              pieces, then the all-to-all broadcast of the pieces.
//                              Hypercube: 2 t_s log p + 2 t_w m (p - 1) / p.
//   reduce_broadcast, tree     reduce to rank 0 along the k-nomial tree (binomial
//                              unless Topo is Tree<K>), broadcast back:
//                              2 (t_s + t_w m) log_K p rounds.
// automatic picks the cheapest under options::cost: t_s + t_w m per message
// (m sizeof(T) bytes) and t_c m per combine, so recursive doubling's log p
// combines of the whole message count against the pieces' (p - 1) / p. On
// Tree<K> the first two run per digit and need complete digit groups, p = r K^j
// with r <= K (Tree<K>'s last digit has radix r); otherwise Tree<K> runs the tree.
// A hypercube p that is no power of two folds into 2^floor(log p) ranks first
// and unfolds at the end. Every algorithm keeps rank order, so each is
// available for non-commutative operators too.

#include "../kernels/all_reduce.hpp"
#include "../plan/all_reduce.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// The algorithm an all_reduce of m elements of T runs over l: the forced one,
// or automatic's (plan::all_reduce::choose); chosen at every call, or once at init
// (persistent.hpp).
template <Topology Topo, class T, class Op>
algorithm all_reduce_choice(const layout& l, std::size_t m, const options& opt) {
  return plan::all_reduce::choose<Topo, T, Op>(l, m, opt);
}

// all_reduce's checks (stage::check), the whole call (stage::run), or the call
// without its checks (stage::started), at a persistent request's start with the
// layout and the algorithm fixed at init (planned_start).
template <Topology Topo, Transport C, class In, class Out, class Op, collective_stage Stage>
[[gnu::always_inline]] inline void checked_all_reduce(C& c, In&& input, Out&& output, Op op,
                                                      const options& opt, Stage s) {
  const auto [call, in, out] = open_call<Topo>("all_reduce", c, input, output);
  const collective_scope scope(c, call.info(in, opt.algo), s);
  if (scope.checking()) {
    call.cost(opt.cost);
    call.size("out (in.size())", out.size(), in.size());
    check_algorithm<Topo>(call, opt.algo);
    call.in_place(in, out, 0);
  }
  if (!scope.proceed()) return;
  if (call.nothing_to_do(in, out)) return;
  const layout& l = laid_out<Topo>(s, call.p());
  using T = buffer_value_t<Out>;
  const algorithm a = call.template chosen<Topo>(
      s, l, in.size(), sizeof(T), opt,
      [](const layout& at, std::size_t m, const options& o)
          __attribute__((always_inline)) { return all_reduce_choice<Topo, T, Op>(at, m, o); });
  all_reduce::all_reduce<kernel_topology<Topo>>(c, l, in, out, op, a, opt.cost);
}

}  // namespace detail

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op>
void all_reduce(C& c, In&& input, Out&& output, Op op,
                const options& opt = detail::default_options) {
  detail::checked_all_reduce<Topo>(c, input, output, op, opt, detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
