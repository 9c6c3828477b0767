#pragma once
// The pipelined one-to-all algorithms, from the ICS 632 notes ("Communication
// in a Ring Topology"): the "faster broadcast" that cuts the message into r
// segments and streams them down a chain of ranks, its dual reduction, the
// ring scatter (farthest destination first, one hop at a time) and its dual
// gather.
//
// They need nothing of a ring but a chain: ranks at coordinates 0, 1, ...,
// n - 1 of one linear dimension, each linked to the next. A Ring is one such
// dimension, a Mesh<K> has K of them, and on a Mesh every row (every line
// along one dimension) is a chain. A topology whose dimensions are all linear
// (chain_dims) runs each algorithm along one dimension after the other, as the
// tree of one_to_all.hpp does: broadcast and scatter from the highest
// dimension to the lowest (down the root's column, then along every row),
// reduce and gather from the lowest to the highest. Everything moves between
// neighbours along one dimension only.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/errors.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"
#include "../topology/needs.hpp"
#include "../topology/step.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::pipeline {

// ---- the segments: how finely a chain cuts its message ---------------------------

// The shortest segment: cost_model::segment_floor start-ups' worth of bytes
// (segment_floor t_s / t_w), at least one byte. A model without a start-up
// (t_s = 0) prices a message per element as free, which no transport is: the
// default t_s stands in, so the floor stays sane.
constexpr std::size_t startups_bytes(double startups, const cost_model& cost) {
  const double ts = cost.ts_us > 0 ? cost.ts_us : cost_model{}.ts_us;
  const double b = startups * ts / std::max(cost.tw_us_per_byte, 1e-12);
  return b < 1.0 ? 1 : b > 1e15 ? std::size_t{1} << 50 : static_cast<std::size_t>(b);
}
inline std::size_t min_segment_bytes(const cost_model& cost) {
  return startups_bytes(cost.segment_floor, cost);
}

// The ICS 632 optimum for r segments of m elements over a chain of p ranks
// (the Ring, or one dimension of a Mesh of side p): (p - 2 + r)(t_s + t_w m / r)
// is least at r_opt = sqrt(m (p - 2) t_w / t_s), and of the integers either
// side of r_opt the one where it is smaller; capped so that no segment is
// shorter than min_segment_bytes. Every rank of a chain forwards at once, so
// t_s and t_w are the model's busy ones. A type that is not trivially
// copyable has no known byte size: one segment per element at most,
// sizeof(T) as an estimate.
template <class T>
std::size_t ring_segments(std::size_t m, int p, const cost_model& model) {
  if (m == 0 || p <= 2) return 1;
  const cost_model cost = model.all_busy();
  const double bytes = static_cast<double>(m) * static_cast<double>(sizeof(T));
  const double ts = std::max(cost.ts_us, 1e-12);
  const double r_opt = std::sqrt(bytes * (p - 2) * cost.tw_us_per_byte / ts);
  const auto time = [&](double r) { return (p - 2 + r) * (ts + cost.tw_us_per_byte * bytes / r); };
  const double below = std::max(1.0, std::min(std::floor(r_opt), 1e15));
  const double r = time(below + 1) < time(below) ? below + 1 : below;
  const std::size_t cap = std::max<std::size_t>(1, m * sizeof(T) / min_segment_bytes(cost));
  return std::clamp<std::size_t>(static_cast<std::size_t>(r), 1, std::min(m, cap));
}

// Segment i of r nearly equal segments of [0, m).
inline std::pair<std::size_t, std::size_t> segment(std::size_t m, std::size_t r, std::size_t i) {
  const std::size_t q = m / r, extra = m % r;
  const std::size_t lo = i * q + std::min(i, extra);
  return {lo, q + (i < extra ? 1 : 0)};
}

// ---- one chain ------------------------------------------------------------------

// One linear dimension as one rank on it sees it: n ranks from the head
// (position 0, where a broadcast or scatter starts and a reduction or gather
// ends) to the tail. prev and next are the real ranks at positions pos - 1 and
// pos + 1, mod n (the tail's next is the head: a link no pipeline uses).
struct chain {
  int pos, n;
  int prev, next;
  int v, dim;                // this rank's virtual rank; the dimension the chain runs along
  std::size_t segments = 1;  // how many pieces broadcast and reduce cut the message into
};

