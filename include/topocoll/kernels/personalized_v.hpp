#pragma once
// Kernels of many-to-many personalized communication (all_to_all_v): every
// rank sends send_counts[j] elements to rank j, counts vary and may be 0.
//
//  * pairwise: the direct exchange of personalized.hpp, straight from in into
//    the result: one message per nonempty block when the counts were
//    exchanged (direct_v_counted folds that exchange into the same phase on a
//    non-blocking transport), one per rank pair when the caller gave them.
//  * two_stage: the Georgia Tech lecture's "Many_to_Many with bounded
//    traffic". Stage 1 cuts each rank's outgoing data (S_i elements, in
//    destination order) into p nearly equal pieces and sends piece k to rank
//    k; stage 2 routes what every rank then holds to the real destinations.
//    Each piece carries its (source, dest, count) metadata as one all-to-all of
//    p counts per rank pair. With S = max_i S_i and R = max_j R_j, every stage-1
//    message holds <= ceil(S / p) elements and every stage-2 message about R / p,
//    so the time is Theta(t_s p + t_w (S + R + p^2)) whatever the pattern, where
//    the direct exchange pays up to t_w m_max per step.

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/errors.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../topology/topology.hpp"
#include "personalized.hpp"

namespace topocoll {

// The result of all_to_all_v, in source-rank order.
template <class T>
struct all_to_all_v_result {
  std::vector<T> data;              // counts[0] elements from rank 0, then rank 1's, ...
  std::vector<std::size_t> counts;  // counts[i]: elements received from rank i
};

}  // namespace topocoll

namespace topocoll::detail::personalized {

// d[i] = counts[0] + ... + counts[i - 1], for i = 0 .. counts.size().
inline void displacements(std::span<const std::size_t> counts, std::span<std::size_t> d) {
  d[0] = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) d[i + 1] = d[i] + counts[i];
}
inline std::vector<std::size_t> displacements(std::span<const std::size_t> counts) {
  std::vector<std::size_t> d(counts.size() + 1);
  displacements(counts, d);
  return d;
}

// Direct exchange: Algorithm 4.10's schedule block by block (direct_exchange in
// personalized.hpp), straight from in into data. skip_empty as there: true
// when the counts were exchanged (an empty block is no message), false when
// the caller supplied the receive counts (every pair exchanges a message, so
// that the receiver's size check catches every disagreement).
template <Transport C, class T>
void direct_v(C& c, std::span<const T> in, std::span<const std::size_t> sdispl, std::span<T> data,
              std::span<const std::size_t> rdispl, bool skip_empty, int tag) {
  const std::size_t self = to_size(c.rank());
  direct_exchange<T>(
      c,
      [&](int to) {
        const std::size_t k = to_size(to);
        return in.subspan(sdispl[k], sdispl[k + 1] - sdispl[k]);
      },
      [&](int from) {
        const std::size_t k = to_size(from);
        return data.subspan(rdispl[k], rdispl[k + 1] - rdispl[k]);
      },
      [&] {
        copy_n(in.data() + sdispl[self], sdispl[self + 1] - sdispl[self],
               data.data() + rdispl[self]);
      },
      skip_empty, tag);
}

