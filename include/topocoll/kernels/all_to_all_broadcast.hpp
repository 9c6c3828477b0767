#pragma once
// The all-to-all broadcast kernel and its dual: Algorithm 4.7 of Grama et al.
// ch. 4.2 ("all-to-all broadcast on a d-dimensional hypercube") read as a fold
// over the dimensions of a topocoll::layout, with Algorithm 4.4 (ring) as the
// per-dimension step of a linear dimension; the reduction runs the same fold
// backwards (Algorithms 4.5 and 4.8, Problem 4.4 for the mesh).
//
// The buffer is a sequence of POSITIONS, each a contiguous run of elements
// (off[q] .. off[q+1]); one dimension step works on a parent range of
// radix * width positions split into radix sub-ranges of `width` positions, one
// per coordinate along the dimension. Per dimension, over the exchanges of the
// dimension step (topology/step.hpp):
//  * all-gather step: on entry a rank holds the sub-range of its coordinate, on
//    exit all of them (binary: one exchange; linear: Algorithm 4.4, radix - 1
//    steps around the ring of the dimension; knomial: a direct exchange with
//    the radix - 1 other digits, "recursive multiplying");
//  * reduce-scatter step: on entry a rank holds partials for the whole parent
//    range, on exit its sub-range reduced over the ranks of the dimension
//    (binary: Algorithm 4.8's exchange of halves; linear: Algorithm 4.5, or a
//    linear array that keeps operand order; knomial: the reverse exchange).
//
// Two orders of positions are used.
//  * natural (all_gather, and reduce_scatter with a commutative operator): the
//    parent range of dimension j is the group of ranks sharing the coordinates
//    above j, [v - v % (s_j r_j), +s_j r_j): the blocks a rank holds are
//    contiguous and in rank order; all_gather receives them straight into the
//    output buffer (zero copies), reduce_scatter reads its first step straight
//    from the input and writes its last straight into the output.
//  * digit-reversed (reduce_scatter with any operator, all_reduce): the
//    reduction walks the dimensions LOW to high, so that every partial covers a
//    contiguous range of ranks and the lower one can be put on the left, and
//    position q holds the block of the rank whose mixed-radix digits are q's
//    read backwards, so that the blocks a rank still reduces stay contiguous.
//    all_reduce's reduce-scatter + all-gather does not care which rank owns
//    which piece and walks the reversed order both ways, in place in `out`.
//
// Non-power-of-two p on a binary topology (Hypercube<>): the first 2e ranks,
// e = p - 2^floor(log2 p), pair up (2i, 2i+1); the even one hands its data to
// the odd one first (fold) and gets the result at the end (unfold). The 2^d
// active ranks are virtual ranks 0 .. 2^d - 1 in rank order, each standing for
// a contiguous range of real ranks, so operand order is kept.
//
// Tree<K> on p = r K^j (r <= K, the radix of its last digit) runs the folds
// above. With absent ranks (any other p) its digit groups are incomplete; it
// then gathers / reduces towards rank 0 along the k-nomial tree and broadcasts
// / scatters back (the tree sweep of kernels/one_to_all.hpp), which is also
// algorithm::tree on every topology.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/algorithm_table.hpp"
#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/errors.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/transfer.hpp"
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"
#include "../topology/needs.hpp"
#include "../topology/step.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "one_to_all.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::all_to_all_broadcast {

template <Topology Topo>
fold_map make_fold(const layout& l) {
  return Topo::folding(l);
}

// The weights of the digit-reversed order: w_j = radix_{j+1} * ... * radix_{n-1}.
struct reversed_digits {
  std::array<int, layout::max_dims> w{};
  int n = 0;
  explicit reversed_digits(const layout& l) : n(l.ndims) {
    int acc = 1;
    for (int j = n - 1; j >= 0; --j) {
      w[j] = acc;
      acc *= l.dims[j].radix;
    }
  }
  // position of virtual rank v
  int position(const layout& l, int v) const {
    int q = 0;
    for (int j = 0; j < n; ++j) q += l.coord(v, j) * w[j];
    return q;
  }
  // start of the parent range of dimension j: v's digits below j fixed
  int start(const layout& l, int v, int j) const {
    int q = 0;
    for (int i = 0; i < j; ++i) q += l.coord(v, i) * w[i];
    return q;
  }
};