// Broadcast as a pipeline: the head streams the segments to its successor;
// every other rank but the tail passes segment i on while it receives i + 1.
// (n - 2 + r)(t_s + t_w m / r).
template <Transport C, class T>
void chain_broadcast(C& c, const chain& ch, std::span<T> buf, int tag) {
  const std::size_t m = buf.size(), r = ch.segments;
  auto seg = [&](std::size_t i) {
    auto [lo, n] = segment(m, r, i);
    return buf.subspan(lo, n);
  };
  if constexpr (send_batch<C, T>::nonblocking) {
    // Every segment is forwarded as soon as it has arrived, and the
    // receive of the next overlaps that send.
    if (ch.pos == ch.n - 1) {
      for (std::size_t i = 0; i < r; ++i) c.recv(ch.prev, tag, seg(i));
      return;
    }
    send_batch<C, T> sends(c, r);
    for (std::size_t i = 0; i < r; ++i) {
      if (ch.pos != 0) c.recv(ch.prev, tag, seg(i));
      sends.send(ch.next, tag, std::span<const T>(seg(i)));
    }
    sends.wait();
  } else if (ch.pos == 0) {
    for (std::size_t i = 0; i < r; ++i) c.send(ch.next, tag, std::span<const T>(seg(i)));
  } else if (ch.pos == ch.n - 1) {
    for (std::size_t i = 0; i < r; ++i) c.recv(ch.prev, tag, seg(i));
  } else {
    c.recv(ch.prev, tag, seg(0));
    for (std::size_t i = 1; i < r; ++i)
      c.sendrecv(ch.next, std::span<const T>(seg(i - 1)), ch.prev, seg(i), tag);
    c.send(ch.next, tag, std::span<const T>(seg(r - 1)));
  }
}

// Its dual: partials stream from the tail towards the head; the rank at
// position k combines its own partial, acc (on entry: mine, the lower ranks),
// with the partial of positions k+1..n-1 while the previous segment moves on.
// The tail sends mine as it is. Rank order holds when the head is real
// coordinate 0 of the dimension; otherwise only for a commutative operator.
template <Transport C, class T, class Op>
void chain_reduce(C& c, const chain& ch, std::span<const T> mine, std::span<T> acc, const Op& op,
                  int tag) {
  const std::size_t m = mine.size(), r = ch.segments;
  if (ch.pos == ch.n - 1) {
    for (std::size_t i = 0; i < r; ++i) {
      auto [lo, n] = segment(m, r, i);
      c.send(ch.prev, tag, mine.subspan(lo, n));
    }
    return;
  }
  scratch<T> tmp(segment(m, r, 0).second);
  auto part = [&](std::size_t i) {
    auto [lo, n] = segment(m, r, i);
    return std::pair{acc.subspan(lo, n), std::span<T>(tmp.data(), n)};
  };
  for (std::size_t i = 0; i < r; ++i) {
    auto [a, x] = part(i);
    if (ch.pos == 0 || i == 0)
      c.recv(ch.next, tag, x);
    else
      c.sendrecv(ch.prev, std::span<const T>(part(i - 1).first), ch.next, x, tag);
    combine_right(a, std::span<const T>(x), op);
  }
  if (ch.pos != 0) c.send(ch.prev, tag, std::span<const T>(part(r - 1).first));
}

// The ring scatter of the ICS 632 notes: the head sends block(q) for
// positions n - 1 down to 1, farthest first, to its successor; every other
// rank keeps the last block it receives (in `mine`) and passes the earlier
// ones on, sending the previous block while it receives the next.
// (n - 1)(t_s + t_w b) for blocks of b elements.
template <Transport C, class T, class Blocks>
void chain_scatter(C& c, const chain& ch, Blocks&& block, std::span<T> mine, int tag) {
  if (ch.pos == 0) {
    for (int q = ch.n - 1; q >= 1; --q) c.send(ch.next, tag, std::span<const T>(block(q)));
    return;
  }
  const int k = ch.n - ch.pos;  // blocks that reach this rank; the last is its own
  if (k == 1) return c.recv(ch.prev, tag, mine);
  const std::size_t b = mine.size();
  scratch<T> store(2 * b);
  std::span<T> x(store.data(), b), y(store.data() + b, b);
  c.recv(ch.prev, tag, x);
  for (int i = 1; i < k; ++i) {
    std::span<T> into = i == k - 1 ? mine : y;
    c.sendrecv(ch.next, std::span<const T>(x), ch.prev, into, tag);
    std::swap(x, y);
  }
}

