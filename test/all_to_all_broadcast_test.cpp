#define BOOST_TEST_MODULE all_to_all_broadcast
#include "support/harness.hpp"
#include "support/suite.hpp"

// all_gather, reduce_scatter, all_reduce, scan, exclusive_scan on every
// topology x transport, swept over p, message sizes, element types (three with
// non-commutative operators) and every algorithm that can be forced; plus the
// seeds' communication patterns (model::Counting), the cost-model choice of
// all_reduce, bad input, and a synchronous-send run that proves the send/recv
// order deadlock-free.

#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using namespace topocoll;
using tc_test::Check;
using tc_test::Mat2;
using tc_test::Particle;

// The per-rank references of one element type at one m, computed once per p.
template <class T>
struct Ref {
  std::size_t m;
  std::vector<std::vector<T>> in;     // in[r]: rank r's m elements
  std::vector<T> all;                 // in[0] ++ in[1] ++ ...: all_gather's result
  std::vector<std::vector<T>> pre;    // pre[r] = in[0] op ... op in[r]; pre[p-1] the total
  std::vector<std::vector<T>> rs_in;  // reduce_scatter: rank r's p*m elements
  std::vector<T> rs_out;              // block j = rs_in[0] block j op ... op rs_in[p-1] block j
};

// all_gather and reduce_scatter move p*m elements per rank, p^2 m in all. In
// sanitizer builds (TSan's budget) the largest size is capped at p^2 m <= 100000
// (m = 1000 up to p = 10, 346 at 17, 97 at 32), and at 100 for std::string
// (every string is allocated and copied per message on loopback); release
// builds run every size at every p.
template <class T>
std::size_t capped(std::size_t m, int p) {
  if (!tc_test::sanitized) return m;
  const std::size_t cap = std::is_same_v<T, std::string> ? 100 : 1000;
  return std::min({m, cap, 100000 / static_cast<std::size_t>(p * p)});
}

template <class T, class Op>
struct Family {
  using type = T;
  using op_type = Op;
  const char* name;
  std::vector<Ref<T>> by_size;  // one per tc_test::sizes
};

template <class T, class Op>
Family<T, Op> family(const char* name, unsigned salt, int p, bool with_rs) {
  Family<T, Op> f{name, {}};
  const Op op{};
  for (std::size_t size : tc_test::sizes) {
    const std::size_t m = capped<T>(size, p);
    Ref<T> r{m, {}, {}, tc_test::prefixes<T>(p, m, op, salt), {}, {}};
    for (int q = 0; q < p; ++q) {
      r.in.push_back(tc_test::input<T>(q, m, salt));
      r.all.insert(r.all.end(), r.in.back().begin(), r.in.back().end());
    }
    for (int q = 0; q < p; ++q)
      r.rs_in.push_back(tc_test::input<T>(q, static_cast<std::size_t>(p) * m, salt + 100));
    r.rs_out = r.rs_in[0];
    for (int q = 1; q < p; ++q)
      for (std::size_t i = 0; i < r.rs_out.size(); ++i)
        r.rs_out[i] = op(r.rs_out[i], r.rs_in[q][i]);
    f.by_size.push_back(std::move(r));
  }
  return f;
}

// Only int + plus is commutative (is_commutative_v); the other three are not.
// with_rs: also the p*m-element inputs and results of reduce_scatter.
auto families(int p, bool with_rs = false) {
  return std::make_tuple(family<int, std::plus<>>("int", 1, p, with_rs),
                         family<Mat2, tc_test::mat_mul>("Mat2", 2, p, with_rs),
                         family<Particle, tc_test::particle_op>("Particle", 3, p, with_rs),
                         family<std::string, tc_test::concat>("string", 4, p, with_rs));
}

template <class Tuple, class F>
void for_each_family(const Tuple& t, F&& f) {
  std::apply([&](const auto&... fam) { (f(fam), ...); }, t);
}

static_assert(is_commutative_v<std::plus<>, int>);
static_assert(!is_commutative_v<tc_test::mat_mul, Mat2>);
static_assert(!is_commutative_v<tc_test::particle_op, Particle>);
static_assert(!is_commutative_v<tc_test::concat, std::string>);