// Where position q starts: a table of offsets (blocks of any sizes), or q * m
// (equal blocks: nothing to build per call).
struct equal_blocks {
  std::size_t m;
  std::size_t operator[](int q) const { return static_cast<std::size_t>(q) * m; }
};

// Where a fold runs: its tag, the active ranks' layout, this rank's virtual
// rank there and the map back to real ranks (no_fold or fold_map).
template <class Fold>
struct place {
  int tag;
  const layout& vl;
  int w;
  Fold fm;
};

// A partial over the coordinates on one side of this rank's, along one
// dimension, once the first has arrived.
template <class T>
struct side {
  std::span<T> acc;
  bool set = false;
};

// The positions of one dimension step.
template <class T, class Off = const std::size_t*>
struct parent_range {
  std::span<T> buf;
  Off off;
  int start;
  int width;
  std::span<T> sub(int q) const {
    const std::size_t a = off[start + q * width], b = off[start + (q + 1) * width];
    return buf.subspan(a, b - a);
  }
};
template <class T>
struct parent_range<T, equal_blocks> {
  std::span<T> buf;
  equal_blocks off;
  int start;
  int width;
  std::span<T> sub(int q) const {
    const std::size_t n = static_cast<std::size_t>(width) * off.m;
    return {buf.data() + off[start] + static_cast<std::size_t>(q) * n, n};
  }
};

// ---- all-gather step -------------------------------------------------------
// On entry a rank holds the sub-range of its coordinate k, on exit all of
// them: the exchanges of the dimension step (binary: one; linear: Algorithm
// 4.4 round the ring; knomial: one with each other coordinate). peer(q): real
// rank of coordinate q along the dimension. own: what sub-range k holds, read
// from there: pr.sub(k) itself, or the caller's input, copied into pr.sub(k)
// once the step's exchanges are done.
template <dim_kind Kind, class C, class T, class Off, class Peer>
inline void ag_step(C& c, int tag, int radix, int k, const Peer& peer,
                    const parent_range<T, Off>& pr, std::span<const T> own) {
  for_each_exchange<Kind>(radix, k, [&](const exchange& e) {
    const int to = peer(e.to), from = e.from == e.to ? to : peer(e.from);
    c.sendrecv(to, e.send == k ? own : cspan(pr.sub(e.send)), from, pr.sub(e.recv), tag);
  });
  copy_to(own, pr.sub(k));  // nothing when own is pr.sub(k)
}

// ---- reduce-scatter step ---------------------------------------------------

// A dimension as one step of a fold sees it: the tag, its radix, this rank's
// coordinate k and peer(q), the real rank of coordinate q.
template <class Peer>
struct dim_at {
  int tag;
  int radix;
  int k;
  Peer peer;
};

// One reduce-scatter step's buffers. On entry every rank of the dimension
// holds, in src, a partial for every sub-range, the partial of coordinate c
// covering lower ranks than that of c + 1. On exit sub-range k holds acc_0 op
// acc_1 op ... op acc_{radix-1}, in dst, or in fin when fin is not empty (the
// caller's output: the last step then writes straight into it). src may be the
// caller's input (nothing is copied first) or dst itself. tmp: rs_work_size.
template <class T, class Off = const std::size_t*>
struct rs_ranges {
  parent_range<const T, Off> src;
  parent_range<T, Off> dst;
  std::span<T> fin;
  std::span<T> tmp;
};

// The order-keeping reduce-scatter along a linear array (no wrap), for an
// operator the ring's fold would reorder. The partial for coordinate d is
// built from both ends: L_d = acc_0 ... acc_{d-1} travels right, R_d =
// acc_{d+1} ... acc_{r-1} travels left, farthest destination first, and d
// forms L_d op acc_d op R_d. Every rank still sends r - 1 blocks, in r - 1
// steps of (at most) one message each way. In place: src == dst.
template <Transport C, class T, class Off, class Peer, class Op>
void rs_linear_array(C& c, const dim_at<Peer>& d, const rs_ranges<T, Off>& b, const Op& op) {
  const int r = d.radix, k = d.k;
  const int left = k > 0 ? d.peer(k - 1) : none, right = k < r - 1 ? d.peer(k + 1) : none;
  // one direction: send the partial for `ds` to `to` if snd, receive the one
  // for `dr` from `from` if rcv and put it on the left (rightward) or right
  auto step = [&](bool snd, int to, int ds, bool rcv, int from, int dr, bool rightward) {
    const std::span<T> into = rcv ? b.dst.sub(dr) : std::span<T>{};
    const std::span<T> t = b.tmp.first(into.size());
    transfer(c, snd ? to : none, snd ? cspan(b.dst.sub(ds)) : std::span<const T>{},
             rcv ? from : none, t, d.tag);
    if (rcv) combine(into, cspan(t), rightward, op);
  };
  for (int i = 1; i < r; ++i) {
    step(k < r - 1 && i >= k + 1, right, r + k - i, k >= 1 && i >= k, left, r + k - 1 - i, true);
    step(k >= 1 && i >= r - k, left, i + k - r, k <= r - 2 && i >= r - 1 - k, right, i + k + 1 - r,
         false);
  }
}