// all_to_all_v's direct exchange with its count exchange folded in, for a
// non-blocking transport: every rank posts to every other rank its count (one
// std::size_t, count_tag) and then its block (tag; nonempty blocks only), so
// the blocks travel while the counts are read; then it receives every count,
// sizes the result, copies its own block and receives the blocks, all in
// schedule order. A count all_to_all run first would cost one more exchange of
// latency before the first block could move.
template <Transport C, class T>
requires NonblockingTransport<C, T> && NonblockingTransport<C, std::size_t>
void direct_v_counted(C& c, std::span<const T> in, std::span<const std::size_t> send_counts,
                      std::span<const std::size_t> sdispl, std::vector<T>& data,
                      std::vector<std::size_t>& counts, int count_tag, int tag) {
  const int p = c.size();
  const int v = c.rank();
  const std::size_t P = to_size(p);
  const std::size_t self = to_size(v);
  send_batch<C, std::size_t> count_sends(c, P - 1);
  send_batch<C, T> block_sends(c, P - 1);
  for (int j = 1; j < p; ++j) {
    const std::size_t to = to_size(pair_to(v, j, p));
    count_sends.send(static_cast<int>(to), count_tag, send_counts.subspan(to, 1));
  }
  for (int j = 1; j < p; ++j) {
    const std::size_t to = to_size(pair_to(v, j, p));
    if (send_counts[to] != 0)
      block_sends.send(static_cast<int>(to), tag, in.subspan(sdispl[to], send_counts[to]));
  }
  counts.resize(P);
  counts[self] = send_counts[self];
  for (int j = 1; j < p; ++j) {
    const std::size_t from = to_size(pair_from(v, j, p));
    c.recv(static_cast<int>(from), count_tag, std::span<std::size_t>(counts).subspan(from, 1));
  }
  const scratch<std::size_t> rd(P + 1);
  const std::span<std::size_t> rdispl = rd.span();
  displacements(counts, rdispl);
  data.resize(rdispl[P]);
  copy_n(in.data() + sdispl[self], send_counts[self], data.data() + rdispl[self]);
  for (int j = 1; j < p; ++j) {
    const std::size_t from = to_size(pair_from(v, j, p));
    if (counts[from] != 0)
      c.recv(static_cast<int>(from), tag, std::span<T>(data).subspan(rdispl[from], counts[from]));
  }
  count_sends.wait();
  block_sends.wait();
}

// Stage-1 piece k of S elements: [piece_lo(k), piece_lo(k + 1)).
inline std::size_t piece_lo(std::size_t S, int p, int k) {
  const std::size_t P = to_size(p), K = to_size(k);
  return K * (S / P) + std::min(K, S % P);
}

