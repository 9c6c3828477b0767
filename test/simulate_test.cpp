#define BOOST_TEST_MODULE simulate
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <topocoll/model/counting.hpp>
#include <topocoll/model/simulate.hpp>
#include <topocoll/topocoll.hpp>

#include "support/seed_costs.hpp"

// The seeds' closed-form costs (Grama et al. ch. 4, the lecture notes on
// communication primitives, ICS 632) evaluated on the library's own kernels,
// on the matching network, and their congestion cases. The seeds' node is
// single-ported: one call at a time per rank (ports::single).

namespace tc = topocoll;
namespace sim = topocoll::model;

namespace {
using namespace seed_costs;

int log2i(int p) {
  int d = 0;
  while ((1 << d) < p) ++d;
  return d;
}
sim::network cube(int p) {
  return single(sim::network::hypercube(log2i(p)));
}
tc::options forced(tc::algorithm a) {
  return tc::options{.algo = a};
}
template <class Topo>
double time_of(sim::collective k, int p, std::size_t m, const sim::network& net,
               tc::options opt = {}) {
  return sim::simulate<Topo>(k, p, m, net, cost, opt).time;
}

// A trace's messages as (src, dst) pairs, grouped by the step of length
// `step` each starts in, each group sorted; every message must start at the
// beginning of a step.
using step_pairs = std::vector<std::vector<std::pair<int, int>>>;
step_pairs steps_of(const sim::traced_result& t, double step) {
  step_pairs got;
  for (const sim::timed_message& x : t.messages) {
    const auto k = static_cast<std::size_t>(x.start / step);
    BOOST_TEST(x.start == static_cast<double>(k) * step);
    if (got.size() <= k) got.resize(k + 1);
    got[k].emplace_back(x.src, x.dst);
  }
  for (auto& g : got) std::sort(g.begin(), g.end());
  return got;
}

// The steps last to first, each message from its dst to its src.
step_pairs reversed(step_pairs steps) {
  std::reverse(steps.begin(), steps.end());
  for (auto& pairs : steps) {
    for (auto& [src, dst] : pairs) std::swap(src, dst);
    std::sort(pairs.begin(), pairs.end());
  }
  return steps;
}

// Each rank's messages in time order, as (peer, elements): the ones it sends,
// or the ones it receives.
enum class side { sent, received };
using flows = std::vector<std::vector<std::pair<int, std::uint64_t>>>;
flows flows_of(const sim::traced_result& t, int p, side s) {
  std::vector<std::tuple<double, int, int, std::uint64_t>> all;
  for (const sim::timed_message& x : t.messages)
    all.emplace_back(x.start, s == side::sent ? x.src : x.dst, s == side::sent ? x.dst : x.src,
                     x.count);
  std::sort(all.begin(), all.end());
  flows f(static_cast<std::size_t>(p));
  for (const auto& [start, rank, peer, count] : all)
    f[static_cast<std::size_t>(rank)].emplace_back(peer, count);
  return f;
}
}  // namespace

// Eq. 4.1: broadcast and reduce on a hypercube, (t_s + t_w m) log p.
BOOST_AUTO_TEST_CASE(eq_4_1_broadcast_and_reduce_on_a_hypercube) {
  for (int p : {2, 8, 64})
    for (std::size_t m : {1, 10, 1000}) {
      const double want = (ts + tw * m) * log2i(p);
      const auto tree = forced(tc::algorithm::tree);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::broadcast, p, m, cube(p), tree) == want);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::reduce, p, m, cube(p), tree) == want);
      // posted sends (ports::multi) reach the leaves over the same log p edges
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::broadcast, p, m,
                                          sim::network::hypercube(log2i(p)), tree) == want);
    }
}

// Eq. 4.2: all-to-all broadcast and reduction on a ring, (t_s + t_w m)(p - 1).
BOOST_AUTO_TEST_CASE(eq_4_2_all_gather_and_reduce_scatter_on_a_ring) {
  for (int p : {2, 5, 8, 13})
    for (std::size_t m : {1, 7, 100}) {
      const auto ring = single(sim::network::ring(p));
      const double want = (ts + tw * m) * (p - 1);
      const auto fold = forced(tc::algorithm::fold);
      BOOST_TEST(time_of<tc::Ring>(sim::collective::all_gather, p, m, ring, fold) == want);
      BOOST_TEST(time_of<tc::Ring>(sim::collective::reduce_scatter, p, m, ring, fold) == want);
    }
}

// Eq. 4.3: all-to-all broadcast and reduction on a square mesh,
// 2 t_s (sqrt p - 1) + t_w m (p - 1).
BOOST_AUTO_TEST_CASE(eq_4_3_all_gather_and_reduce_scatter_on_a_mesh) {
  for (int q : {2, 3, 4, 8})
    for (std::size_t m : {1, 10}) {
      const int p = q * q;
      const double want = 2 * ts * (q - 1) + tw * m * (p - 1);
      for (sim::collective k : {sim::collective::all_gather, sim::collective::reduce_scatter})
        BOOST_TEST(time_of<tc::Mesh<2>>(k, p, m, single(sim::network::mesh({q, q})),
                                        forced(tc::algorithm::fold)) == want,
                   sim::to_string(k) << " q " << q << " m " << m);
    }
}

// Section 4.2.2: the all-to-all reduction on a mesh is Algorithm 4.6
// reversed. Each rank sends what the all-gather receives, last step first:
// along its column s_0 - 1 messages of s_0 m (the rows' sums consolidated),
// then along its row s_1 - 1 messages of m.
BOOST_AUTO_TEST_CASE(section_4_2_2_the_mesh_reduce_scatter_reverses_algorithm_4_6) {
  const std::size_t m = 10;
  for (int q : {2, 3, 4}) {
    const int p = q * q;
    const auto net = single(sim::network::mesh({q, q}));
    const auto fold = forced(tc::algorithm::fold);
    const auto trace = [&](sim::collective k) {
      return sim::simulate_trace<tc::Mesh<2>>(k, p, m, net, cost, fold);
    };
    flows gathered = flows_of(trace(sim::collective::all_gather), p, side::received);
    const flows reduced = flows_of(trace(sim::collective::reduce_scatter), p, side::sent);
    for (auto& rank : gathered) std::reverse(rank.begin(), rank.end());
    BOOST_TEST((reduced == gathered), "q " << q);
    std::vector<std::pair<int, std::uint64_t>> want;  // rank 0's: column, then row
    for (int i = 1; i < q; ++i) want.emplace_back(0, q * m);
    for (int i = 1; i < q; ++i) want.emplace_back(0, m);
    for (std::size_t i = 0; i < want.size(); ++i) {
      BOOST_TEST(reduced[0][i].second == want[i].second, "q " << q << " message " << i);
      const bool column = reduced[0][i].first % q == 0;
      BOOST_TEST(column == (i < static_cast<std::size_t>(q - 1)), "q " << q << " message " << i);
    }
  }
}

// Eq. 4.4: all-to-all broadcast and reduction on a hypercube, t_s log p + t_w m (p - 1).
BOOST_AUTO_TEST_CASE(eq_4_4_all_gather_and_reduce_scatter_on_a_hypercube) {
  for (int p : {2, 4, 16, 128})
    for (std::size_t m : {1, 5, 64}) {
      const double want = ts * log2i(p) + tw * m * (p - 1);
      const auto fold = forced(tc::algorithm::fold);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::all_gather, p, m, cube(p), fold) ==
                 want);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::reduce_scatter, p, m, cube(p), fold) ==
                 want);
    }
}

// Algorithm 4.8: the all-to-all reduction on a hypercube takes the
// dimensions high to low, sending half of what it holds at each: 4m, 2m, m
// on 8 nodes, every node at once. (With a non-commutative operator the
// library takes them low to high, so that each combine keeps rank order:
// all_to_all_broadcast.hpp, reduce_scatter_fold.)
BOOST_AUTO_TEST_CASE(algorithm_4_8_reduce_scatter_takes_the_dimensions_high_to_low) {
  for (int d : {1, 3, 5})
    for (std::size_t m : {1, 10}) {
      const sim::traced_result t =
          sim::simulate_trace<tc::Hypercube<>>(sim::collective::reduce_scatter, 1 << d, m,
                                               cube(1 << d), cost, forced(tc::algorithm::fold));
      BOOST_TEST(t.messages.size() == static_cast<std::size_t>(d << d));
      for (const sim::timed_message& x : t.messages) {
        const int j = std::countr_zero(static_cast<unsigned>(x.src ^ x.dst));
        BOOST_TEST((x.src ^ x.dst) == 1 << j);  // one dimension, j
        BOOST_TEST(x.count == m << j);
        double before = 0;  // the steps along dimensions d - 1, ..., j + 1
        for (int k = d - 1; k > j; --k) before += ts + tw * static_cast<double>(m << k);
        BOOST_TEST(x.start == before, "d " << d << " m " << m << ": " << x.src << " -> " << x.dst);
      }
    }
}

// All-to-all broadcast is optimal in the message size: every node must take
// in m (p - 1) words through its one port, and without start-ups the ring's,
// the mesh's and the hypercube's algorithms (4.4 to 4.7) take exactly that,
// t_w m (p - 1). With start-ups the ring pays t_s (p - 1), the hypercube
// t_s log p, and nothing else differs.
BOOST_AUTO_TEST_CASE(all_gather_meets_the_port_bound_without_start_ups) {
  const sim::cost_params no_start{.t_s = 0, .t_w = tw};
  const auto fold = forced(tc::algorithm::fold);
  for (int q : {2, 4, 8})
    for (std::size_t m : {1, 10, 1000}) {
      const int p = q * q;
      const double bound = tw * static_cast<double>(m) * (p - 1);
      const auto at = [&]<class Topo>(std::type_identity<Topo>, const sim::network& net,
                                      const sim::cost_params& c) {
        return sim::simulate<Topo>(sim::collective::all_gather, p, m, net, c, fold).time;
      };
      const auto ring = single(sim::network::ring(p));
      BOOST_TEST(at(std::type_identity<tc::Ring>{}, ring, no_start) == bound);
      BOOST_TEST(at(std::type_identity<tc::Mesh<2>>{}, single(sim::network::mesh({q, q})),
                    no_start) == bound);
      BOOST_TEST(at(std::type_identity<tc::Hypercube<>>{}, cube(p), no_start) == bound);
      BOOST_TEST(at(std::type_identity<tc::Ring>{}, ring, cost) -
                     at(std::type_identity<tc::Hypercube<>>{}, cube(p), cost) ==
                 ts * ((p - 1) - log2i(p)));
    }
}

