#define BOOST_TEST_MODULE personalized
// all_to_all and all_to_all_v on every topology and transport: results for
// every p, block size, element type and algorithm; the communication patterns
// of the seeds (model::Counting); the automatic choices; bad input; and, on
// loopback, deadlock freedom with every send synchronous.
#include "support/harness.hpp"
#include "support/suite.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace topocoll;
using tc_test::Check;
using tc_test::gen;
using tc_test::Particle;

namespace {

// ThreadSanitizer leaves out Particle: the transport moves every trivially
// copyable type as the same raw bytes, so int already runs its way through
// the rank threads' meetings, and std::string the way of objects moved.
using Types = std::conditional_t<tc_test::thread_sanitized, std::tuple<int, std::string>,
                                 std::tuple<int, Particle, std::string>>;

template <class F>
void for_each_type(F&& f) {
  std::apply([&](auto... t) { (f(t), ...); }, Types{});
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, int>)
    return "int";
  else if constexpr (std::is_same_v<T, Particle>)
    return "Particle";
  else
    return "string";
}

const algorithm fixed_algorithms[] = {algorithm::automatic, algorithm::store_and_forward,
                                      algorithm::pairwise, algorithm::naive};
// ... and on a topology of linear dimensions (Ring, Mesh<K>) both ways round.
template <class Topo>
std::vector<algorithm> fixed_algorithms_for() {
  std::vector<algorithm> a(std::begin(fixed_algorithms), std::end(fixed_algorithms));
  if constexpr (detail::chain_dims<Topo>) a.push_back(algorithm::bidirectional);
  return a;
}
const algorithm v_algorithms[] = {algorithm::automatic, algorithm::pairwise, algorithm::two_stage};

// Rank r's all_to_all input: p blocks of m, block j for rank j.
template <class T>
std::vector<T> exchange_input(int r, int p, std::size_t m, unsigned salt) {
  return tc_test::input<T>(r, static_cast<std::size_t>(p) * m, salt);
}
// What rank v must hold afterwards: block i is block v of rank i's input.
template <class T>
std::vector<T> exchange_expected(int v, int p, std::size_t m, unsigned salt) {
  std::vector<T> want(static_cast<std::size_t>(p) * m);
  for (int i = 0; i < p; ++i)
    for (std::size_t e = 0; e < m; ++e)
      want[static_cast<std::size_t>(i) * m + e] =
          gen<T>(i, static_cast<std::size_t>(v) * m + e, salt);
  return want;
}

}  // namespace

// ---------------------------------------------------------------------------
// all_to_all: out block i on rank v is in block v of rank i.

TOPOCOLL_TEST_SUITE(all_to_all)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_transposes_the_blocks, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int v = comm.rank();
      for_each_type([&](auto tag) {
        using T = decltype(tag);
        for (std::size_t m : tc_test::sizes) {
          // Sanitizer builds, above 17 ranks (31 and 32 threads): only int,
          // since the other types take the same paths and TSan must stay quick;
          // and 1000-string blocks only up to 9 ranks (heap traffic).
          if (tc_test::sanitized && !std::is_same_v<T, int> && p > 17) continue;
          if (tc_test::sanitized && std::is_same_v<T, std::string> && m > 7 && p > 9) continue;
          const unsigned salt = static_cast<unsigned>(m) + 3;
          const auto in = exchange_input<T>(v, p, m, salt);
          const auto want = exchange_expected<T>(v, p, m, salt);
          for (algorithm a : fixed_algorithms_for<Topo>()) {
            // automatic is one of the other two (automatic_follows_the_cost_model)
            if (tc_test::sanitized && a == algorithm::automatic && p > 17) continue;
            std::vector<T> out(in.size());
            all_to_all<Topo>(comm, std::span<const T>(in), std::span<T>(out), options{a});
            check.equal(out, want, Topo::name(), " all_to_all<", type_name<T>(), "> ", to_string(a),
                        " p=", p, " m=", m, " rank ", v);
          }
        }
      });
    });
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_takes_containers_and_works_in_place, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int v = comm.rank();
      const std::size_t m = 5;
      const auto in = exchange_input<int>(v, p, m, 11);
      const auto want = exchange_expected<int>(v, p, m, 11);
      std::vector<int> out(in.size());
      all_to_all<Topo>(comm, in, out);
      check.equal(out, want, Topo::name(), " all_to_all on vectors, rank ", v);
      for (algorithm a : fixed_algorithms_for<Topo>()) {
        if (a == algorithm::automatic) continue;
        std::vector<int> same = in;  // in and out are one buffer
        all_to_all<Topo>(comm, std::span<const int>(same), std::span<int>(same), options{a});
        check.equal(same, want, Topo::name(), " all_to_all in place ", to_string(a), ", rank ", v);
      }
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// The communication patterns (model::Counting records every call).