// Every algorithm each operation can be forced to, automatic first.
// Sanitizer builds leave automatic out: it runs one of the forced algorithms,
// which they check already, and the sweep of three to five algorithms per
// size and p is most of TSan's time in this suite. Release builds check
// automatic's results; the choice itself has cases of its own.
std::vector<algorithm> swept(std::vector<algorithm> v) {
  if (tc_test::sanitized) std::erase(v, algorithm::automatic);
  return v;
}
// all_gather and reduce_scatter: the fold only where Tree<K>'s digit groups
// are complete (p = r K^j, r <= K).
template <class Topo>
std::vector<algorithm> gather_algorithms(int p) {
  if (detail::tree_only<Topo>(Topo::shape(p)))
    return swept({algorithm::automatic, algorithm::tree});
  return swept({algorithm::automatic, algorithm::fold, algorithm::tree});
}
// ... and for all_gather, naive (p one-to-all broadcasts) on every topology.
template <class Topo>
std::vector<algorithm> all_gather_algorithms(int p) {
  std::vector<algorithm> v = gather_algorithms<Topo>(p);
  v.push_back(algorithm::naive);
  return v;
}
// Tree<K> runs recursive doubling and reduce-scatter + all-gather per radix-K
// digit, so only where every digit group is complete (p = r K^j, r <= K).
template <class Topo>
std::vector<algorithm> all_reduce_algorithms(int p) {
  if (Topo::kind == dim_kind::knomial && Topo::shape(p).extent != p)
    return swept({algorithm::automatic, algorithm::tree, algorithm::reduce_broadcast});
  return swept({algorithm::automatic, algorithm::recursive_doubling,
                algorithm::reduce_scatter_all_gather, algorithm::reduce_broadcast,
                algorithm::tree});
}
std::vector<algorithm> scan_algorithms() {
  return {algorithm::automatic, algorithm::recursive_doubling};
}

template <class Topo>
std::string ctx(const char* op, const char* type, std::size_t m, int r, algorithm a) {
  return detail::concat(Topo::name(), " ", op, "<", type, "> m=", m, " rank ", r,
                        " algo=", to_string(a));
}

}  // namespace

// ---------------------------------------------------------------------------
// Results: every element type, size and algorithm in one run per p.

TOPOCOLL_TEST_SUITE(all_gather)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_gather_collects_every_block_in_rank_order, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    const auto data = families(p);
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      for_each_family(data, [&](const auto& fam) {
        using T = typename std::remove_cvref_t<decltype(fam)>::type;
        for (const auto& ref : fam.by_size)
          for (algorithm a : all_gather_algorithms<Topo>(p)) {
            std::vector<T> out(ref.all.size());
            all_gather<Topo>(comm, std::span<const T>(ref.in[r]), std::span<T>(out), options{a});
            check.equal(out, ref.all, ctx<Topo>("all_gather", fam.name, ref.m, r, a));
          }
      });
    });
  });
}