// Section 4.3: all-reduce (the all-to-all broadcast pattern with a constant
// message) and prefix sums on a hypercube, (t_s + t_w m) log p.
BOOST_AUTO_TEST_CASE(all_reduce_and_prefix_sums_on_a_hypercube) {
  for (int p : {2, 8, 32})
    for (std::size_t m : {1, 16, 300}) {
      const double want = (ts + tw * m) * log2i(p);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::all_reduce, p, m, cube(p),
                                          forced(tc::algorithm::recursive_doubling)) == want);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::scan, p, m, cube(p)) == want);
    }
}

// All-reduce in log p steps takes half the time of the reduction followed
// by the broadcast it replaces: 2 (t_s + t_w m) log p.
BOOST_AUTO_TEST_CASE(all_reduce_takes_half_the_time_of_reduce_then_broadcast) {
  for (int p : {2, 8, 32})
    for (std::size_t m : {1, 16, 300}) {
      const double doubling = time_of<tc::Hypercube<>>(sim::collective::all_reduce, p, m, cube(p),
                                                       forced(tc::algorithm::recursive_doubling));
      const double trees = time_of<tc::Hypercube<>>(sim::collective::all_reduce, p, m, cube(p),
                                                    forced(tc::algorithm::reduce_broadcast));
      BOOST_TEST(trees == 2 * (ts + tw * static_cast<double>(m)) * log2i(p));
      BOOST_TEST(trees == 2 * doubling);
    }
}

// Section 4.4: scatter and gather on a hypercube, t_s log p + t_w m (p - 1).
BOOST_AUTO_TEST_CASE(scatter_and_gather_on_a_hypercube) {
  for (int p : {2, 8, 64})
    for (std::size_t m : {1, 9, 100}) {
      const double want = ts * log2i(p) + tw * m * (p - 1);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::scatter, p, m, cube(p)) == want);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::gather, p, m, cube(p)) == want);
    }
}

// Eqs. 4.7-4.9: all-to-all personalized by store-and-forward: ring
// (t_s + t_w m p / 2)(p - 1), square mesh (2 t_s + t_w m p)(sqrt p - 1),
// hypercube (t_s + t_w m p / 2) log p.
BOOST_AUTO_TEST_CASE(eq_4_7_to_4_9_store_and_forward_all_to_all) {
  const auto sf = forced(tc::algorithm::store_and_forward);
  for (std::size_t m : {2, 10}) {
    for (int p : {2, 4, 8, 12})
      BOOST_TEST(time_of<tc::Ring>(sim::collective::all_to_all, p, m, single(sim::network::ring(p)),
                                   sf) == (ts + tw * m * p / 2) * (p - 1));
    for (int q : {2, 3, 4}) {
      const int p = q * q;
      BOOST_TEST(time_of<tc::Mesh<2>>(sim::collective::all_to_all, p, m,
                                      single(sim::network::mesh({q, q})),
                                      sf) == (2 * ts + tw * m * p) * (q - 1));
    }
    for (int p : {2, 8, 64})
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::all_to_all, p, m, cube(p), sf) ==
                 (ts + tw * m * p / 2) * log2i(p));
  }
}

// The ring's algorithms on a linear array (a ring without its wrap-around
// link, Section 4.2.1): Algorithm 4.4's all-to-all broadcast and reduction,
// Eq. 4.2, and the store-and-forward all-to-all, Eq. 4.7, take the same time
// there and stay congestion-free: a step's one message that wraps round goes
// back along the line, the way the others leave free.
BOOST_AUTO_TEST_CASE(eq_4_2_and_4_7_on_a_linear_array) {
  for (int p : {2, 5, 8, 13})
    for (std::size_t m : {1, 10}) {
      const auto line = single(sim::network::linear(p));
      const double step = ts + tw * static_cast<double>(m);
      for (sim::collective k : {sim::collective::all_gather, sim::collective::reduce_scatter}) {
        const sim::result r =
            sim::simulate<tc::Ring>(k, p, m, line, cost, forced(tc::algorithm::fold));
        BOOST_TEST(r.time == step * (p - 1), sim::to_string(k) << " p " << p << " m " << m);
        BOOST_TEST(r.max_congestion <= 1);
      }
      const sim::result a = sim::simulate<tc::Ring>(sim::collective::all_to_all, p, m, line, cost,
                                                    forced(tc::algorithm::store_and_forward));
      BOOST_TEST(a.time == (ts + tw * static_cast<double>(m) * p / 2) * (p - 1));
      BOOST_TEST(a.max_congestion <= 1);
    }
}

// Section 4.5.1: sending half of the messages each way round the ring
// (algorithm::bidirectional) halves Eq. 4.7's t_w term: the one-way
// t_w m p (p - 1) / 2 becomes t_w m (f (f + 1) + b (b + 1)) / 2, for f and b
// the farther destinations one way and the other (f + b = p - 1, f - b <= 1),
// the two directions one after the other on a single-ported node.
BOOST_AUTO_TEST_CASE(ring_both_ways_halves_the_t_w_term_of_eq_4_7) {
  const sim::cost_params no_start{.t_s = 0, .t_w = tw};
  for (int p : {2, 4, 5, 8, 9, 16})
    for (std::size_t m : {1, 10}) {
      const auto ring = single(sim::network::ring(p));
      const double one_way =
          sim::simulate<tc::Ring>(sim::collective::all_to_all, p, m, ring, no_start,
                                  forced(tc::algorithm::store_and_forward))
              .time;
      const double both = sim::simulate<tc::Ring>(sim::collective::all_to_all, p, m, ring, no_start,
                                                  forced(tc::algorithm::bidirectional))
                              .time;
      const int f = p / 2, b = (p - 1) / 2;
      const double twm = tw * static_cast<double>(m);
      BOOST_TEST(one_way == twm * p * (p - 1) / 2);
      BOOST_TEST(both == twm * (f * (f + 1) + b * (b + 1)) / 2, "p " << p << " m " << m);
      BOOST_TEST(both <= one_way / 2 + twm * p);
    }
}

// Section 4.5: the all-to-all personalized exchange takes the all-to-all
// broadcast's pattern (Algorithms 4.4, 4.6 and 4.7): each rank sends to the
// same peers in the same order, only the sizes differ.
BOOST_AUTO_TEST_CASE(all_to_all_follows_the_all_to_all_broadcast_pattern) {
  // each rank's peers, in the order it sends to them
  const auto peers = [](const sim::traced_result& t, int p) {
    flows f = flows_of(t, p, side::sent);
    for (auto& rank : f)
      for (auto& [peer, count] : rank) count = 0;
    return f;
  };
  const auto same = [&]<class Topo>(std::type_identity<Topo>, int p, const sim::network& net) {
    const std::size_t m = 10;
    const auto gather = sim::simulate_trace<Topo>(sim::collective::all_gather, p, m, net, cost,
                                                  forced(tc::algorithm::fold));
    const auto personal = sim::simulate_trace<Topo>(sim::collective::all_to_all, p, m, net, cost,
                                                    forced(tc::algorithm::store_and_forward));
    BOOST_TEST((peers(gather, p) == peers(personal, p)), Topo::name() << " p " << p);
  };
  for (int p : {2, 5, 8}) same(std::type_identity<tc::Ring>{}, p, single(sim::network::ring(p)));
  for (int q : {2, 3, 4})
    same(std::type_identity<tc::Mesh<2>>{}, q * q, single(sim::network::mesh({q, q})));
  for (int p : {2, 8, 32}) same(std::type_identity<tc::Hypercube<>>{}, p, cube(p));
}

// Section 4.5 on optimality, with the slides' bisection argument: m p^2 / 4
// words must cross the bisection each way, over its width w (2 on a ring,
// 2 sqrt p on a square mesh with wrap-around, p / 2 on a hypercube), so no
// exchange beats t_w m p^2 / (4 w). Without start-ups the ring's (Eq. 4.7)
// and the mesh's (Eq. 4.8) store-and-forward stay within 4 and 8 times that
// bound whatever p: they are optimal up to a constant. (Grama's count for
// the ring, m (p - 1) p^2 / 2 words round p links one way, is Eq. 4.7's t_w
// term exactly.) The hypercube's (Eq. 4.9) is log p times the bound, growing
// with p: not optimal, while the pairwise exchange (Eq. 4.10) stays within 2.
BOOST_AUTO_TEST_CASE(all_to_all_against_the_bisection_bound) {
  const sim::cost_params no_start{.t_s = 0, .t_w = tw};
  const auto sf = forced(tc::algorithm::store_and_forward);
  const std::size_t m = 10;
  const auto ratio = [&]<class Topo>(std::type_identity<Topo>, int p, const sim::network& net,
                                     double width, tc::options opt) {
    const double bound = tw * static_cast<double>(m) * p * p / (4 * width);
    return sim::simulate<Topo>(sim::collective::all_to_all, p, m, net, no_start, opt).time / bound;
  };
  for (int p : {4, 8, 16, 64, 256}) {
    const double ring =
        ratio(std::type_identity<tc::Ring>{}, p, single(sim::network::ring(p)), 2, sf);
    BOOST_TEST(ring == 4.0 * (p - 1) / p);
    const double cube_sf = ratio(std::type_identity<tc::Hypercube<>>{}, p, cube(p), p / 2.0, sf);
    BOOST_TEST(cube_sf == log2i(p));
    const double pairwise = ratio(std::type_identity<tc::Hypercube<>>{}, p, cube(p), p / 2.0,
                                  forced(tc::algorithm::pairwise));
    BOOST_TEST(pairwise == 2.0 * (p - 1) / p);
  }
  for (int q : {2, 4, 8, 16}) {
    const double mesh = ratio(std::type_identity<tc::Mesh<2>>{}, q * q,
                              single(sim::network::mesh({q, q})), 2.0 * q, sf);
    BOOST_TEST(mesh == 8.0 * (q - 1) / q);
  }
}

