#pragma once
// all_to_all_v's choice (kernels/personalized_v.hpp): the direct exchange or
// the two-stage one, by the traffic every rank agrees on. The kernel asks it
// while it runs, once the counts are known, through exchange_plan.

#include <algorithm>
#include <cstddef>
#include <span>

#include "../core/options.hpp"
#include "../kernels/personalized_v.hpp"
#include "../topology/layout.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "personalized.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::personalized_v {

using personalized::to_size;

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
inline algorithm choose_v(int p, const traffic& tr, std::size_t elem_bytes,
                          const cost_model& model) {
  if (p <= 2) return algorithm::pairwise;
  const cost_model& cm = model;  // every rank exchanges at every step: busy messages
  const std::size_t P = to_size(p);
  const double steps = p - 1;
  const double direct = steps * cm.busy_message(tr.max_message * elem_bytes);
  const std::size_t s1 = (tr.max_send + P - 1) / P + 1;
  const std::size_t s2 = (tr.max_recv + P - 1) / P + P;
  const double meta = 2 * steps * cm.busy_message(P * sizeof(std::size_t));
  const double two =
      steps * (cm.busy_message(s1 * elem_bytes) + cm.busy_message(s2 * elem_bytes)) + meta;
  return two < direct ? algorithm::two_stage : algorithm::pairwise;
}

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

// The plan the exchange asks while it runs (kernels/personalized_v.hpp): the
// count exchange's algorithm, automatic's for blocks of m counts on C, and the
// data's, choose_v_agreed's.
template <Topology Topo, Transport C>
struct exchange_plan {
  const cost_model& cost;
  algorithm counts(const layout& l, std::size_t m) const {
    return personalized::choose_for<Topo, C, std::size_t>(l, m, {algorithm::automatic, cost});
  }
  template <class T, class Exchange>
  algorithm data(int p, std::span<const std::size_t> all, std::size_t received,
                 std::span<std::size_t> scratch_counts, const Exchange& exchange) const {
    return choose_v_agreed<T>(p, all, received, scratch_counts, exchange, cost);
  }
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::personalized_v