// The reverse of the all-gather step, over the same exchanges (topology/step.hpp)
// in reverse order: the partial for sub-range e.recv goes to e.from, the one
// for e.send arrives from e.to. A partial for this rank's sub-range k goes on
// the side of k it comes from (they arrive in descending cyclic order: each on
// the LEFT of its side), the first of a side in place; a partial for another
// sub-range (a ring's) gets this rank's own added and travels on at the next
// exchange. Binary: Algorithm 4.8, one dimension; linear: Algorithm 4.5;
// knomial: the reverse of recursive multiplying. Returns whether sub-range k
// went to fin.
template <dim_kind Kind, Transport C, class T, class Off, class Peer, class Op>
bool rs_step(C& c, const dim_at<Peer>& d, const rs_ranges<T, Off>& b, const Op& op) {
  if constexpr (dim_step<Kind>::fold_reorders && !is_commutative_v<Op, T>)
    return rs_linear_array(c, d, b, op), false;
  const std::size_t n = b.src.sub(d.k).size();
  const std::size_t w = d.radix == 2 ? b.tmp.size() : b.tmp.size() / 3;
  side<T> lo{b.tmp.subspan(d.radix == 2 ? 0 : w, n)};
  side<T> hi{b.tmp.subspan(d.radix == 2 ? 0 : 2 * w, n)};
  int last = -1;  // the sub-range whose partial arrived last
  for (int i = d.radix - 1; i >= 1; --i) {
    const exchange e = dim_step<Kind>::at(d.radix, d.k, i);
    const std::span<const T> out = e.recv == last ? cspan(b.dst.sub(e.recv)) : b.src.sub(e.recv);
    if (e.send == d.k) {
      // The side picked by value and marked by a branch, as in the prefix
      // fold (kernels/prefix.hpp): through a reference to one of the two,
      // GCC kept a side in memory and stored to the stack inside the combine.
      const bool lower = e.to < d.k, set = lower ? lo.set : hi.set;
      const std::span<T> acc = lower ? lo.acc : hi.acc;
      const std::span<T> into = set ? b.tmp.first(n) : acc;
      c.sendrecv(d.peer(e.from), out, d.peer(e.to), into, d.tag);
      if (set)
        combine_left(acc, cspan(into), op);
      else if (lower)
        lo.set = true;
      else
        hi.set = true;
    } else {
      const std::span<T> to = b.dst.sub(e.send), into = b.tmp.first(to.size());
      c.sendrecv(d.peer(e.from), out, d.peer(e.to), into, d.tag);
      combine_into(to, b.src.sub(e.send), cspan(into), op);
      last = e.send;
    }
  }
  const std::span<T> target = b.fin.empty() ? b.dst.sub(d.k) : b.fin;
  if (lo.set)
    combine_into(target, cspan(lo.acc), b.src.sub(d.k), op);
  else
    copy_to(b.src.sub(d.k), target);
  if (hi.set) combine_right(target, cspan(hi.acc), op);
  return !b.fin.empty();
}

// ---- the folds over the dimensions -----------------------------------------