namespace {

struct msg {
  int to, from;
  std::size_t count;
  friend bool operator==(const msg&, const msg&) = default;
  friend std::ostream& operator<<(std::ostream& os, const msg& x) {
    return os << "(to " << x.to << ", from " << x.from << ", " << x.count << ")";
  }
};

template <class Topo>
struct tree_radix;
template <int K>
struct tree_radix<Tree<K>> : std::integral_constant<int, K> {};

// The store-and-forward schedule of the seeds, written out per topology (an
// oracle independent of the kernel's bookkeeping).
template <class Topo>
std::vector<msg> seed_schedule(int p, int r, std::size_t m) {
  std::vector<msg> s;
  if (p == 1 || m == 0) return s;
  const auto P = static_cast<std::size_t>(p);
  if constexpr (std::is_same_v<Topo, Ring>) {
    // Figure 4.18: p - 1 steps to the next rank, m(p - 1), m(p - 2), ..., m words
    for (int t = 1; t < p; ++t) s.push_back({(r + 1) % p, (r + p - 1) % p, m * (P - t)});
  } else if constexpr (Topo::kind == dim_kind::binary) {
    if (detail::is_pow2(p)) {
      // Figure 4.20: log p steps across each dimension, m p / 2 words each
      for (int b = 1; b < p; b <<= 1) s.push_back({r ^ b, r ^ b, m * P / 2});
    } else {  // ceil(log2 p) steps, the packets whose offset (d - s) mod p has the bit
      for (int b = 1; b < p; b <<= 1) {
        std::size_t n = 0;
        for (int x = 0; x < p; ++x) n += (x & b) != 0;
        s.push_back({(r + b) % p, (r - b % p + p) % p, m * n});
      }
    }
  } else if constexpr (Topo::kind == dim_kind::knomial) {
    constexpr int K = tree_radix<Topo>::value;
    for (long long w = 1; w < p; w *= K)
      for (int z = 1; z < K; ++z) {
        std::size_t n = 0;
        for (int x = 0; x < p; ++x) n += (x / w) % K == z;
        const int sh = static_cast<int>((z * w) % p);
        if (n) s.push_back({(r + sh) % p, (r - sh + p) % p, m * n});
      }
  } else {  // Mesh<K>: the ring algorithm in each dimension, last side first (Figure 4.19)
    const auto sides = Topo::sides(p);
    int stride = 1;
    for (int j = static_cast<int>(sides.size()) - 1; j >= 0; --j) {
      const int side = sides[static_cast<std::size_t>(j)];
      if (side == 1) continue;
      const int c = (r / stride) % side;
      const int next = r + (((c + 1) % side) - c) * stride;
      const int prev = r + (((c + side - 1) % side) - c) * stride;
      for (int t = 1; t < side; ++t)
        s.push_back(
            {next, prev,
             m * (P / static_cast<std::size_t>(side)) * static_cast<std::size_t>(side - t)});
      stride *= side;
    }
  }
  return s;
}

// Section 4.5.1's ring both ways, per linear dimension of side s (the Ring:
// one of side p): every packet goes the shorter way, the first s/2 groups of
// p/s packets forward, the others backward; hop h forward carries the groups
// h .. s/2, hop h backward the groups s/2 + 1 .. s - h; the two alternate.
template <class Topo>
std::vector<msg> bidirectional_schedule(int p, int r, std::size_t m) {
  std::vector<msg> s;
  if (p == 1 || m == 0) return s;
  const layout l = Topo::shape(p);
  for (int j = 0; j < l.ndims; ++j) {
    const int side = l.dims[j].radix, stride = l.dims[j].stride, c = l.coord(r, j);
    const int next = r + ((c + 1) % side - c) * stride;
    const int prev = r + ((c + side - 1) % side - c) * stride;
    const std::size_t per_group = m * static_cast<std::size_t>(p / side);
    const int fwd = side / 2, bwd = (side - 1) / 2;
    for (int h = 1; h <= fwd; ++h) {
      s.push_back({next, prev, per_group * static_cast<std::size_t>(fwd - h + 1)});
      if (h <= bwd) s.push_back({prev, next, per_group * static_cast<std::size_t>(bwd - h + 1)});
    }
  }
  return s;
}

// Algorithm 4.10 / the shifted schedule: p - 1 exchanges of m words.
std::vector<msg> pairwise_schedule(int p, int r, std::size_t m) {
  std::vector<msg> s;
  if (m == 0) return s;
  for (int j = 1; j < p; ++j) {
    if (detail::is_pow2(p))
      s.push_back({r ^ j, r ^ j, m});
    else
      s.push_back({(r + j) % p, (r - j + p) % p, m});
  }
  return s;
}

// The lecture's naive exchange: ranks 0, 1, ..., p - 1 in turn, this one
// skipped, one exchange of m words with each.
std::vector<msg> naive_schedule(int p, int r, std::size_t m) {
  std::vector<msg> s;
  for (int q = 0; q < p && m > 0; ++q)
    if (q != r) s.push_back({q, q, m});
  return s;
}

// One msg per step from the recorded sendrecv calls.
template <class C>
std::vector<msg> recorded(const model::Counting<C>& cc) {
  std::vector<msg> s(static_cast<std::size_t>(cc.steps()), msg{-1, -1, 0});
  for (const model::event& e : cc.events()) {
    msg& x = s[static_cast<std::size_t>(e.step)];
    if (e.kind == model::event::send)
      x.to = e.peer, x.count = e.count;
    else
      x.from = e.peer;
  }
  return s;
}

}  // namespace