// Two-stage many-to-many. `meta_exchange(send, recv)` is an all-to-all of p
// counts per rank pair over the topology (the metadata).
template <Transport C, class T, class MetaExchange>
void two_stage_v(C& c, std::span<const T> in, std::span<const std::size_t> sdispl,
                 std::span<T> data, std::span<const std::size_t> rdispl,
                 MetaExchange&& meta_exchange, int tag) {
  const int p = c.size();
  const int v = c.rank();
  const std::size_t P = to_size(p);
  const std::size_t S = in.size();

  // All the bookkeeping in one work buffer:
  //   meta1[k][j]  elements of piece k (for rank k) that are destined for rank j
  //   held[i][j]   elements this rank holds after stage 1, from rank i for rank j
  //   meta2[j][i]  = held[i][j]: what this rank forwards to j, per source
  //   via[k][i]    elements from source i that arrive through rank k
  //   hdispl, gdispl, fdispl, fill: displacements of the work buffers below
  const scratch<std::size_t> book(4 * P * P + 4 * (P + 1));
  const std::span<std::size_t> meta1 = book.span().subspan(0, P * P);
  const std::span<std::size_t> held = book.span().subspan(P * P, P * P);
  const std::span<std::size_t> meta2 = book.span().subspan(2 * P * P, P * P);
  const std::span<std::size_t> via = book.span().subspan(3 * P * P, P * P);
  const std::span<std::size_t> hdispl = book.span().subspan(4 * P * P, P + 1);
  const std::span<std::size_t> gdispl = book.span().subspan(4 * P * P + P + 1, P + 1);
  const std::span<std::size_t> fdispl = book.span().subspan(4 * P * P + 2 * (P + 1), P + 1);
  const std::span<std::size_t> fill = book.span().subspan(4 * P * P + 3 * (P + 1), P + 1);

  std::fill(meta1.begin(), meta1.end(), std::size_t{0});
  {
    std::size_t k = 0;
    for (std::size_t j = 0; j < P; ++j) {
      std::size_t a = sdispl[j];
      const std::size_t b = sdispl[j + 1];
      while (a < b) {
        while (piece_lo(S, p, static_cast<int>(k) + 1) <= a) ++k;
        const std::size_t take = std::min(b, piece_lo(S, p, static_cast<int>(k) + 1)) - a;
        meta1[k * P + j] += take;
        a += take;
      }
    }
  }
  meta_exchange(std::span<const std::size_t>(meta1), held);

  // Stage 1: piece k to rank k, straight from in; held by source.
  hdispl[0] = 0;
  for (std::size_t i = 0; i < P; ++i)
    hdispl[i + 1] =
        std::accumulate(held.begin() + static_cast<std::ptrdiff_t>(i * P),
                        held.begin() + static_cast<std::ptrdiff_t>((i + 1) * P), hdispl[i]);
  const scratch<T> hold(hdispl[P]);
  const std::span<T> H = hold.span();
  auto piece = [&](int k) {
    const std::size_t lo = piece_lo(S, p, k);
    return in.subspan(lo, piece_lo(S, p, k + 1) - lo);
  };
  direct_exchange<T>(
      c, piece,
      [&](int from) {
        const std::size_t i = to_size(from);
        return H.subspan(hdispl[i], hdispl[i + 1] - hdispl[i]);
      },
      [&] {
        const auto mine = piece(v);
        copy_n(mine.data(), mine.size(), H.data() + hdispl[to_size(v)]);
      },
      true, tag);

  // Stage 2 metadata: to rank j, how much of each source i this rank forwards.
  for (std::size_t i = 0; i < P; ++i)
    for (std::size_t j = 0; j < P; ++j) meta2[j * P + i] = held[i * P + j];
  meta_exchange(std::span<const std::size_t>(meta2), via);

  // Regroup what is held by destination (one block copy per (source, dest)).
  gdispl[0] = 0;
  for (std::size_t j = 0; j < P; ++j)
    gdispl[j + 1] =
        std::accumulate(meta2.begin() + static_cast<std::ptrdiff_t>(j * P),
                        meta2.begin() + static_cast<std::ptrdiff_t>((j + 1) * P), gdispl[j]);
  const scratch<T> regroup(gdispl[P]);
  std::copy(gdispl.begin(), gdispl.end() - 1, fill.begin());
  for (std::size_t i = 0; i < P; ++i) {
    std::size_t at = hdispl[i];  // a piece is a contiguous run of in: dests ascending
    for (std::size_t j = 0; j < P; ++j) {
      const std::size_t n = held[i * P + j];
      move_n(hold.data() + at, n, regroup.data() + fill[j]);
      fill[j] += n;
      at += n;
    }
  }

  // Stage 2: to each destination; received by intermediate rank.
  fdispl[0] = 0;
  for (std::size_t k = 0; k < P; ++k)
    fdispl[k + 1] =
        std::accumulate(via.begin() + static_cast<std::ptrdiff_t>(k * P),
                        via.begin() + static_cast<std::ptrdiff_t>((k + 1) * P), fdispl[k]);
  const scratch<T> arrive(fdispl[P]);
  const std::span<T> F = arrive.span();
  const std::size_t self = to_size(v);
  direct_exchange<T>(
      c,
      [&](int to) {
        const std::size_t j = to_size(to);
        return std::span<const T>(regroup.data() + gdispl[j], gdispl[j + 1] - gdispl[j]);
      },
      [&](int from) {
        const std::size_t k = to_size(from);
        return F.subspan(fdispl[k], fdispl[k + 1] - fdispl[k]);
      },
      [&] {
        move_n(regroup.data() + gdispl[self], gdispl[self + 1] - gdispl[self],
               F.data() + fdispl[self]);
      },
      true, tag);

  // What arrived from each source must be what data has room for (it is, when
  // the counts were exchanged; a caller's receive counts may disagree): checked
  // before anything is written. Every message has been received by now.
  for (std::size_t i = 0; i < P; ++i) {
    std::size_t n = 0;
    for (std::size_t k = 0; k < P; ++k) n += via[k * P + i];
    if (n != rdispl[i + 1] - rdispl[i])
      throw message_error(concat("topocoll::all_to_all_v on rank ", v, " of ", p, ": rank ", i,
                                 " sent ", n, " elements here, the receive counts say ",
                                 rdispl[i + 1] - rdispl[i]));
  }
  // Reassemble in source order: piece k of source i precedes piece k + 1.
  std::copy(rdispl.begin(), rdispl.end() - 1, fill.begin());
  std::size_t at = 0;
  for (std::size_t k = 0; k < P; ++k)
    for (std::size_t i = 0; i < P; ++i) {
      const std::size_t n = via[k * P + i];
      move_n(arrive.data() + at, n, data.data() + fill[i]);
      fill[i] += n;
      at += n;
    }
}

