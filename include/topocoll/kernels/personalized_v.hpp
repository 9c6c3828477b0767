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
#include <type_traits>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/errors.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/pages.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "personalized.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

// The result of all_to_all_v, in source-rank order.
template <class T>
struct all_to_all_v_result {
  std::vector<T> data;              // counts[0] elements from rank 0, then rank 1's, ...
  std::vector<std::size_t> counts;  // counts[i]: elements received from rank i
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::personalized_v {

// The personalized exchange's parts that the variable-count forms use.
using personalized::all_to_all;
using personalized::direct_exchange;
using personalized::empty_blocks;
using personalized::exchange_blocks;
using personalized::to_size;

// d[i] = counts[0] + ... + counts[i - 1], for i = 0 .. counts.size().
inline void displacements(std::span<const std::size_t> counts, std::span<std::size_t> d) {
  d[0] = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) d[i + 1] = d[i] + counts[i];
}

// A buffer of p blocks of any sizes, by their counts: block k holds counts[k]
// elements, after those of blocks 0 .. k - 1.
template <class T>
struct counted {
  std::span<T> data;
  std::span<const std::size_t> counts;
};

// The same by displacements: block k is [displ[k], displ[k + 1]) of data.
template <class T>
struct displaced {
  std::span<T> data;
  std::span<const std::size_t> displ;
  std::span<T> block(std::size_t k) const {
    return data.subspan(displ[k], displ[k + 1] - displ[k]);
  }
};

// Send and receive displacements of p ranks, in one work buffer.
struct displacement_pair {
  static std::size_t size(std::size_t P) { return 2 * (P + 1); }
  displacement_pair(std::span<std::size_t> w, std::size_t P)
      : send(w.first(P + 1)), recv(w.subspan(P + 1, P + 1)) {}
  std::span<std::size_t> send, recv;
};

// The own block travels in no message, so no receive checks its size: a
// rank whose recv_counts[me] differs from its send_counts[me] would write
// past the block, or leave part of it unwritten.
inline void check_own_block(int rank, int p, std::size_t sent, std::size_t expected) {
  if (sent != expected)
    throw message_error(concat("topocoll::all_to_all_v on rank ", rank, " of ", p, ": sends ", sent,
                               " elements to itself, recv_counts[", rank, "] = ", expected));
}

// Direct exchange: the pairwise schedule block by block (direct_exchange in
// personalized.hpp), straight from src's blocks into dst's. The own block is
// copied from a const source and moved from a work buffer.
template <Transport C, class S, class T>
void direct_v(C& c, const displaced<S>& src, const displaced<T>& dst, empty_blocks e, int tag) {
  const std::size_t self = to_size(c.rank());
  direct_exchange<T>(c,
                     exchange_blocks{[&](int to) { return src.block(to_size(to)); },
                                     [&](int from) { return dst.block(to_size(from)); },
                                     [&] {
                                       check_own_block(c.rank(), c.size(), src.block(self).size(),
                                                       dst.block(self).size());
                                       if constexpr (std::is_const_v<S>)
                                         copy_to(src.block(self), dst.block(self));
                                       else
                                         move_to(src.block(self), dst.block(self));
                                     }},
                     e, tag);
}

// all_to_all_v's direct exchange with its count exchange folded in, for a
// non-blocking transport: every rank posts to every other rank its count (one
// std::size_t, tag::all_to_all_v_counts) and then its block (tag::all_to_all_v;
// nonempty blocks only), so the blocks travel while the counts are read; then
// it receives every count, sizes the result, copies its own block and receives
// the blocks, all in schedule order. A count all_to_all run first would cost
// one more exchange of latency before the first block could move.
template <Transport C, class T>
requires NonblockingTransport<C, T> && NonblockingTransport<C, std::size_t>
void direct_v_counted(C& c, const counted<const T>& send, all_to_all_v_result<T>& r) {
  const int p = c.size();
  const int v = c.rank();
  const std::size_t P = to_size(p);
  const scratch<std::size_t> w(displacement_pair::size(P));
  const displacement_pair d(w.span(), P);
  displacements(send.counts, d.send);
  const displaced<const T> src{send.data, d.send};
  send_batch<C, std::size_t> count_sends(c, P - 1);
  send_batch<C, T> block_sends(c, P - 1);
  for (int j = 1; j < p; ++j) {
    const int to = pair_to(v, j, p);
    count_sends.send(to, tag::all_to_all_v_counts, send.counts.subspan(to_size(to), 1));
  }
  for (int j = 1; j < p; ++j) {
    const int to = pair_to(v, j, p);
    if (send.counts[to_size(to)] != 0)
      block_sends.send(to, tag::all_to_all_v, src.block(to_size(to)));
  }
  r.counts.resize(P);
  r.counts[to_size(v)] = send.counts[to_size(v)];
  for (int j = 1; j < p; ++j) {
    const int from = pair_from(v, j, p);
    c.recv(from, tag::all_to_all_v_counts, std::span(r.counts).subspan(to_size(from), 1));
  }
  displacements(r.counts, d.recv);
  resize_fresh(r.data, d.recv[P]);
  const displaced<T> dst{std::span<T>(r.data), d.recv};
  copy_to(src.block(to_size(v)), dst.block(to_size(v)));
  for (int j = 1; j < p; ++j) {
    const int from = pair_from(v, j, p);
    if (r.counts[to_size(from)] != 0) c.recv(from, tag::all_to_all_v, dst.block(to_size(from)));
  }
  count_sends.wait();
  block_sends.wait();
}

// ---- two-stage -----------------------------------------------------------------
// Stage-1 piece k of S elements: [piece_lo(k), piece_lo(k + 1)).
inline std::size_t piece_lo(std::size_t S, int p, int k) {
  const std::size_t P = to_size(p), K = to_size(k);
  return K * (S / P) + std::min(K, S % P);
}

// two_stage_v's bookkeeping, in one work buffer of p x p tables and p + 1
// displacements:
//   meta1[k][j]  elements of piece k (for rank k) that are destined for rank j
//   held[i][j]   elements this rank holds after stage 1, from rank i for rank j
//   meta2[j][i]  = held[i][j]: what this rank forwards to j, per source
//   via[k][i]    elements from source i that arrive through rank k
//   pdispl       where the stage-1 pieces start in the input
//   hdispl, gdispl, fdispl  the stage buffers: held by source, regrouped by
//                destination, arrived by intermediate rank
//   fill         the running ends of a regrouping
struct two_stage_book {
  static std::size_t size(std::size_t P) { return 4 * P * P + 5 * (P + 1); }
  two_stage_book(std::span<std::size_t> w, std::size_t P)
      : meta1(w.subspan(0, P * P)),
        held(w.subspan(P * P, P * P)),
        meta2(w.subspan(2 * P * P, P * P)),
        via(w.subspan(3 * P * P, P * P)),
        pdispl(w.subspan(4 * P * P, P + 1)),
        hdispl(w.subspan(4 * P * P + (P + 1), P + 1)),
        gdispl(w.subspan(4 * P * P + 2 * (P + 1), P + 1)),
        fdispl(w.subspan(4 * P * P + 3 * (P + 1), P + 1)),
        fill(w.subspan(4 * P * P + 4 * (P + 1), P + 1)) {}
  std::span<std::size_t> meta1, held, meta2, via;
  std::span<std::size_t> pdispl, hdispl, gdispl, fdispl, fill;
};

// The stage-1 pieces of S elements whose blocks start at sdispl: where they
// start (pdispl) and how much of each goes to each destination (meta1).
inline void cut_pieces(std::span<const std::size_t> sdispl, const two_stage_book& b) {
  const std::size_t P = sdispl.size() - 1;
  const std::size_t S = sdispl[P];
  const int p = static_cast<int>(P);
  for (std::size_t k = 0; k <= P; ++k) b.pdispl[k] = piece_lo(S, p, static_cast<int>(k));
  std::fill(b.meta1.begin(), b.meta1.end(), std::size_t{0});
  std::size_t k = 0;
  for (std::size_t j = 0; j < P; ++j) {
    for (std::size_t a = sdispl[j]; a < sdispl[j + 1];) {
      while (b.pdispl[k + 1] <= a) ++k;
      const std::size_t take = std::min(sdispl[j + 1], b.pdispl[k + 1]) - a;
      b.meta1[k * P + j] += take;
      a += take;
    }
  }
}

// d[i + 1] = d[i] + the sum of row i of the p x p table t.
inline void row_displacements(std::span<const std::size_t> t, std::span<std::size_t> d) {
  const std::size_t P = d.size() - 1;
  d[0] = 0;
  for (std::size_t i = 0; i < P; ++i)
    d[i + 1] = std::accumulate(t.begin() + static_cast<std::ptrdiff_t>(i * P),
                               t.begin() + static_cast<std::ptrdiff_t>((i + 1) * P), d[i]);
}

// from holds runs of elements, row by row of the p x p table t (run (i, j)
// holds t[i][j] elements); each moves to the end of column j's part of `to`,
// so that to's block j holds the runs of column j in row order.
template <class T>
void regroup_by_column(std::span<T> from, std::span<const std::size_t> t, const displaced<T>& to,
                       std::span<std::size_t> fill) {
  const std::size_t P = to.displ.size() - 1;
  std::copy(to.displ.begin(), to.displ.end() - 1, fill.begin());
  std::size_t at = 0;
  for (std::size_t i = 0; i < P; ++i)
    for (std::size_t j = 0; j < P; ++j) {
      const std::size_t n = t[i * P + j];
      move_to(from.subspan(at, n), to.data.subspan(fill[j], n));
      fill[j] += n;
      at += n;
    }
}

// What arrived from each source (the columns of via) must be what the result
// has room for (it is, when the counts were exchanged; a caller's receive
// counts may disagree): checked before anything is written.
inline void check_arrivals(int v, std::span<const std::size_t> via,
                           std::span<const std::size_t> rdispl) {
  const std::size_t P = rdispl.size() - 1;
  for (std::size_t i = 0; i < P; ++i) {
    std::size_t n = 0;
    for (std::size_t k = 0; k < P; ++k) n += via[k * P + i];
    if (n != rdispl[i + 1] - rdispl[i])
      throw message_error(concat("topocoll::all_to_all_v on rank ", v, " of ", P, ": rank ", i,
                                 " sent ", n, " elements here, the receive counts say ",
                                 rdispl[i + 1] - rdispl[i]));
  }
}

// Two-stage many-to-many. `meta_exchange(send, recv)` is an all-to-all of p
// counts per rank pair over the topology (the metadata).
template <Transport C, class T, class MetaExchange>
void two_stage_v(C& c, const displaced<const T>& src, const displaced<T>& dst,
                 MetaExchange&& meta_exchange, int tag) {
  const std::size_t P = to_size(c.size());
  const scratch<std::size_t> w(two_stage_book::size(P));
  const two_stage_book b(w.span(), P);
  cut_pieces(src.displ, b);
  meta_exchange(cspan(b.meta1), b.held);

  // Stage 1: piece k to rank k, straight from the input; held by source.
  row_displacements(b.held, b.hdispl);
  const scratch<T> hold(b.hdispl[P]);
  direct_v(c, displaced<const T>{src.data, b.pdispl}, displaced<T>{hold.span(), b.hdispl},
           empty_blocks::skipped, tag);

  // Stage 2 metadata: to rank j, how much of each source i this rank forwards.
  for (std::size_t i = 0; i < P; ++i)
    for (std::size_t j = 0; j < P; ++j) b.meta2[j * P + i] = b.held[i * P + j];
  meta_exchange(cspan(b.meta2), b.via);

  // Regrouped by destination (one block copy per (source, dest)), then stage
  // 2: to each destination; received by intermediate rank.
  row_displacements(b.meta2, b.gdispl);
  const scratch<T> regroup(b.gdispl[P]);
  const displaced<T> by_dest{regroup.span(), b.gdispl};
  regroup_by_column(hold.span(), cspan(b.held), by_dest, b.fill);
  row_displacements(b.via, b.fdispl);
  const scratch<T> arrive(b.fdispl[P]);
  direct_v(c, by_dest, displaced<T>{arrive.span(), b.fdispl}, empty_blocks::skipped, tag);

  // Every message has been received by now. Reassembled in source order:
  // piece k of source i precedes piece k + 1.
  check_arrivals(c.rank(), b.via, dst.displ);
  regroup_by_column(arrive.span(), cspan(b.via), dst, b.fill);
}

// ---- the whole exchange ---------------------------------------------------------

// Automatic's choice needs the counts, so the exchange asks its plan while it
// runs (the collective gives it: plan::personalized_v::exchange_plan):
//   plan.counts(l, m): the algorithm of a fixed-size exchange of m counts per
//     rank pair;
//   plan.template data<T>(p, all, received, scratch, exchange): the data's
//     algorithm once every rank's K counts are in `all` (it may run exchange
//     once more, in scratch).

// A fixed-size all_to_all of the counts over the topology, by the plan's
// algorithm (store-and-forward for these small blocks under the default model).
template <Topology Topo, Transport C, class Plan>
struct count_exchange {
  C& c;
  const layout& l;
  const Plan& plan;
  void operator()(std::span<const std::size_t> s, std::span<std::size_t> d) const {
    const std::size_t m = s.size() / to_size(l.p);
    all_to_all<Topo>(c, l, s, d, plan.counts(l, m), tag::all_to_all_v_counts);
  }
};

// exchange_counts_then_data's work buffer: K counts per rank pair, this rank's
// and every rank's, then the send and receive displacements.
struct count_book {
  static std::size_t size(std::size_t K, std::size_t P) {
    return 2 * K * P + displacement_pair::size(P);
  }
  count_book(std::span<std::size_t> w, std::size_t K, std::size_t P)
      : mine(w.first(K * P)), all(w.subspan(K * P, K * P)), displ(w.subspan(2 * K * P), P) {}
  std::span<std::size_t> mine, all;
  displacement_pair displ;
};

// all_to_all_v with the counts exchanged first, on any transport; the result
// sized from them. One exchange of K counts per rank pair: the count, and for
// automatic (every rank must pick the same algorithm) this rank's S_i and
// largest block.
template <Topology Topo, Transport C, class T, class Plan>
void exchange_counts_then_data(C& c, const layout& l, const counted<const T>& send,
                               all_to_all_v_result<T>& r, algorithm algo, const Plan& plan) {
  const std::size_t P = to_size(l.p);
  const count_exchange<Topo, C, Plan> exchange{c, l, plan};
  const bool agree = algo == algorithm::automatic && l.p > 2;
  const std::size_t K = agree ? 3 : 1;
  const scratch<std::size_t> w(count_book::size(K, P));
  const count_book b(w.span(), K, P);
  const std::size_t biggest = *std::max_element(send.counts.begin(), send.counts.end());
  for (std::size_t k = 0; k < P; ++k) {
    b.mine[K * k] = send.counts[k];
    if (agree) b.mine[K * k + 1] = send.data.size(), b.mine[K * k + 2] = biggest;
  }
  exchange(b.mine, b.all);
  r.counts.resize(P);
  for (std::size_t i = 0; i < P; ++i) r.counts[i] = b.all[K * i];
  displacements(send.counts, b.displ.send);
  displacements(r.counts, b.displ.recv);
  resize_fresh(r.data, b.displ.recv[P]);
  if (algo == algorithm::automatic)
    algo = agree ? plan.template data<T>(l.p, b.all, b.displ.recv[P], b.mine, exchange)
                 : algorithm::pairwise;
  const displaced<const T> src{send.data, b.displ.send};
  const displaced<T> dst{std::span<T>(r.data), b.displ.recv};
  if (algo == algorithm::two_stage)
    two_stage_v(c, src, dst, exchange, tag::all_to_all_v);
  else
    direct_v(c, src, dst, empty_blocks::skipped, tag::all_to_all_v);
}

// A non-blocking transport runs the direct exchange with the counts folded in
// (one phase), and automatic is always that: with every send posted at once
// the exchange lasts about t_s + t_w max(S_i, R_j), which the two-stage
// algorithm, moving every element twice, cannot beat.
template <Topology Topo, Transport C, class T, class Plan>
void all_to_all_v(C& c, const layout& l, std::span<const T> in,
                  std::span<const std::size_t> send_counts, all_to_all_v_result<T>& r,
                  algorithm algo, const Plan& plan) {
  const counted<const T> send{in, send_counts};
  if constexpr (NonblockingTransport<C, T> && NonblockingTransport<C, std::size_t>) {
    if (algo != algorithm::two_stage) return direct_v_counted(c, send, r);
  }
  exchange_counts_then_data<Topo>(c, l, send, r, algo, plan);
}

// The receive counts known (MPI_Alltoallv's contract): no count exchange, the
// result into recv. send may be recv itself (in-place use: read from a copy).
template <Topology Topo, Transport C, class T, class Plan>
void all_to_all_v(C& c, const layout& l, counted<const T> send, const counted<T>& recv,
                  algorithm algo, const Plan& plan) {
  const std::size_t P = to_size(l.p);
  std::optional<scratch<T>> copy;
  if (send.data.data() == recv.data.data() && !send.data.empty()) {
    copy.emplace(send.data.size());
    copy_to(send.data, copy->span());
    send.data = copy->span();
  }
  const scratch<std::size_t> w(displacement_pair::size(P));
  const displacement_pair d(w.span(), P);
  displacements(send.counts, d.send);
  displacements(recv.counts, d.recv);
  const displaced<const T> src{send.data, d.send};
  const displaced<T> dst{recv.data, d.recv};
  if (algo == algorithm::two_stage)
    two_stage_v(c, src, dst, count_exchange<Topo, C, Plan>{c, l, plan}, tag::all_to_all_v);
  else
    direct_v(c, src, dst, empty_blocks::sent, tag::all_to_all_v);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::personalized_v