TOPOCOLL_TEST_SUITE(all_to_all)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_follows_the_seed_schedules, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      for (std::size_t m : {std::size_t{0}, std::size_t{3}}) {
        const auto in = exchange_input<int>(r, p, m, 5);
        std::vector<int> out(in.size());
        model::Counting cc(comm);
        all_to_all<Topo>(cc, in, out, options{algorithm::store_and_forward});
        check.equal(recorded(cc), seed_schedule<Topo>(p, r, m), Topo::name(),
                    " store_and_forward schedule, m=", m, " rank ", r);
        check.equal(out, exchange_expected<int>(r, p, m, 5), "store_and_forward result");
        if constexpr (detail::chain_dims<Topo>) {
          cc.clear();
          all_to_all<Topo>(cc, in, out, options{algorithm::bidirectional});
          check.equal(recorded(cc), bidirectional_schedule<Topo>(p, r, m), Topo::name(),
                      " bidirectional schedule, m=", m, " rank ", r);
          check.equal(out, exchange_expected<int>(r, p, m, 5), "bidirectional result");
        }
        cc.clear();
        all_to_all<Topo>(cc, in, out, options{algorithm::pairwise});
        check.equal(recorded(cc), pairwise_schedule(p, r, m), Topo::name(),
                    " pairwise schedule, m=", m, " rank ", r);
        cc.clear();
        all_to_all<Topo>(cc, in, out, options{algorithm::naive});
        check.equal(recorded(cc), naive_schedule(p, r, m), Topo::name(), " naive schedule, m=", m,
                    " rank ", r);
        check.equal(out, exchange_expected<int>(r, p, m, 5), "naive result");
        for (const model::event& e : cc.events())
          check.expect(e.tag == detail::tag::all_to_all, "all_to_all tag");
      }
    });
  });
}

// The ring both ways moves half the words per direction: from 3 ranks on, each
// direction carries at most half of what the one-way ring (Eq. 4.7) sends,
// exactly m (1 + ... + floor(p/2)) forward and m (1 + ... + floor((p-1)/2))
// backward, and the cost model prices the messages the kernel sends.
BOOST_AUTO_TEST_CASE_TEMPLATE(the_ring_both_ways_halves_the_words_per_direction, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  if constexpr (std::is_same_v<Topo, Ring>) {
    Cfg::sweep([&](int p, auto on_ranks) {
      on_ranks([&](auto& comm, Check& check) {
        const int r = comm.rank(), next = (r + 1) % p, prev = (r + p - 1) % p;
        const std::size_t m = 4, P = static_cast<std::size_t>(p), a = P / 2, b = (P - 1) / 2;
        const auto in = exchange_input<int>(r, p, m, 9);
        std::vector<int> out(in.size());
        model::Counting cc(comm);
        all_to_all<Topo>(cc, in, out, options{algorithm::store_and_forward});
        const std::size_t one_way = cc.bytes_sent();
        cc.clear();
        all_to_all<Topo>(cc, in, out, options{algorithm::bidirectional});
        check.equal(out, exchange_expected<int>(r, p, m, 9), "bidirectional result, rank ", r);
        std::size_t fwd = 0, bwd = 0;
        double t = 0;
        const cost_model cm{};
        for (const model::event& e : cc.events()) {
          if (e.kind != model::event::send) continue;
          (e.peer == next && (p > 2 || fwd == 0) ? fwd : bwd) += e.bytes;
          t += cm.message(e.bytes);
        }
        check.expect(one_way == m * sizeof(int) * P * (P - 1) / 2, "one way: ", one_way, " bytes");
        check.expect(fwd == m * sizeof(int) * a * (a + 1) / 2, "p=", p, " forward ", fwd, " bytes");
        check.expect(bwd == m * sizeof(int) * b * (b + 1) / 2, "p=", p, " backward ", bwd,
                     " bytes");
        check.expect(p < 3 || (2 * fwd <= one_way && 2 * bwd <= one_way), "p=", p,
                     " a direction carries ", std::max(fwd, bwd), " of ", one_way,
                     " bytes, more than half");
        const double model = detail::plan::personalized::store_and_forward_cost<Topo>(
            Topo::shape(p), m * sizeof(int), cm, detail::ring_way::both);
        check.expect(std::abs(t - model) < 1e-9, "p=", p, " the model prices ", model,
                     ", the messages cost ", t);
      });
    });
  }
}
BOOST_AUTO_TEST_SUITE_END()

// The cost model's closed-form group offsets are the kernel's plans.
BOOST_AUTO_TEST_CASE_TEMPLATE(cost_model_walks_the_kernels_groups, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  for (int p = 1; p <= 70; ++p) {
    if (!Topo::holds(p)) continue;
    const layout l = Topo::shape(p);
    const auto plans = detail::personalized::make_plans(l);
    for (int j = 0; j < l.ndims; ++j)
      for (int z = 0; z <= l.dims[j].radix; ++z)
        BOOST_CHECK_MESSAGE(detail::personalized::digit_offset(l, j, z) ==
                                plans[static_cast<std::size_t>(j)].off[static_cast<std::size_t>(z)],
                            Topo::name() << " p=" << p << " dimension " << j << " digit " << z);
  }
}

