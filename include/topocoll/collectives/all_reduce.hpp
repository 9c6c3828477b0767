#pragma once
// topocoll::all_reduce: every rank gets the reduction of all ranks' inputs.
//
//   topocoll::all_reduce<topocoll::Hypercube<>>(comm, std::span<const T>(in), std::span<T>(out),
//   op);
//
// in, out: m elements; out[i] = in_0[i] op in_1[i] op ... op in_{p-1}[i] in rank
// order, on every rank. Algorithms (options::algo):
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
// automatic picks the cheaper of the first two in the t_s + t_w m model of
// options::cost (message bytes = m sizeof(T)). On Tree<K> the first two run per
// radix-K digit (direct exchanges with the K - 1 other digits) and need p to be
// a power of K; otherwise Tree<K> runs the tree. A hypercube p that is no power of two folds into
// 2^floor(log p) ranks first (the odd rank of each leading pair reduces for
// both) and unfolds at the end. Every algorithm keeps rank order, so each is
// available for non-commutative operators too.

#include <algorithm>
#include <span>
#include <string_view>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/all_to_all_bcast.hpp"
#include "../kernels/prefix.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

namespace detail::a2a {
// The t_s + t_w m model of the two dimension folds of all_reduce over vl.
// A linear dimension's order-keeping reduce-scatter sends up to two messages
// per step.
struct all_reduce_cost {
  double recursive_doubling = 0, reduce_scatter_all_gather = 0;
};
inline all_reduce_cost predict_all_reduce(const layout& vl, std::size_t bytes, bool two_way_rs,
                                          const cost_model& cm) {
  all_reduce_cost t;
  for (int j = 0; j < vl.ndims; ++j) {
    const int steps = vl.dims[j].radix - 1;
    t.recursive_doubling += steps * cm.message(bytes);
    t.reduce_scatter_all_gather +=
        steps * cm.ts_us * (two_way_rs && vl.dims[j].radix > 2 ? 3.0 : 2.0);
  }
  t.reduce_scatter_all_gather +=
      2.0 * cm.tw_us_per_byte * static_cast<double>(bytes) * (vl.p - 1) / static_cast<double>(vl.p);
  return t;
}
}  // namespace detail::a2a

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out, class Op>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    ReductionOp<Op, buffer_value_t<Out>>
void all_reduce(C& c, In&& input, Out&& output, Op op, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  namespace a2a = detail::a2a;
  constexpr std::string_view name = "all_reduce";
  constexpr int tag = detail::tag::all_reduce;
  const std::span<const T> in = detail::in_span(input);
  const std::span<T> out = detail::out_span(output);
  const int rank = c.rank();
  const int p = c.size();
  const layout l = detail::shape_or_throw<Topo>(name, rank, p);
  const std::size_t m = in.size();
  detail::check_size(name, rank, p, "out (in.size())", out.size(), m);
  a2a::check_algorithm(name, rank, p, opt.algo,
                       {algorithm::recursive_doubling, algorithm::reduce_scatter_all_gather,
                        algorithm::reduce_broadcast, algorithm::tree},
                       Topo::name());
  // A k-nomial layout with absent ranks has incomplete digit groups: only the
  // tree applies there.
  const bool tree_only = Topo::kind == dim_kind::knomial && l.extent != p;
  if (tree_only && (opt.algo == algorithm::recursive_doubling ||
                    opt.algo == algorithm::reduce_scatter_all_gather))
    detail::invalid(name, rank, p, "algorithm::", to_string(opt.algo), " on ", Topo::name(),
                    " needs p to be a power of K (complete digit groups), got p = ", p,
                    " (use algorithm::automatic, algorithm::tree or algorithm::reduce_broadcast)");
  if (m == 0) return;
  if (p == 1) return a2a::copy_to(in, out);

  auto tree = [&](const layout& tl) {
    a2a::copy_to(in, out);
    detail::scratch<T> tmp(m);
    a2a::tree_reduce(c, tag, tl, out, tmp.span(), op);
    a2a::tree_broadcast(c, tag, tl, out);
  };
  if (tree_only || opt.algo == algorithm::tree || opt.algo == algorithm::reduce_broadcast) {
    tree(a2a::tree_shape<Topo>(p));
  } else {
    const a2a::fold_map fm = a2a::make_fold<Topo>(l);
    if (fm.folded_away(rank)) {  // the partner reduces for both and sends the result back
      c.send(rank + 1, detail::tag::fold, in);
      c.recv(rank + 1, detail::tag::fold, out);
      return;
    }
    const bool partner = rank < 2 * fm.e;
    const int P = fm.active();
    const int w = fm.to_virtual(rank);
    const layout vl = fm.e ? Topo::shape(P) : l;

    algorithm algo = opt.algo;
    if (algo == algorithm::automatic) {
      const auto t = a2a::predict_all_reduce(
          vl, m * sizeof(T), Topo::kind == dim_kind::linear && !is_commutative_v<Op, T>, opt.cost);
      algo = t.reduce_scatter_all_gather < t.recursive_doubling && m >= static_cast<std::size_t>(P)
                 ? algorithm::reduce_scatter_all_gather
                 : algorithm::recursive_doubling;
    }
    if (algo == algorithm::recursive_doubling) {
      detail::scratch<T> work_store(4 * m);  // m on a hypercube would do; a ring dimension needs 4m
      const std::span<T> work = work_store.span();
      a2a::copy_to(in, out);
      if (partner) {
        c.recv(rank - 1, detail::tag::fold, work.first(m));
        detail::combine_left(out, std::span<const T>(work).first(m), op);
      }
      detail::prefix::prefix_fold<Topo>(c, tag, vl, w, fm, out, std::span<T>{}, false, true, work,
                                        op);
    } else {
      const std::vector<std::size_t> off = a2a::even_pieces(m, P);
      detail::scratch<T> work_store(
          std::max(a2a::rs_work_size<Topo, true>(vl, off.data()), partner ? m : 0));
      const std::span<T> work = work_store.span();
      // The first step can read `in` itself unless it is an order-keeping
      // linear-array step (which works in place).
      const bool direct = Topo::kind == dim_kind::binary || is_commutative_v<Op, T>;
      std::span<const T> src = in;
      if (partner) {
        c.recv(rank - 1, detail::tag::fold, work.first(m));
        a2a::combine_into(out, std::span<const T>(work).first(m), in, op);
        src = out;
      } else if (!direct) {
        a2a::copy_to(in, out);
        src = out;
      }
      a2a::reduce_scatter_fold<Topo, true>(c, tag, vl, w, fm, src, out, off.data(),
                                           static_cast<T*>(nullptr), work, op,
                                           is_commutative_v<Op, T>);
      a2a::all_gather_reversed<Topo>(c, tag, vl, w, fm, out, off.data());
    }
    if (partner) c.send(rank - 1, detail::tag::fold, a2a::cspan(out));
  }
}

}  // namespace topocoll