// Strings move encoded, as byte blocks of different sizes (lengths 0 to 300
// here, so the blocks differ by rank). A rank whose block holds another
// count: every rank still completes the exchange, then each names a block it
// cannot take (its own count against the other's), and the next collective
// works.
BOOST_AUTO_TEST_CASE_TEMPLATE(string_all_gather_with_blocks_of_any_size_and_a_mismatched_count, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(p);
      auto block = [](int q) {
        std::vector<std::string> v{std::string(static_cast<std::size_t>(q % 3) * 150, 'a' + q % 26),
                                   "", std::to_string(q)};
        return v;
      };
      std::vector<std::string> want;
      for (int q = 0; q < p; ++q)
        for (auto& s : block(q)) want.push_back(s);
      for (algorithm a : all_gather_algorithms<Topo>(p)) {
        std::vector<std::string> out(want.size(), "stale");
        all_gather<Topo>(comm, block(r), out, options{a});
        check.equal(out, want, Topo::name(), " string all_gather, ", who, " algo ", to_string(a));
      }
      if (p == 1) return;
      const int odd = p / 2;
      std::vector<std::string> mine(r == odd ? 4 : 3, std::to_string(r));
      std::vector<std::string> all(mine.size() * static_cast<std::size_t>(p));
      const std::string other = std::to_string(r == odd ? 0 : odd);  // the first block it decodes
      check.throws<message_error>(
          [&] { all_gather<Topo>(comm, mine, all); },
          {"all_gather", who, "rank " + other + " contributed " + (r == odd ? "3" : "4"),
           std::string("this rank contributed ") + (r == odd ? "4" : "3")},
          "all_gather of a mismatched string count");
      std::vector<int> x{r}, xs(static_cast<std::size_t>(p));
      all_gather<Topo>(comm, x, xs);
      std::vector<int> ranks(static_cast<std::size_t>(p));
      for (int q = 0; q < p; ++q) ranks[q] = q;
      check.equal(xs, ranks, "all_gather after the error, ", who);
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(reduce_scatter)
BOOST_AUTO_TEST_CASE_TEMPLATE(reduce_scatter_gives_rank_r_block_r_reduced_in_rank_order, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    const auto data = families(p, true);
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      for_each_family(data, [&](const auto& fam) {
        using F = std::remove_cvref_t<decltype(fam)>;
        using T = typename F::type;
        for (const auto& ref : fam.by_size) {
          const std::size_t m = ref.rs_out.size() / static_cast<std::size_t>(p);
          const std::vector<T> want(ref.rs_out.begin() + static_cast<std::ptrdiff_t>(r * m),
                                    ref.rs_out.begin() + static_cast<std::ptrdiff_t>((r + 1) * m));
          for (algorithm a : gather_algorithms<Topo>(p)) {
            std::vector<T> out(m);
            reduce_scatter<Topo>(comm, std::span<const T>(ref.rs_in[r]), std::span<T>(out),
                                 typename F::op_type{}, options{a});
            check.equal(out, want, ctx<Topo>("reduce_scatter", fam.name, m, r, a));
          }
        }
      });
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(all_reduce)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_reduce_keeps_rank_order_with_every_algorithm, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    const auto data = families(p);
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      for_each_family(data, [&](const auto& fam) {
        using F = std::remove_cvref_t<decltype(fam)>;
        using T = typename F::type;
        for (const auto& ref : fam.by_size)
          for (algorithm a : all_reduce_algorithms<Topo>(p)) {
            std::vector<T> out(ref.m);
            all_reduce<Topo>(comm, std::span<const T>(ref.in[r]), std::span<T>(out),
                             typename F::op_type{}, options{a});
            check.equal(out, ref.pre[p - 1], ctx<Topo>("all_reduce", fam.name, ref.m, r, a));
          }
        // Both hypercube/ring algorithms whatever the cost model says: one that
        // makes messages free of start-up cost picks reduce_scatter_all_gather.
        const auto& big = fam.by_size.back();
        std::vector<T> out(big.m);
        all_reduce<Topo>(comm, big.in[r], out, typename F::op_type{},
                         options{algorithm::automatic, cost_model{0.0, 1.0}});
        check.equal(out, big.pre[p - 1],
                    ctx<Topo>("all_reduce", fam.name, big.m, r, algorithm::automatic),
                    " (t_s = 0)");
      });
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(scan)
BOOST_AUTO_TEST_CASE_TEMPLATE(scan_and_exclusive_scan_give_rank_order_prefixes, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    const auto data = families(p);
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      for_each_family(data, [&](const auto& fam) {
        using F = std::remove_cvref_t<decltype(fam)>;
        using T = typename F::type;
        for (const auto& ref : fam.by_size)
          for (algorithm a : scan_algorithms()) {
            std::vector<T> out(ref.m);
            scan<Topo>(comm, std::span<const T>(ref.in[r]), std::span<T>(out),
                       typename F::op_type{}, options{a});
            check.equal(out, ref.pre[r], ctx<Topo>("scan", fam.name, ref.m, r, a));
            // exclusive: rank 0's out must keep what it held (a sentinel)
            const std::vector<T> sentinel = tc_test::input<T>(p + 1000, ref.m, 99);
            std::vector<T> ex = sentinel;
            exclusive_scan<Topo>(comm, std::span<const T>(ref.in[r]), std::span<T>(ex),
                                 typename F::op_type{}, options{a});
            check.equal(ex, r == 0 ? sentinel : ref.pre[r - 1],
                        ctx<Topo>("exclusive_scan", fam.name, ref.m, r, a));
            if (a != algorithm::automatic) continue;
            // t_w = 100 t_s per byte: the ring's chain runs as a pipeline of
            // up to m segments on a non-blocking transport (loopback, MPI).
            const options seg{a, cost_model{1.0, 100.0}};
            std::vector<T> out2(ref.m);
            scan<Topo>(comm, ref.in[r], out2, typename F::op_type{}, seg);
            check.equal(out2, ref.pre[r], ctx<Topo>("segmented scan", fam.name, ref.m, r, a));
            std::vector<T> ex2 = sentinel;
            exclusive_scan<Topo>(comm, ref.in[r], ex2, typename F::op_type{}, seg);
            check.equal(ex2, r == 0 ? sentinel : ref.pre[r - 1],
                        ctx<Topo>("segmented exclusive_scan", fam.name, ref.m, r, a));
          }
      });
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE_TEMPLATE(containers_work_as_buffers, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const std::array<long, 2> mine{r, 2L * r};
      std::vector<long> all(2 * static_cast<std::size_t>(p)), want(all.size());
      for (int q = 0; q < p; ++q) want[2 * q] = q, want[2 * q + 1] = 2L * q;
      all_gather<Topo>(comm, mine, all);  // std::array in, std::vector out
      check.equal(all, want, Topo::name(), " all_gather from std::array, rank ", r);
      std::array<long, 2> sum{}, pre{}, ex{-7, -7}, blk{};
      all_reduce<Topo>(comm, mine, sum, std::plus<>{});
      const long s = static_cast<long>(p) * (p - 1) / 2;
      check.equal(sum, std::array<long, 2>{s, 2 * s}, Topo::name(), " all_reduce, rank ", r);
      scan<Topo>(comm, std::span<const long>(mine), std::span<long>(pre), std::plus<>{});
      const long t = static_cast<long>(r) * (r + 1) / 2;
      check.equal(pre, std::array<long, 2>{t, 2 * t}, Topo::name(), " scan, rank ", r);
      exclusive_scan<Topo>(comm, mine, std::span<long>(ex), ops::plus{});
      check.equal(ex,
                  r == 0 ? std::array<long, 2>{-7, -7} : std::array<long, 2>{t - r, 2 * (t - r)},
                  Topo::name(), " exclusive_scan, rank ", r);
      std::vector<long> ones(2 * static_cast<std::size_t>(p), 1);
      reduce_scatter<Topo>(comm, ones, blk, ops::plus{});
      check.equal(blk, std::array<long, 2>{p, p}, Topo::name(), " reduce_scatter, rank ", r);
    });
  });
}

