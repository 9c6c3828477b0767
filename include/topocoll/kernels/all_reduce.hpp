#pragma once
// all_reduce's algorithms, composed of the patterns: recursive doubling is
// the prefix fold with a message of constant size (kernels/prefix.hpp);
// reduce-scatter + all-gather the all-to-all broadcast fold and its reverse
// (kernels/all_to_all_broadcast.hpp, "Improving the speed of some
// communication operations"); reduce + broadcast the tree sweep
// (kernels/one_to_all.hpp). Every one keeps rank order.

#include <algorithm>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "../core/algorithm_table.hpp"
#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/last_choice.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"
#include "../topology/needs.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "all_to_all_broadcast.hpp"
#include "one_to_all.hpp"
#include "prefix.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::all_reduce {

// The all-to-all broadcast fold's parts that the compositions below use.
using all_to_all_broadcast::active_layout;
using all_to_all_broadcast::all_gather_reversed;
using all_to_all_broadcast::even_pieces;
using all_to_all_broadcast::fold_time;
using all_to_all_broadcast::hand_over;
using all_to_all_broadcast::make_fold;
using all_to_all_broadcast::place;
using all_to_all_broadcast::reduce_scatter_fold;
using all_to_all_broadcast::rs_fold_buffers;
using all_to_all_broadcast::rs_messages;
using all_to_all_broadcast::rs_messages_for;
using all_to_all_broadcast::rs_order;
using all_to_all_broadcast::rs_work_size;
using all_to_all_broadcast::with_fold;

// The t_s + t_w m model of all_reduce's two dimension folds over vl: every
// rank exchanges at every step, messages of `bytes` (recursive doubling), or
// each dimension's pieces both ways (reduce-scatter + all-gather).
struct all_reduce_cost {
  double recursive_doubling = 0, reduce_scatter_all_gather = 0;
};
inline all_reduce_cost predict_all_reduce(const layout& vl, std::size_t bytes, rs_messages rs,
                                          const cost_model& model) {
  all_reduce_cost t;
  for (int j = 0; j < vl.ndims; ++j)
    t.recursive_doubling += (vl.dims[j].radix - 1) * model.busy_message(bytes);
  t.reduce_scatter_all_gather =
      fold_time(vl, bytes, rs, model) + fold_time(vl, bytes, rs_messages::one, model);
  return t;
}

// all_reduce's figures with the operator's share added: recursive doubling
// combines the whole message at every step, reduce-scatter + all-gather
// (P - 1) / P of it in all.
inline all_reduce_cost with_combines(all_reduce_cost t, const layout& vl, std::size_t bytes,
                                     const cost_model& cm) {
  for (int j = 0; j < vl.ndims; ++j)
    t.recursive_doubling += (vl.dims[j].radix - 1) * cm.combine(bytes);
  t.reduce_scatter_all_gather += cm.combine(bytes) * (vl.p - 1) / static_cast<double>(vl.p);
  return t;
}

// The two folds of `bytes` over vl under the model, messages and combines.
template <Topology Topo, class T, class Op>
all_reduce_cost all_reduce_folds(const layout& vl, std::size_t bytes, const cost_model& cm) {
  return with_combines(predict_all_reduce(vl, bytes, rs_messages_for<Topo, T, Op>(), cm), vl, bytes,
                       cm);
}

// automatic: the cheaper fold over l's active ranks under the model;
// reduce_scatter_all_gather needs a piece for every active rank, so a
// shorter message is not priced.
template <Topology Topo, class T, class Op>
algorithm cheaper_fold(const layout& l, std::size_t m, const options& opt) {
  const int active = Topo::folding(l).active();
  if (m < static_cast<std::size_t>(active)) return algorithm::recursive_doubling;
  return remembered(active, m, opt.cost, [&] {
    const std::size_t bytes = m * sizeof(T);
    const auto t =
        all_reduce_folds<Topo, T, Op>(active_layout<Topo>(l), bytes, opt.cost.at_size(bytes));
    return t.reduce_scatter_all_gather < t.recursive_doubling ? algorithm::reduce_scatter_all_gather
                                                              : algorithm::recursive_doubling;
  });
}

// automatic: reduce + broadcast where the model prices the two tree sweeps
// below the better fold (plus the fold's two hand-offs on a p that fills no
// hypercube). Under the seeds' model that happens for short messages on long
// ring dimensions: the binomial trees' 2 ceil(log2 p) start-ups against the
// fold's sum of s_j - 1, fewer on a Ring from p = 8 on.
// Where ranks share cores (busy_ts, busy_tw > 1) a tree step leaves most
// ranks idle while a fold keeps every one busy, and the trees win sooner.
// Each side pays its combines: the root's one per child, the fold's above at
// busy_tc (every rank combines at once). Between the two folds busy_tc is left
// out: it is well above 1 with a core per rank too, and there it would price
// the pieces below recursive doubling where they are slower (doc/model.md,
// "busy_tc between the two folds").
// Never inlined, like one_to_all::pieces_priced_lower: the guard in
// reduce_broadcast_wins stays in the caller, so p = 2 pays no call; and
// remembered (core/last_choice.hpp) prices a repeated call only once.
template <Topology Topo, class T, class Op>
[[gnu::noinline]] bool trees_priced_lower(const layout& l, std::size_t m, const cost_model& model) {
  const std::size_t bytes = m * sizeof(T);
  const fold_map f = Topo::folding(l);
  const layout vl = active_layout<Topo>(l);
  const cost_model cm = model.at_size(bytes);
  const all_reduce_cost t = all_reduce_folds<Topo, T, Op>(vl, bytes, cm.with_busy_combines(bytes));
  double fold = m >= static_cast<std::size_t>(vl.p)
                    ? std::min(t.recursive_doubling, t.reduce_scatter_all_gather)
                    : t.recursive_doubling;
  if (f.e != 0) fold += 2 * cm.message(bytes) + cm.combine(bytes);
  using tree_topo = one_to_all::tree_topology<Topo>;
  const layout tl = one_to_all::tree_layout<Topo>(l);
  return 2 * one_to_all::tree_time<tree_topo>(tl, bytes, cm) +
             one_to_all::root_children<tree_topo>(tl) * cm.combine(bytes) <
         fold;
}