// Eqs. 4.7-4.9 with local rearrangement (cost_params::t_r, per element a
// rank copies in its own memory). Store-and-forward copies its m p words once
// before each dimension, which is how Grama counts the hypercube's
// (t_r m p log p), and once more at the end, into out in source order:
//  * hypercube: Eq. 4.9 + t_r m p (log p + 1);
//  * ring: Eq. 4.7 + 2 t_r m p;
//  * square mesh: Eq. 4.8 + 3 t_r m p (Grama counts the t_r m p between its
//    two phases, taking the first phase's arrangement as given);
//  * the pairwise exchange copies a rank's own block only: t_r m.
// Without t_r (0) a schedule holds no local copies at all.
BOOST_AUTO_TEST_CASE(eq_4_7_to_4_9_with_local_rearrangement) {
  constexpr double tr = 0.5;
  const sim::cost_params with_tr{.t_s = ts, .t_w = tw, .t_r = tr};
  const auto sf = forced(tc::algorithm::store_and_forward);
  const auto a2a = sim::collective::all_to_all;
  for (std::size_t m : {2, 10}) {
    for (int p : {2, 4, 8, 12})
      BOOST_TEST(
          sim::simulate<tc::Ring>(a2a, p, m, single(sim::network::ring(p)), with_tr, sf).time ==
          (ts + tw * m * p / 2) * (p - 1) + 2 * tr * m * p);
    for (int q : {2, 3, 4}) {
      const int p = q * q;
      BOOST_TEST(
          sim::simulate<tc::Mesh<2>>(a2a, p, m, single(sim::network::mesh({q, q})), with_tr, sf)
              .time == (2 * ts + tw * m * p) * (q - 1) + 3 * tr * m * p);
    }
    for (int p : {2, 8, 64}) {
      const int d = log2i(p);
      BOOST_TEST(sim::simulate<tc::Hypercube<>>(a2a, p, m, cube(p), with_tr, sf).time ==
                 (ts + tw * m * p / 2) * d + tr * m * p * (d + 1));
      BOOST_TEST(sim::simulate<tc::Hypercube<>>(a2a, p, m, cube(p), with_tr,
                                                forced(tc::algorithm::pairwise))
                     .time == (ts + tw * m) * (p - 1) + tr * m);
    }
  }
}

// Lecture 9's in-place all-gather: each block goes straight to its place in
// the result, with minimal reshuffling. With t_r per element a rank copies
// locally, the ring's, the mesh's and the hypercube's all-gather cost Eqs.
// 4.2 to 4.4 plus t_r m: a rank copies its own block into place, and nothing
// is rearranged after it arrives.
BOOST_AUTO_TEST_CASE(in_place_all_gather_copies_only_its_own_block) {
  const sim::cost_params copies{.t_s = ts, .t_w = tw, .t_r = 0.5};
  const auto fold = forced(tc::algorithm::fold);
  for (std::size_t m : {1, 10, 1000}) {
    const auto extra = [&]<class Topo>(std::type_identity<Topo>, int p, const sim::network& net) {
      return sim::simulate<Topo>(sim::collective::all_gather, p, m, net, copies, fold).time -
             sim::simulate<Topo>(sim::collective::all_gather, p, m, net, cost, fold).time;
    };
    const double own = 0.5 * static_cast<double>(m);
    for (int p : {2, 5, 8})
      BOOST_TEST(extra(std::type_identity<tc::Ring>{}, p, single(sim::network::ring(p))) == own);
    for (int q : {2, 4})
      BOOST_TEST(extra(std::type_identity<tc::Mesh<2>>{}, q * q,
                       single(sim::network::mesh({q, q}))) == own);
    for (int p : {2, 8, 64})
      BOOST_TEST(extra(std::type_identity<tc::Hypercube<>>{}, p, cube(p)) == own);
  }
}

// Eq. 4.10 and the third congestion case: the pairwise exchange, partner
// rank XOR j, with E-cube routing on a hypercube is congestion-free:
// (t_s + t_w m)(p - 1). On a ring the same schedule congests.
BOOST_AUTO_TEST_CASE(eq_4_10_pairwise_exchange_is_congestion_free_under_e_cube) {
  const auto pw = forced(tc::algorithm::pairwise);
  for (int p : {2, 8, 32, 64})
    for (std::size_t m : {1, 50}) {
      const sim::result r =
          sim::simulate<tc::Hypercube<>>(sim::collective::all_to_all, p, m, cube(p), cost, pw);
      BOOST_TEST(r.time == (ts + tw * m) * (p - 1));
      BOOST_TEST(r.max_congestion == 1);
      BOOST_TEST(r.messages == static_cast<std::uint64_t>(p) * (p - 1));
    }
  const sim::result ring = sim::simulate<tc::Hypercube<>>(sim::collective::all_to_all, 8, 1,
                                                          single(sim::network::ring(8)), cost, pw);
  BOOST_TEST(ring.max_congestion > 1);
}

// ICS 632's store-and-forward routing: a message from P_0 to P_q costs
// q(L + m b) (network::with(routing::store_and_forward)):
//  * the naive broadcast on a linear array pays every hop of its message to
//    rank q: (1 + 2 + ... + (p - 1))(t_s + t_w m), against (p - 1)(t_s + t_w m)
//    cut-through;
//  * schedules between neighbours cost what they cost cut-through: the ring
//    pipeline's (p - 1)(L + m b), Algorithm 4.4's fold, Eq. 4.1's tree and
//    Eq. 4.9's store-and-forward all_to_all;
//  * Eq. 4.10's pairwise exchange assumes cut-through routing (Grama 4.5.3):
//    routed store-and-forward on a hypercube, its step j pays popcount(j) hops,
//    (p / 2) log p message times in all, so its t_w term is Eq. 4.9's and its
//    t_s term p / 2 times Eq. 4.9's.
BOOST_AUTO_TEST_CASE(store_and_forward_routing_pays_every_hop) {
  const auto store_and_forward = [](sim::network n) {
    return single(n).with(sim::routing::store_and_forward);
  };
  for (int p : {2, 3, 5, 8, 16})
    for (std::size_t m : {1, 100}) {
      const double msg = ts + tw * m;
      const sim::network line = store_and_forward(sim::network::linear(p));
      BOOST_TEST(time_of<tc::Ring>(sim::collective::broadcast, p, m, line,
                                   forced(tc::algorithm::naive)) == p * (p - 1) / 2 * msg);
      BOOST_TEST(time_of<tc::Ring>(sim::collective::broadcast, p, m,
                                   single(sim::network::linear(p)),
                                   forced(tc::algorithm::naive)) == (p - 1) * msg);
      const sim::network ring = store_and_forward(sim::network::ring(p));
      if (m == 1)
        BOOST_TEST(time_of<tc::Ring>(sim::collective::broadcast, p, m, ring,
                                     forced(tc::algorithm::pipelined)) == (p - 1) * msg);
      BOOST_TEST(time_of<tc::Ring>(sim::collective::all_gather, p, m, ring,
                                   forced(tc::algorithm::fold)) == (p - 1) * msg);
      if ((p & (p - 1)) != 0) continue;
      const sim::network cube = store_and_forward(sim::network::hypercube(log2i(p)));
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::broadcast, p, m, cube,
                                          forced(tc::algorithm::tree)) == log2i(p) * msg);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::all_to_all, p, m, cube,
                                          forced(tc::algorithm::store_and_forward)) ==
                 (ts + tw * m * p / 2) * log2i(p));
      const sim::result pw = sim::simulate<tc::Hypercube<>>(sim::collective::all_to_all, p, m, cube,
                                                            cost, forced(tc::algorithm::pairwise));
      BOOST_TEST(pw.time == p / 2 * log2i(p) * msg);
      BOOST_TEST(pw.max_congestion == 1);
    }
}

// The naive baselines on a single-ported complete(p) network, from any
// topology (algorithm::naive ignores it):
//  * broadcast (Grama 4.1): the source's p - 1 messages one after another,
//    exactly (p - 1)(t_s + t_w m);
//  * all_gather (4.2): p such broadcasts, one after another, p (p - 1)(t_s + t_w m),
//    "up to p times as long" as the broadcast;
//  * all_to_all: the exchanges in the order 0, 1, ..., p - 1, each rank's pair
//    {a, b} (a < b) waiting for both ranks' pairs before it, so that it ends
//    at a + b exchange times: (2p - 3)(t_s + t_w m) against the pairwise
//    exchange's p - 1 on the same network;
//  * reduce: p - 1 messages into the root, which the model receives at once.
template <class Topo>
void naive_costs() {
  const auto naive = forced(tc::algorithm::naive);
  for (int p : {2, 3, 5, 7, 8, 9, 16, 31})
    for (std::size_t m : {1, 10, 1000}) {
      const double msg = ts + tw * m;
      const sim::network net = single(sim::network::complete(p));
      const sim::result b = sim::simulate<Topo>(sim::collective::broadcast, p, m, net, cost, naive);
      BOOST_TEST(b.time == (p - 1) * msg);
      BOOST_TEST(b.messages == static_cast<std::uint64_t>(p - 1));
      BOOST_TEST(time_of<Topo>(sim::collective::all_gather, p, m, net, naive) == p * (p - 1) * msg);
      BOOST_TEST(time_of<Topo>(sim::collective::all_to_all, p, m, net, naive) == (2 * p - 3) * msg);
      const sim::result r = sim::simulate<Topo>(sim::collective::reduce, p, m, net, cost, naive);
      BOOST_TEST(r.messages == static_cast<std::uint64_t>(p - 1));
    }
}
BOOST_AUTO_TEST_CASE(naive_baselines_on_a_complete_network) {
  naive_costs<tc::Ring>();
  naive_costs<tc::Mesh<2>>();
  naive_costs<tc::Hypercube<>>();
  naive_costs<tc::Tree<3>>();
}

