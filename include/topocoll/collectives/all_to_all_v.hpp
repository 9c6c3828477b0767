#pragma once
// topocoll::all_to_all_v: many-to-many personalized communication, counts vary.
//
//   std::vector<std::size_t> counts(p);   // counts[j] elements for rank j
//   auto r = topocoll::all_to_all_v<topocoll::Ring>(comm, std::span<const T>(in),
//                                                   std::span<const std::size_t>(counts));
//   r.data    // what every rank sent here, in source-rank order
//   r.counts  // r.counts[i]: how many of them came from rank i
//
// in is the concatenation of the blocks for ranks 0..p-1, send_counts[j]
// elements for rank j (0 allowed).
//   algorithm::pairwise: the direct exchange, one message per nonempty block.
//     On a non-blocking transport (mpi::Comm, loopback::Comm) the counts are
//     folded into it: every count and every block is posted at once, then the
//     counts are received, the result sized, the blocks received (one phase).
//     On a blocking one the counts go first, as an all_to_all over the topology.
//   algorithm::two_stage: the many-to-many with bounded traffic: spread every
//     rank's data evenly over all ranks, then route it to the destinations
//     (counts, then two metadata exchanges, over the topology).
//   algorithm::automatic (default): on a non-blocking transport, pairwise (its
//     concurrent sends cost about t_s + t_w max(S_i, R_j); two-stage moves every
//     element twice). On a blocking transport the count exchange also carries
//     every rank's (S_i, largest block), and two_stage is picked when the
//     t_s + t_w m model says the largest blocks would stall the p - 1 blocking
//     rounds (a second small exchange of R_j only when those bounds cannot decide).
//
// With the receive counts known, MPI_Alltoallv's contract: no count exchange,
// and the result goes into the caller's buffer (no allocation):
//
//   topocoll::all_to_all_v<topocoll::Ring>(comm, in, send_counts, out, recv_counts);
//
// out holds sum(recv_counts) elements, recv_counts[i] from rank i, in
// source-rank order. Every pair exchanges a message, empty ones too, and each
// receive checks its size: a rank whose recv_counts[i] differs from what rank i
// sends it throws topocoll::message_error (see the overload). automatic is the
// direct exchange here; two_stage can be forced.
// See doc/all_to_all.md.

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/errors.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/personalized.hpp"
#include "../kernels/personalized_v.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

// The result of all_to_all_v, in source-rank order.
template <class T>
struct all_to_all_v_result {
  std::vector<T> data;              // counts[0] elements from rank 0, then rank 1's, ...
  std::vector<std::size_t> counts;  // counts[i]: elements received from rank i
};

namespace detail::personalized {

// The argument checks both overloads share: send_counts has p entries adding
// up to in.size(), and the algorithm applies.
template <class T>
void check_v_args(std::string_view op, int rank, int p, std::span<const T> in,
                  std::span<const std::size_t> send_counts, algorithm algo) {
  check_size(op, rank, p, "send_counts (one per rank)", send_counts.size(), to_size(p));
  const std::size_t total = std::accumulate(send_counts.begin(), send_counts.end(), std::size_t{0});
  if (total != in.size())
    invalid(op, rank, p, "in holds ", in.size(), " elements, but send_counts add up to ", total);
  if (algo != algorithm::automatic && algo != algorithm::pairwise && algo != algorithm::two_stage)
    invalid(op, rank, p, "algorithm ", to_string(algo),
            " does not apply; use automatic, pairwise or two_stage");
}

}  // namespace detail::personalized