TOPOCOLL_TEST_SUITE(all_to_all)
BOOST_AUTO_TEST_CASE_TEMPLATE(automatic_follows_the_cost_model, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const std::size_t m = 2;
      const auto in = exchange_input<int>(r, p, m, 7);
      std::vector<int> out(in.size());
      const auto sf = seed_schedule<Topo>(p, r, m);
      const auto pw = pairwise_schedule(p, r, m);
      model::Counting cc(comm);
      // start-ups only: fewer steps wins, a tie goes to pairwise
      all_to_all<Topo>(cc, in, out, options{algorithm::automatic, cost_model{1.0, 0.0}});
      check.equal(recorded(cc), p > 2 && sf.size() < pw.size() ? sf : pw, Topo::name(),
                  " automatic, start-up bound, rank ", r);
      cc.clear();
      // bandwidth only: pairwise sends every word once
      all_to_all<Topo>(cc, in, out, options{algorithm::automatic, cost_model{0.0, 1.0}});
      check.equal(recorded(cc), pw, Topo::name(), " automatic, bandwidth bound, rank ", r);
      check.equal(out, exchange_expected<int>(r, p, m, 7), "automatic result");
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// all_to_all_v

namespace {

enum class pattern { zero, to_one, random, uniform };
const pattern patterns[] = {pattern::zero, pattern::to_one, pattern::random, pattern::uniform};
const char* name(pattern x) {
  switch (x) {
    case pattern::zero:
      return "zero";
    case pattern::to_one:
      return "to_one";
    case pattern::random:
      return "random";
    case pattern::uniform:
      return "uniform";
  }
  return "?";
}

// Elements rank i sends to rank j (times scale).
std::size_t count(pattern x, int p, int i, int j, std::size_t scale = 1);
std::size_t count_1(pattern x, int p, int i, int j) {
  switch (x) {
    case pattern::zero:
      return 0;
    case pattern::to_one:  // everything to rank p/2, some sources empty
      return j == p / 2 && i % 3 != 1 ? static_cast<std::size_t>(5 + 7 * i) : 0;
    case pattern::random: {  // deterministic hash of (p, i, j): many zeros, some large
      std::uint32_t h = static_cast<std::uint32_t>(p * 7919 + i * 104729 + j * 1299709 + 17);
      h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
      return h % 4 == 0 ? 0 : h % 3 == 0 ? 200 + h % 300 : h % 9;
    }
    case pattern::uniform:
      return 4;
  }
  return 0;
}
std::size_t count(pattern x, int p, int i, int j, std::size_t scale) {
  return count_1(x, p, i, j) * scale;
}

std::vector<std::size_t> counts_of(pattern x, int p, int i, std::size_t scale = 1) {
  std::vector<std::size_t> c(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j) c[static_cast<std::size_t>(j)] = count(x, p, i, j, scale);
  return c;
}

// Rank i's send buffer: element k of it is gen(i, k).
template <class T>
std::vector<T> v_input(pattern x, int p, int i, unsigned salt, std::size_t scale = 1) {
  const auto c = counts_of(x, p, i, scale);
  return tc_test::input<T>(i, std::accumulate(c.begin(), c.end(), std::size_t{0}), salt);
}

template <class T>
all_to_all_v_result<T> v_expected(pattern x, int p, int v, unsigned salt, std::size_t scale = 1) {
  all_to_all_v_result<T> r;
  for (int i = 0; i < p; ++i) {
    std::size_t at = 0;
    for (int j = 0; j < v; ++j) at += count(x, p, i, j, scale);
    const std::size_t n = count(x, p, i, v, scale);
    r.counts.push_back(n);
    for (std::size_t e = 0; e < n; ++e) r.data.push_back(gen<T>(i, at + e, salt));
  }
  return r;
}

}  // namespace

TOPOCOLL_TEST_SUITE(all_to_all_v)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_v_delivers_in_source_order, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int v = comm.rank();
      for_each_type([&](auto tag) {
        using T = decltype(tag);
        for (pattern x : patterns) {
          // see above; strings keep one pattern on the largest p
          if (tc_test::sanitized && !std::is_same_v<T, int> && p > 17 &&
              (std::is_same_v<T, Particle> || x != pattern::random))
            continue;
          const unsigned salt = static_cast<unsigned>(x) + 21;
          const auto in = v_input<T>(x, p, v, salt);
          const auto sc = counts_of(x, p, v);
          const auto want = v_expected<T>(x, p, v, salt);
          for (algorithm a : v_algorithms) {
            if (tc_test::sanitized && a == algorithm::automatic && p > 17 && x != pattern::random)
              continue;
            auto got = all_to_all_v<Topo>(comm, std::span<const T>(in),
                                          std::span<const std::size_t>(sc), options{a});
            check.equal(got.counts, want.counts, Topo::name(), " all_to_all_v<", type_name<T>(),
                        "> counts ", name(x), " ", to_string(a), " p=", p, " rank ", v);
            check.equal(got.data, want.data, Topo::name(), " all_to_all_v<", type_name<T>(),
                        "> data ", name(x), " ", to_string(a), " p=", p, " rank ", v);
          }
        }
      });
      // containers work too
      const auto in = v_input<int>(pattern::random, p, v, 1);
      auto got = all_to_all_v<Topo>(comm, in, counts_of(pattern::random, p, v));
      check.equal(got.data, v_expected<int>(pattern::random, p, v, 1).data, "on vectors");
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

namespace {
// Data messages a rank sent (tag all_to_all_v), and in what sizes.
template <class C>
std::vector<std::size_t> data_sends(const model::Counting<C>& cc) {
  std::vector<std::size_t> n;
  for (const model::event& e : cc.events())
    if (e.kind == model::event::send && e.tag == detail::tag::all_to_all_v) n.push_back(e.count);
  return n;
}
}  // namespace

TOPOCOLL_TEST_SUITE(all_to_all_v)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_v_patterns_and_choice, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    std::vector<std::vector<std::size_t>> rows;  // the random pattern's count matrix
    for (int i = 0; i < p; ++i) rows.push_back(counts_of(pattern::random, p, i));
    on_ranks([&](auto& comm, Check& check) {
      const int v = comm.rank();
      const auto P = static_cast<std::size_t>(p);
      const auto V = static_cast<std::size_t>(v);
      const cost_model cm{1.0, 1.0};
      // direct: one message per nonempty block, nothing for empty ones
      {
        const auto in = v_input<int>(pattern::random, p, v, 2);
        const auto sc = counts_of(pattern::random, p, v);
        model::Counting cc(comm);
        auto got = all_to_all_v<Topo>(cc, in, sc, options{algorithm::pairwise});
        std::vector<std::size_t> want;
        for (int j = 1; j < p; ++j) {
          const std::size_t n = sc[static_cast<std::size_t>(detail::pair_to(v, j, p))];
          if (n) want.push_back(n);
        }
        check.equal(data_sends(cc), want, Topo::name(), " pairwise all_to_all_v sends, rank ", v);
        check.equal(got.data, v_expected<int>(pattern::random, p, v, 2).data, "pairwise data");
      }
      // two-stage: rank v's data in p nearly equal pieces, piece k to rank k
      {
        const auto in = v_input<int>(pattern::random, p, v, 3);
        const auto sc = counts_of(pattern::random, p, v);
        model::Counting cc(comm);
        auto got = all_to_all_v<Topo>(cc, in, sc, options{algorithm::two_stage});
        check.equal(got.data, v_expected<int>(pattern::random, p, v, 3).data, "two_stage data");
        const auto sent = data_sends(cc);
        const std::size_t S = in.size();
        std::vector<std::size_t> stage1;
        for (int j = 1; j < p; ++j) {
          const auto k = static_cast<std::size_t>(detail::pair_to(v, j, p));
          const std::size_t n = S / P + (k < S % P ? 1 : 0);
          if (n) stage1.push_back(n);
        }
        // stage 2: to each destination j, what this rank holds for j, from every source
        std::vector<std::size_t> stage2;
        for (int j = 1; j < p; ++j) {
          const int to = detail::pair_to(v, j, p);
          std::size_t n = 0;
          for (int i = 0; i < p; ++i) {
            const auto& ci = rows[static_cast<std::size_t>(i)];
            const std::size_t Si = std::accumulate(ci.begin(), ci.end(), std::size_t{0});
            const std::size_t lo = V * (Si / P) + std::min(V, Si % P);
            const std::size_t hi = lo + Si / P + (V < Si % P ? 1 : 0);
            const std::size_t a = std::accumulate(ci.begin(), ci.begin() + to, std::size_t{0});
            const std::size_t b = a + ci[static_cast<std::size_t>(to)];
            n += std::max(lo, std::min(hi, b)) - std::max(lo, std::min(hi, a));
          }
          if (n) stage2.push_back(n);
        }
        stage1.insert(stage1.end(), stage2.begin(), stage2.end());
        check.equal(sent, stage1, Topo::name(), " two_stage messages (stage 1, stage 2), rank ", v);
      }
      // automatic: one large block per rank (a permutation) goes two-stage ...
      {
        const std::size_t M = 20000;
        std::vector<std::size_t> sc(P, 0);
        sc[static_cast<std::size_t>(p - 1 - v)] = M;  // a reversal: offsets all differ
        std::vector<int> in(M, v);
        model::Counting cc(comm);
        auto got = all_to_all_v<Topo>(cc, in, sc, options{algorithm::automatic, cm});
        const bool two = data_sends(cc).size() > 1;
        check.expect(two == (p > 2), Topo::name(),
                     " automatic with one large block per rank: ", two ? "two_stage" : "pairwise",
                     " p=", p, " rank ", v);
        std::size_t n = 0;
        for (int i = 0; i < p; ++i) {
          const std::size_t c = got.counts[static_cast<std::size_t>(i)];
          check.expect(std::all_of(got.data.begin() + static_cast<std::ptrdiff_t>(n),
                                   got.data.begin() + static_cast<std::ptrdiff_t>(n + c),
                                   [i](int x) { return x == i; }),
                       "permutation data from ", i);
          n += c;
        }
      }
      // ... balanced traffic stays direct
      {
        const auto in = v_input<int>(pattern::uniform, p, v, 4);
        const auto sc = counts_of(pattern::uniform, p, v);
        model::Counting cc(comm);
        auto got = all_to_all_v<Topo>(cc, in, sc, options{algorithm::automatic, cm});
        check.expect(data_sends(cc).size() == P - 1, Topo::name(),
                     " automatic with balanced traffic is direct, rank ", v);
        check.equal(got.data, v_expected<int>(pattern::uniform, p, v, 4).data, "uniform data");
      }
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// all_to_all_v with the receive counts known: the caller's buffer, no count
// exchange. Same reference as above; out sits between guard elements that must
// stay untouched.

namespace {
template <class T>
T guard_value() {
  return gen<T>(-7, 12345, 999);  // no rank's element: rank -7 does not exist
}
}  // namespace

TOPOCOLL_TEST_SUITE(all_to_all_v)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_v_with_receive_counts_matches_the_reference, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int v = comm.rank();
      for_each_type([&](auto tag) {
        using T = decltype(tag);
        // scale 61: blocks of up to 30000 elements (rendezvous messages on
        // loopback), int only and p <= 17 (the volume grows as p^2)
        for (std::size_t scale : {std::size_t{1}, std::size_t{61}}) {
          if (scale > 1 && (!std::is_same_v<T, int> || p > 17)) continue;
          for (pattern x : patterns) {
            if (tc_test::sanitized && !std::is_same_v<T, int> && p > 17 &&
                (std::is_same_v<T, Particle> || x != pattern::random))
              continue;
            const unsigned salt = static_cast<unsigned>(x) + 40;
            const auto in = v_input<T>(x, p, v, salt, scale);
            const auto sc = counts_of(x, p, v, scale);
            const auto want = v_expected<T>(x, p, v, salt, scale);
            for (algorithm a : v_algorithms) {
              const std::size_t g = 3;
              std::vector<T> buf(want.data.size() + 2 * g, guard_value<T>());
              const std::span<T> out(buf.data() + g, want.data.size());
              all_to_all_v<Topo>(comm, std::span<const T>(in), std::span<const std::size_t>(sc),
                                 out, std::span<const std::size_t>(want.counts), options{a});
              check.equal(out, want.data, Topo::name(), " all_to_all_v(out, recv_counts)<",
                          type_name<T>(), "> ", name(x), " x", scale, " ", to_string(a), " p=", p,
                          " rank ", v);
              const bool guards = std::all_of(buf.begin(), buf.begin() + g,
                                              [](const T& e) { return e == guard_value<T>(); }) &&
                                  std::all_of(buf.end() - g, buf.end(),
                                              [](const T& e) { return e == guard_value<T>(); });
              check.expect(guards, Topo::name(),
                           " all_to_all_v(out, recv_counts) wrote outside out, ", name(x), " ",
                           to_string(a), " p=", p, " rank ", v);
            }
          }
        }
      });
      // containers work too
      const auto in = v_input<int>(pattern::random, p, v, 2);
      const auto want = v_expected<int>(pattern::random, p, v, 2);
      std::vector<int> out(want.data.size());
      all_to_all_v<Topo>(comm, in, counts_of(pattern::random, p, v), out, want.counts);
      check.equal(out, want.data, "all_to_all_v(out, recv_counts) on vectors");
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

namespace {
// Rank u sends rank w `sent` elements where w expects `expected`; every other
// pair exchanges 4 elements as agreed. (u, w) = (0, p - 1): u's block is the
// last one w receives; (0, 1): the first, so that w still has blocks to
// receive after the error; (p - 1, p - 1): a rank's own block, which no
// message carries, so only a local check can catch it (the last block of out,
// so that one element too many lands in the guard).
struct mismatch {
  const char* what;
  std::size_t sent, expected;
};
const mismatch mismatches[] = {{"one more", 5, 4},
                               {"one fewer", 3, 4},
                               {"a block where none is expected", 1, 0},
                               {"no block where one is expected", 0, 4},
                               {"one more, rendezvous size", 6001, 6000}};

struct mismatch_case {
  std::vector<int> in;
  std::vector<std::size_t> sc, rc;
  std::size_t out_size;
};
std::vector<std::pair<int, int>> mismatch_pairs(int p) {
  std::vector<std::pair<int, int>> uw{{0, p - 1}};
  if (p > 2) uw.emplace_back(0, 1);
  if (p > 1) uw.emplace_back(p - 1, p - 1);
  return uw;
}
mismatch_case make_mismatch(const mismatch& mm, int p, int v, int u, int w) {
  const auto P = static_cast<std::size_t>(p);
  mismatch_case c{{}, std::vector<std::size_t>(P, 4), std::vector<std::size_t>(P, 4), 0};
  if (v == u) c.sc[static_cast<std::size_t>(w)] = mm.sent;
  if (v == w) c.rc[static_cast<std::size_t>(u)] = mm.expected;
  c.in = tc_test::input<int>(v, std::accumulate(c.sc.begin(), c.sc.end(), std::size_t{0}), 77);
  c.out_size = std::accumulate(c.rc.begin(), c.rc.end(), std::size_t{0});
  return c;
}
}  // namespace

TOPOCOLL_TEST_SUITE(all_to_all_v)
// On the library's transports (non-blocking sends): the rank whose receive
// counts are wrong throws message_error naming both ranks, writes nothing
// outside out, and completes the exchange first, so every other rank returns
// normally and the next collective on the same communicator is unaffected.
BOOST_AUTO_TEST_CASE_TEMPLATE(wrong_receive_counts_throw_message_error, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      using C = std::remove_reference_t<decltype(comm)>;
      static_assert(NonblockingTransport<C, int>, "the library's transports are non-blocking");
      const int v = comm.rank();
      for (auto [u, w] : mismatch_pairs(p))
        for (const mismatch& mm : mismatches) {
          for (algorithm a : v_algorithms) {
            auto mc = make_mismatch(mm, p, v, u, w);
            const std::size_t g = 5;
            std::vector<int> buf(mc.out_size + 2 * g, -1);
            const std::span<int> out(buf.data() + g, mc.out_size);
            bool threw = false;
            try {
              all_to_all_v<Topo>(comm, mc.in, mc.sc, out, mc.rc, options{a});
            } catch (const message_error& e) {
              threw = true;
              const std::string what = e.what();
              for (const std::string& s :
                   {"rank " + std::to_string(w), "rank " + std::to_string(u)})
                check.expect(what.find(s) != std::string::npos, Topo::name(), " ", mm.what, " ",
                             to_string(a), ": \"", what, "\" does not mention ", s);
            }
            check.expect(threw == (v == w), Topo::name(), " ", mm.what, " ", to_string(a), " p=", p,
                         " u=", u, " w=", w, " rank ", v, threw ? " threw" : " did not throw");
            check.expect(std::all_of(buf.begin(), buf.begin() + g, [](int e) { return e == -1; }) &&
                             std::all_of(buf.end() - g, buf.end(), [](int e) { return e == -1; }),
                         Topo::name(), " ", mm.what, " ", to_string(a),
                         ": wrote outside out, rank ", v);
            // nothing left behind: a correct exchange right after is exact
            const auto in = v_input<int>(pattern::random, p, v, 5);
            const auto want = v_expected<int>(pattern::random, p, v, 5);
            std::vector<int> next(want.data.size());
            all_to_all_v<Topo>(comm, in, counts_of(pattern::random, p, v), next, want.counts,
                               options{a});
            check.equal(next, want.data, Topo::name(), " the exchange after ", mm.what, " ",
                        to_string(a), ", rank ", v);
          }
        }
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

#ifndef TOPOCOLL_TEST_MPI
TOPOCOLL_TEST_SUITE(all_to_all_v)
// On a transport without non-blocking sends (model::Counting here) the
// receiving rank throws at once and run() reports its message_error.
BOOST_AUTO_TEST_CASE(wrong_receive_counts_throw_on_a_blocking_transport) {
  static_assert(!NonblockingTransport<model::Counting<loopback::Comm>, int>);
  for (int p : {1, 2, 3, 4, 7}) {
    for (auto [u, w] : mismatch_pairs(p))
      for (const mismatch& mm : mismatches) {
        for (algorithm a : v_algorithms) {
          std::string what;
          try {
            loopback::run(p, [&, u = u, w = w](loopback::Comm& comm) {
              model::Counting cc(comm);
              auto mc = make_mismatch(mm, p, comm.rank(), u, w);
              std::vector<int> out(mc.out_size);
              all_to_all_v<Hypercube<>>(cc, mc.in, mc.sc, out, mc.rc, options{a});
            });
          } catch (const message_error& e) {
            what = e.what();
          }
          BOOST_CHECK_MESSAGE(what.find("rank " + std::to_string(w)) != std::string::npos &&
                                  what.find("never received") == std::string::npos,
                              "p = " << p << ", u = " << u << ", w = " << w << ", " << mm.what
                                     << ", " << to_string(a) << ": message_error \"" << what
                                     << "\"");
        }
      }
  }
}
BOOST_AUTO_TEST_SUITE_END()
#endif

// ---------------------------------------------------------------------------
// Bad input throws std::invalid_argument on every rank before any message.

BOOST_AUTO_TEST_CASE_TEMPLATE(bad_arguments_throw_before_communicating, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const auto P = static_cast<std::size_t>(p);
      const std::string rank = "rank " + std::to_string(r);
      std::vector<int> in(P * 3), out(P * 3 + 1), odd(P * 3 + (p > 1 ? 1 : 0));
      model::Counting cc(comm);
      check.throws<std::invalid_argument>(
          [&] { all_to_all<Topo>(cc, in, out); },
          {"all_to_all", rank, std::to_string(P * 3 + 1), std::to_string(P * 3)}, "out too long");
      if (p > 1)
        check.throws<std::invalid_argument>([&] { all_to_all<Topo>(cc, odd, odd); },
                                            {"all_to_all", rank, "multiple of p"}, "in not p*m");
      check.throws<std::invalid_argument>(
          [&] { all_to_all<Topo>(cc, in, in, options{algorithm::two_stage}); },
          {"all_to_all", "two_stage"}, "two_stage forced on all_to_all");
      std::vector<std::size_t> sc(P + 1, 0), ok(P, 1);
      check.throws<std::invalid_argument>(
          [&] { all_to_all_v<Topo>(cc, in, sc); },
          {"all_to_all_v", rank, "send_counts", std::to_string(P + 1)}, "send_counts size");
      check.throws<std::invalid_argument>(
          [&] { all_to_all_v<Topo>(cc, in, ok); },
          {"all_to_all_v", rank, std::to_string(P * 3), std::to_string(P)}, "sum of send_counts");
      check.throws<std::invalid_argument>(
          [&] {
            all_to_all_v<Topo>(cc, std::span<const int>(in.data(), P), ok,
                               options{algorithm::store_and_forward});
          },
          {"all_to_all_v", "store_and_forward"}, "store_and_forward forced on all_to_all_v");
      // the overload with receive counts
      std::vector<std::size_t> rc_long(P + 1, 1);
      std::vector<int> out_p(P), out_wrong(P + 1);
      auto first = std::span<const int>(in.data(), P);
      check.throws<std::invalid_argument>(
          [&] { all_to_all_v<Topo>(cc, first, ok, out_p, rc_long); },
          {"all_to_all_v", rank, "recv_counts", std::to_string(P + 1)}, "recv_counts size");
      check.throws<std::invalid_argument>(
          [&] { all_to_all_v<Topo>(cc, first, ok, out_wrong, ok); },
          {"all_to_all_v", rank, "out holds", std::to_string(P + 1), std::to_string(P)},
          "out size against sum of recv_counts");
      if (p > 1) {
        // counts whose sum wraps around to in.size() (here 0, an empty in)
        std::vector<std::size_t> wrap(P, 0);
        wrap[0] = SIZE_MAX;
        wrap[1] = 1;
        const std::vector<int> none;
        const std::string huge = std::to_string(SIZE_MAX);
        check.throws<std::invalid_argument>([&] { all_to_all_v<Topo>(cc, none, wrap); },
                                            {"all_to_all_v", rank, "send_counts", huge},
                                            "send_counts sum wraps around");
        std::vector<int> no_out;
        check.throws<std::invalid_argument>(
            [&] { all_to_all_v<Topo>(cc, none, wrap, no_out, std::vector<std::size_t>(P, 0)); },
            {"all_to_all_v", rank, "send_counts", huge},
            "send_counts sum wraps around (receive counts given)");
        check.throws<std::invalid_argument>(
            [&] { all_to_all_v<Topo>(cc, none, std::vector<std::size_t>(P, 0), no_out, wrap); },
            {"all_to_all_v", rank, "recv_counts", huge}, "recv_counts sum wraps around");
      }
      check.throws<std::invalid_argument>(
          [&] { all_to_all_v<Topo>(cc, in, ok, out_p, ok); },
          {"all_to_all_v", rank, std::to_string(P * 3), std::to_string(P)},
          "sum of send_counts (receive counts given)");
      if (p > 1)
        check.throws<std::invalid_argument>(
            [&] { all_to_all_v<Topo>(cc, first, ok, std::span<int>(in.data() + 1, P), ok); },
            {"all_to_all_v", rank, "overlap"}, "in and out overlap");
      check.throws<std::invalid_argument>(
          [&] {
            all_to_all_v<Topo>(cc, first, ok, out_p, ok, options{algorithm::store_and_forward});
          },
          {"all_to_all_v", "store_and_forward"}, "store_and_forward forced (receive counts given)");
      if constexpr (!detail::chain_dims<Topo>)
        check.throws<std::invalid_argument>(
            [&] { all_to_all<Topo>(cc, in, in, options{algorithm::bidirectional}); },
            {"all_to_all", rank, "bidirectional needs the Ring or a Mesh<K>", Topo::name()},
            "bidirectional forced off a ring");
      check.throws<std::invalid_argument>(
          [&] {
            all_to_all_v<Topo>(cc, std::span<const int>(in.data(), P), ok,
                               options{algorithm::bidirectional});
          },
          {"all_to_all_v", "bidirectional"}, "bidirectional forced on all_to_all_v");
      check.expect(cc.steps() == 0, "a message was sent before an argument check");
    });
  });
}