// Single-ported receives (receives::one_at_a_time: a rank takes one message
// at a time) on a single-ported complete(p):
//  * the naive reduce mirrors the naive broadcast: (p - 1)(t_s + t_w m) into
//    the root, where receives at once take one message time;
//  * the naive all_to_all's first messages all go to rank 0, which takes them
//    one after another, the last arriving after p - 1 message times (the
//    lecture's "everyone sends to the same processor at the same time"); the
//    exchange then runs out of step and ends at (3p - 5)(t_s + t_w m) for
//    p >= 3, against p - 1 for the pairwise exchange, which no receive port
//    slows: each of its steps brings every rank one message;
//  * the tree broadcast, one message into a rank at a time, is Eq. 4.1 still.
BOOST_AUTO_TEST_CASE(single_ported_receives_queue_the_naive_baselines) {
  const auto naive = forced(tc::algorithm::naive);
  for (int p : {3, 4, 5, 8, 9, 16})
    for (std::size_t m : {1, 100}) {
      const double msg = ts + tw * m;
      sim::network net = single(sim::network::complete(p));
      BOOST_TEST(time_of<tc::Ring>(sim::collective::reduce, p, m, net, naive) == msg);
      net.with(sim::receives::one_at_a_time);
      BOOST_TEST(time_of<tc::Ring>(sim::collective::reduce, p, m, net, naive) == (p - 1) * msg);
      const sim::traced_result a2a =
          sim::simulate_trace<tc::Ring>(sim::collective::all_to_all, p, m, net, cost, naive);
      BOOST_TEST(a2a.summary.time == (3 * p - 5) * msg);
      std::vector<double> into_0;  // the arrivals at rank 0 of the first messages
      for (const sim::timed_message& x : a2a.messages)
        if (x.dst == 0) into_0.push_back(x.end);
      std::sort(into_0.begin(), into_0.end());
      BOOST_TEST(into_0.size() == static_cast<std::size_t>(p - 1));
      for (std::size_t i = 0; i < into_0.size(); ++i) BOOST_TEST(into_0[i] == (i + 1) * msg);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::all_to_all, p, m, net,
                                          forced(tc::algorithm::pairwise)) == (p - 1) * msg);
      if (p == 8 || p == 16)
        BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::broadcast, p, m, net,
                                            forced(tc::algorithm::tree)) == log2i(p) * msg);
    }
}

// automatic never takes algorithm::naive: from 5 ranks on its schedule is
// never the naive one (below that the trees of the Ring and of Tree<K> with
// p <= K are the naive star themselves, and automatic_takes names both).
template <class Topo>
void automatic_is_never_naive() {
  const sim::collective naive_ones[] = {sim::collective::broadcast, sim::collective::reduce,
                                        sim::collective::all_gather, sim::collective::all_to_all};
  for (sim::collective k : naive_ones)
    for (int p : {5, 8, 16})
      for (std::size_t m : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 17}) {
        const auto takes = sim::automatic_takes<Topo>(k, p, m, {});
        BOOST_TEST((std::find(takes.begin(), takes.end(), tc::algorithm::naive) == takes.end()),
                   Topo::name() << " " << sim::to_string(k) << " p " << p << " m " << m);
      }
}
BOOST_AUTO_TEST_CASE(automatic_never_takes_naive) {
  automatic_is_never_naive<tc::Ring>();
  automatic_is_never_naive<tc::Mesh<2>>();
  automatic_is_never_naive<tc::Hypercube<>>();
  automatic_is_never_naive<tc::Tree<3>>();
}

// automatic weighs its candidates by the simulation's own t_s and t_w where
// options::cost has the defaults': all_gather on ring(8) takes the cheaper of
// Algorithm 4.4's fold (Eq. 4.2, (t_s + t_w m)(p - 1)) and the tree, as the
// simulation prices them (at m = 16, the defaults' 1 µs against 2e-4 µs per
// byte would take the tree, at twice the fold's time). An options::cost of
// its own chooses as it says: a start-up of 1 s, the tree.
BOOST_AUTO_TEST_CASE(automatic_is_priced_by_the_simulations_costs) {
  const auto net = single(sim::network::ring(8));
  for (std::size_t m : {1, 16, 1000}) {
    const double fold =
        time_of<tc::Ring>(sim::collective::all_gather, 8, m, net, forced(tc::algorithm::fold));
    const double tree =
        time_of<tc::Ring>(sim::collective::all_gather, 8, m, net, forced(tc::algorithm::tree));
    BOOST_TEST(fold == (ts + tw * m) * 7);
    BOOST_TEST(time_of<tc::Ring>(sim::collective::all_gather, 8, m, net) == std::min(fold, tree));
    tc::options own;
    own.cost.ts_us = 1e6;
    BOOST_TEST(time_of<tc::Ring>(sim::collective::all_gather, 8, m, net, own) == tree);
  }
}

// ICS 632's pipelined broadcast round a ring: (p - 2 + r)(t_s + t_w m / r),
// at the r the kernel picks (ring_segments), for m a multiple of r.
BOOST_AUTO_TEST_CASE(ring_pipeline_at_the_kernels_r) {
  tc::options opt = forced(tc::algorithm::pipelined);
  opt.cost = {.ts_us = 1.0, .tw_us_per_byte = 0.01};
  for (int p : {3, 8, 17})
    for (std::size_t m0 : {2000, 30000}) {
      std::size_t m = m0, r = 1;
      for (;; ++m) {
        r = tc::detail::pipeline::ring_segments<sim::phantom>(m, p, opt.cost);
        if (m % r == 0) break;
      }
      BOOST_TEST_REQUIRE(r > 1);
      const double want = (p - 2 + static_cast<double>(r)) * (ts + tw * static_cast<double>(m / r));
      for (sim::ports k : {sim::ports::single, sim::ports::multi}) {
        auto ring = sim::network::ring(p).with(k);
        BOOST_TEST(time_of<tc::Ring>(sim::collective::broadcast, p, m, ring, opt) == want);
        BOOST_TEST(time_of<tc::Ring>(sim::collective::reduce, p, m, ring, opt) == want);
      }
    }
}

// ICS 632's optimal pipeline. With no floor on the segment size
// (cost_model::segment_floor = 0, the seeds' model; the default keeps
// segments of 50 start-ups' worth of bytes and model::calibrate measures the
// floor), the kernel takes of the integers either side of
// r_opt = sqrt(m (p - 2) b / L) the one where (p - 2 + r)(L + m b / r) is
// smaller, and the broadcast takes the seed's optimal time
// (sqrt((p - 2) L) + sqrt(m b))^2, up to m / r rounded up: at least the
// optimum, at most (p - 2 + r)(L + b ceil(m / r)).
BOOST_AUTO_TEST_CASE(ring_pipeline_takes_r_opt_without_a_floor) {
  tc::options opt = forced(tc::algorithm::pipelined);
  opt.cost = {.ts_us = ts, .tw_us_per_byte = tw / 8, .segment_floor = 0};  // 8-byte elements
  for (int p : {3, 4, 8, 17})
    for (std::size_t m : {100, 30000, 100000}) {
      const double r_opt = std::sqrt(m * (p - 2) * tw / ts);
      const auto formula = [&](double r) { return (p - 2 + r) * (ts + tw * m / r); };
      const auto r =
          static_cast<double>(tc::detail::pipeline::ring_segments<sim::phantom>(m, p, opt.cost));
      const double other = r > r_opt ? r - 1 : r + 1;
      BOOST_TEST((r == std::floor(r_opt) || r == std::ceil(r_opt)), "p " << p << " m " << m);
      BOOST_TEST((other < 1 || formula(r) <= formula(other)), "p " << p << " m " << m);
      const double optimum = std::pow(std::sqrt((p - 2) * ts) + std::sqrt(m * tw), 2);
      const double rounded_up = (p - 2 + r) * (ts + tw * std::ceil(m / r));
      const double t =
          time_of<tc::Ring>(sim::collective::broadcast, p, m, single(sim::network::ring(p)), opt);
      BOOST_TEST(t >= optimum * (1 - 1e-12), "p " << p << " m " << m);
      BOOST_TEST(t <= rounded_up, "p " << p << " m " << m);
    }
}

// ICS 632 on a ring, (p - 1)(L + m b) each: the broadcast, each rank
// receiving from its predecessor and sending to its successor (one segment
// where m is short); the scatter, whose root sends the block of the farthest
// rank first, each rank passing on what is not its own, so that the last
// block reaches the root's neighbour after p - 1 steps (nearest first would
// take 2p - 3); and the gather, its mirror. Congestion-free, on the ring and
// on the linear array.
BOOST_AUTO_TEST_CASE(ring_broadcast_scatter_and_gather_take_p_minus_1_steps) {
  const auto pipe = forced(tc::algorithm::pipelined);
  for (int p : {2, 3, 4, 7, 8})
    for (std::size_t m : {1, 10})
      for (const sim::network& net :
           {single(sim::network::ring(p)), single(sim::network::linear(p))})
        for (sim::collective k :
             {sim::collective::broadcast, sim::collective::scatter, sim::collective::gather}) {
          const sim::result r = sim::simulate<tc::Ring>(k, p, m, net, cost, pipe);
          BOOST_TEST(r.time == (p - 1) * (ts + tw * static_cast<double>(m)),
                     sim::to_string(k) << " on " << net.name());
          BOOST_TEST(r.max_congestion <= 1, sim::to_string(k) << " on " << net.name());
        }
}

