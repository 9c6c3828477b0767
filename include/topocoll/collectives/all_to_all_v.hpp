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

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "../kernels/personalized_v.hpp"
#include "../plan/personalized_v.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {
// The sum of `counts` (named `what`), rejected where it would wrap around: a
// wrapped sum can equal the buffer's size ({SIZE_MAX, 1} adds up to 0, an
// empty buffer's) and let a block far past the buffer through.
inline std::size_t count_total(const call_args& call, std::string_view what,
                               std::span<const std::size_t> counts) {
  std::size_t total = 0;
  for (std::size_t j = 0; j < counts.size(); ++j) {
    if (counts[j] > SIZE_MAX - total)
      call.reject(what, " add up to more than SIZE_MAX: ", what, "[", j, "] = ", counts[j],
                  " after ", total, " in ", what, "[0..", j, ")");
    total += counts[j];
  }
  return total;
}

// The checks both overloads share: send_counts has p entries adding up to
// in.size(), and the algorithm applies.
template <Topology Topo, class T>
void check_v_args(const call_args& call, std::span<const T> in,
                  std::span<const std::size_t> send_counts, algorithm algo) {
  call.size("send_counts (one per rank)", send_counts.size(), static_cast<std::size_t>(call.p()));
  const std::size_t total = count_total(call, "send_counts", send_counts);
  if (total != in.size())
    call.reject("in holds ", in.size(), " elements, but send_counts add up to ", total);
  check_algorithm<Topo>(call, algo);
}
}  // namespace detail

template <Topology Topo, Transport C, InputBuffer In, InputBuffer Counts>
requires std::same_as<buffer_value_t<Counts>, std::size_t> all_to_all_v_result<buffer_value_t<In>>
all_to_all_v(C& c, In&& input, Counts&& send_counts_in,
             const options& opt = detail::default_options) {
  using T = buffer_value_t<In>;
  static_assert(detail::block_element<T>,
                "all_to_all_v returns a std::vector of the element type: it must be default "
                "constructible and copy assignable");
  const std::span<const T> in = detail::in_span(input);
  const std::span<const std::size_t> send_counts = detail::in_span(send_counts_in);
  const auto call = detail::open_call<Topo>("all_to_all_v", c);
  const detail::collective_scope scope(c, detail::counts_vary(call.info(in, opt.algo)));
  call.cost(opt.cost);
  detail::check_v_args<Topo>(call, in, send_counts, opt.algo);
  all_to_all_v_result<T> r;
  if (call.p() == 1) {
    r.counts.assign(1, in.size());
    r.data.assign(in.begin(), in.end());
    return r;
  }
  using K = detail::kernel_topology<Topo>;
  detail::personalized_v::all_to_all_v<K>(
      c, Topo::shape(call.p()), in, send_counts, r, opt.algo,
      detail::plan::personalized_v::exchange_plan<K, C>{opt.cost});
  return r;
}

namespace detail {

// all_to_all_v's checks with the receive counts known (stage::check), the
// whole call (stage::run), or the call without its checks (stage::started).
template <Topology Topo, Transport C, class In, class Out>
void checked_all_to_all_v(C& c, In&& input, std::span<const std::size_t> send_counts, Out&& output,
                          std::span<const std::size_t> recv_counts, const options& opt, stage s) {
  using T = buffer_value_t<Out>;
  static_assert(block_element<T>,
                "all_to_all_v keeps scratch blocks of the element type: it must be default "
                "constructible and copy assignable");
  const auto [call, in, out] = open_call<Topo>("all_to_all_v", c, input, output);
  const collective_scope scope(c, counts_vary(call.info(in, opt.algo)), s);
  if (scope.checking()) {
    call.cost(opt.cost);
    check_v_args<Topo>(call, in, send_counts, opt.algo);
    call.size("recv_counts (one per rank)", recv_counts.size(), static_cast<std::size_t>(call.p()));
    const std::size_t rtotal = count_total(call, "recv_counts", recv_counts);
    if (rtotal != out.size())
      call.reject("out holds ", out.size(), " elements, but recv_counts add up to ", rtotal);
    call.in_place(in, out, 0);
  }
  if (!scope.proceed()) return;
  if (call.p() == 1 && send_counts[0] != recv_counts[0])
    throw message_error(concat("topocoll::all_to_all_v on rank 0 of 1: sends ", send_counts[0],
                               " elements to itself, recv_counts[0] = ", recv_counts[0]));
  if (call.p() == 1) return copy_to(in, out);
  using K = kernel_topology<Topo>;
  personalized_v::all_to_all_v<K>(c, Topo::shape(call.p()),
                                  personalized_v::counted<const T>{in, send_counts},
                                  personalized_v::counted<T>{out, recv_counts}, opt.algo,
                                  plan::personalized_v::exchange_plan<K, C>{opt.cost});
}

}  // namespace detail

// all_to_all_v with the receive counts known (MPI_Alltoallv's contract): no
// count exchange, and the result goes into out.
//
//   in           sum(send_counts) elements: send_counts[j] for rank j, in rank order
//   send_counts  p entries
//   out          sum(recv_counts) elements: recv_counts[i] from rank i, in rank order
//   recv_counts  p entries; recv_counts[i] must be rank i's send_counts[this rank]
//
// in may be out itself (in-place use). Local argument errors (sizes of the
// count arrays, sums, any other overlap of in and out, an algorithm that does
// not apply) throw std::invalid_argument before any message. Counts that disagree between two ranks
// are caught where the data arrives: every pair exchanges a message, empty ones included, and every
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
void all_to_all_v(C& c, In&& input, SendCounts&& send_counts, Out&& output,
                  RecvCounts&& recv_counts, const options& opt = detail::default_options) {
  detail::checked_all_to_all_v<Topo>(c, input, detail::in_span(send_counts), output,
                                     detail::in_span(recv_counts), opt, detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