// ---------------------------------------------------------------------------
// The seeds' communication patterns, recorded with model::Counting.

namespace {
template <class C>
std::vector<int> send_peers(const model::Counting<C>& cc) {
  std::vector<int> v;
  for (const auto& e : cc.events())
    if (e.kind == model::event::send) v.push_back(e.peer);
  return v;
}
std::vector<std::size_t> repeat(std::size_t n, std::size_t x) {
  return std::vector<std::size_t>(n, x);
}
}  // namespace

// Algorithm 4.7: messages m, 2m, 4m, ... to partners rank ^ 1, rank ^ 2, ...;
// recursive doubling all_reduce: log p messages of m; Algorithm 4.8: p m / 2,
// ..., m; PREFIX_SUMS_HCUBE: log p messages of m, the last one only upwards.
BOOST_AUTO_TEST_CASE_TEMPLATE(hypercube_follows_algorithms_4_7_and_4_8, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  if constexpr (Topo::kind == dim_kind::binary) {
    Cfg::sweep([&](int p, auto on_ranks) {
      if (!detail::is_pow2(p)) return;
      const int d = std::countr_zero(static_cast<unsigned>(p));
      on_ranks([&](auto& comm, Check& check) {
        const int r = comm.rank();
        const std::string who =
            Topo::name() + " p " + std::to_string(p) + " rank " + std::to_string(r);
        model::Counting cc(comm);
        const options fold{algorithm::fold};
        const std::size_t m = 6;
        std::vector<std::size_t> doubling, halving;
        std::vector<int> partners;
        for (int i = 0; i < d; ++i) {
          doubling.push_back(m << i);
          halving.push_back((static_cast<std::size_t>(p) * m) >> (i + 1));
          partners.push_back(r ^ (1 << i));
        }
        std::vector<int> in(m, r), all(p * m), out(m);
        all_gather<Topo>(cc, in, all, fold);
        check.expect(cc.send_counts() == doubling && send_peers(cc) == partners, who,
                     ": all_gather is not Algorithm 4.7");
        check.expect(cc.steps() == d, who, ": all_gather took ", cc.steps(), " steps");
        cc.clear();
        all_reduce<Topo>(cc, in, out, std::plus<>{}, options{algorithm::recursive_doubling});
        check.expect(cc.send_counts() == repeat(d, m) && send_peers(cc) == partners, who,
                     ": recursive doubling all_reduce does not send log p messages of m");
        cc.clear();
        all_reduce<Topo>(cc, in, out, std::plus<>{});  // small m: the model picks the same
        check.expect(cc.send_counts() == repeat(d, m), who, ": automatic all_reduce, small m");
        std::vector<int> big(1 << 16, r), bigout(big.size());
        cc.clear();
        // 256 KiB: bandwidth-optimal, on 2 ranks too (two messages of m / 2 and
        // one combine of m / 2 against one message and one combine of m)
        all_reduce<Topo>(cc, big, bigout, std::plus<>{});
        check.expect(
            cc.sends() == 2u * d && cc.bytes_sent() == 2 * (p - 1) * big.size() / p * sizeof(int),
            who, ": automatic all_reduce of 256 KiB is not reduce-scatter + all-gather (",
            cc.sends(), " messages, ", cc.bytes_sent(), " bytes)");
        cc.clear();
        all_reduce<Topo>(cc, big, bigout, std::plus<>{},
                         options{algorithm::automatic, cost_model{1e9, 1e-9}});
        check.expect(cc.sends() == static_cast<std::size_t>(d), who,
                     ": a start-up-dominated cost model must pick recursive doubling");
        cc.clear();
        std::vector<int> rs_in(p * m, 1);
        reduce_scatter<Topo>(cc, rs_in, out, std::plus<>{}, fold);
        check.expect(cc.send_counts() == halving, who, ": reduce_scatter is not Algorithm 4.8");
        std::vector<Mat2> mats(p * m), mat_out(m);
        cc.clear();
        reduce_scatter<Topo>(cc, mats, mat_out, tc_test::mat_mul{}, fold);
        check.expect(cc.send_counts() == halving, who,
                     ": reduce_scatter with a non-commutative operator is not Algorithm 4.8");
        cc.clear();
        // The last exchange only completes the total, which a scan does not
        // return: there the lower rank of each pair sends and the upper one
        // only receives.
        const bool upper = p > 1 && (r >> (d - 1) & 1) != 0;
        std::vector<int> scan_peers = partners;
        if (upper) scan_peers.pop_back();
        scan<Topo>(cc, in, out, std::plus<>{});
        check.expect(cc.send_counts() == repeat(d - upper, m) && send_peers(cc) == scan_peers, who,
                     ": scan is not PREFIX_SUMS_HCUBE with a one-way last step");
        cc.clear();
        exclusive_scan<Topo>(cc, in, out, std::plus<>{});
        check.expect(cc.send_counts() == repeat(d - upper, m) && send_peers(cc) == scan_peers, who,
                     ": exclusive_scan is not PREFIX_SUMS_HCUBE with a one-way last step");
      });
    });
  }
}

