#pragma once
// The pipelined one-to-all algorithms on a ring, from the ICS 632 notes
// ("Communication in a Ring Topology"): the ring scatter (farthest destination
// first, one hop at a time), its dual gather, and the "faster broadcast" that
// cuts the message into r segments and streams them down the ring, with its
// dual reduction. Everything moves between ring neighbours only.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

#include "../core/elementwise.hpp"
#include "../core/errors.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"

namespace topocoll::detail::one_to_all {

// A pipeline segment carries at least 50 start-ups' worth of bytes (50 t_s /
// t_w: 250 KB under the default model): on a busy node a message per segment
// costs far more than the model's t_s (benchmark/README.md has the figures).
inline std::size_t min_segment_bytes(const cost_model& cost) {
  const double b = 50.0 * cost.ts_us / std::max(cost.tw_us_per_byte, 1e-12);
  return b < 1.0 ? 1 : b > 1e15 ? std::size_t{1} << 50 : static_cast<std::size_t>(b);
}

// The ICS 632 optimum for r segments of m elements over a chain of p ranks:
// (p - 2 + r)(t_s + t_w m / r) is least at r = sqrt(m (p - 2) t_w / t_s),
// capped so that no segment is shorter than min_segment_bytes. A type that is
// not trivially copyable has no known byte size: one segment per element at
// most, sizeof(T) as an estimate.
template <class T>
std::size_t ring_segments(std::size_t m, int p, const cost_model& cost) {
  if (m == 0 || p <= 2) return 1;
  const double bytes = static_cast<double>(m) * static_cast<double>(sizeof(T));
  const double r = std::sqrt(bytes * (p - 2) * cost.tw_us_per_byte / std::max(cost.ts_us, 1e-12));
  const std::size_t cap = std::max<std::size_t>(1, m * sizeof(T) / min_segment_bytes(cost));
  return std::clamp<std::size_t>(static_cast<std::size_t>(std::llround(r)), 1, std::min(m, cap));
}

// The modelled time of the pipelined broadcast / reduction, and of the tree
// (ceil(log2 p) steps of the whole message); automatic picks the smaller.
template <class T>
double ring_pipeline_time(std::size_t m, int p, const cost_model& cost) {
  const std::size_t r = ring_segments<T>(m, p, cost);
  const double seg = static_cast<double>((m + r - 1) / r) * sizeof(T);
  return static_cast<double>(p - 2 + static_cast<int>(r)) *
         cost.message(static_cast<std::size_t>(seg));
}
template <class T>
double ring_tree_time(std::size_t m, int p, const cost_model& cost) {
  return ceil_log2(p) * cost.message(m * sizeof(T));
}
template <class T>
bool ring_pipeline_wins(std::size_t m, int p, const cost_model& cost) {
  return std::is_trivially_copyable_v<T> && p > 2 &&
         ring_pipeline_time<T>(m, p, cost) < ring_tree_time<T>(m, p, cost);
}

// Segment i of r nearly equal segments of [0, m).
inline std::pair<std::size_t, std::size_t> segment(std::size_t m, std::size_t r, std::size_t i) {
  const std::size_t q = m / r, extra = m % r;
  const std::size_t lo = i * q + std::min(i, extra);
  return {lo, q + (i < extra ? 1 : 0)};
}

// Broadcast as a pipeline: the root streams r segments to its successor;
// every other rank but the last passes segment i on while it receives i + 1.
// (p - 2 + r)(t_s + t_w m / r).
template <class C, class T>
void ring_broadcast(C& c, std::span<T> buf, int root, std::size_t r, int tag) {
  const int p = c.size();
  const int rank = c.rank();
  const int next = (rank + 1) % p, prev = (rank + p - 1) % p;
  const int d = (rank - root + p) % p;
  const std::size_t m = buf.size();
  auto seg = [&](std::size_t i) {
    auto [lo, n] = segment(m, r, i);
    return buf.subspan(lo, n);
  };
  if constexpr (send_batch<C, T>::nonblocking) {
    // Every segment is forwarded as soon as it has arrived, and the
    // receive of the next overlaps that send.
    if (d == p - 1) {
      for (std::size_t i = 0; i < r; ++i) c.recv(prev, tag, seg(i));
      return;
    }
    send_batch<C, T> sends(c, r);
    for (std::size_t i = 0; i < r; ++i) {
      if (d != 0) c.recv(prev, tag, seg(i));
      sends.send(next, tag, std::span<const T>(seg(i)));
    }
    sends.wait();
  } else if (d == 0) {
    for (std::size_t i = 0; i < r; ++i) c.send(next, tag, std::span<const T>(seg(i)));
  } else if (d == p - 1) {
    for (std::size_t i = 0; i < r; ++i) c.recv(prev, tag, seg(i));
  } else {
    c.recv(prev, tag, seg(0));
    for (std::size_t i = 1; i < r; ++i)
      c.sendrecv(next, std::span<const T>(seg(i - 1)), prev, seg(i), tag);
    c.send(next, tag, std::span<const T>(seg(r - 1)));
  }
}

// Its dual: partials stream from the rank farthest from the root towards it;
// the rank at distance k combines its own segment (the lower ranks) with the
// partial of distances k+1..p-1 while the previous segment moves on. Rank
// order holds when the root is 0; the caller reduces towards 0 and forwards
// otherwise, unless the operator is commutative.
template <class C, class T, class Op>
void ring_reduce(C& c, std::span<const T> in, std::span<T> out, const Op& op, int root,
                 std::size_t r, int tag) {
  const int p = c.size();
  const int rank = c.rank();
  const int next = (rank + 1) % p, prev = (rank + p - 1) % p;
  const int d = (rank - root + p) % p;
  const std::size_t m = in.size();
  if (d == p - 1) {
    for (std::size_t i = 0; i < r; ++i) {
      auto [lo, n] = segment(m, r, i);
      c.send(prev, tag, in.subspan(lo, n));
    }
    return;
  }
  detail::scratch<T> store(d != 0 ? m : 0);
  std::span<T> acc = out;  // the root accumulates in place
  if (d != 0) {
    acc = store.span();
    std::copy(in.begin(), in.end(), acc.begin());
  } else {
    copy_to(in, out);
  }
  detail::scratch<T> tmp(segment(m, r, 0).second);
  auto part = [&](std::size_t i) {
    auto [lo, n] = segment(m, r, i);
    return std::pair{acc.subspan(lo, n), std::span<T>(tmp.data(), n)};
  };
  for (std::size_t i = 0; i < r; ++i) {
    auto [a, x] = part(i);
    if (d == 0 || i == 0) {
      c.recv(next, tag, x);
    } else {
      c.sendrecv(prev, std::span<const T>(part(i - 1).first), next, x, tag);
    }
    combine_right(a, std::span<const T>(x), op);
  }
  if (d != 0) c.send(prev, tag, std::span<const T>(part(r - 1).first));
}

// The pipelined ring scatter of the ICS 632 notes: the root sends the p - 1
// blocks to its successor, farthest destination first; every other rank keeps
// the last block it receives and passes the earlier ones on, sending the
// previous block while it receives the next. (p - 1)(t_s + t_w m).
template <class C, class T>
void ring_scatter(C& c, std::span<const T> in, std::span<T> out, int root, int tag) {
  const int p = c.size();
  const int rank = c.rank();
  const std::size_t m = out.size();
  const int next = (rank + 1) % p;
  const int prev = (rank + p - 1) % p;
  if (rank == root) {
    for (int i = 0; i < p - 1; ++i) {
      const int dest = (root + p - 1 - i) % p;
      c.send(next, tag, in.subspan(static_cast<std::size_t>(dest) * m, m));
    }
    copy_to(in.subspan(static_cast<std::size_t>(root) * m, m), out);
    return;
  }
  const int n = p - (rank - root + p) % p;  // blocks that reach this rank; the last is its own
  if (n == 1) {
    c.recv(prev, tag, out);
    return;
  }
  detail::scratch<T> store(2 * m);
  std::span<T> a(store.data(), m), b(store.data() + m, m);
  c.recv(prev, tag, a);
  for (int i = 1; i < n; ++i) {
    std::span<T> into = i == n - 1 ? out : b;
    c.sendrecv(next, std::span<const T>(a), prev, into, tag);
    std::swap(a, b);
  }
}

// Its dual: every rank sends its own block towards the root, then passes on
// the blocks of the ranks beyond it; the root receives them nearest first,
// straight into place.
template <class C, class T>
void ring_gather(C& c, std::span<const T> in, std::span<T> out, int root, int tag) {
  const int p = c.size();
  const int rank = c.rank();
  const std::size_t m = in.size();
  const int next = (rank + 1) % p;
  const int prev = (rank + p - 1) % p;
  if (rank == root) {
    copy_to(in, out.subspan(static_cast<std::size_t>(root) * m, m));
    for (int d = 1; d < p; ++d) {
      const auto at = static_cast<std::size_t>((root + d) % p) * m;
      c.recv(next, tag, out.subspan(at, m));
    }
    return;
  }
  const int n = p - (rank - root + p) % p;  // blocks this rank sends: its own and n - 1 relayed
  if (n == 1) {
    c.send(prev, tag, in);
    return;
  }
  detail::scratch<T> store(2 * m);
  std::span<T> a(store.data(), m), b(store.data() + m, m);
  c.sendrecv(prev, in, next, a, tag);
  for (int i = 1; i < n - 1; ++i) {
    c.sendrecv(prev, std::span<const T>(a), next, b, tag);
    std::swap(a, b);
  }
  c.send(prev, tag, std::span<const T>(a));
}

}  // namespace topocoll::detail::one_to_all