// All-gather in natural order over vl (virtual rank w); positions are virtual
// ranks, off[w] where w's data starts; fm: no_fold or the fold_map. mine: what
// position w holds, which may still be only in the caller's input. The first
// dimension step (stride 1: its sub-range k is position w) sends it from
// there, and copies it into buf after that step. Copied first and sent from
// buf, it would reach the peer's single-copy read (Open MPI's CMA) as lines
// this core has just written, still in its cache, which the peer reads more
// slowly (doc/all_to_all_broadcast.md, "Where each algorithm wins").
template <Topology Topo, Transport C, class T, class Off, class Fold>
void all_gather_natural(C& c, const place<Fold>& at, std::span<T> buf, Off off,
                        std::span<const T> mine) {
  using step = dim_step<Topo::kind>;
  for_each_dim<Topo>(at.vl, [&](auto dim) {
    const int j = dim;
    auto peer = [&](int q) { return at.fm.to_real(step::with_coord(at.vl, at.w, j, q)); };
    const int k = step::coord(at.vl, at.w, j);
    const parent_range<T, Off> pr{buf, off, step::group_start(at.vl, at.w, j),
                                  step::stride(at.vl, j)};
    ag_step<Topo::kind>(c, at.tag, step::radix(at.vl, j), k, peer, pr,
                        j == 0 ? mine : cspan(pr.sub(k)));
  });
}

// Which way a reduce-scatter fold walks the dimensions:
//  * reversed: low to high, positions digit-reversed: every partial covers a
//    contiguous range of ranks, so any associative operator. On exit position
//    rd.position(vl, w) holds the fold over every rank, in rank order.
//  * natural (commutative operators only: Algorithm 4.8 / Problem 4.4 as
//    printed): high to low, positions in rank order, so src can be the
//    caller's input as it is. On exit position w holds the total.
enum class rs_order { natural, reversed };

// A reduce-scatter fold's buffers: src holds this rank's contributions at the
// same offsets as buf (it may be buf); the first step reads it, every later
// one works in place in buf. fin, if not empty, receives this rank's block
// when the last step can write it directly. tmp: rs_work_size.
template <class T, class Off = const std::size_t*>
struct rs_fold_buffers {
  std::span<const T> src;
  std::span<T> buf;
  Off off;
  std::span<T> fin;
  std::span<T> tmp;
};

// Reduce-scatter over vl (virtual rank w); returns whether fin was written.
// Out of line, as all_gather_reversed: the two halves of the bandwidth-optimal
// all_reduce are calls of their own, so that their unrolled steps do not use
// up the inlining budget of the recursive doubling beside them.
template <Topology Topo, rs_order Order, Transport C, class T, class Off, class Fold, class Op>
[[gnu::noinline]] bool reduce_scatter_fold(C& c, const place<Fold>& at,
                                           const rs_fold_buffers<T, Off>& b, const Op& op) {
  using step = dim_step<Topo::kind>;
  const layout& vl = at.vl;
  const int w = at.w;
  const reversed_digits rd(vl);
  const int nd = ndims<Topo>(vl);
  const int first = Order == rs_order::reversed ? 0 : nd - 1, last = nd - 1 - first;
  constexpr dim_order order =
      Order == rs_order::reversed ? dim_order::ascending : dim_order::descending;
  bool wrote = false;
  for_each_dim<Topo, order>(vl, [&](auto dim) {
    const int j = dim;
    const int start =
        Order == rs_order::reversed ? rd.start(vl, w, j) : step::group_start(vl, w, j);
    const int width = Order == rs_order::reversed ? rd.w[j] : step::stride(vl, j);
    auto peer = [&](int q) { return at.fm.to_real(step::with_coord(vl, w, j, q)); };
    const rs_ranges<T, Off> r{{j == first ? b.src : cspan(b.buf), b.off, start, width},
                              {b.buf, b.off, start, width},
                              j == last ? b.fin : std::span<T>{},
                              b.tmp};
    wrote = rs_step<Topo::kind>(
        c, dim_at<decltype(peer)>{at.tag, step::radix(vl, j), step::coord(vl, w, j), peer}, r, op);
  });
  return wrote;
}

// The work space rs_step needs: the largest sub-range of the first step of a
// reduce-scatter fold (the later ones are nested in it), three of them where
// a dimension has more than two coordinates (a receive buffer and both sides).
template <rs_order Order, class Off>
std::size_t rs_work_size(const layout& vl, Off off) {
  if (vl.ndims == 0) return 0;
  const int width =
      Order == rs_order::reversed ? reversed_digits(vl).w[0] : vl.dims[vl.ndims - 1].stride;
  std::size_t mx = 0;
  for (int q = 0; q + width <= vl.extent; q += width) mx = std::max(mx, off[q + width] - off[q]);
  int radix = 2;
  for (int j = 0; j < vl.ndims; ++j) radix = std::max(radix, vl.dims[j].radix);
  return radix > 2 ? 3 * mx : mx;
}