// ICS 632: at r_opt the pipelined broadcast tends to m b as m grows, whatever
// p: (sqrt((p - 2) L) + sqrt(m b))^2 / (m b) -> 1. At m = 10^7 (t_s = 100,
// t_w = 3) it is within 3 % of m b at p = 4, 16 and 64.
BOOST_AUTO_TEST_CASE(the_optimal_pipeline_tends_to_m_b_whatever_p) {
  tc::options opt = forced(tc::algorithm::pipelined);
  opt.cost = {.ts_us = ts, .tw_us_per_byte = tw / 8, .segment_floor = 0};  // 8-byte elements
  const std::size_t m = 10'000'000;
  const double mb = tw * static_cast<double>(m);
  std::vector<double> t;
  for (int p : {4, 16, 64}) {
    t.push_back(
        time_of<tc::Ring>(sim::collective::broadcast, p, m, single(sim::network::ring(p)), opt));
    BOOST_TEST(t.back() >= mb);
    BOOST_TEST(t.back() <= 1.03 * mb, "p " << p << ": " << t.back() / mb << " m b");
  }
  BOOST_TEST(t.back() <= 1.03 * t.front());
}

// "Improving the speed": all-reduce as reduce-scatter + all-gather, and
// broadcast (reduce) as scatter + all-gather (reduce-scatter + gather), on a
// hypercube: 2 t_s log p + 2 t_w m (p - 1) / p, m a multiple of p.
BOOST_AUTO_TEST_CASE(improving_the_speed_on_a_hypercube) {
  for (int p : {2, 8, 32})
    for (std::size_t k : {1, 3}) {
      const std::size_t m = k * static_cast<std::size_t>(p);
      const double want = 2 * ts * log2i(p) + 2 * tw * static_cast<double>(m) * (p - 1) / p;
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::all_reduce, p, m, cube(p),
                                          forced(tc::algorithm::reduce_scatter_all_gather)) ==
                 want);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::broadcast, p, m, cube(p),
                                          forced(tc::algorithm::scatter_all_gather)) == want);
      BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::reduce, p, m, cube(p),
                                          forced(tc::algorithm::reduce_scatter_gather)) == want);
    }
}

// The first congestion case: the hypercube all-to-all broadcast on an
// 8-node ring. Its last step sends 4m words from every node to the node 4
// away, and one link of the ring carries all four messages of one direction.
BOOST_AUTO_TEST_CASE(hypercube_all_gather_on_a_ring_congests_its_last_step) {
  const std::size_t m = 10;
  const sim::traced_result t = sim::simulate_trace<tc::Hypercube<>>(
      sim::collective::all_gather, 8, m, single(sim::network::ring(8)), cost);
  BOOST_TEST(t.summary.max_congestion == 4);
  int last_step = 0;
  for (const sim::timed_message& x : t.messages)
    if (x.count == 4 * m) {
      ++last_step;
      BOOST_TEST(x.congestion == 4);
      BOOST_TEST(x.hops == 4);
    }
  BOOST_TEST(last_step == 8);
  // steps of m, 2m, 4m words with c = 1, 2, 4
  BOOST_TEST(t.summary.time == (ts + tw * m) + (ts + 2 * tw * 2 * m) + (ts + 4 * tw * 4 * m));
  // on its own network, Eq. 4.4 without congestion
  BOOST_TEST(time_of<tc::Hypercube<>>(sim::collective::all_gather, 8, m, cube(8)) ==
             3 * ts + tw * m * 7);
}

namespace {
// The hypercube broadcast with virtual rank v on real rank bitreverse(v) (the
// D bits reversed): the library's kernel takes the dimensions high to low
// (Algorithm 4.2's mask loop), this relabelling of it low to high.
template <int D>
struct DimensionsLowToHigh : tc::Hypercube<D> {
  static std::string name() { return "DimensionsLowToHigh<" + std::to_string(D) + ">"; }
  static constexpr int reverse(int v) {
    int r = 0;
    for (int i = 0; i < D; ++i) r |= ((v >> i) & 1) << (D - 1 - i);
    return r;
  }
  static constexpr int to_virtual(const tc::layout&, int rank, int root) {
    return reverse(rank) ^ reverse(root);
  }
  static constexpr int to_real(const tc::layout&, int v, int root) {
    return reverse(v ^ reverse(root));
  }
};

// On a linear array the low-to-high order sends to the NEAREST node first (0
// -> 1; 0 -> 2, 1 -> 3; 0 -> 4, ...), the order Grama Section 4.1.1 warns
// against.
struct NearestFirst : DimensionsLowToHigh<3> {
  static std::string name() { return "NearestFirst"; }
};
}  // namespace

// The second congestion case: on a linear array (an 8-node ring whose ties
// go towards increasing rank), the farthest-first broadcast is congestion-free
// while nearest-first shares the link 1 -> 2 in its second step and 3 -> 4 in
// its third.
BOOST_AUTO_TEST_CASE(linear_array_broadcast_nearest_first_congests) {
  const std::size_t m = 20;
  const auto ring = single(sim::network::ring(8));
  const sim::result far = sim::simulate<tc::Ring>(sim::collective::broadcast, 8, m, ring, cost,
                                                  forced(tc::algorithm::tree));
  BOOST_TEST(far.max_congestion == 1);
  BOOST_TEST(far.time == 3 * (ts + tw * m));
  const sim::traced_result near =
      sim::simulate_trace<NearestFirst>(sim::collective::broadcast, 8, m, ring, cost);
  BOOST_TEST(near.summary.max_congestion == 4);
  BOOST_TEST(near.summary.time == (ts + tw * m) + (ts + 2 * tw * m) + (ts + 4 * tw * m));
  BOOST_TEST(near.messages.front().dst == 1);  // nearest first
}

// Figure 4.3: the reduction on a linear array of 8 (the Ring's tree) takes
// the figure's steps on linear(8), each congestion-free: 1 -> 0, 3 -> 2,
// 5 -> 4, 7 -> 6 at t = 0, then 2 -> 0 and 6 -> 4, then 4 -> 0;
// 3 (t_s + t_w m) in all.
BOOST_AUTO_TEST_CASE(figure_4_3_reduction_on_a_linear_array) {
  const step_pairs steps{{{1, 0}, {3, 2}, {5, 4}, {7, 6}}, {{2, 0}, {6, 4}}, {{4, 0}}};
  for (std::size_t m : {1, 20, 500}) {
    const double step = ts + tw * static_cast<double>(m);
    const sim::traced_result t = sim::simulate_trace<tc::Ring>(sim::collective::reduce, 8, m,
                                                               single(sim::network::linear(8)),
                                                               cost, forced(tc::algorithm::tree));
    BOOST_TEST(t.summary.time == 3 * step);
    BOOST_TEST(t.summary.max_congestion == 1);
    BOOST_TEST((steps_of(t, step) == steps));
  }
}

// Section 4.1: the broadcast takes the same steps on every network. On 8
// nodes (Figure 4.2's ring and linear array, the hypercube of Figure 4.6 and
// the tree of switches of Figure 4.7): 0 -> 4; 0 -> 2, 4 -> 6; every even
// node to the next. On a 4 x 4 mesh (Figure 4.5) along the root's column
// first (0 -> 8; 0 -> 4, 8 -> 12), then along every row: the steps of the
// hypercube of 16. (The figure goes along the row first, the same by
// symmetry.) Each step t_s + t_w m, congestion-free.
BOOST_AUTO_TEST_CASE(the_broadcast_takes_the_same_steps_on_every_network) {
  const step_pairs eight{{{0, 4}}, {{0, 2}, {4, 6}}, {{0, 1}, {2, 3}, {4, 5}, {6, 7}}};
  step_pairs sixteen{{{0, 8}}, {{0, 4}, {8, 12}}, {{0, 2}, {4, 6}, {8, 10}, {12, 14}}, {}};
  for (int v = 0; v < 16; v += 2) sixteen[3].emplace_back(v, v + 1);
  const auto tree = forced(tc::algorithm::tree);
  constexpr auto k = sim::collective::broadcast;
  for (std::size_t m : {1, 20}) {
    const double step = ts + tw * static_cast<double>(m);
    const auto holds = [&](const sim::traced_result& t, const step_pairs& want, const char* net) {
      BOOST_TEST(t.summary.time == static_cast<double>(want.size()) * step, net);
      BOOST_TEST(t.summary.max_congestion == 1, net);
      BOOST_TEST((steps_of(t, step) == want), net);
    };
    holds(sim::simulate_trace<tc::Ring>(k, 8, m, single(sim::network::ring(8)), cost, tree), eight,
          "ring(8)");
    holds(sim::simulate_trace<tc::Ring>(k, 8, m, single(sim::network::linear(8)), cost, tree),
          eight, "linear(8)");
    holds(sim::simulate_trace<tc::Hypercube<>>(k, 8, m, cube(8), cost, tree), eight,
          "hypercube(3)");
    holds(sim::simulate_trace<tc::Hypercube<>>(k, 8, m, single(sim::network::tree(8)), cost, tree),
          eight, "tree(8)");
    holds(
        sim::simulate_trace<tc::Mesh<2>>(k, 16, m, single(sim::network::mesh({4, 4})), cost, tree),
        sixteen, "mesh(4x4)");
    holds(sim::simulate_trace<tc::Mesh<2>>(k, 16, m, single(sim::network::open_mesh({4, 4})), cost,
                                           tree),
          sixteen, "open_mesh(4x4)");
    holds(sim::simulate_trace<tc::Hypercube<>>(k, 16, m, cube(16), cost, tree), sixteen,
          "hypercube(4)");
  }
}