BOOST_AUTO_TEST_CASE(a_topology_that_cannot_hold_p_throws) {
#ifndef TOPOCOLL_TEST_MPI
  for (int p : {3, 5, 6}) {
    Check check;
    loopback::run(p, [&](loopback::Comm& comm) {
      std::vector<int> in(static_cast<std::size_t>(p)), out(in.size());
      std::vector<std::size_t> sc(in.size(), 1);
      check.throws<std::invalid_argument>([&] { all_to_all<Hypercube<2>>(comm, in, out); },
                                          {"all_to_all", "Hypercube<2>", "4"}, "all_to_all");
      check.throws<std::invalid_argument>([&] { all_to_all_v<Hypercube<2>>(comm, in, sc); },
                                          {"all_to_all_v", "Hypercube<2>", "4"}, "all_to_all_v");
    });
    BOOST_CHECK_MESSAGE(check.count() == 0, "p = " << p << check.report());
  }
#endif
}

// ---------------------------------------------------------------------------
// Every send synchronous (eager_limit 0): the schedules are deadlock-free
// without buffering.

#ifndef TOPOCOLL_TEST_MPI
template <class Topo>
void run_synchronous() {
  tc_test::Loopback::sweep<Topo>(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const int v = comm.rank();
          for (std::size_t m : {std::size_t{1}, std::size_t{300}}) {
            const auto in = exchange_input<int>(v, p, m, 9);
            for (algorithm a : fixed_algorithms_for<Topo>()) {
              std::vector<int> out(in.size());
              all_to_all<Topo>(comm, in, out, options{a});
              check.equal(out, exchange_expected<int>(v, p, m, 9), Topo::name(),
                          " sync all_to_all ", to_string(a), " m=", m);
            }
          }
          for (pattern x : patterns) {
            const auto in = v_input<std::string>(x, p, v, 8);
            for (algorithm a : v_algorithms) {
              auto got = all_to_all_v<Topo>(comm, in, counts_of(x, p, v), options{a});
              check.equal(got.data, v_expected<std::string>(x, p, v, 8).data, Topo::name(),
                          " sync all_to_all_v ", name(x), " ", to_string(a));
            }
          }
        });
      },
      {1, 2, 3, 5, 6, 8, 12, 13, 16}, loopback::options{0});
}

BOOST_AUTO_TEST_CASE(schedules_are_deadlock_free_with_synchronous_sends) {
  run_synchronous<Ring>();
  run_synchronous<Mesh<2>>();
  run_synchronous<Mesh<3>>();
  run_synchronous<Hypercube<>>();
  run_synchronous<Tree<2>>();
  run_synchronous<Tree<3>>();
}
#endif