// Algorithm 4.4: p - 1 messages of m, each to the right neighbour; Algorithm
// 4.5: p - 1 messages of m to the left one; the order-keeping variant sends the
// same words; the scan pipeline one message per rank.
BOOST_AUTO_TEST_CASE_TEMPLATE(ring_follows_algorithms_4_4_and_4_5, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  if constexpr (std::is_same_v<Topo, Ring>) {
    Cfg::sweep([&](int p, auto on_ranks) {
      on_ranks([&](auto& comm, Check& check) {
        const int r = comm.rank();
        const std::string who = "Ring p " + std::to_string(p) + " rank " + std::to_string(r);
        const std::size_t n = static_cast<std::size_t>(p - 1);
        model::Counting cc(comm);
        const options fold{algorithm::fold};
        const std::size_t m = 5;
        std::vector<int> in(m, r), all(p * m), out(m);
        all_gather<Topo>(cc, in, all, fold);
        check.expect(
            cc.send_counts() == repeat(n, m) && send_peers(cc) == std::vector<int>(n, (r + 1) % p),
            who, ": all_gather is not Algorithm 4.4");
        cc.clear();
        std::vector<int> rs_in(p * m, 1);
        reduce_scatter<Topo>(cc, rs_in, out, std::plus<>{}, fold);
        check.expect(cc.send_counts() == repeat(n, m) &&
                         send_peers(cc) == std::vector<int>(n, (r + p - 1) % p),
                     who, ": reduce_scatter is not Algorithm 4.5");
        std::vector<std::string> words(p * m, "w"), word(m);
        cc.clear();
        reduce_scatter<Topo>(cc, words, word, tc_test::concat{}, fold);
        check.expect(cc.sends() == n && cc.steps() <= 2 * static_cast<int>(n), who,
                     ": order-keeping reduce_scatter sent ", cc.sends(), " messages in ",
                     cc.steps(), " steps");
        cc.clear();
        all_reduce<Topo>(cc, in, out, std::plus<>{}, options{algorithm::recursive_doubling});
        check.expect(cc.send_counts() == repeat(n, m), who,
                     ": all_reduce recursive_doubling is not p - 1 messages of m");
        cc.clear();
        scan<Topo>(cc, in, out, std::plus<>{});
        check.expect(cc.sends() == (r < p - 1 ? 1u : 0u) && cc.recvs() == (r > 0 ? 1u : 0u), who,
                     ": scan is not a pipeline");
      });
    });
  }
}

