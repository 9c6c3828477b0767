#pragma once
// Whether a topology meets what an algorithm needs of it
// (core/algorithm_table.hpp), and so whether the algorithm applies to a
// collective on that topology at p ranks.

#include "../core/algorithm_table.hpp"
#include "../version.hpp"
#include "layout.hpp"
#include "step.hpp"
#include "topology.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

// Whether every dimension of Topo is linear, a chain that a pipeline can
// stream along (Ring, Mesh<K>): what algorithm::pipelined needs. A binary
// dimension is a chain of two, where a pipeline is one message; a k-nomial one
// links coordinate 0 to every other, not each coordinate to the next.
template <class Topo>
inline constexpr bool chain_dims = dim_step<Topo::kind>::chain;

template <Topology Topo>
constexpr bool meets(topology_need n, const layout& l) {
  switch (n) {
    case topology_need::linear_dims:
      return chain_dims<Topo>;
    case topology_need::complete_groups:
      return !tree_only<Topo>(l);
    default:
      return true;
  }
}

// Whether `row` lists a and Topo, laid out as l, meets what a needs.
template <Topology Topo>
constexpr bool applies(const algorithm_row& row, algorithm a, const layout& l) {
  const std::optional<topology_need> n = need_of(row, a);
  return n && meets<Topo>(*n, l);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
