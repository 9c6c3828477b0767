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
// elements for rank j (0 allowed). The receive counts are exchanged first (an
// all_to_all of one count per rank pair over the topology), then:
//   algorithm::pairwise: the direct exchange, one message per nonempty block.
//   algorithm::two_stage: the many-to-many with bounded traffic: spread every
//     rank's data evenly over all ranks, then route it to the destinations.
//   algorithm::automatic (default): gathers (S_i, R_i, largest block) of every
//     rank (one more small all_to_all) and picks two_stage when the t_s + t_w m
//     model says the largest blocks would stall the direct exchange.
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
#include "../core/options.hpp"
#include "../core/tags.hpp"
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
  detail::check_size(op, rank, p, "send_counts (one per rank)", send_counts.size(), P);
  const std::size_t total = std::accumulate(send_counts.begin(), send_counts.end(), std::size_t{0});
  if (total != in.size())
    detail::invalid(op, rank, p, "in holds ", in.size(), " elements, but send_counts add up to ",
                    total);
  if (opt.algo != algorithm::automatic && opt.algo != algorithm::pairwise &&
      opt.algo != algorithm::two_stage)
    detail::invalid(op, rank, p, "algorithm ", to_string(opt.algo),
                    " does not apply; use automatic, pairwise or two_stage");

  all_to_all_v_result<T> r;
  if (p == 1) {
    r.counts.assign(1, in.size());
    r.data.assign(in.begin(), in.end());
    return r;
  }

  // All metadata travels as fixed-size all_to_alls of counts over the topology
  // (store-and-forward for these small blocks under the default model).
  auto counts_all_to_all = [&](std::span<const std::size_t> s, std::span<std::size_t> d) {
    pz::all_to_all<Topo>(c, l, s, d, s.size() / P, algorithm::automatic, opt.cost,
                         detail::tag::all_to_all_v_counts);
  };

  r.counts.resize(P);
  counts_all_to_all(send_counts, r.counts);
  const std::vector<std::size_t> sdispl = pz::displacements(send_counts);
  const std::vector<std::size_t> rdispl = pz::displacements(r.counts);
  r.data.resize(rdispl[P]);

  algorithm algo = opt.algo;
  if (algo == algorithm::automatic) {
    if (p <= 2) {
      algo = algorithm::pairwise;
    } else {  // every rank must pick the same algorithm: agree on the traffic
      const std::size_t biggest = *std::max_element(send_counts.begin(), send_counts.end());
      std::vector<std::size_t> mine(3 * P), all(3 * P);
      for (std::size_t k = 0; k < P; ++k) {
        mine[3 * k] = in.size();
        mine[3 * k + 1] = rdispl[P];
        mine[3 * k + 2] = biggest;
      }
      counts_all_to_all(mine, all);
      pz::traffic tr;
      for (std::size_t k = 0; k < P; ++k) {
        tr.max_send = std::max(tr.max_send, all[3 * k]);
        tr.max_recv = std::max(tr.max_recv, all[3 * k + 1]);
        tr.max_message = std::max(tr.max_message, all[3 * k + 2]);
      }
      algo = pz::choose_v(p, tr, sizeof(T), opt.cost);
    }
  }

  const std::span<T> data(r.data);
  if (algo == algorithm::two_stage)
    pz::two_stage_v(c, in, std::span<const std::size_t>(sdispl), data,
                    std::span<const std::size_t>(rdispl), counts_all_to_all,
                    detail::tag::all_to_all_v);
  else
    pz::direct_v(c, in, std::span<const std::size_t>(sdispl), data,
                 std::span<const std::size_t>(rdispl), detail::tag::all_to_all_v);
  return r;
}

}  // namespace topocoll
