#pragma once
// The one-to-all kernel: Algorithm 4.2 of Grama et al. ch. 4.1 ("one-to-all
// broadcast of a message X initiated by source on a d-dimensional hypothetical
// hypercube"), read as a fold over the dimensions of a topocoll::layout, and its
// dual, Algorithm 4.3 (all-to-one reduction), which walks the same edges in the
// reverse order and direction.
//
// The fold yields a spanning tree of the virtual ranks rooted at 0. Every edge
// splits the range of virtual ranks the sender is responsible for: the child w
// gets [w, hi) and the sender keeps the part below w. Since dims[0] has stride 1
// and a rank only takes part in dimension j when its coordinates below j are 0
// (the mask test of line 7), every such range is CONTIGUOUS in virtual ranks.
// That is what makes scatter and gather move one block per message and what
// tells reduce which partial is the lower one.
//
// Per dimension, chosen at compile time from Topo::kind:
//   binary   coordinate 0 sends to coordinate 1: exactly the mask loop;
//   linear   recursive halving of a linear array, farthest node first
//            (Figure 4.2: congestion-free on a linear array or ring);
//   knomial  coordinate 0 sends to coordinates K-1, ..., 1 (k-nomial tree).
// Virtual ranks >= p (Hypercube<> and Tree<K> on a p that fills no whole
// hypercube/tree) do not exist: edges to them are skipped and ranges clipped.

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/errors.hpp"
#include "../core/options.hpp"
#include "../topology/layout.hpp"
#include "../topology/topology.hpp"
#include "one_to_all_ring.hpp"

namespace topocoll::detail::one_to_all {

// down: root to leaves (broadcast, scatter); up: leaves to root (reduce, gather).
enum class sweep { down, up };

// One edge of the tree, seen from the rank that visits it.
struct link {
  int peer;       // virtual rank at the other end
  int lo, hi;     // virtual ranks [lo, hi) below the edge (the child's subtree), clipped to p
  int dim;        // index into layout::dims of the dimension the edge runs along
  bool to_child;  // peer is this rank's child; false: peer is its parent
};

// Calls f(link) for every edge virtual rank v takes part in, in the order v
// must communicate: dimensions high to low for sweep::down (at most one edge to
// the parent, first, then the children), low to high and reversed for sweep::up
// (the children, then the parent). In sweep::down, v receives from its parent
// and sends to its children; in sweep::up, the other way round.
template <Topology Topo, sweep S, class F>
constexpr void for_each_link(const layout& l, int v, F&& f) {
  const int p = l.p;
  auto clip = [p](int x) { return x < p ? x : p; };
  auto dim_step = [&](int j) {
    const int s = l.dims[j].stride;
    if constexpr (Topo::kind == dim_kind::binary) {
      // Algorithm 4.2, lines 6-13, with s = 2^j: mask = s - 1.
      if ((v & (s - 1)) != 0) return;
      if ((v & s) != 0)
        f(link{v ^ s, v, clip(v + s), j, false});
      else if ((v ^ s) < p)
        f(link{v ^ s, v ^ s, clip(v + 2 * s), j, true});
    } else {
      const int r = l.dims[j].radix;
      if (v % s != 0) return;  // a lower coordinate is not 0: the mask test of line 7
      const int c = (v / s) % r;
      const int base = v - c * s;
      if constexpr (Topo::kind == dim_kind::knomial) {
        if (c != 0) {
          f(link{base, v, clip(v + s), j, false});
        } else if constexpr (S == sweep::down) {
          for (int k = r - 1; k >= 1; --k)  // farthest first: each child's range ends where
            if (base + k * s < p)           // the previous one began, like the linear halving
              f(link{base + k * s, base + k * s, clip(base + (k + 1) * s), j, true});
        } else {
          for (int k = 1; k < r && base + k * s < p; ++k)
            f(link{base + k * s, base + k * s, clip(base + (k + 1) * s), j, true});
        }
      } else {
        static_assert(Topo::kind == dim_kind::linear, "unknown dim_kind");
        // Recursive halving of [0, r): the holder of [lo, hi) sends to mid, the
        // farthest node of the upper half, which takes over [mid, hi).
        std::array<link, 32> ev{};
        int n = 0;
        int lo = 0, hi = r;
        while (hi - lo > 1) {
          const int mid = lo + (hi - lo + 1) / 2;
          if (c < mid) {
            if (c == lo && base + mid * s < p)
              ev[n++] = link{base + mid * s, base + mid * s, clip(base + hi * s), j, true};
            hi = mid;
          } else {
            if (c == mid) ev[n++] = link{base + lo * s, v, clip(base + hi * s), j, false};
            lo = mid;
          }
        }
        if constexpr (S == sweep::down)
          for (int i = 0; i < n; ++i) f(ev[i]);
        else
          for (int i = n - 1; i >= 0; --i) f(ev[i]);
      }
    }
  };
  if constexpr (S == sweep::down)
    for (int j = l.ndims - 1; j >= 0; --j) dim_step(j);
  else
    for (int j = 0; j < l.ndims; ++j) dim_step(j);
}

// End of the range [v, hi) of virtual ranks v is responsible for.
template <Topology Topo>
constexpr int subtree_end(const layout& l, int v) {
  int hi = l.p;  // the root's
  for_each_link<Topo, sweep::down>(l, v, [&](const link& e) {
    if (!e.to_child) hi = e.hi;
  });
  return hi;
}

// Whether the relabelling for `root` is the XOR of the seeds on a topology
// whose dimensions are all binary. Then every partial of a reduction covers an
// aligned block of 2^j REAL ranks, and the partner's block is the lower one
// exactly when bit j of the root is set: rank order survives the relabelling.
template <Topology Topo>
constexpr bool xor_on_binary_dims(const layout& l) {
  if constexpr (!std::is_base_of_v<detail::xor_or_shift_relabel, Topo>) {
    return false;
  } else {
    if (!is_pow2(l.p)) return false;
    for (int j = 0; j < l.ndims; ++j)
      if (l.dims[j].radix != 2) return false;
    return true;
  }
}

// Rejects an algorithm the one-to-all operations cannot run on this topology,
// before any communication: tree everywhere, pipelined on a Ring.
template <Topology Topo>
void check_algorithm(std::string_view op, int rank, int p, algorithm a) {
  if (a == algorithm::automatic || a == algorithm::tree) return;
  if (a == algorithm::pipelined) {
    if constexpr (std::is_same_v<Topo, Ring>) return;
    invalid(op, rank, p, "algorithm::pipelined needs the Ring topology, got ", Topo::name(),
            " (use algorithm::tree or algorithm::automatic)");
  }
  invalid(op, rank, p, "algorithm::", to_string(a), " does not apply to ", op,
          " (use algorithm::tree, algorithm::automatic, or algorithm::pipelined on a Ring)");
}

}  // namespace topocoll::detail::one_to_all
