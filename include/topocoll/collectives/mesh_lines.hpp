#pragma once
// The lines of a Mesh<K> as communicators: on a 2-D mesh its columns and rows,
// over which Example 4.1 (Grama et al., matrix-vector multiplication,
// Figure 4.4) broadcasts and reduces. Every collective runs on each of them
// unchanged.

#include <array>
#include <cstddef>
#include <utility>

#include "../core/concepts.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

// Element j is the communicator of the ranks that differ from this one only
// in coordinate j of Mesh<K>::coords (along the side Mesh<K>::sides(p)[j]),
// ranked by that coordinate. On a 2-D mesh of s0 x s1 ranks, element 0 is
// this rank's column (s0 ranks, top to bottom) and element 1 its row (s1
// ranks, left to right). A side of 1 gives a communicator of this rank alone.
// Collective over c: it calls c.split once per coordinate, in order.
template <int K, SplittableTransport C>
std::array<C, K> mesh_lines(C& c) {
  const int p = c.size();
  const auto x = Mesh<K>::coords(p, c.rank());
  auto line = [&](std::size_t j) {
    const int start = c.rank() - x[j] * Mesh<K>::stride(p, static_cast<int>(j));
    return c.split(start, x[j]);  // color: the line's first rank
  };
  // A braced list runs its elements in order: every rank splits alike.
  return [&]<std::size_t... J>(std::index_sequence<J...>) {
    return std::array<C, K>{line(J)...};
  }
  (std::make_index_sequence<K>{});
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
