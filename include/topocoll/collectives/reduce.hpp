#pragma once
// topocoll::reduce: all-to-one reduction.
//
//   topocoll::reduce<topocoll::Tree<4>>(comm, std::span<const T>(in), std::span<T>(out), op, root);
//
// in: m elements on every rank; out: m elements at the root, where out[i] =
// in_0[i] op in_1[i] op ... op in_{p-1}[i] in rank order (out may be empty, and
// is untouched, elsewhere; at the root it may be in itself). Algorithm 4.3:
// the broadcast tree walked backwards, dimensions low to high, t_s + t_w m per
// step (log p steps on a hypercube); rank order as kernels/one_to_all.hpp's
// tree_reduce explains.
//
// On a Ring or a Mesh<K>, algorithm::pipelined (chosen by automatic for large
// m) is the dual of the pipelined broadcast: r segments of partials stream
// towards the root, (p - 2 + r)(t_s + t_w m / r) plus the combining on a ring;
// on a mesh along every row, then up the column. A non-commutative operator
// runs towards rank 0, which forwards the result to another root.
//
// algorithm::reduce_scatter_gather (chosen by automatic where the model prices
// it below both: large m) is the dual of broadcast's scatter_all_gather: the
// all-to-all reduction of m in p pieces, then the gather of the pieces at the
// root, 2 (t_s log p + t_w m (p - 1) / p) on a hypercube, in rank order for
// every associative operator (kernels/one_to_all_pieces.hpp).
//
// algorithm::naive (forced; any topology, never chosen by automatic) is the
// naive broadcast's mirror: every rank sends its input straight to the root,
// which combines the p - 1 in rank order (at rank 0, which forwards the
// result, for a non-commutative operator and another root).

#include "../kernels/one_to_all.hpp"
#include "../kernels/one_to_all_pieces.hpp"
#include "../plan/one_to_all_pieces.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// The algorithm a reduction of m elements of T to root runs over l: the
// forced one, or automatic's: the pieces, the pipeline or the tree, whichever
// the cost model prices lowest; chosen at every call, or once at init
// (persistent.hpp).
template <Topology Topo, class T, class Op>
algorithm reduce_choice(const layout& l, std::size_t m, int root, const options& opt) {
  return plan::one_to_all_pieces::choose<Topo, T>(
      l, m, root, all_to_all_broadcast::rs_messages_for<Topo, T, Op>(),
      algorithm::reduce_scatter_gather, opt);
}

// reduce's checks (stage::check), the whole call (stage::run), or the call
// without its checks (stage::started), at a persistent request's start with the
// layout and the algorithm fixed at init (planned_start).
template <Topology Topo, Transport C, class In, class Out, class Op, collective_stage Stage>
[[gnu::always_inline]] inline void checked_reduce(C& c, In&& input, Out&& output, Op op, int root,
                                                  const options& opt, Stage s) {
  const auto [call, in, out] = open_call<Topo>("reduce", c, input, output);
  const collective_scope scope(c, call.info(in, opt.algo, root), s);
  if (scope.checking()) {
    call.cost(opt.cost);
    call.root_buffer(root, "out", "in.size()", out.size(), in.size());
    check_algorithm<Topo>(call, opt.algo);
    // Only the root uses out (MPI ignores it elsewhere): on another rank it may
    // overlap in in any way.
    if (call.rank() == root) call.in_place(in, out, 0);
  }
  if (!scope.proceed()) return;
  if (call.nothing_to_do(in, out)) return;
  const layout& l = laid_out<Topo>(s, call.p());
  using T = buffer_value_t<Out>;
  const algorithm a = call.template chosen<Topo>(
      s, l, in.size(), sizeof(T), opt,
      [root](const layout& at, std::size_t m, const options& o)
          __attribute__((always_inline)) { return reduce_choice<Topo, T, Op>(at, m, root, o); },
      root);
  if (a == algorithm::reduce_scatter_gather)
    return one_to_all_pieces::reduce_scatter_gather<kernel_topology<Topo>>(c, l, in_out{in, out},
                                                                           op, root);
  one_to_all::reduce<kernel_topology<Topo>>(c, l, in_out{in, out}, op, root, a, opt.cost);
}

}  // namespace detail

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op>
void reduce(C& c, In&& input, Out&& output, Op op, int root,
            const options& opt = detail::default_options) {
  detail::checked_reduce<Topo>(c, input, output, op, root, opt, detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
