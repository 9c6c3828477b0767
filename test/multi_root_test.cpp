#define BOOST_TEST_MODULE multi_root
#include "support/harness.hpp"
#include "support/suite.hpp"

// Broadcasts from several roots (Grama et al. 4.2.4): broadcast<Topo>(c, buf,
// roots) on every topology x transport, swept over p, n = roots.size() (1, 2,
// p/2, p), root sets (first, last, scattered, out of rank order) and m, by
// every algorithm, against the roots' blocks; bad roots on every rank; and, on
// the loopback build, the seed's (t_s + t_w m)(p - 1) round a ring and Eq.
// 4.3's bound on a torus, simulated.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef TOPOCOLL_TEST_MPI
#include <topocoll/model/simulate.hpp>

#include "support/seed_costs.hpp"
#endif

namespace {

using namespace topocoll;
using tc_test::Check;
using tc_test::Mat2;

const std::vector<int> ps = {1, 2, 3, 5, 7, 8, 9, 16};

// n = 1, 2, p/2, p: each once, within [1, p].
std::vector<int> counts(int p) {
  std::vector<int> n;
  for (int k : {1, 2, p / 2, p})
    if (k >= 1 && k <= p && std::ranges::find(n, k) == n.end()) n.push_back(k);
  return n;
}

// n roots: the first n ranks, the last n, n spread over [0, p), the spread
// ones reversed, and the first ones rotated by one (out of rank order).
std::vector<std::vector<int>> root_sets(int p, int n) {
  std::vector<int> first, last, spread;
  for (int i = 0; i < n; ++i) {
    first.push_back(i);
    last.push_back(p - n + i);
    spread.push_back(i * p / n);
  }
  std::vector<int> reversed(spread.rbegin(), spread.rend()), rotated = first;
  std::ranges::rotate(rotated, rotated.begin() + 1);
  return {first, last, spread, reversed, rotated};
}

std::string shown(const std::vector<int>& roots) {
  std::string s = "{";
  for (int r : roots) s += (s.size() > 1 ? "," : "") + std::to_string(r);
  return s + "}";
}

// The blocks every rank should hold: block i is roots[i]'s input.
template <class T>
std::vector<T> reference(const std::vector<int>& roots, std::size_t m, unsigned salt) {
  std::vector<T> all;
  for (int r : roots) {
    const std::vector<T> b = tc_test::input<T>(r, m, salt);
    all.insert(all.end(), b.begin(), b.end());
  }
  return all;
}

// What rank r passes: its own blocks filled, every other block left as it is.
template <class T>
std::vector<T> before(const std::vector<T>& want, const std::vector<int>& roots, std::size_t m,
                      int r) {
  std::vector<T> buf(want.size());
  for (std::size_t i = 0; i < roots.size(); ++i)
    if (roots[i] == r)
      std::copy_n(want.begin() + static_cast<std::ptrdiff_t>(i * m), m,
                  buf.begin() + static_cast<std::ptrdiff_t>(i * m));
  return buf;
}

const std::vector<options> algorithms = {options{}, options{algorithm::fold},
                                         options{algorithm::tree}};

}  // namespace