// Its dual: every rank sends its own block (mine) towards the head, then
// passes on the blocks of the positions beyond it; the head receives them
// nearest first, straight into block(q).
template <Transport C, class T, class Blocks>
void chain_gather(C& c, const chain& ch, std::span<const T> mine, Blocks&& block, int tag) {
  if (ch.pos == 0) {
    for (int q = 1; q < ch.n; ++q) c.recv(ch.next, tag, block(q));
    return;
  }
  const int k = ch.n - ch.pos;  // blocks this rank sends: its own and k - 1 relayed
  if (k == 1) return c.send(ch.prev, tag, mine);
  const std::size_t b = mine.size();
  scratch<T> store(2 * b);
  std::span<T> x(store.data(), b), y(store.data() + b, b);
  c.sendrecv(ch.prev, mine, ch.next, x, tag);
  for (int i = 1; i < k - 1; ++i) {
    c.sendrecv(ch.prev, std::span<const T>(x), ch.next, y, tag);
    std::swap(x, y);
  }
  c.send(ch.prev, tag, std::span<const T>(x));
}

// ---- every dimension --------------------------------------------------------------

// The chains of a topology of linear dimensions with `root` as virtual rank
// 0. Along dimension j, virtual rank v is on a chain when its coordinates
// below j are 0 (the mask test of Algorithm 4.2), at position coord_j(v); the
// chain is the line through v along j. Ring and Mesh relabel coordinate by
// coordinate (a torus shift), so every such line is a line of the real mesh:
// a chain's neighbours are mesh neighbours.
template <Topology Topo>
struct chains {
  static_assert(chain_dims<Topo>, "a pipeline runs along linear dimensions only");
  using step = dim_step<Topo::kind>;
  const layout& l;  // the caller's, which outlives the chains (as rooted_tree's)
  int root;
  const cost_model& cost;  // decides the segments of broadcast and reduce

  // the real rank at position q of the chain
  int real_at(const chain& ch, int q) const {
    return Topo::to_real(l, step::with_coord(l, ch.v, ch.dim, q), root);
  }
  // f(chain) for every chain `rank` is on: dimensions high to low for
  // sweep::down, low to high for sweep::up.
  template <sweep S, class F>
  void for_each(int rank, F&& f) const {
    constexpr dim_order order = S == sweep::down ? dim_order::descending : dim_order::ascending;
    const int v = Topo::to_virtual(l, rank, root);
    for_each_dim<Topo, order>(l, [&](int j) {
      if (v % step::stride(l, j) != 0) return;
      chain ch{step::coord(l, v, j), step::radix(l, j), 0, 0, v, j};
      ch.prev = real_at(ch, (ch.pos + ch.n - 1) % ch.n);
      ch.next = real_at(ch, (ch.pos + 1) % ch.n);
      f(ch);
    });
  }
  // How many ranks' blocks `rank` holds in scatter and gather: all p at the
  // root; elsewhere those of the ranks it heads chains to, stride_J where J
  // is its lowest non-zero coordinate (the one chain it is not the head of).
  int held(int rank) const {
    const int v = Topo::to_virtual(l, rank, root);
    for (int j = 0; j < l.ndims; ++j)
      if (step::coord(l, v, j) != 0) return step::stride(l, j);
    return l.p;
  }
  // Position q's share of `blocks`, the blocks of `held` consecutive ranks in
  // rank order: those of the stride_j ranks it heads chains to, one run.
  template <class T>
  std::span<T> share(std::span<T> blocks, int held, const chain& ch, int q) const {
    const int u = real_at(ch, q), s = step::stride(l, ch.dim);
    const std::size_t b = blocks.size() / static_cast<std::size_t>(held);
    return blocks.subspan(static_cast<std::size_t>(u % held - u % s) * b,
                          static_cast<std::size_t>(s) * b);
  }
};