// Section 4.1.2: the reduction on a mesh is the broadcast reversed, step for
// step, with and without wrap-around. On a 3-D mesh of 2^d nodes both take d
// steps of t_s + t_w m, congestion-free, one dimension after the other
// (highest first): the steps of the hypercube of 2^d.
BOOST_AUTO_TEST_CASE(section_4_1_2_the_mesh_reduction_reverses_the_broadcast) {
  const auto tree = forced(tc::algorithm::tree);
  for (std::size_t m : {1, 20}) {
    const double step = ts + tw * static_cast<double>(m);
    for (const sim::network& net :
         {single(sim::network::mesh({4, 4})), single(sim::network::open_mesh({4, 4}))}) {
      const step_pairs down = steps_of(
          sim::simulate_trace<tc::Mesh<2>>(sim::collective::broadcast, 16, m, net, cost, tree),
          step);
      const step_pairs up = steps_of(
          sim::simulate_trace<tc::Mesh<2>>(sim::collective::reduce, 16, m, net, cost, tree), step);
      BOOST_TEST((reversed(up) == down), net.name());
    }
    for (int p : {8, 64}) {
      const auto s = tc::Mesh<3>::sides(p);
      const step_pairs hypercube =
          steps_of(sim::simulate_trace<tc::Hypercube<>>(sim::collective::broadcast, p, m, cube(p),
                                                        cost, tree),
                   step);
      for (const sim::network& net : {single(sim::network::mesh({s[0], s[1], s[2]})),
                                      single(sim::network::open_mesh({s[0], s[1], s[2]}))}) {
        const sim::traced_result down =
            sim::simulate_trace<tc::Mesh<3>>(sim::collective::broadcast, p, m, net, cost, tree);
        const sim::traced_result up =
            sim::simulate_trace<tc::Mesh<3>>(sim::collective::reduce, p, m, net, cost, tree);
        for (const sim::traced_result* t : {&down, &up}) {
          BOOST_TEST(t->summary.time == step * log2i(p), net.name());
          BOOST_TEST(t->summary.max_congestion == 1, net.name());
        }
        // one dimension after the other, highest first: the hypercube's steps
        BOOST_TEST((steps_of(down, step) == hypercube), net.name());
        BOOST_TEST((reversed(steps_of(up, step)) == hypercube), net.name());
      }
    }
  }
}

// Section 4.1.3: the broadcast on hypercube(d) is congestion-free with the
// dimensions taken high to low (the library's kernel, Algorithm 4.2) and low
// to high (the same kernel relabelled, DimensionsLowToHigh): both
// (t_s + t_w m) log p, c = 1, single- and multi-ported. The library has no
// option for the order; a topology policy chooses it.
template <int D>
void both_dimension_orders() {
  const int p = 1 << D;
  const auto tree = forced(tc::algorithm::tree);
  for (std::size_t m : {1, 10, 1000})
    for (sim::ports k : {sim::ports::single, sim::ports::multi}) {
      const auto net = sim::network::hypercube(D).with(k);
      const sim::result high =
          sim::simulate<tc::Hypercube<D>>(sim::collective::broadcast, p, m, net, cost, tree);
      const sim::result low =
          sim::simulate<DimensionsLowToHigh<D>>(sim::collective::broadcast, p, m, net, cost, tree);
      BOOST_TEST(high.time == D * (ts + tw * static_cast<double>(m)));
      BOOST_TEST(low.time == high.time);
      BOOST_TEST(high.max_congestion == 1);
      BOOST_TEST(low.max_congestion == 1);
      BOOST_TEST(low.messages == static_cast<std::uint64_t>(p - 1));
    }
}
BOOST_AUTO_TEST_CASE(section_4_1_3_both_dimension_orders_are_congestion_free_on_a_hypercube) {
  both_dimension_orders<1>();
  both_dimension_orders<3>();
  both_dimension_orders<4>();
  both_dimension_orders<6>();
  // the low-to-high order starts along dimension 0
  const sim::traced_result t = sim::simulate_trace<DimensionsLowToHigh<4>>(
      sim::collective::broadcast, 16, 5, cube(16), cost, forced(tc::algorithm::tree));
  BOOST_TEST(t.messages.front().dst == 1);
}

// Figure 4.7: the broadcast (Hypercube<>'s tree: 0 -> p/2 first) on a
// balanced binary tree of switches, processors at the leaves, is
// congestion-free: c = 1, and with t_h per hop step k (from 1) crosses
// 2 (log p - k + 1) links: (t_s + t_w m) log p + t_h log p (log p + 1).
BOOST_AUTO_TEST_CASE(figure_4_7_broadcast_on_a_tree_of_switches_is_congestion_free) {
  const sim::cost_params hops{.t_s = ts, .t_w = tw, .t_h = 10};
  for (int p : {2, 8, 16, 64})
    for (std::size_t m : {1, 10, 1000})
      for (sim::ports k : {sim::ports::single, sim::ports::multi}) {
        const int d = log2i(p);
        const sim::result r = sim::simulate<tc::Hypercube<>>(sim::collective::broadcast, p, m,
                                                             sim::network::tree(p).with(k), hops,
                                                             forced(tc::algorithm::tree));
        BOOST_TEST(r.max_congestion == 1);
        BOOST_TEST(r.time == d * (ts + tw * static_cast<double>(m)) + 10.0 * d * (d + 1));
      }
}

// Section 4.4: scatter and gather cost t_s log p + t_w m (p - 1) on a linear
// array (the Ring's tree on linear(p)) and on a 2-D mesh without wrap-around
// (Mesh<2>'s on open_mesh, sides as Mesh<2>::sides gives them), c = 1.
BOOST_AUTO_TEST_CASE(scatter_and_gather_on_a_linear_array_and_a_2d_mesh) {
  for (int p : {2, 4, 8, 16, 64})
    for (std::size_t m : {1, 9, 100}) {
      const double want = ts * log2i(p) + tw * static_cast<double>(m) * (p - 1);
      const auto s = tc::Mesh<2>::sides(p);
      const auto line = single(sim::network::linear(p));
      const auto mesh = single(sim::network::open_mesh({s[0], s[1]}));
      for (sim::collective k : {sim::collective::scatter, sim::collective::gather}) {
        const sim::result a = sim::simulate<tc::Ring>(k, p, m, line, cost);
        const sim::result b = sim::simulate<tc::Mesh<2>>(k, p, m, mesh, cost);
        BOOST_TEST(a.time == want, sim::to_string(k) << " p " << p << " m " << m);
        BOOST_TEST(b.time == want, sim::to_string(k) << " p " << p << " m " << m);
        BOOST_TEST(a.max_congestion == 1);
        BOOST_TEST(b.max_congestion == 1);
      }
    }
}

// The simulator's message count is what the kernels send on a real
// transport: model::Counting over loopback, doubles, the same options.
BOOST_AUTO_TEST_CASE(message_counts_match_a_real_run) {
  const int p = 6;
  const std::size_t m = 4;
  for (sim::collective k : sim::all_collectives) {
    std::vector<std::size_t> sent(p);
    tc::loopback::run(p, [&](tc::loopback::Comm& c) {
      tc::model::Counting cc(c);
      const auto P = static_cast<std::size_t>(p);
      std::vector<double> a(P * m, 1.0), b(P * m, 0.0);
      std::span<double> in(a), out(b);
      switch (k) {
        case sim::collective::broadcast:
          tc::broadcast<tc::Hypercube<>>(cc, in.first(m), 0);
          break;
        case sim::collective::reduce:
          tc::reduce<tc::Hypercube<>>(cc, in.first(m), out.first(m), std::plus<>{}, 0);
          break;
        case sim::collective::all_reduce:
          tc::all_reduce<tc::Hypercube<>>(cc, in.first(m), out.first(m), std::plus<>{});
          break;
        case sim::collective::all_gather:
          tc::all_gather<tc::Hypercube<>>(cc, in.first(m), out);
          break;
        case sim::collective::reduce_scatter:
          tc::reduce_scatter<tc::Hypercube<>>(cc, in, out.first(m), std::plus<>{});
          break;
        case sim::collective::scan:
          tc::scan<tc::Hypercube<>>(cc, in.first(m), out.first(m), std::plus<>{});
          break;
        case sim::collective::exclusive_scan:
          tc::exclusive_scan<tc::Hypercube<>>(cc, in.first(m), out.first(m), std::plus<>{});
          break;
        case sim::collective::scatter:
          tc::scatter<tc::Hypercube<>>(cc, in, out.first(m), 0);
          break;
        case sim::collective::gather:
          tc::gather<tc::Hypercube<>>(cc, in.first(m), out, 0);
          break;
        case sim::collective::all_to_all:
          tc::all_to_all<tc::Hypercube<>>(cc, in, out);
          break;
      }
      sent[static_cast<std::size_t>(c.rank())] = cc.sends();
    });
    std::size_t total = 0;
    for (std::size_t s : sent) total += s;
    // model::Counting is a blocking transport: compare with ports::single
    const sim::result r =
        sim::simulate<tc::Hypercube<>>(k, p, m, single(sim::network::complete(p)), cost);
    BOOST_TEST(r.messages == total, sim::to_string(k));
  }
}

// Every collective runs on every topology at awkward p without touching an
// element (the buffers are PROT_NONE: a touch would fault).
BOOST_AUTO_TEST_CASE(every_collective_every_topology_small_p) {
  for (int p : {1, 2, 3, 7, 12})
    for (sim::collective k : sim::all_collectives)
      for (sim::ports port : {sim::ports::single, sim::ports::multi}) {
        const auto net = sim::network::complete(p).with(port);
        BOOST_TEST(sim::simulate<tc::Ring>(k, p, 5, net, cost).time >= 0);
        BOOST_TEST(sim::simulate<tc::Mesh<2>>(k, p, 5, net, cost).time >= 0);
        BOOST_TEST(sim::simulate<tc::Hypercube<>>(k, p, 5, net, cost).time >= 0);
        const sim::result t = sim::simulate<tc::Tree<3>>(k, p, 5, net, cost);
        BOOST_TEST((p == 1 || t.messages > 0));
      }
}

