#pragma once
// The pipeline's prices (kernels/pipeline.hpp): the modelled time of a
// pipelined broadcast or reduction along a chain, at the segments the kernel
// cuts (ring_segments), against the tree along the same chain, and the choice
// between them. The shortest message worth splitting at all is here too: below
// it a short broadcast or reduce makes no pricing call.

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "../core/options.hpp"
#include "../kernels/pipeline.hpp"
#include "../topology/layout.hpp"
#include "../version.hpp"
#include "explain.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::pipeline {

using detail::pipeline::ring_segments;
using detail::pipeline::startups_bytes;

// A message shorter than this travels whole without pricing the split: at
// least one segment's (or piece's) minimum, and at least one start-up's worth
// of bytes, below which neither a pipeline nor pieces save more than the
// start-ups they add (a short broadcast or reduce then makes no pricing call).
constexpr std::size_t unsplit_bytes(double floor, const cost_model& cost) {
  return startups_bytes(std::max(floor, 1.0), cost);
}

// unsplit_bytes of a broadcast's or reduce's pieces (cost_model::piece_floor);
// the default model's (options{}.cost, known by its address) is a constant.
inline std::size_t unsplit_piece_bytes(const cost_model& cost) {
  constexpr std::size_t of_default =
      unsplit_bytes(default_options.cost.piece_floor, default_options.cost);
  return &cost == &default_options.cost ? of_default : unsplit_bytes(cost.piece_floor, cost);
}

// Whether a chain's message of `bytes` travels whole without pricing: shorter
// than two of unsplit_bytes of its segments at busy factors of at least 1,
// where the pipeline's s_j - 1 messages cannot beat the tree's ceil(log2 s_j).
inline bool chain_travels_whole(std::size_t bytes, const cost_model& cost) {
  constexpr cost_model d = default_options.cost;
  static_assert(d.busy_at_least_alone());
  constexpr std::size_t of_default = unsplit_bytes(d.segment_floor, d.all_busy());
  if (&cost == &default_options.cost) return bytes / of_default < 2;
  return cost.busy_at_least_alone() &&
         bytes / unsplit_bytes(cost.segment_floor, cost.all_busy()) < 2;
}

// The modelled time of the pipelined broadcast / reduction along a chain of p
// ranks, and of the tree along it (ceil(log2 p) steps of the whole message,
// the k-th with about 2^k active ranks).
template <class T>
double ring_pipeline_time(std::size_t m, int p, const cost_model& cost) {
  const std::size_t r = ring_segments<T>(m, p, cost);
  const double seg = static_cast<double>((m + r - 1) / r) * sizeof(T);
  return static_cast<double>(p - 2 + static_cast<int>(r)) *
         cost.busy_message(static_cast<std::size_t>(seg));
}
template <class T>
double ring_tree_time(std::size_t m, int p, const cost_model& cost) {
  double t = 0;
  for (int k = 0; k < ceil_log2(p); ++k) t += cost.message(m * sizeof(T), 2 << k, p);
  return t;
}

// automatic: the pipeline when its time summed over the dimensions of l is
// less than the tree's (sum of ceil(log2 s_j) steps); only for trivially
// copyable T. A chain of 2 ties (one message either way) and keeps the tree.
// A message that travels whole needs no pricing (the common case of a small
// broadcast or reduce).
template <class T>
bool pipeline_wins(const layout& l, std::size_t m, const cost_model& cost) {
  if (!std::is_trivially_copyable_v<T>) return false;
  if (chain_travels_whole(m * sizeof(T), cost)) return false;
  double pipe = 0, tree = 0;
  for (int j = 0; j < l.ndims; ++j) {
    pipe += ring_pipeline_time<T>(m, l.dims[j].radix, cost);
    tree += ring_tree_time<T>(m, l.dims[j].radix, cost);
  }
  explain::note({{"pipelined", pipe}, {"tree", tree}});
  return pipe < tree;
}
// The same on a Ring of p ranks: one dimension.
template <class T>
bool ring_pipeline_wins(std::size_t m, int p, const cost_model& cost) {
  layout l;
  l.p = p;
  l.push(p);
  return pipeline_wins<T>(l, m, cost);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::pipeline
