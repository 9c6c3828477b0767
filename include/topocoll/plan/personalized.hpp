#pragma once
// The personalized exchange's prices and choice (kernels/personalized.hpp):
// store-and-forward and its bidirectional form, priced by walking the
// messages the kernel sends (for_each_step), against pairwise's p - 1
// exchanges, blocking or posted at once.

#include <cstddef>

#include "../core/algorithm_table.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../kernels/personalized.hpp"
#include "../topology/layout.hpp"
#include "../topology/needs.hpp"
#include "../topology/step.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "explain.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::personalized {

using detail::personalized::for_each_step;
using detail::personalized::step;
using detail::personalized::to_size;

// The t_s + t_w * bytes model, summed over the messages one rank sends. Every
// rank exchanges at every step: each message at the model's busy figures.
template <Topology Topo>
double store_and_forward_cost(const layout& l, std::size_t block_bytes, const cost_model& model,
                              ring_way way = ring_way::forward) {
  double t = 0;
  for_each_step<Topo>(l, way, [&](const step& s) {
    t += model.busy_message(to_size(s.last - s.first) * block_bytes);
  });
  return t;
}
// Blocking rounds: p - 1 messages one after the other.
inline double pairwise_cost(int p, std::size_t block_bytes, const cost_model& model) {
  return (p - 1) * model.busy_message(block_bytes);
}
// With every send posted at once the p - 1 latencies overlap: one start-up on
// the critical path, plus each message's own software overhead (posting,
// matching, completing), taken as a quarter of a start-up, plus every word.
// Against the hypercube's store-and-forward this puts the cross-over about
// where MPI libraries switch from the linear exchange to Bruck's log p
// algorithm: under the default model store-and-forward wins only from 14 ranks
// on, for blocks below 100-200 B (p = 14-16) or 400 B (p = 64). Topologies
// with more store-and-forward steps (Ring, Mesh, Tree<K > 2>) cross later.
inline constexpr double posted_message_share = 0.25;
inline double concurrent_pairwise_cost(int p, std::size_t block_bytes, const cost_model& model) {
  const cost_model cm = model.all_busy(block_bytes);
  return cm.ts_us + (p - 1) * (posted_message_share * cm.ts_us +
                               cm.tw_us_per_byte * static_cast<double>(block_bytes));
}

// How the transport runs pairwise's sends: one blocking round after another,
// or all posted at once (non-blocking).
enum class pairwise_sends { blocking, posted };

// The cheapest under the model: store_and_forward where its fewer start-ups
// outweigh its larger volume (small blocks), bidirectional where every
// dimension is a ring and sending each packet the shorter way round saves
// volume (Section 4.5.1), pairwise otherwise. Both store-and-forward schedules
// are priced by walking their messages (for_each_step). A tie goes to
// pairwise, which copies less, then to one way round.
template <Topology Topo>
algorithm choose(const layout& l, std::size_t block_bytes, const cost_model& model,
                 pairwise_sends sends = pairwise_sends::blocking) {
  if (l.p <= 2) return algorithm::pairwise;
  algorithm best = algorithm::pairwise;
  const double pairwise = sends == pairwise_sends::posted
                              ? concurrent_pairwise_cost(l.p, block_bytes, model)
                              : pairwise_cost(l.p, block_bytes, model);
  double least = pairwise;
  auto consider = [&](algorithm a, ring_way way) {
    const double t = store_and_forward_cost<Topo>(l, block_bytes, model, way);
    if (t < least) least = t, best = a;
    return t;
  };
  const double forward = consider(algorithm::store_and_forward, ring_way::forward);
  constexpr topology_need both_ways = table_need("all_to_all", algorithm::bidirectional);
  if (meets<Topo>(both_ways, l)) {
    const double both = consider(algorithm::bidirectional, ring_way::both);
    explain::note(
        {{"pairwise", pairwise}, {"store_and_forward", forward}, {"bidirectional", both}});
  } else {
    explain::note({{"pairwise", pairwise}, {"store_and_forward", forward}});
  }
  return best;
}

// The algorithm an exchange of blocks of m elements of T on C runs over l:
// the forced one, or automatic's, whose pairwise sends are posted where C has
// non-blocking sends.
template <Topology Topo, Transport C, class T>
algorithm choose_for(const layout& l, std::size_t m, const options& opt) {
  if (opt.algo != algorithm::automatic) return opt.algo;
  return choose<Topo>(
      l, m * sizeof(T), opt.cost,
      send_batch<C, T>::nonblocking ? pairwise_sends::posted : pairwise_sends::blocking);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::personalized