// automatic_takes finds what automatic runs by comparing schedules. The
// choices below are the kernels' own rules: all_reduce takes recursive
// doubling below one element per rank and, on a Hypercube of 4 with busy_tc =
// 20, the trees for 64 Ki doubles (calibrate_test shows the same by counting
// messages; all_reduce's forced tree is reduce + broadcast too); broadcast on
// a Ring of 6 the pipeline for 1 Mi doubles and the tree below; scatter always
// the tree; one rank or no element leaves every applicable algorithm's
// schedule empty, so all of them match.
BOOST_AUTO_TEST_CASE(automatic_takes_what_automatic_runs) {
  using A = tc::algorithm;
  using v = std::vector<A>;
  const tc::options busy{.cost = tc::cost_model{.busy_tc = 20.0}};
  const std::size_t big = std::size_t{1} << 16;
  BOOST_TEST((sim::automatic_takes<tc::Hypercube<>>(sim::collective::all_reduce, 8, 3, {}) ==
              v{A::recursive_doubling}));
  BOOST_TEST((sim::automatic_takes<tc::Hypercube<>>(sim::collective::all_reduce, 4, big, {}) ==
              v{A::reduce_scatter_all_gather}));
  BOOST_TEST((sim::automatic_takes<tc::Hypercube<>>(sim::collective::all_reduce, 4, big, busy) ==
              v{A::tree, A::reduce_broadcast}));
  BOOST_TEST((sim::automatic_takes<tc::Ring>(sim::collective::scatter, 5, 100, {}) == v{A::tree}));
  BOOST_TEST((sim::automatic_takes<tc::Ring>(sim::collective::broadcast, 6, 1, {}) == v{A::tree}));
  BOOST_TEST(
      (sim::automatic_takes<tc::Ring>(sim::collective::broadcast, 6, big, {}) == v{A::tree}));
  BOOST_TEST((sim::automatic_takes<tc::Ring>(sim::collective::broadcast, 6, big << 4, {}) ==
              v{A::pipelined}));
  const v gather_ring{A::tree, A::pipelined};  // gather's algorithms on a Ring
  BOOST_TEST(sim::automatic_takes<tc::Ring>(sim::collective::gather, 1, 10, {}) == gather_ring);
  BOOST_TEST(sim::automatic_takes<tc::Ring>(sim::collective::gather, 6, 0, {}) == gather_ring);
  // The forced choice in opt is ignored: it is automatic's schedule that is named.
  BOOST_TEST((sim::automatic_takes<tc::Ring>(sim::collective::scatter, 5, 100,
                                             forced(A::pipelined)) == v{A::tree}));
  BOOST_CHECK_THROW(sim::automatic_takes<tc::Ring>(sim::collective::gather, 0, 1, {}),
                    std::invalid_argument);
}

// automatic's prices against the schedules themselves. The choices price
// each algorithm in closed form; the simulation walks the algorithm's own
// schedule. On the machine the closed forms describe, automatic's schedule
// must be the cheapest one the table allows, or within the closed forms'
// approximation of it: the seeds' single-ported node (one message sent and
// one taken at a time), messages alone (no combining time, t_c = 0, which
// the simulation does not time) and no floors under segments and pieces
// (which stand for effects of a real machine beyond t_s and t_w). The naive
// baselines are left out: automatic never takes them. Two sets of costs: the
// default model's t_s and t_w per double, and the seeds' t_s = 100, t_w = 3,
// under which the pieces' closed form (their scatter priced as the all-gather
// it mirrors) prices their schedule on a Mesh<2> of 3 x 3 or 4 x 3 below a
// pipeline up to 6 % faster (doc/model.md).
template <class Topo>
void automatic_is_cheapest(const sim::cost_params& costs, double within) {
  const tc::options seeds_model{
      .cost = tc::cost_model{.tc_us_per_byte = 0, .segment_floor = 0, .piece_floor = 0}};
  for (sim::collective k : sim::all_collectives)
    for (int p : {2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 32})
      for (std::size_t m : {1, 16, 128, 1024, 8192, 65536}) {
        if (!Topo::holds(p)) continue;
        const sim::network node =
            sim::network::complete(p).with(sim::ports::single).with(sim::receives::one_at_a_time);
        auto time = [&](tc::algorithm a) {
          tc::options o = seeds_model;
          o.algo = a;
          return sim::simulate<Topo>(k, p, m, node, costs, o).time;
        };
        double best = std::numeric_limits<double>::infinity();
        tc::algorithm cheapest = tc::algorithm::automatic;
        for (const tc::applicable& e : tc::algorithms_of(sim::to_string(k)).algorithms())
          if (e.algo != tc::algorithm::naive && tc::detail::meets<Topo>(e.need, Topo::shape(p)))
            if (const double t = time(e.algo); t < best) best = t, cheapest = e.algo;
        if (cheapest == tc::algorithm::automatic) continue;  // no algorithm applies here
        const double automatic = time(tc::algorithm::automatic);
        BOOST_TEST(automatic <= within * best,
                   Topo::name() << " " << sim::to_string(k) << " p " << p << " m " << m
                                << ": automatic " << automatic << ", " << tc::to_string(cheapest)
                                << " " << best);
      }
}
BOOST_AUTO_TEST_CASE(automatic_takes_the_cheapest_schedule_on_the_seeds_node) {
  const sim::cost_params default_model = sim::params_of(tc::cost_model{}, 8);
  for (const auto& [costs, within] : {std::pair{default_model, 1.001}, std::pair{cost, 1.06}}) {
    automatic_is_cheapest<tc::Ring>(costs, within);
    automatic_is_cheapest<tc::Mesh<2>>(costs, within);
    automatic_is_cheapest<tc::Hypercube<>>(costs, within);
    automatic_is_cheapest<tc::Tree<2>>(costs, within);
    automatic_is_cheapest<tc::Tree<4>>(costs, within);
  }
}

// simulate_on<P> and automatic_takes_on<P> are simulate and automatic_takes
// on port model P, compiled for it alone: the same figures, and a network of
// the other port model is refused.
BOOST_AUTO_TEST_CASE(on_one_port_model_as_on_either) {
  const sim::cost_params cost{.t_s = 100.0, .t_w = 1.0};
  for (const sim::collective k : {sim::collective::broadcast, sim::collective::all_reduce,
                                  sim::collective::all_to_all, sim::collective::scan})
    for (int p : {1, 5, 8}) {
      const sim::network one = single(sim::network::ring(p)), many = sim::network::ring(p);
      const sim::result a = sim::simulate<tc::Ring>(k, p, 7, one, cost);
      const sim::result b = sim::simulate_on<sim::ports::single, tc::Ring>(k, p, 7, one, cost);
      BOOST_TEST(a.time == b.time);
      BOOST_TEST(a.messages == b.messages);
      const double multi = sim::simulate_on<sim::ports::multi, tc::Ring>(k, p, 7, many, cost).time;
      BOOST_TEST(sim::simulate<tc::Ring>(k, p, 7, many, cost).time == multi);
      const auto takes = sim::automatic_takes_on<sim::ports::single, tc::Ring>(k, p, 7, {});
      BOOST_TEST((sim::automatic_takes<tc::Ring>(k, p, 7, {}, sim::ports::single) == takes));
      BOOST_CHECK_THROW((sim::simulate_on<sim::ports::multi, tc::Ring>(k, p, 7, one, cost)),
                        std::invalid_argument);
    }
}

// A persistent request makes automatic's choice once, at init, as the
// blocking call makes it at every call, and every start runs the algorithm
// it chose (algorithm()): that algorithm's schedule must be automatic's at
// the request's p and sizes. Requests of doubles (the model's 8-byte
// elements) and std::plus (commutative, as the model's operator), root 0,
// for every collective with a choice but all_to_all (whose choice depends on
// the transport's sends), on short and long messages, under the default model
// and under one whose zero floors let the pieces and the pipelines win at
// fewer bytes. Nothing is started: the buffers are address space.
template <class Topo>
void persistent_requests_run_automatics_choice() {
  using K = sim::collective;
  const tc::options floors{.cost = tc::cost_model{.segment_floor = 0, .piece_floor = 0}};
  for (const tc::options& opt : {tc::options{}, floors})
    for (int p : {2, 3, 5, 8, 13, 16})
      for (std::size_t m : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 16}) {
        if (!Topo::holds(p)) continue;
        std::vector<std::pair<K, tc::algorithm>> chosen;
        tc::loopback::run(p, [&](tc::loopback::Comm& c) {
          const std::size_t pm = static_cast<std::size_t>(p) * m;
          const std::unique_ptr<double[]> space(new double[2 * pm]);
          const std::span<double> one(space.get(), m), all(space.get() + pm, pm);
          const std::span<const double> in(space.get(), m), in_all(space.get() + pm, pm);
          const std::span<double> other(space.get() + m, m);
          const std::pair<K, tc::persistent_request> requests[] = {
              {K::broadcast, tc::broadcast_init<Topo>(c, one, 0, opt)},
              {K::reduce, tc::reduce_init<Topo>(c, in, other, std::plus<>{}, 0, opt)},
              {K::all_reduce, tc::all_reduce_init<Topo>(c, in, other, std::plus<>{}, opt)},
              {K::all_gather, tc::all_gather_init<Topo>(c, in, all, opt)},
              {K::reduce_scatter,
               tc::reduce_scatter_init<Topo>(c, in_all, one, std::plus<>{}, opt)},
              {K::scatter, tc::scatter_init<Topo>(c, in_all, one, 0, opt)},
              {K::gather, tc::gather_init<Topo>(c, in, all, 0, opt)}};
          if (c.rank() == 0)
            for (const auto& [k, r] : requests) chosen.emplace_back(k, r.algorithm());
        });
        for (const auto& [k, a] : chosen) {
          const std::vector<tc::algorithm> takes = sim::automatic_takes<Topo>(k, p, m, opt);
          BOOST_TEST((std::find(takes.begin(), takes.end(), a) != takes.end()),
                     Topo::name() << " " << sim::to_string(k) << " p " << p << " m " << m
                                  << ": the request runs " << tc::to_string(a));
        }
      }
}
BOOST_AUTO_TEST_CASE(persistent_requests_run_the_algorithm_automatic_takes) {
  persistent_requests_run_automatics_choice<tc::Ring>();
  persistent_requests_run_automatics_choice<tc::Mesh<2>>();
  persistent_requests_run_automatics_choice<tc::Hypercube<>>();
  persistent_requests_run_automatics_choice<tc::Tree<3>>();
}