// ---- the choice ----------------------------------------------------------------
// Per-rank traffic every rank agrees on (gathered once, 3 counts per rank).
struct traffic {
  std::size_t max_send = 0;     // S = max_i S_i
  std::size_t max_recv = 0;     // R = max_j R_j
  std::size_t max_message = 0;  // the largest single block m_max
};

// Direct: p - 1 steps, and a step lasts as long as its largest message, which
// may be m_max in every step. Two-stage: twice p - 1 steps of about S/p and R/p
// elements, plus two metadata all-to-alls of p counts. Two-stage wins when a
// few large blocks dominate (m_max >> (S + R) / p): skewed traffic.
inline algorithm choose_v(int p, const traffic& tr, std::size_t elem_bytes, const cost_model& cm) {
  if (p <= 2) return algorithm::pairwise;
  const std::size_t P = to_size(p);
  const double steps = p - 1;
  const double direct = steps * cm.message(tr.max_message * elem_bytes);
  const std::size_t s1 = (tr.max_send + P - 1) / P + 1;
  const std::size_t s2 = (tr.max_recv + P - 1) / P + P;
  const double meta = 2 * steps * cm.message(P * sizeof(std::size_t));
  const double two = steps * (cm.message(s1 * elem_bytes) + cm.message(s2 * elem_bytes)) + meta;
  return two < direct ? algorithm::two_stage : algorithm::pairwise;
}

// ---- the whole exchange ---------------------------------------------------------

// A fixed-size all_to_all of the counts over the topology (store-and-forward
// for these small blocks under the default model).
template <Topology Topo, Transport C>
struct count_exchange {
  C& c;
  const layout& l;
  const cost_model& cost;
  void operator()(std::span<const std::size_t> s, std::span<std::size_t> d) const {
    all_to_all<Topo>(c, l, s, d, options{algorithm::automatic, cost}, tag::all_to_all_v_counts);
  }
};

// automatic on a blocking transport: every rank knows every S_i and largest
// block (from the count exchange, K = 3 counts per pair), but only its own R_j.
// max_j R_j lies between max(m_max, sum S_i / p) and min(sum S_i, p m_max), and
// the two-stage cost grows with it: when both bounds pick the same algorithm
// that is the choice; otherwise one more exchange gets R.
template <class T, class Exchange>
algorithm choose_v_agreed(int p, std::span<const std::size_t> all, std::size_t received,
                          std::span<std::size_t> scratch_counts, const Exchange& exchange,
                          const cost_model& cost) {
  const std::size_t P = to_size(p), K = 3;
  traffic tr;
  std::size_t sum = 0;
  for (std::size_t i = 0; i < P; ++i) {
    tr.max_send = std::max(tr.max_send, all[K * i + 1]);
    tr.max_message = std::max(tr.max_message, all[K * i + 2]);
    sum += all[K * i + 1];
  }
  traffic lo = tr, hi = tr;
  lo.max_recv = std::max(tr.max_message, (sum + P - 1) / P);
  hi.max_recv = std::min(sum, P * tr.max_message);
  const algorithm a = choose_v(p, lo, sizeof(T), cost);
  if (a == choose_v(p, hi, sizeof(T), cost)) return a;
  const std::span<std::size_t> mine = scratch_counts.first(P), theirs = scratch_counts.last(P);
  std::fill(mine.begin(), mine.end(), received);
  exchange(mine, theirs);
  tr.max_recv = *std::max_element(theirs.begin(), theirs.end());
  return choose_v(p, tr, sizeof(T), cost);
}

