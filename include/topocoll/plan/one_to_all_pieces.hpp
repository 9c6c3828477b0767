#pragma once
// The pieces' prices and the choice of broadcast and reduce
// (kernels/one_to_all_pieces.hpp): the split into pieces, priced as
// all_reduce's reduce-scatter + all-gather fold, against the tree and, on a
// topology of linear dimensions, the pipeline.

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "../core/options.hpp"
#include "../kernels/one_to_all_pieces.hpp"
#include "../topology/layout.hpp"
#include "../topology/needs.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "all_reduce.hpp"
#include "all_to_all_broadcast.hpp"
#include "explain.hpp"
#include "one_to_all.hpp"
#include "pipeline.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::one_to_all_pieces {

using all_reduce::predict_all_reduce;
using all_to_all_broadcast::active_layout;
using all_to_all_broadcast::rs_messages;
using detail::one_to_all_pieces::on_piece_topology;

// The split over S's layout l: all_reduce's figure for reduce-scatter +
// all-gather (a scatter or a gather costs what an all-gather does: the same
// steps, the same t_w m (P - 1) / P over the P active ranks), plus on a folded
// p the result handed back to the even ranks and, when the root is folded
// away, the message handed over to (or from) its partner.
template <Topology S>
double pieces_time(const layout& l, std::size_t bytes, int root, rs_messages rs,
                   const cost_model& cm) {
  const fold_map f = S::folding(l);
  double t = predict_all_reduce(active_layout<S>(l), bytes, rs, cm).reduce_scatter_all_gather;
  if (f.e != 0) t += cm.message(bytes) * (f.folded_away(root) ? 2 : 1);
  return t;
}

// Whether the model, at the figures of a call of `bytes` (cost_model::at_size,
// the pieces' minimum too), prices the pieces below the tree and, on a
// topology of linear dimensions, below the pipeline. Never inlined: it is
// only reached for messages of at least a segment; kept out of line, it lets
// the compiler inline pieces_win, so a short broadcast or reduce makes no call
// (benchmark/README.md, "Instructions per call").
template <Topology Topo, class T>
[[gnu::noinline]] bool pieces_priced_lower(const layout& l, std::size_t bytes, int root,
                                           rs_messages rs, const cost_model& model) {
  const std::size_t m = bytes / sizeof(T);
  const cost_model cm = model.at_size(bytes);
  const double tree = one_to_all::tree_time<Topo>(l, bytes, cm);
  double best = tree, pipe = 0;
  if constexpr (chain_dims<Topo>) {
    for (int j = 0; j < l.ndims; ++j)
      pipe += pipeline::ring_pipeline_time<T>(m, l.dims[j].radix, cm);
    best = std::min(best, pipe);
  }
  return on_piece_topology<Topo>(l, [&]<class S>(std::type_identity<S>, const layout& sl) {
    const auto pieces = static_cast<std::size_t>(S::folding(sl).active());
    if (bytes / pieces < pipeline::startups_bytes(cm.piece_floor, cm)) return false;
    const double split = pieces_time<S>(sl, bytes, root, rs, cm);
    if constexpr (chain_dims<Topo>)
      explain::note({{"pieces", split}, {"tree", tree}, {"pipelined", pipe}});
    else
      explain::note({{"pieces", split}, {"tree", tree}});
    return split < best;
  });
}

// automatic: the pieces when the model prices them lower; only for a
// trivially copyable T (a known byte size), and pieces of at least
// cost_model::piece_floor start-ups' worth of bytes (which model::calibrate
// measures).
template <Topology Topo, class T>
bool pieces_win(const layout& l, std::size_t m, int root, rs_messages rs, const cost_model& cm) {
  const std::size_t bytes = m * sizeof(T);
  // no piece can reach a segment: nothing to price (a short call stays short)
  if (!std::is_trivially_copyable_v<T> || l.p < 2 || bytes < pipeline::unsplit_piece_bytes(cm))
    return false;
  return pieces_priced_lower<Topo, T>(l, bytes, root, rs, cm);
}

// The choice of broadcast (split = scatter_all_gather) and reduce (split =
// reduce_scatter_gather): the forced algorithm, or the pieces, the pipeline
// or the tree, whichever the model prices lowest.
template <Topology Topo, class T>
algorithm choose(const layout& l, std::size_t m, int root, rs_messages rs, algorithm split,
                 const options& opt) {
  if (opt.algo != algorithm::automatic) return opt.algo;
  if (pieces_win<Topo, T>(l, m, root, rs, opt.cost)) return split;
  return one_to_all::tree_or_pipeline<Topo, T>(l, m, opt.cost);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::one_to_all_pieces