// The naive all_gather, on every topology: p one-to-all broadcasts from rank
// 0 up, each source sending its block of m to the p - 1 others (root - 1,
// root - 2, ... mod p), so a rank receives from 0, 1, ..., p - 1 in turn.
TOPOCOLL_TEST_SUITE(all_gather)
BOOST_AUTO_TEST_CASE_TEMPLATE(naive_all_gather_is_p_naive_broadcasts, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      model::Counting cc(comm);
      const std::size_t m = 5;
      std::vector<int> in(m, r), all(p * m);
      all_gather<Topo>(cc, in, all, options{algorithm::naive});
      std::vector<int> to, from;
      for (int k = p - 1; k >= 1; --k) to.push_back((r + k) % p);
      for (int q = 0; q < p; ++q)
        if (q != r) from.push_back(q);
      std::vector<int> got_from;
      for (const auto& e : cc.events())
        if (e.kind == model::event::recv) got_from.push_back(e.peer);
      check.expect(send_peers(cc) == to && got_from == from &&
                       cc.send_counts() == repeat(static_cast<std::size_t>(p - 1), m),
                   Topo::name(), " p ", p, " rank ", r, ": naive all_gather is not p broadcasts");
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

// Algorithm 4.6 generalised: per dimension j, s_j - 1 messages of the
// consolidated block (s_0 ... s_{j-1}) m: 2 (sqrt p - 1) on a square mesh.
BOOST_AUTO_TEST_CASE_TEMPLATE(mesh_follows_algorithm_4_6, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  if constexpr (std::is_same_v<Topo, Mesh<2>> || std::is_same_v<Topo, Mesh<3>>) {
    Cfg::sweep([&](int p, auto on_ranks) {
      const layout l = Topo::shape(p);
      const std::size_t m = 4;
      std::vector<std::size_t> want;
      std::size_t block = m;
      for (int j = 0; j < l.ndims; ++j) {
        for (int i = 1; i < l.dims[j].radix; ++i) want.push_back(block);
        block *= static_cast<std::size_t>(l.dims[j].radix);
      }
      if (std::is_same_v<Topo, Mesh<2>> && p == 16) BOOST_TEST(want.size() == 6u);
      on_ranks([&](auto& comm, Check& check) {
        const int r = comm.rank();
        model::Counting cc(comm);
        std::vector<int> in(m, r), all(p * m);
        all_gather<Topo>(cc, in, all, options{algorithm::fold});
        check.expect(cc.send_counts() == want, Topo::name(), " p ", p, " rank ", r,
                     ": all_gather is not Algorithm 4.6 (", cc.sends(), " messages)");
      });
    });
  }
}

// Tree<K> on p = r K^j (r <= K, the radix of the last digit: Tree<3> on 2, 3,
// 6, 9, 18, ...): recursive multiplying, per digit j radix_j - 1 messages of
// K^j m (a direct exchange with the other digits); all_reduce recursive
// doubling: radix_j - 1 messages of m per digit. Otherwise gather + broadcast:
// every rank but 0 sends once (its subtree, towards 0) and receives the whole
// p*m once.
BOOST_AUTO_TEST_CASE_TEMPLATE(tree_multiplies_over_radix_k_digits, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  if constexpr (Topo::kind == dim_kind::knomial) {
    Cfg::sweep([&](int p, auto on_ranks) {
      const layout l = Topo::shape(p);
      const std::size_t m = 3;
      std::vector<std::size_t> doubling, constant;
      for (int j = 0; j < l.ndims; ++j)
        for (int t = 1; t < l.dims[j].radix; ++t) {
          doubling.push_back(m * static_cast<std::size_t>(l.dims[j].stride));
          constant.push_back(m);
        }
      on_ranks([&](auto& comm, Check& check) {
        const int r = comm.rank();
        const std::string who =
            Topo::name() + " p " + std::to_string(p) + " rank " + std::to_string(r);
        model::Counting cc(comm);
        std::vector<int> in(m, r), all(p * m), out(m);
        all_gather<Topo>(cc, in, all, l.extent == p ? options{algorithm::fold} : options{});
        if (l.extent == p) {
          check.expect(cc.send_counts() == doubling, who,
                       ": all_gather is not recursive multiplying (", cc.sends(), " messages)");
          cc.clear();
          all_reduce<Topo>(cc, in, out, std::plus<>{}, options{algorithm::recursive_doubling});
          check.expect(cc.send_counts() == constant, who,
                       ": recursive doubling all_reduce is not K - 1 messages of m per digit");
        } else {
          std::size_t whole = 0;
          for (const auto& e : cc.events())
            whole += e.kind == model::event::recv && e.count == all.size();
          check.expect((r == 0 || cc.sends() >= 1) && whole == (r == 0 ? 0u : 1u), who,
                       ": all_gather is not gather + broadcast");
        }
      });
    });
  }
}

// ---------------------------------------------------------------------------
// Bad input: every rank throws std::invalid_argument before communicating.

BOOST_AUTO_TEST_CASE_TEMPLATE(bad_arguments_throw_on_every_rank_before_communicating, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  using E = std::invalid_argument;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(p);
      const std::size_t m = 3;
      const std::string pm1 = std::to_string(p * m + 1), pm = std::to_string(p * m);
      std::vector<int> in(m, 1), out(m), long_out(m + 1), big(p * m + 1), fine(p * m);
      check.throws<E>([&] { all_gather<Topo>(comm, in, big); },
                      {"all_gather", who, "holds " + pm1, "expected " + pm}, "all_gather out");
      check.throws<E>([&] { reduce_scatter<Topo>(comm, big, out, std::plus<>{}); },
                      {"reduce_scatter", who, "holds " + pm1, "expected " + pm}, "rs in");
      check.throws<E>([&] { all_reduce<Topo>(comm, in, long_out, std::plus<>{}); },
                      {"all_reduce", who, "holds 4", "expected 3"}, "all_reduce out");
      check.throws<E>([&] { scan<Topo>(comm, in, long_out, std::plus<>{}); },
                      {"scan", who, "holds 4", "expected 3"}, "scan out");
      check.throws<E>([&] { exclusive_scan<Topo>(comm, in, long_out, std::plus<>{}); },
                      {"exclusive_scan", who, "holds 4"}, "exclusive_scan out");
      // algorithms that do not apply
      check.throws<E>([&] { all_gather<Topo>(comm, in, fine, options{algorithm::pairwise}); },
                      {"all_gather", who, "pairwise"}, "all_gather pairwise");
      check.throws<E>(
          [&] {
            reduce_scatter<Topo>(comm, fine, out, std::plus<>{},
                                 options{algorithm::recursive_doubling});
          },
          {"reduce_scatter", who, "recursive_doubling"}, "reduce_scatter recursive_doubling");
      check.throws<E>(
          [&] { all_reduce<Topo>(comm, in, out, std::plus<>{}, options{algorithm::pipelined}); },
          {"all_reduce", who, "pipelined"}, "all_reduce pipelined");
      check.throws<E>([&] { scan<Topo>(comm, in, out, std::plus<>{}, options{algorithm::tree}); },
                      {"scan", who, "tree"}, "scan tree");
      if (Topo::kind == dim_kind::knomial && Topo::shape(p).extent != p) {
        const std::string need = "needs complete digit groups";
        for (algorithm a : {algorithm::recursive_doubling, algorithm::reduce_scatter_all_gather})
          check.throws<E>([&] { all_reduce<Topo>(comm, in, out, std::plus<>{}, options{a}); },
                          {"all_reduce", who, std::string(to_string(a)), Topo::name(), need},
                          "all_reduce on an incomplete tree");
        const options fold{algorithm::fold};
        check.throws<E>([&] { all_gather<Topo>(comm, in, fine, fold); },
                        {"all_gather", who, "fold", Topo::name(), need},
                        "all_gather fold on an incomplete tree");
        check.throws<E>([&] { reduce_scatter<Topo>(comm, fine, out, std::plus<>{}, fold); },
                        {"reduce_scatter", who, "fold", Topo::name(), need},
                        "reduce_scatter fold on an incomplete tree");
      }
      if (p != 8) {
        const std::string need = "Hypercube<3> needs 2^3 = 8 ranks";
        check.throws<E>([&] { all_gather<Hypercube<3>>(comm, in, fine); },
                        {"all_gather", who, need}, "Hypercube<3> all_gather");
        check.throws<E>([&] { reduce_scatter<Hypercube<3>>(comm, fine, out, std::plus<>{}); },
                        {"reduce_scatter", need}, "Hypercube<3> reduce_scatter");
        check.throws<E>([&] { all_reduce<Hypercube<3>>(comm, in, out, std::plus<>{}); },
                        {"all_reduce", need}, "Hypercube<3> all_reduce");
        check.throws<E>([&] { scan<Hypercube<3>>(comm, in, out, std::plus<>{}); }, {"scan", need},
                        "Hypercube<3> scan");
        check.throws<E>([&] { exclusive_scan<Hypercube<3>>(comm, in, out, std::plus<>{}); },
                        {"exclusive_scan", need}, "Hypercube<3> exclusive_scan");
      }
      // Still in step with the others: a real collective works afterwards.
      all_reduce<Topo>(comm, in, out, std::plus<>{});
      check.equal(out, std::vector<int>(m, p), "all_reduce after the errors, rank ", r);
    });
  });
}

