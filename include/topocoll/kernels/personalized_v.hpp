#pragma once
// Kernels of many-to-many personalized communication (all_to_all_v): every
// rank sends send_counts[j] elements to rank j, counts vary and may be 0.
//
//  * pairwise: the direct exchange of personalized.hpp with one message per
//    nonempty block, straight from in into the result.
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
#include <span>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/errors.hpp"
#include "../core/options.hpp"
#include "../topology/topology.hpp"
#include "personalized.hpp"

namespace topocoll::detail::personalized {

inline std::vector<std::size_t> displacements(std::span<const std::size_t> counts) {
  std::vector<std::size_t> d(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) d[i + 1] = d[i] + counts[i];
  return d;
}

// The pairwise schedule with variable sizes: in step j send block send(to) and
// receive block recv(from); an empty side is left out (a rank that only sends
// targets one that receives from it in the same step, so no wait can cycle).
template <Transport C, class T, class SendBlock, class RecvBlock>
void exchange_v(C& c, SendBlock&& send, RecvBlock&& recv, int tag) {
  const int p = c.size();
  const int v = c.rank();
  for (int j = 1; j < p; ++j) {
    const int to = pair_to(v, j, p);
    const int from = pair_from(v, j, p);
    const std::span<const T> s = send(to);
    const std::span<T> r = recv(from);
    if (s.empty() && r.empty()) continue;
    if (s.empty())
      c.recv(from, tag, r);
    else if (r.empty())
      c.send(to, tag, s);
    else
      c.sendrecv(to, s, from, r, tag);
  }
}

// Direct exchange: Algorithm 4.10's schedule, block by block.
template <Transport C, class T>
void direct_v(C& c, std::span<const T> in, std::span<const std::size_t> sdispl, std::span<T> data,
              std::span<const std::size_t> rdispl, int tag) {
  const int v = c.rank();
  const std::size_t self = to_size(v);
  copy_n(in.data() + sdispl[self], sdispl[self + 1] - sdispl[self], data.data() + rdispl[self]);
  exchange_v<C, T>(
      c,
      [&](int to) {
        const std::size_t k = to_size(to);
        return in.subspan(sdispl[k], sdispl[k + 1] - sdispl[k]);
      },
      [&](int from) {
        const std::size_t k = to_size(from);
        return data.subspan(rdispl[k], rdispl[k + 1] - rdispl[k]);
      },
      tag);
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

  // meta1[k][j]: elements of piece k (for rank k) that are destined for rank j.
  std::vector<std::size_t> meta1(P * P, 0);
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
  // held[i][j]: elements this rank holds after stage 1 that came from rank i
  // and go to rank j.
  std::vector<std::size_t> held(P * P);
  meta_exchange(std::span<const std::size_t>(meta1), std::span<std::size_t>(held));

  // Stage 1: piece k to rank k, straight from in; hold by source.
  std::vector<std::size_t> from_src(P, 0);
  for (std::size_t i = 0; i < P; ++i)
    from_src[i] =
        std::accumulate(held.begin() + static_cast<std::ptrdiff_t>(i * P),
                        held.begin() + static_cast<std::ptrdiff_t>((i + 1) * P), std::size_t{0});
  const std::vector<std::size_t> hdispl = displacements(from_src);
  std::unique_ptr<T[]> hold = scratch<T>(hdispl[P]);
  const std::span<T> H(hold.get(), hdispl[P]);
  auto piece = [&](int k) {
    const std::size_t lo = piece_lo(S, p, k);
    return in.subspan(lo, piece_lo(S, p, k + 1) - lo);
  };
  {
    const auto mine = piece(v);
    copy_n(mine.data(), mine.size(), H.data() + hdispl[to_size(v)]);
  }
  exchange_v<C, T>(
      c, piece,
      [&](int from) {
        const std::size_t i = to_size(from);
        return H.subspan(hdispl[i], hdispl[i + 1] - hdispl[i]);
      },
      tag);

  // Stage 2 metadata: to rank j, how much of each source i this rank forwards.
  std::vector<std::size_t> meta2(P * P);
  for (std::size_t i = 0; i < P; ++i)
    for (std::size_t j = 0; j < P; ++j) meta2[j * P + i] = held[i * P + j];
  std::vector<std::size_t> via(P * P);  // via[k][i]: from source i through rank k
  meta_exchange(std::span<const std::size_t>(meta2), std::span<std::size_t>(via));

  // Regroup what is held by destination (one block copy per (source, dest)).
  std::vector<std::size_t> to_dst(P, 0);
  for (std::size_t j = 0; j < P; ++j)
    for (std::size_t i = 0; i < P; ++i) to_dst[j] += held[i * P + j];
  const std::vector<std::size_t> gdispl = displacements(to_dst);
  std::unique_ptr<T[]> regroup = scratch<T>(gdispl[P]);
  {
    std::vector<std::size_t> fill(gdispl.begin(), gdispl.end() - 1);
    for (std::size_t i = 0; i < P; ++i) {
      std::size_t at = hdispl[i];  // a piece is a contiguous run of in: dests ascending
      for (std::size_t j = 0; j < P; ++j) {
        const std::size_t n = held[i * P + j];
        move_n(hold.get() + at, n, regroup.get() + fill[j]);
        fill[j] += n;
        at += n;
      }
    }
  }
  hold.reset();

  // Stage 2: to each destination, receive by intermediate rank.
  std::vector<std::size_t> from_via(P, 0);
  for (std::size_t k = 0; k < P; ++k)
    for (std::size_t i = 0; i < P; ++i) from_via[k] += via[k * P + i];
  const std::vector<std::size_t> fdispl = displacements(from_via);
  std::unique_ptr<T[]> arrive = scratch<T>(fdispl[P]);
  const std::span<T> F(arrive.get(), fdispl[P]);
  const std::size_t self = to_size(v);
  move_n(regroup.get() + gdispl[self], gdispl[self + 1] - gdispl[self], F.data() + fdispl[self]);
  exchange_v<C, T>(
      c,
      [&](int to) {
        const std::size_t j = to_size(to);
        return std::span<const T>(regroup.get() + gdispl[j], gdispl[j + 1] - gdispl[j]);
      },
      [&](int from) {
        const std::size_t k = to_size(from);
        return F.subspan(fdispl[k], fdispl[k + 1] - fdispl[k]);
      },
      tag);

  // Reassemble in source order: piece k of source i precedes piece k + 1.
  std::vector<std::size_t> fill(rdispl.begin(), rdispl.end() - 1);
  std::size_t at = 0;
  for (std::size_t k = 0; k < P; ++k)
    for (std::size_t i = 0; i < P; ++i) {
      const std::size_t n = via[k * P + i];
      if (fill[i] + n > rdispl[i + 1])
        throw message_error(concat("topocoll::all_to_all_v on rank ", v, ": rank ", k,
                                   " forwarded more elements from rank ", i, " than were sent"));
      move_n(arrive.get() + at, n, data.data() + fill[i]);
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

}  // namespace topocoll::detail::personalized