template <Topology Topo, Transport C, InputBuffer In, InputBuffer Counts>
requires std::same_as<buffer_value_t<Counts>, std::size_t> all_to_all_v_result<buffer_value_t<In>>
all_to_all_v(C& c, In&& input, Counts&& send_counts_in, const options& opt = {}) {
  using T = buffer_value_t<In>;
  static_assert(std::is_default_constructible_v<T> && std::is_copy_assignable_v<T>,
                "all_to_all_v returns a std::vector of the element type: it must be default "
                "constructible and copy assignable");
  namespace pz = detail::personalized;
  constexpr std::string_view op = "all_to_all_v";
  const std::span<const T> in = detail::in_span(input);
  const std::span<const std::size_t> send_counts = detail::in_span(send_counts_in);
  const int rank = c.rank();
  const int p = c.size();
  const std::size_t P = static_cast<std::size_t>(p);
  const layout l = detail::shape_or_throw<Topo>(op, rank, p);
  pz::check_v_args(op, rank, p, in, send_counts, opt.algo);

  all_to_all_v_result<T> r;
  if (p == 1) {
    r.counts.assign(1, in.size());
    r.data.assign(in.begin(), in.end());
    return r;
  }

  // A non-blocking transport runs the direct exchange with the counts folded
  // in (one phase), and automatic is always that: with every send posted at
  // once the exchange lasts about t_s + t_w max(S_i, R_j), which the two-stage
  // algorithm, moving every element twice, cannot beat.
  if constexpr (NonblockingTransport<C, T> && NonblockingTransport<C, std::size_t>) {
    if (opt.algo != algorithm::two_stage) {
      const detail::scratch<std::size_t> sd(P + 1);
      pz::displacements(send_counts, sd.span());
      pz::direct_v_counted(c, in, send_counts, std::span<const std::size_t>(sd.span()), r.data,
                           r.counts, detail::tag::all_to_all_v_counts, detail::tag::all_to_all_v);
      return r;
    }
  }

  // Otherwise the counts come first, as fixed-size all_to_alls of counts over
  // the topology (store-and-forward for these small blocks under the default
  // model), then the data.
  auto counts_all_to_all = [&](std::span<const std::size_t> s, std::span<std::size_t> d) {
    pz::all_to_all<Topo>(c, l, s, d, s.size() / P, algorithm::automatic, opt.cost,
                         detail::tag::all_to_all_v_counts);
  };

  // One exchange of K counts per rank pair: the count, and for automatic (every
  // rank must pick the same algorithm) this rank's S_i and largest block.
  const bool agree = opt.algo == algorithm::automatic && p > 2;
  const std::size_t K = agree ? 3 : 1;
  const detail::scratch<std::size_t> meta(2 * K * P + 2 * (P + 1));
  const std::span<std::size_t> mine = meta.span().subspan(0, K * P);
  const std::span<std::size_t> all = meta.span().subspan(K * P, K * P);
  const std::span<std::size_t> sdispl = meta.span().subspan(2 * K * P, P + 1);
  const std::span<std::size_t> rdispl = meta.span().subspan(2 * K * P + P + 1, P + 1);
  const std::size_t biggest = *std::max_element(send_counts.begin(), send_counts.end());
  for (std::size_t k = 0; k < P; ++k) {
    mine[K * k] = send_counts[k];
    if (agree) {
      mine[K * k + 1] = in.size();
      mine[K * k + 2] = biggest;
    }
  }
  counts_all_to_all(mine, all);
  r.counts.resize(P);
  for (std::size_t i = 0; i < P; ++i) r.counts[i] = all[K * i];
  pz::displacements(send_counts, sdispl);
  pz::displacements(r.counts, rdispl);
  r.data.resize(rdispl[P]);

  algorithm algo = opt.algo;
  if (algo == algorithm::automatic) {
    if (!agree) {
      algo = algorithm::pairwise;
    } else {
      // Every rank now knows every S_i and block size, but only its own R_j.
      // max_j R_j lies between max(m_max, sum S_i / p) and min(sum S_i, p m_max),
      // and the two-stage cost grows with it: when both bounds pick the same
      // algorithm that is the choice; otherwise one more exchange gets R.
      pz::traffic tr;
      std::size_t sum = 0;
      for (std::size_t i = 0; i < P; ++i) {
        tr.max_send = std::max(tr.max_send, all[K * i + 1]);
        tr.max_message = std::max(tr.max_message, all[K * i + 2]);
        sum += all[K * i + 1];
      }
      pz::traffic lo = tr, hi = tr;
      lo.max_recv = std::max(tr.max_message, (sum + P - 1) / P);
      hi.max_recv = std::min(sum, P * tr.max_message);
      algo = pz::choose_v(p, lo, sizeof(T), opt.cost);
      if (algo != pz::choose_v(p, hi, sizeof(T), opt.cost)) {
        std::fill(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(P), rdispl[P]);
        counts_all_to_all(mine.subspan(0, P), all.subspan(0, P));
        tr.max_recv = *std::max_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(P));
        algo = pz::choose_v(p, tr, sizeof(T), opt.cost);
      }
    }
  }

  const std::span<T> data(r.data);
  if (algo == algorithm::two_stage)
    pz::two_stage_v(c, in, std::span<const std::size_t>(sdispl), data,
                    std::span<const std::size_t>(rdispl), counts_all_to_all,
                    detail::tag::all_to_all_v);
  else
    pz::direct_v(c, in, std::span<const std::size_t>(sdispl), data,
                 std::span<const std::size_t>(rdispl), true, detail::tag::all_to_all_v);
  return r;
}