// The reverse of reduce_scatter_reversed's data movement: all-gather over the
// digit-reversed positions, dimensions high to low.
template <Topology Topo, Transport C, class T, class Fold>
[[gnu::noinline]] void all_gather_reversed(C& c, const place<Fold>& at, std::span<T> buf,
                                           const std::size_t* off) {
  using step = dim_step<Topo::kind>;
  const reversed_digits rd(at.vl);
  for_each_dim<Topo, dim_order::descending>(at.vl, [&](auto dim) {
    const int j = dim;
    auto peer = [&](int q) { return at.fm.to_real(step::with_coord(at.vl, at.w, j, q)); };
    const int k = step::coord(at.vl, at.w, j);
    const parent_range<T> pr{buf, off, rd.start(at.vl, at.w, j), rd.w[j]};
    ag_step<Topo::kind>(c, at.tag, step::radix(at.vl, j), k, peer, pr, cspan(pr.sub(k)));
  });
}

// ---- the rooted halves of the reversed fold ------------------------------------
// all_gather_reversed with only the root's side receiving (gather: dimensions
// high to low, into the root), and its mirror (scatter: low to high, out of
// the root): the scatter and gather of "Improving the speed of some
// communication operations", over the positions reduce_scatter_fold<reversed>
// leaves the pieces in. Along dimension j the ranks whose coordinates above j
// are the root's take part; the one with the root's coordinate j is the
// collector, and every other one sends it (gather) or receives from it
// (scatter) its own sub-range of the parent range, which is contiguous in
// buf: every message lands where it belongs. A binary dimension is one
// message (sizes m/2, m/4, ... m/p from the root on a hypercube); a linear
// or k-nomial one radix - 1, to or from the collector.
enum class rooted { scatter, gather };

template <Topology Topo, rooted Way, Transport C, class T, class Fold>
void rooted_fold(C& c, const place<Fold>& at, std::span<T> buf, const std::size_t* off,
                 int root_w) {
  using step = dim_step<Topo::kind>;
  const reversed_digits rd(at.vl);
  constexpr dim_order order = Way == rooted::scatter ? dim_order::ascending : dim_order::descending;
  // A rank that has sent its sub-range to the collector (gather) differs
  // from the root in that coordinate, so no lower dimension takes it in.
  for_each_dim<Topo, order>(at.vl, [&](auto dim) {
    const int j = dim;
    if (step::group_start(at.vl, at.w, j) != step::group_start(at.vl, root_w, j)) return;
    const int k = step::coord(at.vl, at.w, j), kr = step::coord(at.vl, root_w, j);
    const parent_range<T> pr{buf, off, rd.start(at.vl, at.w, j), rd.w[j]};
    auto peer = [&](int q) { return at.fm.to_real(step::with_coord(at.vl, at.w, j, q)); };
    if (k != kr && Way == rooted::gather) return c.send(peer(kr), at.tag, cspan(pr.sub(k)));
    if (k != kr) {
      c.recv(peer(kr), at.tag, pr.sub(k));
    } else if constexpr (Way == rooted::scatter) {
      send_batch<C, T> sends(c);
      for (int q = 0; q < step::radix(at.vl, j); ++q)
        if (q != kr) sends.send(peer(q), at.tag, cspan(pr.sub(q)));
      sends.wait();
    } else {
      for (int q = 0; q < step::radix(at.vl, j); ++q)
        if (q != kr) c.recv(peer(q), at.tag, pr.sub(q));
    }
  });
}

// Offsets of n nearly equal pieces of m elements (the first m % n one longer).
inline std::vector<std::size_t> even_pieces(std::size_t m, int n) {
  std::vector<std::size_t> off(static_cast<std::size_t>(n) + 1);
  const std::size_t q = m / static_cast<std::size_t>(n), rem = m % static_cast<std::size_t>(n);
  for (std::size_t i = 0; i <= static_cast<std::size_t>(n); ++i) off[i] = i * q + std::min(i, rem);
  return off;
}

// ---- the non-power-of-two fold, around every fold kernel ------------------------

// Offsets over the folded ranks: virtual rank w stands for real ranks
// lo(w) .. lo(w + 1).
template <class Off>
struct folded_blocks {
  Off off;
  fold_map fm;
  std::size_t operator[](int w) const { return off[fm.lo(w)]; }
};

