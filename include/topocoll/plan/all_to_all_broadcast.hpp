#pragma once
// The all-to-all broadcast fold's prices (kernels/all_to_all_broadcast.hpp):
// the fold's time over the active ranks, the tree's (a gather and a
// broadcast), and the choices of all_gather, reduce_scatter and the broadcast
// from several roots between the fold and the tree.

#include <algorithm>
#include <cstddef>

#include "../core/algorithm_table.hpp"
#include "../core/last_choice.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../kernels/all_to_all_broadcast.hpp"
#include "../topology/layout.hpp"
#include "../topology/needs.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "explain.hpp"
#include "one_to_all.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::all_to_all_broadcast {

// The fold's parts the prices count, named here as well so that a plan that
// prices a fold (plan::all_reduce, plan::one_to_all_pieces) finds them.
using detail::all_to_all_broadcast::active_layout;
using detail::all_to_all_broadcast::rs_messages;
using detail::all_to_all_broadcast::rs_messages_for;

// One all-to-all broadcast (or reduction) fold over vl of `bytes` in vl.p
// blocks, without combines: every rank sends and receives at every step (the
// busy, duplex figures), the pieces bytes / s_0, bytes / (s_0 s_1), ... along
// the dimensions, and t_w for (P - 1) / P of the bytes.
inline double fold_time(const layout& vl, std::size_t bytes, rs_messages per_step,
                        const cost_model& model) {
  double t = 0;
  std::size_t piece = bytes;
  for (int j = 0; j < vl.ndims; ++j) {
    const int s = vl.dims[j].radix;
    piece /= static_cast<std::size_t>(s);
    const int messages = per_step == rs_messages::two && s > 2 ? 2 : 1;
    t += (s - 1) * messages * model.all_busy(piece).ts_us;
  }
  return t + model.all_busy().tw_us_per_byte * static_cast<double>(bytes) * (vl.p - 1) /
                 static_cast<double>(vl.p);
}

// An all-to-all broadcast (reduction) of blocks of block_bytes on l under the
// model, without combines: the fold, with the two hand-offs of a p that fills
// no hypercube, or the tree: a gather to rank 0 and a broadcast of all p
// blocks (a reduce of them and a scatter).
struct fold_or_tree {
  double fold, tree;
};
template <Topology Topo>
fold_or_tree predict(const layout& l, std::size_t block_bytes, rs_messages per_step,
                     const cost_model& cm) {
  const std::size_t bytes = block_bytes * static_cast<std::size_t>(l.p);
  double fold = fold_time(active_layout<Topo>(l), bytes, per_step, cm);
  if (Topo::folding(l).e != 0) fold += cm.message(block_bytes) + cm.message(bytes);
  using tree_topo = one_to_all::tree_topology<Topo>;
  const layout tl = one_to_all::tree_layout<Topo>(l);
  return {fold, one_to_all::gather_time<tree_topo>(tl, block_bytes, cm) +
                    one_to_all::tree_time<tree_topo>(tl, bytes, cm)};
}

// Whether the fold over l's active ranks has a step in which a rank sends to
// one rank and receives from another: a dimension of more than two
// coordinates. Never on a hypercube, whose dimensions are all binary: known
// at compile time, so its automatic choice costs nothing.
template <Topology Topo>
bool shifts(const layout& l) {
  if constexpr (Topo::kind == dim_kind::binary) {
    return false;
  } else {
    const layout vl = active_layout<Topo>(l);
    for (int j = 0; j < vl.ndims; ++j)
      if (vl.dims[j].radix > 2) return true;
    return false;
  }
}

// automatic: algorithm::tree where the model prices it below the fold. A
// tree step keeps few ranks busy, each sending or receiving; a fold step keeps
// every rank sending and receiving. The tree wins for short blocks where that
// costs more (duplex_ts > 1: ranks that share cores) or where a ring
// dimension is long (its s - 1 start-ups against the tree's 2 ceil(log2 s)).
// A fold of pairwise exchanges alone (radix 2) keeps the fold: under the
// seeds' model it has half the tree's start-ups, and where ranks share cores
// it beats the tree at blocks of 1-16 KiB although the calibrated figures
// price it higher: they underprice the tree there, and the rule keeps the
// measured winner (doc/all_to_all_broadcast.md, "Where each algorithm wins").
template <Topology Topo>
algorithm choose_all_gather(const layout& l, std::size_t block_bytes, const options& opt) {
  if (opt.algo != algorithm::automatic) return opt.algo;
  if (!meets<Topo>(table_need("all_gather", algorithm::fold), l)) return algorithm::tree;
  if (!shifts<Topo>(l)) return algorithm::fold;
  return remembered(l.p, block_bytes, opt.cost, [&] {
    const cost_model cm = opt.cost.at_size(block_bytes * static_cast<std::size_t>(l.p));
    const fold_or_tree t = predict<Topo>(l, block_bytes, rs_messages::one, cm);
    explain::note({{"tree", t.tree}, {"fold", t.fold}});
    return t.tree < t.fold ? algorithm::tree : algorithm::fold;
  });
}

