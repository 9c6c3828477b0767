#pragma once
// The dimension step: what a rank does along ONE dimension of a topocoll::layout,
// defined once per dimension kind. Every kernel is a fold of these steps over
// the dimensions; none of them looks at the dimension kind itself.
//
//   dim_step<K>::edges<sweep>(l, v, j, f)   the tree edges of virtual rank v along
//                                           dimension j (broadcast, reduce, scatter,
//                                           gather: the mask test of Algorithm 4.2)
//   dim_step<K>::coord / with_coord / radix / stride / group_start
//                                           v's place along dimension j
//   dim_step<K>::at(radix, k, i)            exchange i of a fold along a dimension in
//                                           which v has coordinate k (all_gather,
//                                           reduce_scatter, all_reduce, scan)
//   dim_step<K>::last_scan_dimension, fold_reorders, chain
//                                           how a scan ends; whether a reduction
//                                           along the fold reorders operands;
//                                           whether segments can stream along it
//
// binary   two ranks: coordinate 0 is the parent, partner = v XOR 2^j
// linear   a linear array / ring of `radix` ranks: the tree halves it, farthest
//          node first (Figure 4.2); the fold goes round the ring (Algorithm 4.4)
// knomial  coordinate 0 is the parent of coordinates 1 .. radix - 1; the fold
//          exchanges directly with each other coordinate

#include <array>

#include "../version.hpp"
#include "layout.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

// down: root to leaves (broadcast, scatter); up: leaves to root (reduce, gather).
enum class sweep { down, up };

// One edge of the tree, seen from the rank that visits it.
struct link {
  int peer;       // virtual rank at the other end
  int lo, hi;     // virtual ranks [lo, hi) below the edge (the child's subtree), clipped to p
  int dim;        // index into layout::dims of the dimension the edge runs along
  bool to_child;  // peer is this rank's child; false: peer is its parent
};

// One exchange of a fold along a dimension, in coordinates of that dimension:
// send sub-range `send` to `to` while receiving sub-range `recv` from `from`.
// Sub-range q is the part of the data that coordinate q contributed.
struct exchange {
  int to, from;
  int send, recv;
};

// How the last dimension of a scan runs, where no rank needs the total:
//   exchange  every exchange of the fold, as in the other dimensions
//   prune     only the exchanges that bring a lower coordinate's data up
//   chain     a chain from coordinate 0 up, each rank sending once
enum class scan_tail { exchange, prune, chain };

// The personalized exchange's step.
// All-to-all personalized communication (kernels/personalized.hpp) names every
// packet by its relative address rho = source -> destination, a number in the
// layout's mixed radix. Group g of dimension j: the packets whose digit j is g.
// Along dimension j a rank makes the sub-steps t = 1 .. radix - 1 of its kind
// with two buffers, 0 (what it kept) and 1 (what it received):
//
//   dim_step<K>::personal_relabel         how rho is formed: the relabelling
//                                          that makes the source virtual rank 0,
//                                          rho = relabel::to_virtual(l, dest, source),
//                                          dest = relabel::to_real(l, rho, source)
//   dim_step<K>::sub_step(l, j, t, way)   what sub-step t of dimension j moves
//   dim_step<K>::holder(l, j, g, way)     the buffer that holds group g once
//                                          dimension j is done
//
// linear   the ring step: groups t .. radix - 1 move one hop, sent from the
//          buffer the previous sub-step received into; rho per coordinate.
//          ring_way::both sends each packet the shorter way round instead
//          (Section 4.5.1): groups 1 .. radix/2 forward, the others backward,
//          the sub-steps of the two directions alternating
// binary   group 1 to the partner v XOR 2^j, or v + 2^j mod p when p is not a
//          power of two
// knomial  digit t: group t to v + t stride_j mod p

struct torus_relabel;         // topology/topology.hpp
struct xor_or_shift_relabel;  // topology/topology.hpp
struct shift_relabel;         // topology/topology.hpp

// Which way packets go round a linear dimension in the personalized exchange:
// all forward (Figure 4.18), or each the shorter way (algorithm::bidirectional).
// Other dimensions have one way.
enum class ring_way { forward, both };

// One sub-step: send groups [first, last) from buffer src to the rank at
// relative address `hop` from this one, while receiving them into buffer dst
// from the rank this one is at `hop` from.
struct personal_move {
  int hop;
  int first, last;
  int src, dst;
};

template <dim_kind K>
struct dim_step;