// all_to_all_v with the receive counts known (MPI_Alltoallv's contract): no
// count exchange, and the result goes into out.
//
//   in           sum(send_counts) elements: send_counts[j] for rank j, in rank order
//   send_counts  p entries
//   out          sum(recv_counts) elements: recv_counts[i] from rank i, in rank order
//   recv_counts  p entries; recv_counts[i] must be rank i's send_counts[this rank]
//
// Local argument errors (sizes of the count arrays, sums, in and out sharing
// memory, an algorithm that does not apply) throw std::invalid_argument before
// any message. Counts that disagree between two ranks are caught where the data
// arrives: every pair exchanges a message, empty ones included, and every
// receive checks the size before it writes, so nothing is written past a block
// of out. A rank whose recv_counts[i] differs from what rank i sends it throws
// topocoll::message_error naming both ranks, the tag and both sizes. On a
// non-blocking transport (mpi::Comm, loopback::Comm) it first completes the
// rest of the exchange (every other block is received, every send completes),
// so the other ranks return normally and no message is left behind; out's
// block from i is then unspecified. On a transport without non-blocking sends
// the exception leaves at once (as in every other collective).
//
// algorithm::automatic and pairwise: the direct exchange. two_stage (forced):
// the two-stage algorithm, with its own metadata exchanges; a disagreement is
// then detected after the data has arrived and before out is written.
template <Topology Topo, Transport C, InputBuffer In, InputBuffer SendCounts, OutputBuffer Out,
          InputBuffer RecvCounts>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    std::same_as<buffer_value_t<SendCounts>, std::size_t> &&
    std::same_as<buffer_value_t<RecvCounts>, std::size_t>
void all_to_all_v(C& c, In&& input, SendCounts&& send_counts_in, Out&& output,
                  RecvCounts&& recv_counts_in, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  static_assert(std::is_default_constructible_v<T> && std::is_copy_assignable_v<T>,
                "all_to_all_v keeps scratch blocks of the element type: it must be default "
                "constructible and copy assignable");
  namespace pz = detail::personalized;
  constexpr std::string_view op = "all_to_all_v";
  const std::span<const T> in = detail::in_span(input);
  const std::span<T> out = detail::out_span(output);
  const std::span<const std::size_t> send_counts = detail::in_span(send_counts_in);
  const std::span<const std::size_t> recv_counts = detail::in_span(recv_counts_in);
  const int rank = c.rank();
  const int p = c.size();
  const std::size_t P = static_cast<std::size_t>(p);
  const layout l = detail::shape_or_throw<Topo>(op, rank, p);
  pz::check_v_args(op, rank, p, in, send_counts, opt.algo);
  detail::check_size(op, rank, p, "recv_counts (one per rank)", recv_counts.size(), P);
  const std::size_t rtotal =
      std::accumulate(recv_counts.begin(), recv_counts.end(), std::size_t{0});
  if (rtotal != out.size())
    detail::invalid(op, rank, p, "out holds ", out.size(), " elements, but recv_counts add up to ",
                    rtotal);
  if (pz::overlap<T>(in, out))
    detail::invalid(op, rank, p, "in and out share memory; give out a buffer of its own");

  if (p == 1) {
    if (send_counts[0] != recv_counts[0])
      throw message_error(detail::concat("topocoll::all_to_all_v on rank 0 of 1: sends ",
                                         send_counts[0],
                                         " elements to itself, recv_counts[0] = ", recv_counts[0]));
    pz::copy_n(in.data(), in.size(), out.data());
    return;
  }

  const detail::scratch<std::size_t> displ(2 * (P + 1));
  const std::span<std::size_t> sdispl = displ.span().subspan(0, P + 1);
  const std::span<std::size_t> rdispl = displ.span().subspan(P + 1, P + 1);
  pz::displacements(send_counts, sdispl);
  pz::displacements(recv_counts, rdispl);
  if (opt.algo == algorithm::two_stage) {
    auto counts_all_to_all = [&](std::span<const std::size_t> s, std::span<std::size_t> d) {
      pz::all_to_all<Topo>(c, l, s, d, s.size() / P, algorithm::automatic, opt.cost,
                           detail::tag::all_to_all_v_counts);
    };
    pz::two_stage_v(c, in, std::span<const std::size_t>(sdispl), out,
                    std::span<const std::size_t>(rdispl), counts_all_to_all,
                    detail::tag::all_to_all_v);
  } else {
    pz::direct_v(c, in, std::span<const std::size_t>(sdispl), out,
                 std::span<const std::size_t>(rdispl), false, detail::tag::all_to_all_v);
  }
}

}  // namespace topocoll