TOPOCOLL_TEST_SUITE(broadcast)
BOOST_AUTO_TEST_CASE_TEMPLATE(every_rank_gets_every_roots_block, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const int r = comm.rank();
          for (int n : counts(p))
            for (const std::vector<int>& roots : root_sets(p, n))
              for (std::size_t m : tc_test::sizes)
                for (const options& opt : algorithms) {
                  const std::vector<int> want = reference<int>(roots, m, 7);
                  std::vector<int> buf = before(want, roots, m, r);
                  broadcast<Topo>(comm, std::span<int>(buf), std::span<const int>(roots), opt);
                  check.equal(buf, want, Topo::name(), " broadcast from roots ", shown(roots), " (",
                              to_string(opt.algo), ") rank ", r, " m ", m);
                }
          // a non-trivial element type, and the roots as a std::vector
          const std::vector<int> roots = root_sets(p, counts(p).back())[3];
          const std::vector<Mat2> want = reference<Mat2>(roots, 7, 3);
          std::vector<Mat2> buf = before(want, roots, 7, r);
          broadcast<Topo>(comm, buf, roots);
          check.equal(buf, want, Topo::name(), " broadcast<Mat2> from roots ", shown(roots),
                      " rank ", r);
        });
      },
      ps);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(bad_roots_throw_on_every_rank, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  using E = std::invalid_argument;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const int r = comm.rank();
          const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(p);
          std::vector<int> buf(6, 1);
          for (int bad : {p, -1}) {
            const std::vector<int> roots = {0, bad};
            check.throws<E>([&] { broadcast<Topo>(comm, std::span<int>(buf), roots); },
                            {"broadcast", who, "root " + std::to_string(bad), "outside"},
                            "root " + std::to_string(bad));
          }
          const std::vector<int> twice = {p - 1, 0, p - 1};
          check.throws<E>([&] { broadcast<Topo>(comm, std::span<int>(buf), twice); },
                          {"broadcast", who, "root " + std::to_string(p - 1), "twice"},
                          "duplicate root");
          std::vector<int> odd(5, 1);
          const std::vector<int> two = {0, p - 1};
          if (p > 1)
            check.throws<E>([&] { broadcast<Topo>(comm, std::span<int>(odd), two); },
                            {"broadcast", who, "holds 5", "roots.size() = 2"}, "uneven blocks");
          // the single-root overload is unchanged: an int root still takes it
          std::vector<int> one(3, r);
          broadcast<Topo>(comm, std::span<int>(one), 0);
          check.equal(one, std::vector<int>(3, 0), Topo::name(), " broadcast from int root 0");
        });
      },
      ps);
}
BOOST_AUTO_TEST_SUITE_END()

#ifndef TOPOCOLL_TEST_MPI
namespace sim = topocoll::model;
using namespace seed_costs;

// Section 4.2.4: n <= p broadcasts from different roots pipelined round a
// ring of p single-ported nodes take (t_s + t_w m)(p - 1), for every n, as
// automatic takes them (the fold) and forced.
BOOST_AUTO_TEST_CASE(n_broadcasts_pipelined_on_a_ring_take_p_minus_1_steps) {
  for (int p : {2, 5, 8, 16})
    for (std::size_t m : {1, 10, 1000}) {
      const sim::network ring = sim::network::ring(p).with(sim::ports::single);
      const double want = (ts + tw * static_cast<double>(m)) * (p - 1);
      for (int n : {1, 2, p / 2, p})
        for (const std::vector<int>& roots : root_sets(p, n))
          for (const options& opt : {options{}, options{algorithm::fold}}) {
            const double t = sim::simulate_roots<Ring>(p, m, roots, ring, cost, opt).time;
            BOOST_TEST(t == want, "p " << p << " m " << m << " roots " << shown(roots));
          }
    }
}

// Along each ring of a q x q torus: the fold of all_gather, which for n = p
// roots is Eq. 4.3's 2 t_s (q - 1) + t_w m (p - 1), and for fewer never more.
BOOST_AUTO_TEST_CASE(n_broadcasts_along_the_rings_of_a_mesh_take_at_most_eq_4_3) {
  for (int q : {2, 3, 4})
    for (std::size_t m : {1, 10, 1000}) {
      const int p = q * q;
      const sim::network mesh = sim::network::mesh({q, q}).with(sim::ports::single);
      const double eq_4_3 = 2 * ts * (q - 1) + tw * static_cast<double>(m) * (p - 1);
      for (int n : {1, 2, p / 2, p})
        for (const std::vector<int>& roots : root_sets(p, n)) {
          const double t = sim::simulate_roots<Mesh<2>>(p, m, roots, mesh, cost).time;
          if (n == p)
            BOOST_TEST(t == eq_4_3, "q " << q << " m " << m << " roots " << shown(roots));
          else
            BOOST_TEST(t <= eq_4_3, "q " << q << " m " << m << " roots " << shown(roots));
        }
    }
}

// Elsewhere automatic takes the fold or the n trees; both simulate.
BOOST_AUTO_TEST_CASE(automatic_is_the_fold_or_the_trees_on_a_hypercube) {
  for (int p : {4, 8, 16})
    for (std::size_t m : {1, 1000, 100000}) {
      const sim::network cube = sim::network::hypercube(std::countr_zero(unsigned(p)));
      for (int n : {1, 2, p / 2, p}) {
        const std::vector<int> roots = root_sets(p, n)[2];
        auto time = [&](options o) {
          return sim::simulate_roots<Hypercube<>>(p, m, roots, cube, cost, o).time;
        };
        const double a = time({}), f = time({algorithm::fold}), t = time({algorithm::tree});
        BOOST_TEST((a == f || a == t), "p " << p << " m " << m << " n " << n);
      }
    }
}
#endif