// Runs a fold kernel over the 2^floor(log p) active ranks of a binary topology
// on p ranks that are no power of two, over all ranks otherwise: the first 2e
// ranks pair up (2i, 2i + 1), the even one hands its data to the odd one
// (away(partner) on the even rank, merge(partner) on the odd one), the active
// ranks run body(vl, w, fm), and the odd one returns the result (back).
template <Topology Topo, Transport C, class Away, class Merge, class Body, class Back>
void with_fold(C& c, const layout& l, Away&& away, Merge&& merge, Body&& body, Back&& back) {
  const fold_map fm = make_fold<Topo>(l);
  const int rank = c.rank();
  if (fm.folded_away(rank)) return away(rank + 1);
  const bool odd_of_pair = rank < 2 * fm.e;
  if (odd_of_pair) merge(rank - 1);
  if (fm.e == 0)
    body(l, rank, no_fold{l.p});
  else
    body(Topo::shape(fm.active()), fm.to_virtual(rank), fm);
  if (odd_of_pair) back(rank - 1);
}

// The even rank of a folded pair: its data to its partner, the result back.
template <Transport C, class T>
void hand_over(C& c, int partner, std::span<const T> mine, std::span<T> result) {
  c.send(partner, detail::tag::fold, mine);
  c.recv(partner, detail::tag::fold, result);
}

// ---- the messages of a step, and the ranks a fold runs over ----------------------

// How many messages a reduce-scatter step along a linear dimension sends: one,
// or two for the order-keeping linear array of a non-commutative operator
// (rs_linear_array).
enum class rs_messages { one, two };

template <Topology Topo, class T, class Op>
constexpr rs_messages rs_messages_for() {
  return dim_step<Topo::kind>::fold_reorders && !is_commutative_v<Op, T> ? rs_messages::two
                                                                         : rs_messages::one;
}

// The ranks a fold runs over: all of l, or the 2^floor(log2 p) active ones.
template <Topology Topo>
layout active_layout(const layout& l) {
  const fold_map f = Topo::folding(l);
  return f.e == 0 ? l : Topo::shape(f.active());
}

// ---- all_gather ------------------------------------------------------------------

// Grama et al. 4.2, the naive all-to-all broadcast: p one-to-all broadcasts,
// one per rank, "up to p times as long" as the fold. Block r goes from rank r
// to every other rank (one_to_all::naive_broadcast), rank after rank; block
// `rank` of buf already holds this rank's data.
template <Transport C, class Blocks>
void naive_all_gather(C& c, const Blocks& blocks, int tag) {
  for (int r = 0; r < c.size(); ++r) one_to_all::naive_broadcast(c, blocks(r, r + 1), r, tag);
}

// all_gather's data movement on blocks at offsets off (p + 1 of them: a table,
// or equal_blocks): `in` is rank r's data on rank r (it may be block r of buf
// already); on exit every rank holds every block in buf.
template <Topology Topo, Transport C, class T, class Off>
void all_gather(C& c, const layout& l, std::span<const T> in, std::span<T> buf, Off off,
                algorithm algo, int tag) {
  const int rank = c.rank();
  auto blocks = [&](int lo, int hi) { return buf.subspan(off[lo], off[hi] - off[lo]); };
  if (algo == algorithm::naive) {
    copy_to(in, blocks(rank, rank + 1));
    return naive_all_gather(c, blocks, tag);
  }
  if (algo == algorithm::tree || tree_only<Topo>(l)) {
    copy_to(in, blocks(rank, rank + 1));
    const layout tl = one_to_all::tree_layout<Topo>(l);
    const one_to_all::rooted_tree<one_to_all::tree_topology<Topo>> t{tl, 0};
    one_to_all::gather_sweep(
        c, t, blocks, [&](int end, int) { return cspan(blocks(rank, end)); }, tag);
    return one_to_all::broadcast_sweep(c, t, buf, tag);
  }
  std::span<const T> mine = in;  // what this rank's position holds, and where it is
  with_fold<Topo>(
      c, l, [&](int to) { hand_over(c, to, in, buf); },
      [&](int from) {
        copy_to(in, blocks(rank, rank + 1));
        c.recv(from, detail::tag::fold, blocks(from, rank));
        mine = cspan(blocks(from, rank + 1));
      },
      [&](const layout& vl, int w, const auto& fm) {
        using Fold = std::remove_cvref_t<decltype(fm)>;
        if constexpr (std::is_same_v<Fold, no_fold>)
          all_gather_natural<Topo>(c, place<Fold>{tag, vl, w, fm}, buf, off, mine);
        else
          all_gather_natural<Topo>(c, place<Fold>{tag, vl, w, fm}, buf, folded_blocks<Off>{off, fm},
                                   mine);
      },
      [&](int to) { c.send(to, detail::tag::fold, cspan(buf)); });
}