// Broadcast: the pipeline along every dimension in turn, highest first: the
// segments go down the root's column, then along every row.
// sum_j (s_j - 2 + r_j)(t_s + t_w m / r_j), r_j from the side s_j.
template <Topology Topo, Transport C, class T>
void pipelined_broadcast(C& c, const chains<Topo>& g, std::span<T> buf, int tag) {
  g.template for_each<sweep::down>(c.rank(), [&](chain ch) {
    ch.segments = ring_segments<T>(buf.size(), ch.n, g.cost);
    chain_broadcast(c, ch, buf, tag);
  });
}

// Reduce, its dual: along every row, then up the column, into out at the
// root of g. A chain's partial covers its positions k..n-1, a contiguous range
// of real ranks in rank order when every chain ends at real coordinate 0, that
// is when g's root is rank 0; the caller sees to that for a non-commutative
// operator.
template <Topology Topo, Transport C, class T, class Op>
void pipelined_reduce(C& c, const chains<Topo>& g, in_out<T> io, const Op& op, int tag) {
  const std::span<const T> in = io.in;
  const std::span<T> out = io.out;
  const int rank = c.rank();
  std::optional<scratch<T>> store;
  std::span<T> acc;              // this rank's partial, once it is not a tail
  std::span<const T> mine = in;  // what it sends on
  g.template for_each<sweep::up>(rank, [&](chain ch) {
    ch.segments = ring_segments<T>(in.size(), ch.n, g.cost);
    if (ch.pos != ch.n - 1 && acc.empty()) {  // the root accumulates in place
      acc = rank == g.root ? out : store.emplace(in.size()).span();
      copy_to(in, acc);
      mine = acc;
    }
    chain_reduce(c, ch, mine, acc, op, tag);
  });
}

// The blocks a rank holds in scatter and gather, in rank order: all p at the
// root (in or out), those of the held(rank) ranks it heads chains to in a
// work buffer at another rank that heads chains, its own only elsewhere.
template <Topology Topo, class T>
struct held_blocks {
  int rank, held;
  scratch<T> store;  // the work buffer, if any
  held_blocks(const chains<Topo>& g, int r, std::size_t m)
      : rank(r),
        held(g.held(r)),
        store(r != g.root && held > 1 ? static_cast<std::size_t>(held) * m : 0) {}
  // this rank's own block among `blocks`
  template <class U>
  std::span<U> own(std::span<U> blocks) const {
    const std::size_t b = blocks.size() / static_cast<std::size_t>(held);
    return blocks.subspan(static_cast<std::size_t>(rank % held) * b, b);
  }
};

// Scatter: the ring scatter along every dimension in turn, highest first;
// along dimension j a message carries the blocks of the stride_j ranks the
// receiver heads chains to, in rank order, so nothing is rearranged.
// sum_j (s_j - 1)(t_s + t_w m stride_j): (p - 1)(t_s + t_w m) on a Ring.
template <Topology Topo, Transport C, class T>
void pipelined_scatter(C& c, const chains<Topo>& g, std::span<const T> in, std::span<T> out,
                       int tag) {
  held_blocks<Topo, T> h(g, c.rank(), out.size());
  const std::span<T> got = h.held > 1 ? h.store.span() : out;  // what arrives, off the root
  const std::span<const T> blocks = h.rank == g.root ? in : got;
  g.template for_each<sweep::down>(h.rank, [&](const chain& ch) {
    chain_scatter(
        c, ch, [&](int q) { return g.share(blocks, h.held, ch, q); }, got, tag);
  });
  copy_to(h.own(blocks), out);
}

// Gather, the dual: along every row, then up the column; the root receives
// straight into out, in rank order.
template <Topology Topo, Transport C, class T>
void pipelined_gather(C& c, const chains<Topo>& g, std::span<const T> in, std::span<T> out,
                      int tag) {
  held_blocks<Topo, T> h(g, c.rank(), in.size());
  const std::span<T> blocks = h.rank == g.root ? out : h.store.span();
  if (h.held > 1) copy_to(in, h.own(blocks));
  const std::span<const T> mine = h.held > 1 ? std::span<const T>(blocks) : in;
  g.template for_each<sweep::up>(h.rank, [&](const chain& ch) {
    chain_gather(
        c, ch, mine, [&](int q) { return g.share(blocks, h.held, ch, q); }, tag);
  });
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::pipeline