// ---------------------------------------------------------------------------
// Every send synchronous (eager_limit 0): the order of sends and receives must
// be deadlock-free on its own, without buffering.

#ifndef TOPOCOLL_TEST_MPI
namespace {
template <class Topo>
void run_synchronous() {
  tc_test::Loopback::sweep<Topo>(
      [&](int p, auto on_ranks) {
        const auto data = families(p, true);
        on_ranks([&](auto& comm, Check& check) {
          const int r = comm.rank();
          for_each_family(data, [&](const auto& fam) {
            using F = std::remove_cvref_t<decltype(fam)>;
            using T = typename F::type;
            const typename F::op_type op{};
            const auto& ref = fam.by_size[2];  // m = 7
            const std::size_t m = ref.m;
            for (algorithm a : gather_algorithms<Topo>(p)) {
              std::vector<T> all(ref.all.size()), mine(m);
              all_gather<Topo>(comm, ref.in[r], all, options{a});
              check.equal(all, ref.all, ctx<Topo>("sync all_gather", fam.name, m, r, a));
              reduce_scatter<Topo>(comm, ref.rs_in[r], mine, op, options{a});
              check.equal(
                  mine,
                  std::vector<T>(ref.rs_out.begin() + static_cast<std::ptrdiff_t>(r * m),
                                 ref.rs_out.begin() + static_cast<std::ptrdiff_t>((r + 1) * m)),
                  ctx<Topo>("sync reduce_scatter", fam.name, m, r, a));
            }
            for (algorithm a : all_reduce_algorithms<Topo>(p)) {
              std::vector<T> out(m);
              all_reduce<Topo>(comm, ref.in[r], out, op, options{a});
              check.equal(out, ref.pre[p - 1], ctx<Topo>("sync all_reduce", fam.name, m, r, a));
            }
            std::vector<T> all(ref.all.size());
            all_gather<Topo>(comm, ref.in[r], all, options{algorithm::naive});
            check.equal(all, ref.all,
                        ctx<Topo>("sync all_gather", fam.name, m, r, algorithm::naive));
            std::vector<T> out(m), ex(m);
            scan<Topo>(comm, ref.in[r], out, op);
            check.equal(out, ref.pre[r],
                        ctx<Topo>("sync scan", fam.name, m, r, algorithm::automatic));
            exclusive_scan<Topo>(comm, ref.in[r], ex, op);
            if (r > 0)
              check.equal(ex, ref.pre[r - 1],
                          ctx<Topo>("sync exclusive_scan", fam.name, m, r, algorithm::automatic));
          });
        });
      },
      {1, 2, 3, 5, 6, 8, 12, 13, 16}, loopback::options{0});
}
}  // namespace