// Routes: lengths and the tie rule.
BOOST_AUTO_TEST_CASE(routes) {
  auto hops = [](const sim::network& n, int a, int b) {
    std::vector<std::uint64_t> links;
    const int h = n.route(a, b, [&](std::uint64_t l) { links.push_back(l); });
    BOOST_TEST(links.size() == static_cast<std::size_t>(h));
    for (std::uint64_t l : links) BOOST_TEST(l < n.links());
    return h;
  };
  const auto ring = sim::network::ring(8);
  BOOST_TEST(hops(ring, 0, 4) == 4);
  BOOST_TEST(hops(ring, 0, 7) == 1);
  BOOST_TEST(hops(ring, 6, 1) == 3);
  std::vector<std::uint64_t> a, b;  // the tie goes towards increasing rank
  ring.route(0, 4, [&](std::uint64_t l) { a.push_back(l); });
  ring.route(1, 4, [&](std::uint64_t l) { b.push_back(l); });
  BOOST_TEST(a[1] == b[0]);
  BOOST_TEST(hops(sim::network::hypercube(4), 0b0101, 0b1010) == 4);
  BOOST_TEST(hops(sim::network::mesh({4, 4}), 0, 15) == 2);  // wrap-around both ways
  BOOST_TEST(hops(sim::network::mesh({4, 4}), 0, 10) == 4);
  BOOST_TEST(hops(sim::network::tree(8), 0, 1) == 2);
  BOOST_TEST(hops(sim::network::tree(8), 0, 7) == 6);
  BOOST_TEST(hops(sim::network::tree(5), 3, 4) == 6);
  BOOST_TEST(hops(sim::network::complete(9), 3, 8) == 1);
  // t_h counts hops: the tree broadcast on a tree network of switches
  const sim::cost_params with_hops{.t_s = 1, .t_w = 0, .t_h = 10};
  BOOST_TEST(sim::simulate<tc::Hypercube<>>(sim::collective::broadcast, 8, 1,
                                            single(sim::network::tree(8)), with_hops,
                                            forced(tc::algorithm::tree))
                 .time == (1 + 60) + (1 + 40) + (1 + 20));
}

// E-cube routing (Grama 4.5.3): a message from i to j on a hypercube crosses
// the dimensions where i and j differ in ascending order, one link each,
// from the node it has reached (link ids: node * d + dimension).
BOOST_AUTO_TEST_CASE(e_cube_routing_takes_the_dimensions_in_ascending_order) {
  const int d = 4;
  const auto net = sim::network::hypercube(d);
  for (int i = 0; i < 1 << d; ++i)
    for (int j = 0; j < 1 << d; ++j) {
      std::vector<int> dims;
      int at = i;
      const int hops = net.route(i, j, [&](std::uint64_t link) {
        const int node = static_cast<int>(link / d), dim = static_cast<int>(link % d);
        BOOST_TEST(node == at);
        BOOST_TEST(((i ^ j) >> dim & 1) == 1);
        at ^= 1 << dim;
        dims.push_back(dim);
      });
      BOOST_TEST(hops == std::popcount(static_cast<unsigned>(i ^ j)));
      BOOST_TEST(at == j);
      BOOST_TEST(std::is_sorted(dims.begin(), dims.end()));
    }
}

// Bad input: a clear exception, no hang.
BOOST_AUTO_TEST_CASE(bad_input) {
  auto throws = [](auto f, const std::string& needle) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos, e.what());
      return;
    }
    BOOST_ERROR("no exception; expected one about " + needle);
  };
  const auto bc = sim::collective::broadcast;
  throws([] { (void)sim::network::parse("torus", 8); }, "unknown network shape \"torus\"");
  throws([] { (void)sim::network::parse("mesh:4xq", 8); }, "mesh side \"q\"");
  throws([&] { sim::simulate<tc::Ring>(bc, 9, 4, sim::network::ring(8), cost); },
         "has 8 processors, fewer than p = 9");
  throws([&] { sim::simulate<tc::Ring>(bc, 8, 4, sim::network::ring(8), {.t_s = -1, .t_w = 1}); },
         "t_s = -1");
  throws([&] { sim::simulate<tc::Ring>(bc, 8, 4, sim::network::ring(8), {.t_s = 1, .t_w = NAN}); },
         "t_w");
  throws([&] { sim::simulate<tc::Ring>(bc, 0, 4, sim::network::ring(8), cost); }, "p = 0");
  throws([] { (void)sim::network::ring(0); }, "0 processors");
  throws([] { (void)sim::network::hypercube(-1); }, "dimension -1");
  throws([] { (void)sim::parse_collective("allgather"); }, "unknown collective");
  // what the collective itself rejects
  throws([&] { sim::simulate<tc::Hypercube<3>>(bc, 4, 4, sim::network::complete(4), cost); },
         "Hypercube<3> needs 2^3 = 8 ranks");
  throws(
      [&] {
        sim::simulate<tc::Hypercube<>>(bc, 8, 4, sim::network::complete(8), cost,
                                       forced(tc::algorithm::pipelined));
      },
      "pipelined");
}

// first_link is the first link of the route, on every shape.
BOOST_AUTO_TEST_CASE(first_link_is_the_routes_first) {
  for (const sim::network& n :
       {sim::network::ring(7), sim::network::ring(8), sim::network::mesh({3, 4}),
        sim::network::mesh({2, 3, 4}), sim::network::hypercube(4), sim::network::tree(11),
        sim::network::complete(6)})
    for (int a = 0; a < n.processors(); ++a)
      for (int b = 0; b < n.processors(); ++b) {
        std::uint64_t first = sim::network::no_link;
        n.route(a, b, [&](std::uint64_t l) {
          if (first == sim::network::no_link) first = l;
        });
        BOOST_TEST(n.first_link(a, b) == first, n.name() << " " << a << " -> " << b);
      }
}

// The linear array and the mesh without wrap-around: routes straight along
// each line, no link past an edge, first_link the route's first; parse and
// name.
BOOST_AUTO_TEST_CASE(routes_without_wrap_around) {
  auto hops = [](const sim::network& n, int a, int b) {
    std::uint64_t first = sim::network::no_link;
    const int h = n.route(a, b, [&](std::uint64_t l) {
      BOOST_TEST(l < n.links());
      if (first == sim::network::no_link) first = l;
    });
    BOOST_TEST(n.first_link(a, b) == first, n.name() << " " << a << " -> " << b);
    return h;
  };
  const auto line = sim::network::linear(8);
  BOOST_TEST(hops(line, 0, 7) == 7);  // a ring's 1
  BOOST_TEST(hops(line, 7, 0) == 7);
  BOOST_TEST(hops(line, 6, 1) == 5);
  BOOST_TEST(hops(line, 3, 3) == 0);
  const auto mesh = sim::network::open_mesh({4, 4});
  BOOST_TEST(hops(mesh, 0, 15) == 6);  // the torus's 2
  BOOST_TEST(hops(mesh, 15, 0) == 6);
  BOOST_TEST(hops(mesh, 0, 10) == 4);
  BOOST_TEST(hops(mesh, 3, 12) == 6);
  for (const sim::network& n : {sim::network::linear(7), sim::network::open_mesh({3, 4}),
                                sim::network::open_mesh({2, 3, 4})})
    for (int a = 0; a < n.processors(); ++a)
      for (int b = 0; b < n.processors(); ++b) {
        int want = 0, stride = 1;  // the sum of the distances along each side
        for (auto side = n.sides().rbegin(); side != n.sides().rend(); stride *= *side++)
          want += std::abs((a / stride) % *side - (b / stride) % *side);
        BOOST_TEST(hops(n, a, b) == want, n.name() << " " << a << " -> " << b);
      }
  BOOST_TEST(sim::network::parse("linear", 8).name() == "linear(8)");
  BOOST_TEST(sim::network::parse("open_mesh", 12).name() == "open_mesh(4x3)");
  BOOST_TEST(sim::network::parse("open_mesh:2x3x4", 24).name() == "open_mesh(2x3x4)");
  BOOST_TEST(sim::network::parse("open_mesh:2x3", 6).links() == 24u);
}

// A schedule in which a receive is never matched ends with an exception
// naming the waiting rank, not a hang.
BOOST_AUTO_TEST_CASE(a_deadlocked_schedule_throws) {
  sim::detail::schedule_log log(2);
  log.add(sim::detail::op::recv, 0, 1, tc::detail::tag::broadcast, 4);
  log.end_rank();
  log.add(sim::detail::op::recv, 1, 0, tc::detail::tag::broadcast, 4);
  log.end_rank();
  const auto net = sim::network::ring(2);
  BOOST_CHECK_EXCEPTION(sim::detail::timeline(log, net, cost, nullptr).run(), std::logic_error,
                        [](const std::logic_error& e) {
                          return std::string(e.what()).find("deadlocks: rank 0") !=
                                 std::string::npos;
                        });
}

// The arena handed out addresses from its start again once its end was
// reached, the call's own buffers included: an out past the end landed on
// in. Those buffers now never share an address, and what does not fit is an
// invalid_argument (a sweep skips it) saying so, whatever the arena's size.
BOOST_AUTO_TEST_CASE(buffers_past_the_address_space_are_rejected_never_wrapped) {
  const sim::cost_params cost{100.0, 1.0};
  auto rejected = [&](sim::collective k, int p, std::size_t m) {
    try {
      sim::simulate<tc::Hypercube<>>(k, p, m, sim::network::complete(p), cost);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      BOOST_TEST_MESSAGE(what);
      return what.find("too large to simulate") != std::string::npos;
    }
    return false;
  };
  // p m = 2^39 elements, under the 2^40 limit: out alone is 2^42 bytes
  BOOST_TEST(rejected(sim::collective::all_gather, 8, std::size_t{1} << 36));
  // in fills 2^42 bytes exactly: out wrapped onto in's start, which is
  // reduce_scatter's in-place arrangement, a different call
  BOOST_TEST(rejected(sim::collective::reduce_scatter, 4, std::size_t{1} << 37));
}
