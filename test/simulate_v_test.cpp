#define BOOST_TEST_MODULE simulate_v
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

#include <topocoll/model/simulate_v.hpp>
#include <topocoll/topocoll.hpp>

#include "support/seed_costs.hpp"

// model::simulate_v: all_to_all_v from a count matrix, its ranks on threads
// (so ThreadSanitizer runs this suite), against the lecture's bound.

namespace tc = topocoll;
namespace sim = topocoll::model;

using namespace seed_costs;

// Many-to-many (the Georgia Tech lecture's "bounded traffic"), simulated from
// count matrices (model::simulate_v), single-ported, every choice priced by
// the simulation's own costs, on the patterns of model::traffic_counts. S and
// R: the most one rank sends and receives.
//  * two_stage stays within 4 (t_s p + t_w (R + S + p^2)) on complete(p): the
//    lecture's bound, with the constant of its four exchanges of p - 1 steps
//    (the two stages and their two metadata exchanges);
//  * a step of the direct exchange lasts as long as its largest block: on the
//    skewed pattern every step in which some rank's partner is the one it
//    sends M to costs t_w M, and there are more such steps the more ranks
//    (4 of the 7 at p = 8, 10 of the 31 at p = 32), while two_stage's time
//    follows S + R = 2(M + p - 2). At M = 10000 two_stage wins, on complete(p)
//    and on ring(p), where the direct exchange's messages also congest;
//  * automatic (the form that exchanges the counts first) takes the faster:
//    within 5 % of two_stage on the skewed pattern and of the direct exchange
//    on the uniform one, at M = 10000.
namespace {
struct traffic_pattern {
  std::vector<std::size_t> counts;
  double S = 0, R = 0;
};
traffic_pattern pattern(sim::traffic kind, int p, std::size_t M) {
  const auto P = static_cast<std::size_t>(p);
  traffic_pattern t{sim::traffic_counts(kind, p, M)};
  BOOST_TEST_REQUIRE(t.counts.size() == P * P);
  for (std::size_t i = 0; i < P; ++i) {
    double sent = 0, received = 0;
    for (std::size_t j = 0; j < P; ++j) {
      sent += static_cast<double>(t.counts[i * P + j]);
      received += static_cast<double>(t.counts[j * P + i]);
    }
    t.S = std::max(t.S, sent);
    t.R = std::max(t.R, received);
  }
  return t;
}
}  // namespace

BOOST_AUTO_TEST_CASE(many_to_many_two_stage_within_the_lecture_bound) {
  const tc::cost_model priced{.ts_us = ts, .tw_us_per_byte = tw / 8};  // 8-byte elements
  const tc::options two{.algo = tc::algorithm::two_stage, .cost = priced};
  const tc::options direct{.algo = tc::algorithm::pairwise, .cost = priced};
  for (int p : {3, 8, 16, 32})
    for (std::size_t M : {0, 1, 100, 10000}) {
      const sim::network net = single(sim::network::complete(p));
      for (sim::traffic kind : {sim::traffic::uniform, sim::traffic::skewed, sim::traffic::to_root,
                                sim::traffic::random}) {
        const traffic_pattern t = pattern(kind, p, M);
        const double bound = ts * p + tw * (t.R + t.S + p * p);
        BOOST_TEST(sim::simulate_v<tc::Hypercube<>>(t.counts, p, net, cost, two).time <= 4 * bound);
      }
      if (M < 10000 || p < 8) continue;
      const std::vector<std::size_t> skewed = pattern(sim::traffic::skewed, p, M).counts;
      const std::vector<std::size_t> uniform = pattern(sim::traffic::uniform, p, M).counts;
      const double d = sim::simulate_v<tc::Hypercube<>>(skewed, p, net, cost, direct).time;
      BOOST_TEST(d >= (p - 1) * ts + 4 * tw * M);
      BOOST_TEST(sim::simulate_v<tc::Hypercube<>>(skewed, p, net, cost, two).time < d);
      const sim::network ring = single(sim::network::ring(p));
      const sim::result on_ring = sim::simulate_v<tc::Hypercube<>>(skewed, p, ring, cost, direct);
      BOOST_TEST(on_ring.max_congestion > 1);
      BOOST_TEST(sim::simulate_v<tc::Hypercube<>>(skewed, p, ring, cost, two).time < on_ring.time);
      const auto exchanged = [&](const std::vector<std::size_t>& counts, const tc::options& o) {
        return sim::simulate_v<tc::Hypercube<>>(counts, p, net, cost, o, sim::v_counts::exchanged)
            .time;
      };
      const tc::options automatic{.cost = priced};
      BOOST_TEST(exchanged(skewed, automatic) <= 1.05 * exchanged(skewed, two));
      BOOST_TEST(exchanged(uniform, automatic) <= 1.05 * exchanged(uniform, direct));
      BOOST_TEST(exchanged(uniform, direct) < exchanged(uniform, two));
    }
}

// Bad input throws std::invalid_argument, on this thread, and nothing hangs:
// a matrix that is not p x p, an unknown pattern, and an algorithm that
// all_to_all_v does not have (every rank's thread throws it).
BOOST_AUTO_TEST_CASE(bad_input_throws) {
  const sim::network net = single(sim::network::complete(4));
  const std::vector<std::size_t> eight(8, 1);
  BOOST_CHECK_THROW(sim::simulate_v<tc::Ring>(eight, 4, net, cost), std::invalid_argument);
  BOOST_CHECK_THROW(sim::parse_traffic("zipf"), std::invalid_argument);
  BOOST_CHECK_THROW(
      sim::simulate_v<tc::Ring>(sim::traffic_counts(sim::traffic::uniform, 4, 3), 4, net, cost,
                                {.algo = tc::algorithm::store_and_forward}),
      std::invalid_argument);
  BOOST_CHECK_THROW(sim::simulate_v<tc::Ring>(std::vector<std::size_t>(9, 1), 3,
                                              single(sim::network::complete(2)), cost),
                    std::invalid_argument);
}
