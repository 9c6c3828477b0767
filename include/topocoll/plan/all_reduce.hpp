#pragma once
// all_reduce's prices and choice (kernels/all_reduce.hpp): the model of its
// two dimension folds, recursive doubling and reduce-scatter + all-gather,
// with their combines, against reduce + broadcast's two tree sweeps.

#include <algorithm>
#include <cstddef>

#include "../core/algorithm_table.hpp"
#include "../core/last_choice.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../kernels/all_reduce.hpp"
#include "../topology/layout.hpp"
#include "../topology/needs.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "all_to_all_broadcast.hpp"
#include "explain.hpp"
#include "one_to_all.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::all_reduce {

using all_to_all_broadcast::active_layout;
using all_to_all_broadcast::fold_time;
using all_to_all_broadcast::rs_messages;
using all_to_all_broadcast::rs_messages_for;

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
    explain::note({{"reduce_scatter_all_gather", t.reduce_scatter_all_gather},
                   {"recursive_doubling", t.recursive_doubling}});
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
// Never inlined, like one_to_all_pieces::pieces_priced_lower: the guard in
// reduce_broadcast_wins stays in the caller, so p = 2 pays no call; and
// remembered (core/last_choice.hpp) prices a repeated call only once.
template <Topology Topo, class T, class Op>
[[gnu::noinline]] bool trees_priced_lower(const layout& l, std::size_t m, const cost_model& model) {
  const std::size_t bytes = m * sizeof(T);
  const fold_map f = Topo::folding(l);
  const layout vl = active_layout<Topo>(l);
  const cost_model cm = model.at_size(bytes);
  const all_reduce_cost t = all_reduce_folds<Topo, T, Op>(vl, bytes, cm.with_busy_combines(bytes));
  const bool pieces =
      m >= static_cast<std::size_t>(vl.p) && t.reduce_scatter_all_gather < t.recursive_doubling;
  double fold = pieces ? t.reduce_scatter_all_gather : t.recursive_doubling;
  if (f.e != 0) fold += 2 * cm.message(bytes) + cm.combine(bytes);
  using tree_topo = one_to_all::tree_topology<Topo>;
  const layout tl = one_to_all::tree_layout<Topo>(l);
  const double trees = 2 * one_to_all::tree_time<tree_topo>(tl, bytes, cm) +
                       one_to_all::root_children<tree_topo>(tl) * cm.combine(bytes);
  explain::note({{"reduce_broadcast", trees},
                 {pieces ? "reduce_scatter_all_gather" : "recursive_doubling", fold}});
  return trees < fold;
}

// On two ranks the fold is one exchange, which the trees cannot beat.
template <Topology Topo, class T, class Op>
bool reduce_broadcast_wins(const layout& l, std::size_t m, const options& opt) {
  return opt.algo == algorithm::automatic && l.p > 2 && remembered(l.p, m, opt.cost, [&] {
           return trees_priced_lower<Topo, T, Op>(l, m, opt.cost);
         });
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

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::all_reduce