// automatic all_gather and reduce_scatter: the tree (gather + broadcast,
// reduce + scatter) where the model prices it below the fold.
//  * The seeds' model: the fold's p - 1 start-ups on a Ring against the
//    tree's 2 log2 p, so the tree from p = 8 on for short blocks, never for
//    long ones (it moves the p blocks log2 p times); on a hypercube log2 p
//    against 2 log2 p, the fold.
//  * Steps in which every rank sends and receives at 2.5x a one-way step's
//    start-up (4 ranks on 2 cores): the tree at p = 4 on short blocks too,
//    except those of the short class, which cost no more both ways, and
//    except where the fold is pairwise exchanges alone.
BOOST_AUTO_TEST_CASE(automatic_takes_the_tree_where_the_model_prices_it_lower) {
  namespace a2ab = detail::plan::all_to_all_broadcast;
  auto ag = [](auto topo, int p, std::size_t bytes, const cost_model& cm) {
    using Topo = decltype(topo);
    return a2ab::choose_all_gather<Topo>(Topo::shape(p), bytes, options{algorithm::automatic, cm});
  };
  auto rs = [](auto topo, int p, std::size_t m, const cost_model& cm) {
    using Topo = decltype(topo);
    return a2ab::choose_reduce_scatter<Topo, double, std::plus<>>(
        Topo::shape(p), m, options{algorithm::automatic, cm});
  };
  constexpr auto tree = algorithm::tree, fold = algorithm::fold;
  const cost_model seeds{};
  BOOST_TEST((ag(Ring{}, 4, 8, seeds) == fold));
  BOOST_TEST((ag(Ring{}, 16, 8, seeds) == tree));
  BOOST_TEST((ag(Ring{}, 16, 1 << 20, seeds) == fold));
  BOOST_TEST((ag(Hypercube<>{}, 16, 8, seeds) == fold));
  BOOST_TEST((ag(Hypercube<>{}, 6, 8, seeds) == fold));
  BOOST_TEST((rs(Ring{}, 16, 1, seeds) == tree));
  BOOST_TEST((rs(Ring{}, 16, 1 << 17, seeds) == fold));
  BOOST_TEST((ag(Tree<3>{}, 7, 8, seeds) == tree));  // incomplete digit groups
  cost_model shared = seeds;
  shared.duplex_ts = 2.5;
  BOOST_TEST((ag(Ring{}, 4, 512, shared) == tree));
  BOOST_TEST((ag(Tree<4>{}, 4, 512, shared) == tree));
  // pairwise exchanges alone: the fold, the duplex figures being a shift's
  BOOST_TEST((ag(Hypercube<>{}, 4, 512, shared) == fold));
  BOOST_TEST((rs(Mesh<2>{}, 4, 64, shared) == fold));
  BOOST_TEST((ag(Ring{}, 4, 1 << 20, shared) == fold));
  BOOST_TEST((rs(Ring{}, 4, 64, shared) == tree));
  BOOST_TEST((rs(Ring{}, 4, 1 << 17, shared) == fold));
  shared.short_bytes = 256;
  BOOST_TEST((ag(Ring{}, 4, 64, shared) == fold));
  BOOST_TEST((ag(Ring{}, 4, 512, shared) == tree));
  // ... and the collectives run what the choice names: the same messages as
  // the forced algorithm on every rank.
  tc_test::Loopback::sweep<Ring>(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          model::Counting automatic(comm), forced(comm);
          std::vector<double> in(1, comm.rank()), all(static_cast<std::size_t>(p)), out(1);
          all_gather<Ring>(automatic, in, all);
          all_gather<Ring>(forced, in, all, options{tree});
          reduce_scatter<Ring>(automatic, all, out, std::plus<>{});
          reduce_scatter<Ring>(forced, all, out, std::plus<>{}, options{tree});
          check.expect(automatic.send_counts() == forced.send_counts() &&
                           send_peers(automatic) == send_peers(forced),
                       "Ring p ", p, " rank ", comm.rank(), ": automatic is not the tree");
          check.equal(out, std::vector<double>(1, static_cast<double>(p) * comm.rank()),
                      "reduce_scatter, rank ", comm.rank());
        });
      },
      {16});
}

BOOST_AUTO_TEST_CASE(send_order_is_deadlock_free_with_synchronous_sends) {
  run_synchronous<Ring>();
  run_synchronous<Mesh<2>>();
  run_synchronous<Mesh<3>>();
  run_synchronous<Hypercube<>>();
  run_synchronous<Tree<2>>();
  run_synchronous<Tree<3>>();
}
#endif