// ---- broadcasts from several roots ---------------------------------------------------

// Grama et al. 4.2.4: n <= p one-to-all broadcasts from different roots, as
// the all-gather fold above in which a rank that is no root holds an empty
// block: round a ring (and along each ring of a mesh) Algorithm 4.4 pipelines
// the n broadcasts in (t_s + t_w m)(p - 1). Or n trees, one broadcast per root.
struct roots_call {
  std::span<const int> roots;  // block i of buf from roots[i]
  std::size_t m;               // elements per block
};

// Where rank r's block lies in rank order: off[r] .. off[r + 1], m elements
// for a root, none for any other rank.
inline std::vector<std::size_t> root_offsets(int p, const roots_call& rc) {
  std::vector<std::size_t> off(static_cast<std::size_t>(p) + 1, 0);
  for (int r : rc.roots) off[static_cast<std::size_t>(r) + 1] = rc.m;
  for (std::size_t r = 0; r < static_cast<std::size_t>(p); ++r) off[r + 1] += off[r];
  return off;
}

// The fold of all_gather over blocks at root_offsets: in place in buf when the
// roots are in rank order, else in rank order in a work buffer, then copied
// into the roots' order.
template <Topology Topo, Transport C, class T>
void roots_fold(C& c, const layout& l, std::span<T> buf, const roots_call& rc) {
  const std::vector<std::size_t> off = root_offsets(l.p, rc);
  const bool in_order = std::ranges::is_sorted(rc.roots);
  scratch<T> ordered(in_order ? 0 : buf.size());
  const std::span<T> work = in_order ? buf : ordered.span();
  auto block = [&](std::size_t i) { return buf.subspan(i * rc.m, rc.m); };
  const auto at = std::ranges::find(rc.roots, c.rank());
  const std::span<const T> mine =
      at == rc.roots.end() ? std::span<const T>{}
                           : cspan(block(static_cast<std::size_t>(at - rc.roots.begin())));
  all_gather<Topo>(c, l, mine, work, off.data(), algorithm::fold, detail::tag::broadcast);
  if (in_order) return;
  for (std::size_t i = 0; i < rc.roots.size(); ++i)
    copy_to(cspan(work.subspan(off[static_cast<std::size_t>(rc.roots[i])], rc.m)), block(i));
}

// The n broadcasts, by the fold (algorithm::fold) or one tree per root
// (algorithm::tree, one_to_all::broadcast).
template <Topology Topo, Transport C, class T>
void broadcast_roots(C& c, const layout& l, std::span<T> buf, const roots_call& rc, algorithm a,
                     const cost_model& cost) {
  if (a == algorithm::fold) return roots_fold<Topo>(c, l, buf, rc);
  for (std::size_t i = 0; i < rc.roots.size(); ++i)
    one_to_all::broadcast<Topo>(c, l, buf.subspan(i * rc.m, rc.m), rc.roots[i], algorithm::tree,
                                cost);
}

// ---- reduce_scatter ----------------------------------------------------------------

// Where a reduce-scatter fold over the active ranks works: buf holds p*m
// elements at offsets off; src is this rank's (and its folded pair's)
// contribution at the same offsets; fin is the caller's out, written by the
// last step where it can be (not on a rank that still owes its pair a block).
template <class T>
struct rs_buffers {
  std::span<const T> src;
  std::span<T> buf;
  std::vector<std::size_t> off;
  std::span<T> fin;
};

// Algorithm 4.8 / 4.5 as printed, dimensions high to low, blocks in rank
// order (a commutative operator): the first step reads `in` and the last
// writes `out`, no copies. Returns the blocks of this rank's position, or an
// empty span when the last step wrote them to fin.
template <Topology Topo, Transport C, class T, class Op>
std::span<T> reduce_scatter_natural(C& c, const layout& vl, int w, const fold_map& fm,
                                    rs_buffers<T>& b, const Op& op) {
  const std::size_t m = b.buf.size() / static_cast<std::size_t>(fm.p);
  const folded_blocks<equal_blocks> off{{m}, fm};  // computed: no table of p offsets
  scratch<T> tmp(rs_work_size<rs_order::natural>(vl, off));
  if (reduce_scatter_fold<Topo, rs_order::natural>(
          c, place<fold_map>{detail::tag::reduce_scatter, vl, w, fm},
          rs_fold_buffers<T, folded_blocks<equal_blocks>>{b.src, b.buf, off, b.fin, tmp.span()},
          op))
    return {};
  return b.buf.subspan(off[w], off[w + 1] - off[w]);
}