// On two ranks the fold is one exchange, which the trees cannot beat.
template <Topology Topo, class T, class Op>
bool reduce_broadcast_wins(const layout& l, std::size_t m, const options& opt) {
  return opt.algo == algorithm::automatic && l.p > 2 && remembered(l.p, m, opt.cost, [&] {
           return trees_priced_lower<Topo, T, Op>(l, m, opt.cost);
         });
}

// The all-to-all reduction of src (m elements) in pieces at offsets off, in
// out, over the digit-reversed positions: on exit out holds the piece at
// position rd.position(vl, w) reduced over every rank in rank order (the rest
// of out is work space). src: out, or in where the first step can read the
// caller's input (a binary step, or a commutative operator).
template <Topology Topo, Transport C, class T, class Op>
void reduce_scatter_pieces(C& c, const place<fold_map>& at, std::span<const T> src,
                           std::span<T> out, const std::size_t* off, const Op& op) {
  scratch<T> work(rs_work_size<rs_order::reversed>(at.vl, off));
  const bool direct = !dim_step<Topo::kind>::fold_reorders || is_commutative_v<Op, T>;
  if (!direct) copy_to(src, out);
  reduce_scatter_fold<Topo, rs_order::reversed>(
      c, at, rs_fold_buffers<T>{direct ? src : cspan(out), out, off, {}, work.span()}, op);
}

// The bandwidth-optimal fold, in place in out: the all-to-all reduction of m
// in p nearly equal pieces, then the all-to-all broadcast of the pieces, both
// over the digit-reversed positions.
template <Topology Topo, Transport C, class T, class Op>
void reduce_scatter_all_gather(C& c, const place<fold_map>& at, std::span<const T> src,
                               std::span<T> out, const Op& op) {
  const std::vector<std::size_t> off = even_pieces(out.size(), at.vl.p);
  reduce_scatter_pieces<Topo>(c, at, src, out, off.data(), op);
  all_gather_reversed<Topo>(c, at, out, off.data());
}

// The algorithm an all_reduce of m elements of T runs over l: the forced
// one, or automatic's: the two tree sweeps (algorithm::reduce_broadcast)
// where the folds need complete digit groups that l lacks or where the trees
// are priced lower, otherwise the cheaper fold over l's active ranks.
template <Topology Topo, class T, class Op>
algorithm choose(const layout& l, std::size_t m, const options& opt) {
  if (opt.algo != algorithm::automatic) return opt.algo;
  constexpr topology_need folds_need = table_need("all_reduce", algorithm::recursive_doubling);
  static_assert(folds_need == table_need("all_reduce", algorithm::reduce_scatter_all_gather));
  if (!meets<Topo>(folds_need, l) || reduce_broadcast_wins<Topo, T, Op>(l, m, opt))
    return algorithm::reduce_broadcast;
  return cheaper_fold<Topo, T, Op>(l, m, opt);
}

// out = in_0 op ... op in_{p-1} on every rank, by algorithm a (choose; tree is
// reduce_broadcast's trees).
template <Topology Topo, Transport C, class T, class Op>
void all_reduce(C& c, const layout& l, std::span<const T> in, std::span<T> out, const Op& op,
                algorithm a, const cost_model& cost) {
  constexpr int tg = detail::tag::all_reduce;
  if (a == algorithm::tree || a == algorithm::reduce_broadcast) {
    using tree_topo = one_to_all::tree_topology<Topo>;
    const layout tl = one_to_all::tree_layout<Topo>(l);
    one_to_all::tree_reduce<tree_topo>(c, tl, in_out<T>{in, out}, op, {0, tg, cost.segment_bytes});
    return one_to_all::broadcast_sweep(c, one_to_all::rooted_tree<tree_topo>{tl, 0}, out, tg);
  }
  std::span<const T> src = in;  // this rank's (or its pair's) contribution
  scratch<T> held(make_fold<Topo>(l).e ? in.size() : 0);
  with_fold<Topo>(
      c, l, [&](int to) { hand_over(c, to, in, out); },
      [&](int from) {  // the lower rank's contribution goes on the left
        c.recv(from, detail::tag::fold, held.span());
        combine_into(out, cspan(held.span()), in, op);
        src = out;
      },
      [&](const layout& vl, int w, const auto& fm) {
        if (a == algorithm::recursive_doubling) {
          scratch<T> work(prefix::work_size(out.size()));
          prefix::prefix_fold<Topo>(c, place<std::remove_cvref_t<decltype(fm)>>{tg, vl, w, fm},
                                    prefix::buffers<T>{src, out, {}, work.span()},
                                    prefix::goal::total, op);
          return;
        }
        reduce_scatter_all_gather<Topo>(c, place<fold_map>{tg, vl, w, fm}, src, out, op);
      },
      [&](int to) { c.send(to, detail::tag::fold, cspan(out)); });
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::all_reduce
