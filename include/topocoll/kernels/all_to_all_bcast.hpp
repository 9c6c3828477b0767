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
// per coordinate along the dimension. Per dimension, chosen at compile time
// from Topo::kind:
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
// Tree<K> on p = K^d runs the folds above. With absent ranks (p not a power of
// K) its digit groups are incomplete; it then gathers / reduces towards rank 0
// along the k-nomial tree and broadcasts / scatters back (tree_up / tree_down
// below), which is also algorithm::tree on every topology.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/errors.hpp"
#include "../core/options.hpp"
#include "../topology/layout.hpp"
#include "../topology/topology.hpp"

namespace topocoll::detail::a2a {

// dst[i] = lo[i] op hi[i]: a combination written straight into a third buffer,
// which saves the copy that an in-place combine would need first.
template <class T, class Op>
void combine_into(std::span<T> dst, std::span<const T> lo, std::span<const T> hi, const Op& op) {
  for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = op(lo[i], hi[i]);
}

template <class T>
void copy_to(std::span<const T> from, std::span<T> to) {
  if (from.data() != to.data()) std::copy(from.begin(), from.end(), to.begin());
}

template <class T>
std::span<const T> cspan(std::span<T> s) {
  return s;
}

// The pairing of the non-power-of-two fold (e = 0: no fold, identity).
struct fold_map {
  int p = 1;  // real ranks
  int e = 0;  // folded pairs (2i, 2i+1), i < e
  int active() const { return p - e; }
  bool folded_away(int r) const { return r < 2 * e && r % 2 == 0; }
  int to_virtual(int r) const { return r < 2 * e ? r / 2 : r - e; }
  int to_real(int w) const { return w < e ? 2 * w + 1 : w + e; }
  // first real rank virtual rank w stands for; lo(active()) == p
  int lo(int w) const { return w < e ? 2 * w : w + e; }
};

template <Topology Topo>
fold_map make_fold(const layout& l) {
  if constexpr (Topo::kind == dim_kind::binary) {
    if (l.extent != l.p)
      return {l.p, l.p - static_cast<int>(std::bit_floor(static_cast<unsigned>(l.p)))};
  }
  return {l.p, 0};
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

// The positions of one dimension step.
template <class T>
struct parent_range {
  std::span<T> buf;
  const std::size_t* off;
  int start;
  int width;
  std::span<T> sub(int q) const {
    const std::size_t a = off[start + q * width], b = off[start + (q + 1) * width];
    return buf.subspan(a, b - a);
  }
};

// ---- all-gather step -------------------------------------------------------
// peer(c): real rank of coordinate c along the dimension.
template <dim_kind Kind, class C, class T, class Peer>
void ag_step(C& c, int tag, int radix, int k, const Peer& peer, const parent_range<T>& pr) {
  if constexpr (Kind == dim_kind::binary) {
    const int partner = peer(1 - k);
    c.sendrecv(partner, cspan(pr.sub(k)), partner, pr.sub(1 - k), tag);
  } else if constexpr (Kind == dim_kind::knomial) {
    // Recursive multiplying over a radix-K digit (every rank of the group
    // present): send the own sub-range to each other digit directly, receive
    // theirs; digit k + t, k - t at sub-step t, so every sub-step pairs up.
    for (int t = 1; t < radix; ++t) {
      const int to = (k + t) % radix, from = (k + radix - t) % radix;
      c.sendrecv(peer(to), cspan(pr.sub(k)), peer(from), pr.sub(from), tag);
    }
  } else {
    static_assert(Kind == dim_kind::linear, "unknown dim_kind");
    // Algorithm 4.4: send what arrived last to the right, receive from the left.
    const int right = peer((k + 1) % radix), left = peer((k + radix - 1) % radix);
    for (int i = 1; i < radix; ++i)
      c.sendrecv(right, cspan(pr.sub((k - i + 1 + radix) % radix)), left,
                 pr.sub((k - i + radix) % radix), tag);
  }
}

// ---- reduce-scatter step ---------------------------------------------------
// On entry every rank of the dimension holds, in src, a partial for every
// sub-range, the partial of coordinate c covering lower ranks than that of
// c + 1. On exit this rank's sub-range k holds acc_0 op acc_1 op ... op
// acc_{radix-1}, in dst, or in fin when fin is not null (the caller's output:
// the last step then writes straight into it). src may be the caller's input
// (nothing is copied first) or dst itself. tmp holds at least the largest
// sub-range (three times on a k-nomial digit). Returns whether sub-range k went
// to fin.
template <dim_kind Kind, class C, class T, class Op, class Peer>
bool rs_step(C& c, int tag, int radix, int k, const Peer& peer, const parent_range<const T>& src,
             const parent_range<T>& dst, T* fin, std::span<T> tmp, const Op& op, bool commutative) {
  auto target = [&](int q) {
    return fin && q == k ? std::span<T>(fin, dst.sub(q).size()) : dst.sub(q);
  };
  if constexpr (Kind == dim_kind::binary) {
    // Algorithm 4.8, one dimension: send the partner's half, add in what it sends.
    const int partner = peer(1 - k);
    const std::span<const T> mine = src.sub(k);
    const std::span<T> t = tmp.first(mine.size());
    c.sendrecv(partner, src.sub(1 - k), partner, t, tag);
    if (k == 1)
      combine_into(target(k), cspan(t), mine, op);  // the partner's ranks are lower
    else
      combine_into(target(k), mine, cspan(t), op);
    return fin != nullptr;
  } else if constexpr (Kind == dim_kind::knomial) {
    // The reverse of the radix-K exchange: send each other digit its partial,
    // receive theirs for the own sub-range. They arrive from digits k - 1, ...,
    // 0, K - 1, ..., k + 1 (descending, cyclic), so each goes on the LEFT of the
    // part below or above k it belongs to: lo op own op hi, rank order kept.
    // tmp: three times the largest sub-range.
    const std::size_t n = src.sub(k).size();
    const std::span<T> t = tmp.first(n), lo = tmp.subspan(n, n), hi = tmp.subspan(2 * n, n);
    bool lo_set = false, hi_set = false;
    for (int s = 1; s < radix; ++s) {
      const int to = (k + s) % radix, from = (k + radix - s) % radix;
      c.sendrecv(peer(to), src.sub(to), peer(from), t, tag);
      std::span<T> part = from < k ? lo : hi;
      bool& set = from < k ? lo_set : hi_set;
      if (set)
        combine_left(part, cspan(t), op);
      else
        std::copy(t.begin(), t.end(), part.begin()), set = true;
    }
    const std::span<T> out = target(k);
    if (lo_set)
      combine_into(out, cspan(lo), src.sub(k), op);
    else
      copy_to(src.sub(k), out);
    if (hi_set) combine_right(out, cspan(hi), op);
    return fin != nullptr;
  } else {
    static_assert(Kind == dim_kind::linear, "unknown dim_kind");
    const int r = radix;
    if (commutative) {
      // Algorithm 4.5: the partial for coordinate d travels left from d + 1
      // around the ring, each rank adding its own; wraps, so only when order is moot.
      const int left = peer((k + r - 1) % r), right = peer((k + 1) % r);
      for (int i = 1; i < r; ++i) {
        const int qs = (k + i) % r, qr = (k + i + 1) % r;
        const std::span<T> to = target(qr);
        const std::span<T> t = tmp.first(to.size());
        c.sendrecv(left, i == 1 ? src.sub(qs) : cspan(dst.sub(qs)), right, t, tag);
        combine_into(to, src.sub(qr), cspan(t), op);
      }
      return fin != nullptr;
    }
    // Order-keeping: a linear array (no wrap). The partial for coordinate d is
    // built from both ends: L_d = acc_0 ... acc_{d-1} travels right, R_d =
    // acc_{d+1} ... acc_{r-1} travels left, farthest destination first, and d
    // forms L_d op acc_d op R_d. Every rank still sends r - 1 blocks, in r - 1
    // steps of (at most) one message each way. In place: the caller passes
    // src == dst.
    const int left = k > 0 ? peer(k - 1) : -1, right = k < r - 1 ? peer(k + 1) : -1;
    auto exchange = [&](int to, std::span<const T> out, int from, std::span<T> in) {
      if (to >= 0 && from >= 0)
        c.sendrecv(to, out, from, in, tag);
      else if (to >= 0)
        c.send(to, tag, out);
      else if (from >= 0)
        c.recv(from, tag, in);
    };
    for (int i = 1; i < r; ++i) {
      {  // rightward: send L for r + k - i, receive L for r + k - 1 - i
        const bool snd = k < r - 1 && i >= k + 1;
        const bool rcv = k >= 1 && i >= k;
        const int ds = r + k - i, dr = r + k - 1 - i;
        std::span<T> into = rcv ? dst.sub(dr) : std::span<T>{};
        std::span<T> t = tmp.first(into.size());
        exchange(snd ? right : -1, snd ? cspan(dst.sub(ds)) : std::span<const T>{}, rcv ? left : -1,
                 t);
        if (rcv) combine_left(into, cspan(t), op);
      }
      {  // leftward: send R for i + k - r, receive R for i + k + 1 - r
        const bool snd = k >= 1 && i >= r - k;
        const bool rcv = k <= r - 2 && i >= r - 1 - k;
        const int ds = i + k - r, dr = i + k + 1 - r;
        std::span<T> into = rcv ? dst.sub(dr) : std::span<T>{};
        std::span<T> t = tmp.first(into.size());
        exchange(snd ? left : -1, snd ? cspan(dst.sub(ds)) : std::span<const T>{}, rcv ? right : -1,
                 t);
        if (rcv) combine_right(into, cspan(t), op);
      }
    }
    return false;
  }
}

// ---- the folds over the dimensions -----------------------------------------

// All-gather in natural order over vl (virtual rank w); positions are virtual
// ranks, off[w] where w's data starts.
template <Topology Topo, class C, class T>
void all_gather_natural(C& c, int tag, const layout& vl, int w, const fold_map& fm,
                        std::span<T> buf, const std::size_t* off) {
  for (int j = 0; j < vl.ndims; ++j) {
    const int s = vl.dims[j].stride, r = vl.dims[j].radix;
    auto peer = [&](int q) { return fm.to_real(vl.with_coord(w, j, q)); };
    ag_step<Topo::kind>(c, tag, r, vl.coord(w, j), peer,
                        parent_range<T>{buf, off, w - w % (s * r), s});
  }
}

// Reduce-scatter over vl. `src` holds this rank's contributions at the same
// offsets as buf (it may be buf); the first step reads it, every later one
// works in place in buf. fin, if not null, receives this rank's block when
// the last step can write it directly; returns whether it did.
//  * reversed: dimensions low to high, positions digit-reversed: every partial
//    covers a contiguous range of ranks, so any associative operator. On exit
//    position rd.position(vl, w) holds the fold over every rank, in rank order.
//    src must be buf unless the first step is binary or the operator commutative.
//  * natural (commutative operators only: Algorithm 4.8 / Problem 4.4 as
//    printed): dimensions high to low, positions in rank order, so src can be
//    the caller's input as it is. On exit position w holds the total.
template <Topology Topo, bool Reversed, class C, class T, class Op>
bool reduce_scatter_fold(C& c, int tag, const layout& vl, int w, const fold_map& fm,
                         std::span<const T> src, std::span<T> buf, const std::size_t* off, T* fin,
                         std::span<T> tmp, const Op& op, bool commutative) {
  const reversed_digits rd(vl);
  bool wrote = false;
  for (int i = 0; i < vl.ndims; ++i) {
    const int j = Reversed ? i : vl.ndims - 1 - i;
    const int s = vl.dims[j].stride, r = vl.dims[j].radix;
    const int start = Reversed ? rd.start(vl, w, j) : w - w % (s * r);
    const int width = Reversed ? rd.w[j] : s;
    auto peer = [&](int q) { return fm.to_real(vl.with_coord(w, j, q)); };
    const parent_range<T> dst{buf, off, start, width};
    const parent_range<const T> from{i == 0 ? src : cspan(buf), off, start, width};
    wrote = rs_step<Topo::kind>(c, tag, r, vl.coord(w, j), peer, from, dst,
                                i == vl.ndims - 1 ? fin : nullptr, tmp, op, commutative);
  }
  return wrote;
}

// The work space rs_step needs: the largest sub-range of the first step of a
// reduce-scatter fold (the later ones are nested in it), three of them on a
// k-nomial digit.
template <Topology Topo, bool Reversed>
std::size_t rs_work_size(const layout& vl, const std::size_t* off) {
  if (vl.ndims == 0) return 0;
  const int width = Reversed ? reversed_digits(vl).w[0] : vl.dims[vl.ndims - 1].stride;
  std::size_t mx = 0;
  for (int q = 0; q + width <= vl.extent; q += width) mx = std::max(mx, off[q + width] - off[q]);
  return Topo::kind == dim_kind::knomial ? 3 * mx : mx;
}

// The reverse of reduce_scatter_reversed's data movement: all-gather over the
// digit-reversed positions, dimensions high to low.
template <Topology Topo, class C, class T>
void all_gather_reversed(C& c, int tag, const layout& vl, int w, const fold_map& fm,
                         std::span<T> buf, const std::size_t* off) {
  const reversed_digits rd(vl);
  for (int j = vl.ndims - 1; j >= 0; --j) {
    auto peer = [&](int q) { return fm.to_real(vl.with_coord(w, j, q)); };
    ag_step<Topo::kind>(c, tag, vl.dims[j].radix, vl.coord(w, j), peer,
                        parent_range<T>{buf, off, rd.start(vl, w, j), rd.w[j]});
  }
}

// Offsets of n nearly equal pieces of m elements (the first m % n one longer).
inline std::vector<std::size_t> even_pieces(std::size_t m, int n) {
  std::vector<std::size_t> off(static_cast<std::size_t>(n) + 1);
  const std::size_t q = m / static_cast<std::size_t>(n), rem = m % static_cast<std::size_t>(n);
  for (std::size_t i = 0; i <= static_cast<std::size_t>(n); ++i) off[i] = i * q + std::min(i, rem);
  return off;
}

// ---- the k-nomial tree rooted at rank 0 (Tree<K>, algorithm::tree) -----------
// Every subtree is a contiguous range of ranks [v, hi): a gather lands straight
// in place and a reduction keeps rank order by putting the child on the right.

// Leaves to root: child(ch, lo, hi) for each child (in order), then parent(pa, lo, hi) once.
template <class Child, class Parent>
void tree_up(const layout& tl, int v, Child&& child, Parent&& parent) {
  const int p = tl.p;
  for (int j = 0; j < tl.ndims; ++j) {
    const int s = tl.dims[j].stride, r = tl.dims[j].radix;
    const int k = tl.coord(v, j);
    if (k != 0) return parent(v - k * s, v, std::min(v + s, p));
    for (int q = 1; q < r && v + q * s < p; ++q)
      child(v + q * s, v + q * s, std::min(v + (q + 1) * s, p));
  }
}

// Root to leaves: parent(pa, lo, hi) once (not at the root), then child(ch, lo, hi).
template <class Parent, class Child>
void tree_down(const layout& tl, int v, Parent&& parent, Child&& child) {
  const int p = tl.p;
  for (int j = tl.ndims - 1; j >= 0; --j) {
    const int s = tl.dims[j].stride, r = tl.dims[j].radix;
    if (v % (s * r) == 0) {
      for (int q = r - 1; q >= 1; --q)  // farthest (largest range) first
        if (v + q * s < p) child(v + q * s, v + q * s, std::min(v + (q + 1) * s, p));
    } else if (v % s == 0) {
      parent(v - tl.coord(v, j) * s, v, std::min(v + s, p));
    }
  }
}

// The k-nomial layout: Topo's own for Tree<K>, the binomial tree otherwise.
template <Topology Topo>
layout tree_shape(int p) {
  if constexpr (Topo::kind == dim_kind::knomial) {
    return Topo::shape(p);
  } else {
    layout l;
    l.p = p;
    for (int j = 0, d = ceil_log2(p); j < d; ++j) l.push(2);
    return l;
  }
}

// buf: block r of rank r in place at off[r] .. off[r + 1]; on exit every rank
// has all.
template <class C, class T>
void tree_all_gather(C& c, int tag, const layout& tl, std::span<T> buf, const std::size_t* off) {
  const int v = c.rank();
  auto blocks = [&](int lo, int hi) { return buf.subspan(off[lo], off[hi] - off[lo]); };
  int hi = v + 1;
  tree_up(
      tl, v, [&](int ch, int lo, int h) { c.recv(ch, tag, blocks(lo, h)), hi = h; },
      [&](int pa, int lo, int) { c.send(pa, tag, cspan(blocks(lo, hi))); });
  tree_down(
      tl, v, [&](int pa, int, int) { c.recv(pa, tag, buf); },
      [&](int ch, int, int) { c.send(ch, tag, cspan(buf)); });
}

// Reduction of n-element partials to rank 0 along the tree, in place in acc.
template <class C, class T, class Op>
void tree_reduce(C& c, int tag, const layout& tl, std::span<T> acc, std::span<T> tmp,
                 const Op& op) {
  tree_up(
      tl, c.rank(),
      [&](int ch, int, int) {
        c.recv(ch, tag, tmp);
        combine_right(acc, cspan(tmp), op);
      },
      [&](int pa, int, int) { c.send(pa, tag, cspan(acc)); });
}

template <class C, class T>
void tree_broadcast(C& c, int tag, const layout& tl, std::span<T> buf) {
  tree_down(
      tl, c.rank(), [&](int pa, int, int) { c.recv(pa, tag, buf); },
      [&](int ch, int, int) { c.send(ch, tag, cspan(buf)); });
}

// Rank 0 holds the p*m result in buf; each rank gets its subtree's blocks into
// the same place of its own buf (p*m) and keeps block r.
template <class C, class T>
void tree_scatter(C& c, int tag, const layout& tl, std::span<T> buf, std::size_t m) {
  auto blocks = [&](int lo, int hi) {
    return buf.subspan(static_cast<std::size_t>(lo) * m, static_cast<std::size_t>(hi - lo) * m);
  };
  tree_down(
      tl, c.rank(), [&](int pa, int lo, int hi) { c.recv(pa, tag, blocks(lo, hi)); },
      [&](int ch, int lo, int hi) { c.send(ch, tag, cspan(blocks(lo, hi))); });
}

// ---- algorithm selection -----------------------------------------------------

inline void check_algorithm(std::string_view op, int rank, int p, algorithm a,
                            std::initializer_list<algorithm> ok, std::string_view topo) {
  if (a == algorithm::automatic) return;
  for (algorithm x : ok)
    if (x == a) return;
  std::string list;
  for (algorithm x : ok) list += concat(", algorithm::", to_string(x));
  invalid(op, rank, p, "algorithm::", to_string(a), " does not apply to ", op, " on ", topo,
          " (use algorithm::automatic", list, ")");
}

}  // namespace topocoll::detail::a2a