// The same for reduce_scatter, each side with its combines: the fold's
// (P - 1) / P of the p blocks, every rank at once (all of them again on a
// folded pair, alone), the tree root's all p blocks once per child.
template <Topology Topo, class T, class Op>
algorithm choose_reduce_scatter(const layout& l, std::size_t m, const options& opt) {
  if (opt.algo != algorithm::automatic) return opt.algo;
  if (!meets<Topo>(table_need("reduce_scatter", algorithm::fold), l)) return algorithm::tree;
  if (!shifts<Topo>(l)) return algorithm::fold;
  return remembered(l.p, m, opt.cost, [&] {
    const std::size_t bytes = m * sizeof(T) * static_cast<std::size_t>(l.p);
    const cost_model cm = opt.cost.at_size(bytes);
    const fold_or_tree t = predict<Topo>(l, m * sizeof(T), rs_messages_for<Topo, T, Op>(), cm);
    const int vp = active_layout<Topo>(l).p;
    const double fold =
        t.fold + cm.busy_combine(bytes) * (vp - 1.0) / vp + (vp < l.p ? cm.combine(bytes) : 0);
    const int children = one_to_all::root_children<one_to_all::tree_topology<Topo>>(
        one_to_all::tree_layout<Topo>(l));
    const double tree = t.tree + children * cm.combine(bytes);
    explain::note({{"tree", tree}, {"fold", fold}});
    return tree < fold ? algorithm::tree : algorithm::fold;
  });
}

// ---- broadcasts from several roots ---------------------------------------------------

// The fold's time under the model: at each step of each dimension a rank
// sends one sub-range, which holds at most min(n, its ranks) blocks; on p
// ranks that fill no hypercube, the hand-offs of one block and of all n.
template <Topology Topo>
double roots_fold_time(const layout& l, std::size_t n, std::size_t block_bytes,
                       const cost_model& cm) {
  const layout vl = active_layout<Topo>(l);
  double t = 0;
  std::size_t width = 1;  // ranks per sub-range
  for (int j = 0; j < vl.ndims; ++j) {
    const std::size_t bytes = std::min(n, width) * block_bytes;
    t += (vl.dims[j].radix - 1) * cm.busy_message(bytes);
    width *= static_cast<std::size_t>(vl.dims[j].radix);
  }
  if (Topo::folding(l).e != 0) t += cm.message(block_bytes) + cm.message(n * block_bytes);
  return t;
}

// automatic: the fold on a topology of linear dimensions (Ring, Mesh<K>);
// elsewhere the fold or n trees, whichever the model prices lower. Where the
// fold is all_gather's gather to rank 0 and broadcast (tree_only: a Tree<K>
// of incomplete digit groups), the gather is priced with the n blocks spread
// evenly over the p ranks.
template <Topology Topo>
algorithm choose_roots(const layout& l, std::size_t n, std::size_t block_bytes,
                       const options& opt) {
  if (opt.algo != algorithm::automatic) return opt.algo;
  if constexpr (chain_dims<Topo>) {
    return algorithm::fold;
  } else {
    const cost_model cm = opt.cost.at_size(block_bytes * n);
    using tree_topo = one_to_all::tree_topology<Topo>;
    const layout tl = one_to_all::tree_layout<Topo>(l);
    const double trees =
        static_cast<double>(n) * one_to_all::tree_time<tree_topo>(tl, block_bytes, cm);
    const std::size_t spread =
        (n * block_bytes + static_cast<std::size_t>(l.p) - 1) / static_cast<std::size_t>(l.p);
    const double fold = tree_only<Topo>(l)
                            ? one_to_all::gather_time<tree_topo>(tl, spread, cm) +
                                  one_to_all::tree_time<tree_topo>(tl, n * block_bytes, cm)
                            : roots_fold_time<Topo>(l, n, block_bytes, cm);
    explain::note({{"fold", fold}, {"tree", trees}});
    return fold <= trees ? algorithm::fold : algorithm::tree;
  }
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::all_to_all_broadcast