// The exchanges of a fold along a dimension of `radix` ranks in which this
// rank has coordinate k, in order: step::at(radix, k, i) for i = 1 .. radix - 1.
template <dim_kind K, class F>
constexpr void for_each_exchange(int radix, int k, F&& f) {
  for (int i = 1; i < radix; ++i) f(dim_step<K>::at(radix, k, i));
}
// A binary dimension's one exchange, always inlined, so that the step that
// passes f can inline it too: the exchange is then straight-line code in the
// fold, as in the textbook loop.
template <dim_kind K, class F>
requires(K == dim_kind::binary)
    [[gnu::always_inline]] constexpr void for_each_exchange(int, int k, F&& f) {
  f(dim_step<K>::at(2, k, 1));
}

// A dimension's geometry from the layout: coordinate (v / stride_j) % radix_j.
struct mixed_radix {
  static constexpr int radix(const layout& l, int j) { return l.dims[j].radix; }
  static constexpr int stride(const layout& l, int j) { return l.dims[j].stride; }
  static constexpr int coord(const layout& l, int v, int j) { return l.coord(v, j); }
  static constexpr int with_coord(const layout& l, int v, int j, int c) {
    return l.with_coord(v, j, c);
  }
  // Where v stands along dimension j in a tree sweep: it takes part when its
  // coordinates below j are 0 (the mask test of Algorithm 4.2, line 7).
  struct digit {
    int stride, radix, coord, base;  // base: v with coordinate j zeroed
    bool takes_part;
  };
  static constexpr digit digit_of(const layout& l, int v, int j) {
    const int s = l.dims[j].stride, r = l.dims[j].radix, c = (v / s) % r;
    return {s, r, c, v - c * s, v % s == 0};
  }
  // the first rank of v's group along j: v with its coordinates up to j zeroed
  static constexpr int group_start(const layout& l, int v, int j) {
    return v - v % (l.dims[j].stride * l.dims[j].radix);
  }
};

template <>
struct dim_step<dim_kind::binary> {
  // Dimension j is bit j: no division.
  static constexpr int radix(const layout&, int) { return 2; }
  static constexpr int stride(const layout&, int j) { return 1 << j; }
  static constexpr int coord(const layout&, int v, int j) { return (v >> j) & 1; }
  // v with bit j set to c, as the flip of the bits that differ: where c is
  // the other coordinate (every exchange below), this is v XOR 2^j. A rank is
  // never negative; said so, the compiler drops a kernel's test of the peer
  // against `none` (core/transfer.hpp) in every exchange.
  static constexpr int with_coord(const layout&, int v, int j, int c) {
    if (v < 0) __builtin_unreachable();
    return v ^ ((((v >> j) & 1) ^ c) << j);
  }
  static constexpr int group_start(const layout&, int v, int j) { return v & ~((2 << j) - 1); }

  // Algorithm 4.2, lines 6-13, with s = 2^j: a rank takes part when its bits
  // below j are 0 (mask = s - 1); bit j set: the partner is its parent. j is
  // a std::integral_constant where for_each_dim unrolls the dimensions.
  template <sweep S, class Dim, class F>
  static constexpr void edges(const layout& l, int v, Dim j, F&& f) {
    const int s = 1 << j;
    if ((v & (s - 1)) != 0) return;
    if ((v & s) != 0)
      f(link{v ^ s, v, l.clip(v + s), j, false});
    else if ((v ^ s) < l.p)
      f(link{v ^ s, v ^ s, l.clip(v + 2 * s), j, true});
  }
  // Algorithm 4.7, one dimension: swap halves with the partner.
  static constexpr exchange at(int /*radix*/, int k, int /*i*/) { return {k ^ 1, k ^ 1, k, k ^ 1}; }
  // PREFIX_SUMS_HCUBE's last exchange only completes msg, which a scan does
  // not return: there the upper rank of each pair receives and the lower one
  // only sends (half the messages of that step, in the same time).
  static constexpr scan_tail last_scan_dimension = scan_tail::prune;
  static constexpr bool fold_reorders = false;
  static constexpr bool chain = false;  // not a chain: no pipeline along it
  // the personalized exchange (above)
  using personal_relabel = xor_or_shift_relabel;
  static constexpr int holder(const layout&, int, int g, ring_way) { return g; }
  static constexpr personal_move sub_step(const layout&, int j, int /*t = 1*/, ring_way) {
    return {1 << j, 1, 2, 0, 1};
  }
};