// Dimensions low to high, so that every partial covers a contiguous range of
// ranks (any associative operator); position q holds the blocks of the
// virtual rank whose digits are q's reversed, laid out by the one copy of src.
template <Topology Topo, Transport C, class T, class Op>
std::span<T> reduce_scatter_reversed(C& c, const layout& vl, int w, const fold_map& fm,
                                     rs_buffers<T>& b, const Op& op) {
  const std::size_t m = b.buf.size() / static_cast<std::size_t>(fm.p);
  const reversed_digits rd(vl);
  std::vector<int> owner(static_cast<std::size_t>(vl.p));
  for (int u = 0; u < vl.p; ++u) owner[rd.position(vl, u)] = u;
  b.off.assign(static_cast<std::size_t>(vl.p) + 1, 0);
  for (int q = 0; q < vl.p; ++q) {
    const std::size_t n = static_cast<std::size_t>(fm.lo(owner[q] + 1) - fm.lo(owner[q])) * m;
    const std::size_t a = static_cast<std::size_t>(fm.lo(owner[q])) * m;
    b.off[q + 1] = b.off[q] + n;
    copy_to(b.src.subspan(a, n), b.buf.subspan(b.off[q], n));
  }
  scratch<T> tmp(rs_work_size<rs_order::reversed>(vl, b.off.data()));
  if (reduce_scatter_fold<Topo, rs_order::reversed>(
          c, place<fold_map>{detail::tag::reduce_scatter, vl, w, fm},
          rs_fold_buffers<T>{cspan(b.buf), b.buf, b.off.data(), b.fin, tmp.span()}, op))
    return {};
  const int mine = rd.position(vl, w);
  return b.buf.subspan(b.off[mine], b.off[mine + 1] - b.off[mine]);
}

// in: p blocks of out.size(); out = block `rank` reduced over every rank, by
// algorithm a (plan::all_to_all_broadcast::choose_reduce_scatter): tree or fold.
template <Topology Topo, Transport C, class T, class Op>
void reduce_scatter(C& c, const layout& l, std::span<const T> in, std::span<T> out, const Op& op,
                    algorithm a, const cost_model& cost) {
  constexpr int tg = detail::tag::reduce_scatter;
  const std::size_t m = out.size(), pm = in.size();
  if (a == algorithm::tree || tree_only<Topo>(l)) {
    const layout tl = one_to_all::tree_layout<Topo>(l);
    scratch<T> acc(c.rank() == 0 ? pm : 0);
    one_to_all::tree_reduce<one_to_all::tree_topology<Topo>>(c, tl, in_out<T>{in, acc.span()}, op,
                                                             {0, tg, cost.segment_bytes});
    return one_to_all::tree_scatter<one_to_all::tree_topology<Topo>>(
        c, tl, in_out<T>{acc.span(), out}, 0, tg);
  }
  const bool pairs = make_fold<Topo>(l).e != 0;
  scratch<T> fold_in(pairs ? pm : 0), buf(pm);
  rs_buffers<T> b{in, buf.span(), {}, out};
  std::span<T> mine;
  with_fold<Topo>(
      c, l, [&](int to) { hand_over(c, to, in, out); },
      [&](int from) {  // the lower rank's contribution goes on the left
        c.recv(from, detail::tag::fold, fold_in.span());
        combine_right(fold_in.span(), in, op);
        b.src = fold_in.span();
        b.fin = {};
      },
      [&](const layout& vl, int w, const fold_map& fm) {
        mine = is_commutative_v<Op, T> ? reduce_scatter_natural<Topo>(c, vl, w, fm, b, op)
                                       : reduce_scatter_reversed<Topo>(c, vl, w, fm, b, op);
        if (!mine.empty()) copy_to(cspan(mine.last(m)), out);
      },
      [&](int to) { c.send(to, detail::tag::fold, cspan(mine.first(m))); });
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::all_to_all_broadcast