// all_to_all_v with the counts exchanged first, on any transport; the result
// sized from them. One exchange of K counts per rank pair: the count, and for
// automatic (every rank must pick the same algorithm) this rank's S_i and
// largest block.
template <Topology Topo, Transport C, class T>
void exchange_counts_then_data(C& c, const layout& l, std::span<const T> in,
                               std::span<const std::size_t> send_counts, all_to_all_v_result<T>& r,
                               const options& opt) {
  const std::size_t P = to_size(l.p);
  const count_exchange<Topo, C> exchange{c, l, opt.cost};
  const bool agree = opt.algo == algorithm::automatic && l.p > 2;
  const std::size_t K = agree ? 3 : 1;
  const scratch<std::size_t> meta(2 * K * P + 2 * (P + 1));
  const std::span<std::size_t> mine = meta.span().first(K * P),
                               all = meta.span().subspan(K * P, K * P);
  const std::span<std::size_t> sdispl = meta.span().subspan(2 * K * P, P + 1);
  const std::span<std::size_t> rdispl = meta.span().subspan(2 * K * P + P + 1, P + 1);
  const std::size_t biggest = *std::max_element(send_counts.begin(), send_counts.end());
  for (std::size_t k = 0; k < P; ++k) {
    mine[K * k] = send_counts[k];
    if (agree) mine[K * k + 1] = in.size(), mine[K * k + 2] = biggest;
  }
  exchange(mine, all);
  r.counts.resize(P);
  for (std::size_t i = 0; i < P; ++i) r.counts[i] = all[K * i];
  displacements(send_counts, sdispl);
  displacements(r.counts, rdispl);
  r.data.resize(rdispl[P]);
  algorithm algo = opt.algo;
  if (algo == algorithm::automatic)
    algo = agree ? choose_v_agreed<T>(l.p, all, rdispl[P], mine, exchange, opt.cost)
                 : algorithm::pairwise;
  const std::span<T> data(r.data);
  if (algo == algorithm::two_stage)
    two_stage_v(c, in, cspan(sdispl), data, cspan(rdispl), exchange, tag::all_to_all_v);
  else
    direct_v(c, in, cspan(sdispl), data, cspan(rdispl), true, tag::all_to_all_v);
}

// A non-blocking transport runs the direct exchange with the counts folded in
// (one phase), and automatic is always that: with every send posted at once
// the exchange lasts about t_s + t_w max(S_i, R_j), which the two-stage
// algorithm, moving every element twice, cannot beat.
template <Topology Topo, Transport C, class T>
void all_to_all_v(C& c, const layout& l, std::span<const T> in,
                  std::span<const std::size_t> send_counts, all_to_all_v_result<T>& r,
                  const options& opt) {
  if constexpr (NonblockingTransport<C, T> && NonblockingTransport<C, std::size_t>) {
    if (opt.algo != algorithm::two_stage) {
      const scratch<std::size_t> sd(to_size(l.p) + 1);
      displacements(send_counts, sd.span());
      return direct_v_counted(c, in, send_counts, cspan(sd.span()), r.data, r.counts,
                              tag::all_to_all_v_counts, tag::all_to_all_v);
    }
  }
  exchange_counts_then_data<Topo>(c, l, in, send_counts, r, opt);
}

// The receive counts known (MPI_Alltoallv's contract): no count exchange, the
// result into out. in may be out itself (in-place use: read from a copy).
template <Topology Topo, Transport C, class T>
void all_to_all_v(C& c, const layout& l, std::span<const T> in,
                  std::span<const std::size_t> send_counts, std::span<T> out,
                  std::span<const std::size_t> recv_counts, const options& opt) {
  const std::size_t P = to_size(l.p);
  std::optional<scratch<T>> copy;
  if (in.data() == out.data() && !in.empty()) {
    copy.emplace(in.size());
    copy_n(in.data(), in.size(), copy->data());
    in = copy->span();
  }
  const scratch<std::size_t> displ(2 * (P + 1));
  const std::span<std::size_t> sdispl = displ.span().first(P + 1),
                               rdispl = displ.span().last(P + 1);
  displacements(send_counts, sdispl);
  displacements(recv_counts, rdispl);
  if (opt.algo == algorithm::two_stage)
    two_stage_v(c, in, cspan(sdispl), out, cspan(rdispl), count_exchange<Topo, C>{c, l, opt.cost},
                tag::all_to_all_v);
  else
    direct_v(c, in, cspan(sdispl), out, cspan(rdispl), false, tag::all_to_all_v);
}

}  // namespace topocoll::detail::personalized