template <>
struct dim_step<dim_kind::linear> : mixed_radix {
  // Recursive halving of [0, radix): the holder of [lo, hi) sends to mid, the
  // farthest node of the upper half, which takes over [mid, hi). Farthest
  // first keeps a linear array congestion-free (Figure 4.2).
  template <sweep S, class F>
  static constexpr void edges(const layout& l, int v, int j, F&& f) {
    const auto [s, r, c, base, takes_part] = digit_of(l, v, j);
    if (!takes_part) return;
    std::array<link, 32> ev;  // the first n are set: no 640 bytes zeroed per call
    int n = 0;
    for (int lo = 0, hi = r; hi - lo > 1;) {
      const int mid = lo + (hi - lo + 1) / 2;
      if (c < mid) {
        if (c == lo && base + mid * s < l.p)
          ev[n++] = link{base + mid * s, base + mid * s, l.clip(base + hi * s), j, true};
        hi = mid;
      } else {
        if (c == mid) ev[n++] = link{base + lo * s, v, l.clip(base + hi * s), j, false};
        lo = mid;
      }
    }
    if constexpr (S == sweep::down)
      for (int i = 0; i < n; ++i) f(ev[i]);
    else
      for (int i = n - 1; i >= 0; --i) f(ev[i]);
  }
  // Algorithm 4.4: pass on to the right what arrived from the left last.
  static constexpr exchange at(int radix, int k, int i) {
    return {(k + 1) % radix, (k + radix - 1) % radix, (k - i + 1 + radix) % radix,
            (k - i + radix) % radix};
  }
  // A scan's last dimension is a chain from coordinate 0 up (each rank sends
  // once); the ring wraps, so a reduction round it reorders operands.
  static constexpr scan_tail last_scan_dimension = scan_tail::chain;
  static constexpr bool fold_reorders = true;
  // coordinate c is linked to c + 1: segments can stream along it (pipelined)
  static constexpr bool chain = true;
  // the personalized exchange (above)
  using personal_relabel = torus_relabel;
  // Double-buffered: each message goes straight from where the last one
  // arrived, so a group ends in the buffer of the parity of its hop count.
  // Both ways: groups 1 .. radix/2 go forward (g hops), the rest backward
  // (radix - g hops).
  static constexpr int forward_groups(int radix, ring_way way) {
    return way == ring_way::both ? radix / 2 : radix - 1;
  }
  static constexpr int holder(const layout& l, int j, int g, ring_way way) {
    return (g <= forward_groups(l.dims[j].radix, way) ? g : l.dims[j].radix - g) % 2;
  }
  // Both ways, sub-steps alternate: forward hop 1, backward hop 1, forward
  // hop 2, ...; forward hop h moves groups h .. radix/2, backward hop h the
  // groups radix/2 + 1 .. radix - h.
  static constexpr personal_move sub_step(const layout& l, int j, int t, ring_way way) {
    const int r = l.dims[j].radix, s = l.dims[j].stride, a = forward_groups(r, way);
    const int h = way == ring_way::both ? (t + 1) / 2 : t;
    if (way == ring_way::both && t % 2 == 0)
      return {(r - 1) * s, a + 1, r - h + 1, (h - 1) % 2, h % 2};
    return {s, h, a + 1, (h - 1) % 2, h % 2};
  }
};

template <>
struct dim_step<dim_kind::knomial> : mixed_radix {
  // Coordinate 0 sends to K - 1, ..., 1 (farthest first: each child's range
  // ends where the previous one began) and receives from 1, ..., K - 1.
  template <sweep S, class F>
  static constexpr void edges(const layout& l, int v, int j, F&& f) {
    const auto [s, r, c, base, takes_part] = digit_of(l, v, j);
    if (!takes_part) return;
    auto child = [&, s = s, base = base](int k) {
      if (base + k * s < l.p)
        f(link{base + k * s, base + k * s, l.clip(base + (k + 1) * s), j, true});
    };
    if (c != 0)
      f(link{base, v, l.clip(v + s), j, false});
    else if constexpr (S == sweep::down)
      for (int k = r - 1; k >= 1; --k) child(k);
    else
      for (int k = 1; k < r; ++k) child(k);
  }
  // Recursive multiplying: coordinate k + t, k - t at sub-step t, so every
  // sub-step pairs up.
  static constexpr exchange at(int radix, int k, int t) {
    return {(k + t) % radix, (k + radix - t) % radix, k, (k + radix - t) % radix};
  }
  // A scan's last digit sends only upwards and receives only from below.
  static constexpr scan_tail last_scan_dimension = scan_tail::prune;
  static constexpr bool fold_reorders = false;
  static constexpr bool chain = false;
  // the personalized exchange (above)
  using personal_relabel = shift_relabel;
  static constexpr int holder(const layout&, int, int g, ring_way) { return g == 0 ? 0 : 1; }
  static constexpr personal_move sub_step(const layout& l, int j, int t, ring_way) {
    return {t * l.dims[j].stride, t, t + 1, 0, 1};
  }
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
