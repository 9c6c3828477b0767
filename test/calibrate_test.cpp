// model::calibrate and the busy and combine figures of the cost model: the
// calibration agrees on every rank and fits its own measurements; busy_ts /
// busy_tw move automatic from the folds to the trees, and t_c from recursive
// doubling to the pieces, exactly where the model says.
#define BOOST_TEST_MODULE calibrate
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <span>
#include <stdexcept>
#include <tuple>
#include <vector>

#include <topocoll/model/calibrate.hpp>
#include <topocoll/model/counting.hpp>
#include <topocoll/model/simulate.hpp>

#include "support/harness.hpp"

namespace tc = topocoll;
using tc_test::Check;

BOOST_AUTO_TEST_CASE(calibration_is_the_same_on_every_rank) {
  tc_test::Runner::sweep<tc::Ring>(
      [](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const tc::model::calibration cal = tc::model::calibrate(
              comm, {1u << 15, 5, 1u << 20, {64u << 10, 256u << 10}, 1u << 17});
          const tc::cost_model& cm = cal.cost;
          if (p == 1) {
            check.expect(cal.ping_pong.empty() && cm.ts_us == tc::cost_model{}.ts_us &&
                             cm.tw_us_per_byte == tc::cost_model{}.tw_us_per_byte,
                         "p = 1: the default model, nothing measured");
            return;
          }
          check.expect(cm.ts_us > 0 && cm.tw_us_per_byte > 0 && cm.busy_ts >= 1 &&
                           cm.busy_tw >= 1 && cm.tc_us_per_byte > 0,
                       "rank ", comm.rank(), ": t_s ", cm.ts_us, " t_w ", cm.tw_us_per_byte,
                       " busy ", cm.busy_ts, " ", cm.busy_tw, " t_c ", cm.tc_us_per_byte);
          check.expect(cal.combine_us == cm.tc_us_per_byte * (1u << 15), "rank ", comm.rank(),
                       ": combine of 32 KiB ", cal.combine_us, " us against t_c ",
                       cm.tc_us_per_byte);
          namespace dc = tc::model::detail_calibrate;
          std::vector<std::size_t> sizes;
          for (const auto& q : cal.ping_pong) {
            sizes.push_back(q.bytes);
            check.expect(q.one_way_us > 0, "ping-pong of ", q.bytes, " B took ", q.one_way_us);
          }
          const std::vector<std::size_t> grid{8,    16,   32,   64,   128,   256,  512,
                                              1024, 2048, 4096, 8192, 16384, 32768};
          check.equal(sizes, grid, "ping-pong sizes");
          sizes.clear();
          for (const auto& q : cal.shift) {
            sizes.push_back(q.bytes);
            check.expect(q.one_way_us > 0, "ring shift of ", q.bytes, " B took ", q.one_way_us);
          }
          check.equal(sizes, grid, "ring shift sizes");
          sizes.clear();
          for (const auto& q : cal.pairs) {
            sizes.push_back(q.bytes);
            check.expect(q.one_way_us > 0, "every pair's ping-pong of ", q.bytes, " B took ",
                         q.one_way_us);
          }
          check.equal(sizes, grid, "every pair's ping-pong sizes");
          sizes.clear();
          for (const auto& q : cal.lone) {
            sizes.push_back(q.bytes);
            check.expect(q.one_way_us > 0, "lone send of ", q.bytes, " B took ", q.one_way_us);
          }
          check.equal(sizes, grid, "lone send sizes");
          tc::cost_model posted = cm;
          dc::posted_figures(posted, cal.ping_pong, cal.lone);
          check.expect(cm.posted_bytes == posted.posted_bytes && cm.posted_us == posted.posted_us,
                       "rank ", comm.rank(), ": posted ", cm.posted_us, " us up to ",
                       cm.posted_bytes, " B are not the lone sends' figures");
          sizes.clear();
          for (const auto& f : cal.folds) {
            sizes.push_back(f.bytes);
            check.expect(f.us > 0 && f.combine_us > 0, "fold of ", f.bytes, " B took ", f.us,
                         " us, with its combines ", f.combine_us);
          }
          check.equal(sizes, std::vector<std::size_t>{1u << 15, 1u << 17}, "fold sizes");
          check.expect(
              cm.busy_tc >= 1 && cm.busy_tc == dc::busy_factor(cal.folds[0], cm) &&
                  cm.busy_tc_large >= 1 && cm.busy_tc_large == dc::busy_factor(cal.folds[1], cm) &&
                  cm.tc_large_us_per_byte > 0 && cm.combine_bytes == 1u << 15 &&
                  cm.combine_large_bytes == 1u << 17,
              "rank ", comm.rank(), ": busy_tc ", cm.busy_tc, " at ", cm.combine_bytes, " B and ",
              cm.busy_tc_large, " at ", cm.combine_large_bytes, " B are not the folds' figures");
          check.expect(cal.large_messages.size() == 1 && cal.large_messages[0].bytes == 1u << 17 &&
                           cal.large_messages[0].one_way_us > 0 &&
                           cal.large_messages[0].pairs_us > 0 && cal.large_messages[0].shift_us > 0,
                       "rank ", comm.rank(), ": ", cal.large_messages.size(),
                       " large message times, not one of 128 KiB");
          tc::cost_model large = cm;
          if (!cal.large_messages.empty()) dc::large_message_figures(large, cal.large_messages[0]);
          check.expect(cm.tw_large_us_per_byte > 0 && cm.busy_tw_large >= 1 &&
                           cm.duplex_tw_large >= 1 &&
                           cm.tw_large_us_per_byte == large.tw_large_us_per_byte &&
                           cm.busy_tw_large == large.busy_tw_large &&
                           cm.duplex_tw_large == large.duplex_tw_large,
                       "rank ", comm.rank(), ": large t_w ", cm.tw_large_us_per_byte, ", busy_tw ",
                       cm.busy_tw_large, ", duplex_tw ", cm.duplex_tw_large,
                       " are not the large messages' figures");
          check.expect(cm.duplex_ts >= 1 && cm.duplex_tw >= 1 && cm.duplex_ts_short >= 1 &&
                           cm.short_bytes < 32768,
                       "rank ", comm.rank(), ": duplex ", cm.duplex_ts, " ", cm.duplex_tw,
                       ", short_bytes ", cm.short_bytes, " at ", cm.duplex_ts_short);
          sizes.clear();
          for (const auto& q : cal.segments) {
            sizes.push_back(q.segment_bytes);
            check.expect(q.us > 0, "reduce in segments of ", q.segment_bytes, " B took ", q.us);
          }
          check.equal(sizes, std::vector<std::size_t>{0, 64u << 10, 256u << 10},
                      "segment sizes tried");
          check.expect(
              cm.segment_bytes == tc::model::detail_calibrate::fastest_segment(cal.segments),
              "rank ", comm.rank(), ": segment_bytes ", cm.segment_bytes,
              " is not the fastest of the times");
          const bool probed = p > 2;  // a chain of two has no segments to probe
          for (const auto& [what, probes, floor] :
               {std::tuple{"segment_floor", &cal.segment_floors, cm.segment_floor},
                std::tuple{"piece_floor", &cal.piece_floors, cm.piece_floor}}) {
            check.expect(probes->size() == (probed ? 3u : 0u) &&
                             floor == (probed ? dc::fastest_floor(*probes) : 50.0),
                         "rank ", comm.rank(), ": ", what, " ", floor, " from ", probes->size(),
                         " probes");
            for (const auto& f : *probes)
              check.expect(f.us > 0, what, " probe at ", f.floor, " took ", f.us);
          }
          const std::vector<double> mine{cm.ts_us,
                                         cm.tw_us_per_byte,
                                         cm.busy_ts,
                                         cm.busy_tw,
                                         cm.tc_us_per_byte,
                                         static_cast<double>(cm.segment_bytes),
                                         cm.duplex_ts,
                                         cm.duplex_tw,
                                         static_cast<double>(cm.short_bytes),
                                         cm.duplex_ts_short,
                                         cm.busy_tc,
                                         cm.busy_tc_large,
                                         static_cast<double>(cm.combine_bytes),
                                         static_cast<double>(cm.combine_large_bytes),
                                         cm.tw_large_us_per_byte,
                                         cm.busy_tw_large,
                                         cm.duplex_tw_large,
                                         static_cast<double>(cm.posted_bytes),
                                         cm.posted_us,
                                         cm.segment_floor,
                                         cm.piece_floor};
          const std::size_t n = mine.size();
          std::vector<double> all(n * static_cast<std::size_t>(p));
          tc::all_gather<tc::Ring>(comm, std::span<const double>(mine), std::span<double>(all));
          for (std::size_t r = 0; r < static_cast<std::size_t>(p); ++r)
            check.equal(std::vector<double>(all.begin() + n * r, all.begin() + n * (r + 1)), mine,
                        "rank ", r, "'s model against rank ", comm.rank(), "'s");
        });
      },
      {1, 2, 3, 4});
}

// segment_floor and piece_floor: the first candidate unless a later one with
// another schedule beats the best so far by more than 3 %.
BOOST_AUTO_TEST_CASE(a_floor_is_the_first_unless_another_schedule_is_3_percent_faster) {
  using fl = tc::model::calibration::floor_time;
  const auto pick = [](std::vector<fl> v) { return tc::model::detail_calibrate::fastest_floor(v); };
  BOOST_TEST(pick({{50, 100.0, 4}, {10, 98.0, 20}, {0, 99.0, 54}}) == 50.0);  // within 3 %
  BOOST_TEST(pick({{50, 100.0, 4}, {10, 90.0, 20}, {0, 89.0, 54}}) == 10.0);  // 0 within 3 % of 10
  BOOST_TEST(pick({{50, 100.0, 4}, {10, 90.0, 20}, {0, 80.0, 54}}) == 0.0);
  BOOST_TEST(pick({{50, 100.0, 4}, {10, 120.0, 20}, {0, 96.0, 54}}) == 0.0);
  BOOST_TEST(pick({{50, 100.0, 0}, {10, 80.0, 0}, {0, 70.0, 0}}) == 50.0);  // one schedule: noise
  BOOST_TEST(pick({{50, 100.0, 0}, {10, 80.0, 1}, {0, 70.0, 1}}) == 10.0);  // its largest floor
  BOOST_TEST(pick({}) == tc::cost_model{}.segment_floor);
}

// segment_bytes: the candidate that beat the whole partials by more than 3 %.
BOOST_AUTO_TEST_CASE(the_segment_size_is_the_fastest_that_beats_whole_partials_by_3_percent) {
  using seg = tc::model::calibration::segment_time;
  const auto pick = [](std::vector<seg> v) {
    return tc::model::detail_calibrate::fastest_segment(v);
  };
  BOOST_TEST(pick({{0, 100.0}, {1, 90.0}, {2, 95.0}}) == 1u);
  BOOST_TEST(pick({{0, 100.0}, {1, 95.0}, {2, 90.0}}) == 2u);
  BOOST_TEST(pick({{0, 100.0}, {1, 98.0}, {2, 99.0}}) == 0u);  // within 3 %: whole
  BOOST_TEST(pick({{0, 100.0}, {1, 120.0}, {2, 101.0}}) == 0u);
  BOOST_TEST(pick({}) == 0u);  // nothing measured (segment_probe_bytes = 0)
}

BOOST_AUTO_TEST_CASE(the_fit_recovers_a_line_and_weighs_sizes_alike) {
  std::vector<tc::model::calibration::point> pts;
  for (std::size_t n = 8; n <= (1u << 20); n *= 4)
    pts.push_back({n, 3.0 + 0.01 * static_cast<double>(n)});
  const tc::cost_model cm = tc::model::detail_calibrate::fit(pts);
  BOOST_TEST(cm.ts_us == 3.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(cm.tw_us_per_byte == 0.01, boost::test_tools::tolerance(1e-9));
  // a 10 % error at one size moves t_s by a part in ten, not by the size's weight
  pts.back().one_way_us *= 1.1;
  BOOST_TEST(tc::model::detail_calibrate::fit(pts).ts_us < 3.5);
}

// The busy and duplex figures: every pair's one way over the lone pair's
// line, and the ring shift over every pair's one way, where a jump in that
// ratio makes the sizes before it short and the rest are fitted; without a
// jump every size is fitted.
BOOST_AUTO_TEST_CASE(the_duplex_figures_find_the_short_messages_and_fit_the_rest) {
  using pt = tc::model::calibration::point;
  std::vector<pt> one_way, pairs, stepped, flat;
  for (std::size_t n = 8; n <= (1u << 20); n *= 2) {
    const double x = static_cast<double>(n), t = 5.0 + 1e-4 * x;
    one_way.push_back({n, t});
    pairs.push_back({n, 1.1 * t});
    stepped.push_back({n, n <= 256 ? 1.2 * 1.1 * t : 12.0 + 3e-4 * x});
    flat.push_back({n, 1.3 * 1.1 * t});
  }
  const auto model = [&](const std::vector<pt>& shift) {
    tc::cost_model cm = tc::model::detail_calibrate::fit(one_way);
    tc::model::detail_calibrate::busy_figures(cm, pairs, shift);
    return cm;
  };
  const auto tol = boost::test_tools::tolerance(1e-6);
  const tc::cost_model s = model(stepped);
  BOOST_TEST(s.busy_ts == 1.1, tol);
  BOOST_TEST(s.busy_tw == 1.1, tol);
  BOOST_TEST(s.short_bytes == 256u);
  BOOST_TEST(s.duplex_ts_short == 1.2, tol);
  BOOST_TEST(s.duplex_ts == 12.0 / 5.5, tol);
  BOOST_TEST(s.duplex_tw == 3e-4 / 1.1e-4, tol);
  BOOST_TEST(s.busy_message(256) == 1.2 * 1.1 * 5.0 + 3e-4 * 256, tol);
  BOOST_TEST(s.busy_message(512) == 12.0 + 3e-4 * 512, tol);
  BOOST_TEST(s.message(512, 4, 4) == 1.1 * (5.0 + 1e-4 * 512), tol);  // a tree's busy step
  const tc::cost_model f = model(flat);
  BOOST_TEST(f.short_bytes == 0u);
  BOOST_TEST(f.duplex_ts == 1.3, tol);
  BOOST_TEST(f.duplex_tw == 1.3, tol);
  // A first two sizes slow to warm up in the pairs (their ratio half), and
  // one slow shift at 64 B, leave the short sizes where they are.
  std::vector<pt> noisy_shift = stepped;
  pairs[0].one_way_us *= 2, pairs[1].one_way_us *= 2;
  noisy_shift[3].one_way_us *= 2;
  const tc::cost_model w = model(noisy_shift);
  BOOST_TEST(w.short_bytes == 256u);
  BOOST_TEST(w.duplex_ts * w.busy_ts == s.duplex_ts * s.busy_ts, tol);  // the same fit of 512 B up
}

// The posted figures: the sizes from 8 B whose lone send took less than half
// the ping-pong's one way, up to two sizes in a row that did not; one slow
// send among them (64 B) leaves them posted. Where every size is posted, or
// none, there is no posted class.
BOOST_AUTO_TEST_CASE(the_posted_figures_are_the_sends_that_left_before_their_receiver) {
  using pt = tc::model::calibration::point;
  std::vector<pt> ping_pong, lone, fast, slow;
  for (std::size_t n = 8; n <= (1u << 20); n *= 2) {
    const double t = 6.0 + 1e-4 * static_cast<double>(n);
    ping_pong.push_back({n, t});
    lone.push_back({n, n <= 256 ? 0.1 + 1e-3 * static_cast<double>(n) : 2.0 * t});
    fast.push_back({n, 0.2 * t});
    slow.push_back({n, 0.9 * t});
  }
  lone[3].one_way_us = 5.0;  // 64 B
  const auto model = [&](const std::vector<pt>& sends) {
    tc::cost_model cm;
    tc::model::detail_calibrate::posted_figures(cm, ping_pong, sends);
    return cm;
  };
  const tc::cost_model s = model(lone);
  BOOST_TEST(s.posted_bytes == 256u);
  BOOST_TEST(s.posted_us == 0.1 + 0.128, boost::test_tools::tolerance(1e-9));  // of 6: 128 B
  BOOST_TEST(s.posted(256));
  BOOST_TEST(!s.posted(257));
  BOOST_TEST(!s.posted(0));
  BOOST_TEST(model(fast).posted_bytes == 0u);
  BOOST_TEST(model(slow).posted_bytes == 0u);
  BOOST_TEST(!tc::cost_model{}.posted(8));
}

// A Ring of 4 with t_s = 6 us and messages up to 256 B posted at 0.1 us. The
// tree scatter's first message carries two blocks. Blocks of 256 B: that
// 512 B message is not posted (6.0 + 0.1 us against the pipeline's 3 x 0.1):
// the pipeline. Blocks of 64 B: every message is posted, the tree's 2 against
// the pipeline's 3: the tree. Blocks of 1 KiB, or no posting: the tree.
// Gather alike. The pipeline's results are right, from any root.
BOOST_AUTO_TEST_CASE(posted_messages_move_a_ring_scatter_and_gather_to_the_pipeline) {
  namespace sim = tc::model;
  using algos = std::vector<tc::algorithm>;
  const tc::cost_model posting{.ts_us = 6.0, .posted_bytes = 256, .posted_us = 0.1};
  const auto takes = [](sim::collective k, std::size_t m, const tc::cost_model& cm) {
    return sim::automatic_takes<tc::Ring>(k, 4, m, {tc::algorithm::automatic, cm});
  };
  for (const sim::collective k : {sim::collective::scatter, sim::collective::gather}) {
    BOOST_TEST((takes(k, 32, posting) == algos{tc::algorithm::pipelined}));
    BOOST_TEST((takes(k, 8, posting) == algos{tc::algorithm::tree}));
    BOOST_TEST((takes(k, 128, posting) == algos{tc::algorithm::tree}));
    BOOST_TEST((takes(k, 32, tc::cost_model{.ts_us = 6.0}) == algos{tc::algorithm::tree}));
  }
  const std::size_t m = 32;
  for (int root = 0; root < 4; ++root) {
    std::atomic<std::size_t> sends{0};
    tc::loopback::run(4, [&](tc::loopback::Comm& c) {
      tc::model::Counting cc(c);
      const tc::options o{tc::algorithm::automatic, posting};
      std::vector<double> all(4 * m), mine(m);
      if (c.rank() == root)
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<double>(i);
      tc::scatter<tc::Ring>(cc, std::span<const double>(all), std::span<double>(mine), root, o);
      for (std::size_t i = 0; i < m; ++i)
        if (mine[i] != static_cast<double>(static_cast<std::size_t>(c.rank()) * m + i))
          throw std::runtime_error("wrong scatter");
      std::vector<double> back(c.rank() == root ? 4 * m : 0);
      tc::gather<tc::Ring>(cc, std::span<const double>(mine), std::span<double>(back), root, o);
      for (std::size_t i = 0; i < back.size(); ++i)
        if (back[i] != static_cast<double>(i)) throw std::runtime_error("wrong gather");
      sends += cc.sends();
    });
    BOOST_TEST(sends.load() == 12u, "root " << root);  // 6 a pipeline, 3 a tree
  }
}

// measure_combine: the time per byte of the operator on the sample's two
// halves, lo[i] op hi[i], over one warm-up pass and `reps` timed ones (no
// timing is compared: the operator counts its calls and checks its operands);
// a sample without two halves costs nothing.
BOOST_AUTO_TEST_CASE(measure_combine_times_the_operator_on_the_two_halves) {
  const std::size_t n = 1000;
  std::vector<double> x(2 * n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i), x[n + i] = -1.0 - x[i];
  std::size_t calls = 0, wrong = 0;
  const auto counting_plus = [&](double a, double b) {
    ++calls;
    if (b != -1.0 - a) ++wrong;
    return a + b;
  };
  const double tc_op = tc::model::measure_combine(counting_plus, std::span<const double>(x), 3);
  BOOST_TEST(tc_op > 0.0);
  BOOST_TEST(calls == 4 * n);
  BOOST_TEST(wrong == 0u);
  calls = 0;
  tc::model::measure_combine(counting_plus, std::span<const double>(x), 0);  // still one timed pass
  BOOST_TEST(calls == 2 * n);
  BOOST_TEST(tc::model::measure_combine(std::plus<>{}, std::span<const double>()) == 0.0);
  BOOST_TEST(tc::model::measure_combine(std::plus<>{}, std::span<const double>(x).first(1)) == 0.0);
}

namespace {
// The root's (rank 0's) sends in one call of f on p loopback ranks.
template <class F>
std::size_t rank0_sends(F f, int p = 4) {
  std::size_t sends = 0;
  tc::loopback::run(p, [&](tc::loopback::Comm& c) {
    tc::model::Counting cc(c);
    f(cc);
    if (c.rank() == 0) sends = cc.sends();
  });
  return sends;
}

// Rank 0's sends in an automatic all_reduce of 512 KiB on Hypercube<> at
// p = 4: 4 in pieces (2 reduce-scatter + 2 all-gather), 2 for the trees (the
// broadcast's).
std::size_t all_reduce_512kib_sends(const tc::cost_model& cm) {
  const std::size_t m = std::size_t{1} << 16;  // doubles
  return rank0_sends([&](auto& c) {
    std::vector<double> in(m, c.rank() + 1.0), out(m);
    tc::all_reduce<tc::Hypercube<>>(c, std::span<const double>(in), std::span<double>(out),
                                    std::plus<>{}, {tc::algorithm::automatic, cm});
    if (out != std::vector<double>(m, 10.0)) throw std::runtime_error("wrong all_reduce");
  });
}
}  // namespace

// Hypercube<> at p = 4, 2 MiB: the pieces (2 scatter + 2 all-gather sends from
// the root) cost 4 t_s + 1.5 t_w m against the tree's 2 t_s + 2 t_w m. With
// busy_tw = 2.5 the tree's second step (every rank active) and all of the
// pieces pay 2.5 t_w: 1469 us against 1577, and the tree wins.
BOOST_AUTO_TEST_CASE(busy_bandwidth_moves_a_large_broadcast_from_the_pieces_to_the_tree) {
  const std::size_t m = std::size_t{1} << 18;  // doubles
  auto bcast = [&](tc::cost_model cm) {
    return rank0_sends([&](auto& c) {
      std::vector<double> v(m, c.rank() == 0 ? 1.0 : 0.0);
      tc::broadcast<tc::Hypercube<>>(c, std::span<double>(v), 0, {tc::algorithm::automatic, cm});
      if (v != std::vector<double>(m, 1.0)) throw std::runtime_error("wrong broadcast");
    });
  };
  BOOST_TEST(bcast(tc::cost_model{}) == 4u);
  BOOST_TEST(bcast(tc::cost_model{.busy_tw = 2.5}) == 2u);
}

// A Ring of 4 at 1 KiB: recursive doubling is 3 exchanges, every rank busy;
// reduce + broadcast is 2 + 2 tree steps, half of them a lone pair. Under the
// seeds' model the fold wins (3.6 us against 4.8); with busy_ts = 4 it costs
// 12.6 us against the trees' 10.8, and rank 0 sends 2 messages (the
// broadcast's) instead of 3. On a Ring of 8 the trees' 6 start-ups beat the
// fold's 7 under the seeds' model already, and without start-ups
// reduce-scatter + all-gather (2 x 7 messages of m / 8) beats both.
BOOST_AUTO_TEST_CASE(busy_start_ups_move_a_small_ring_all_reduce_to_reduce_broadcast) {
  const std::size_t m = 128;
  auto allred = [&](tc::cost_model cm, int p) {
    return rank0_sends(
        [&](auto& c) {
          std::vector<double> in(m, c.rank() + 1.0), out(m);
          tc::all_reduce<tc::Ring>(c, std::span<const double>(in), std::span<double>(out),
                                   std::plus<>{}, {tc::algorithm::automatic, cm});
          if (out != std::vector<double>(m, p * (p + 1) / 2.0))
            throw std::runtime_error("wrong all_reduce");
        },
        p);
  };
  BOOST_TEST(allred(tc::cost_model{}, 4) == 3u);
  BOOST_TEST(allred(tc::cost_model{.busy_ts = 4.0}, 4) == 2u);
  BOOST_TEST(allred(tc::cost_model{}, 8) == 3u);
  BOOST_TEST(allred(tc::cost_model{.ts_us = 0.0}, 8) == 14u);  // the bandwidth-optimal fold
}

// The choices above, made again and again by the same ranks (threads): each
// rank remembers its last choice per decision (core/last_choice.hpp), and a
// new cost model or size must be priced anew, not answered from that memory.
// Ring of 4: 1 KiB under the seeds' model (the fold, 3 sends from rank 0),
// with busy_ts = 4 (the trees, 2), and again; 128 B with duplex_ts = 4 (the
// trees) and with short_bytes = 256 (the fold), then 512 B under that same
// model (long: the trees); all_gather of 128 B blocks
// under the seeds' model (the fold, 3 sends), with duplex_ts = 4 (the tree: the
// broadcast's 2), and again.
BOOST_AUTO_TEST_CASE(a_remembered_choice_follows_the_model_and_the_size) {
  std::vector<std::size_t> sends;
  tc::loopback::run(4, [&](tc::loopback::Comm& c) {
    tc::model::Counting cc(c);
    auto allred = [&](tc::cost_model cm, std::size_t m) {
      const std::size_t before = cc.sends();
      std::vector<double> in(m, c.rank() + 1.0), out(m);
      tc::all_reduce<tc::Ring>(cc, std::span<const double>(in), std::span<double>(out),
                               std::plus<>{}, {tc::algorithm::automatic, cm});
      if (out != std::vector<double>(m, 10.0)) throw std::runtime_error("wrong all_reduce");
      if (c.rank() == 0) sends.push_back(cc.sends() - before);
    };
    for (int round = 0; round < 2; ++round) {
      allred(tc::cost_model{}, 128);
      allred(tc::cost_model{.busy_ts = 4.0}, 128);
    }
    allred(tc::cost_model{.duplex_ts = 4.0}, 16);
    allred(tc::cost_model{.duplex_ts = 4.0, .short_bytes = 256}, 16);
    allred(tc::cost_model{.duplex_ts = 4.0, .short_bytes = 256}, 64);
    for (const double duplex : {1.0, 4.0, 1.0}) {  // all_gather of 16 doubles a rank
      const std::size_t before = cc.sends();
      std::vector<double> in(16, c.rank()), out(64);
      tc::all_gather<tc::Ring>(cc, std::span<const double>(in), std::span<double>(out),
                               {tc::algorithm::automatic, tc::cost_model{.duplex_ts = duplex}});
      for (std::size_t i = 0; i < out.size(); ++i)
        if (out[i] != static_cast<double>(i / 16)) throw std::runtime_error("wrong all_gather");
      if (c.rank() == 0) sends.push_back(cc.sends() - before);
    }
  });
  BOOST_TEST(sends == (std::vector<std::size_t>{3, 2, 3, 2, 2, 3, 2, 3, 2, 3}),
             boost::test_tools::per_element());
}

// Hypercube<> at p = 4, 512 KiB: reduce-scatter + all-gather costs
// 4 t_s + 1.5 t_w m and combines 3/4 m, every rank at once; reduce +
// broadcast 4 t_s + 4 t_w m and 2 m of combines at the root. Under the
// defaults the pieces win (201 us against 528; rank 0 sends 4 messages).
// With busy_tc = 20 a fold's combines cost 20 times the root's: 947 us, and
// the trees win (rank 0 sends the broadcast's 2).
BOOST_AUTO_TEST_CASE(busy_combines_move_a_large_all_reduce_to_reduce_broadcast) {
  BOOST_TEST(all_reduce_512kib_sends(tc::cost_model{}) == 4u);
  BOOST_TEST(all_reduce_512kib_sends(tc::cost_model{.busy_tc = 20.0}) == 2u);
  // busy_tc = 20 up to 128 KiB and 1 from 512 KiB on: the pieces again.
  const tc::cost_model falling{.busy_tc = 20.0,
                               .combine_bytes = 128u << 10,
                               .combine_large_bytes = 512u << 10,
                               .busy_tc_large = 1.0};
  BOOST_TEST(all_reduce_512kib_sends(falling) == 4u);
}

// t_c and busy_tc: their figures up to combine_bytes, the large ones from
// combine_large_bytes on, linear in log2 of the size between; without the
// second size, t_c and busy_tc everywhere.
BOOST_AUTO_TEST_CASE(combine_figures_move_to_the_large_ones_in_log2_of_the_size) {
  const tc::cost_model cm{.tc_us_per_byte = 0.25,
                          .busy_tc = 6.0,
                          .combine_bytes = 1u << 20,
                          .combine_large_bytes = 16u << 20,
                          .tc_large_us_per_byte = 0.75,
                          .busy_tc_large = 2.0};
  BOOST_TEST(cm.busy_tc_at(0) == 6.0);
  BOOST_TEST(cm.tc_at(1u << 20) == 0.25);
  BOOST_TEST(cm.busy_tc_at(1u << 20) == 6.0);
  BOOST_TEST(cm.tc_at(2u << 20) == 0.375);
  BOOST_TEST(cm.busy_tc_at(2u << 20) == 5.0);
  BOOST_TEST(cm.tc_at(4u << 20) == 0.5);
  BOOST_TEST(cm.busy_tc_at(4u << 20) == 4.0);
  BOOST_TEST(cm.busy_tc_at(16u << 20) == 2.0);
  BOOST_TEST(cm.tc_at(std::size_t{1} << 40) == 0.75);
  BOOST_TEST(cm.busy_tc_at(std::size_t{1} << 40) == 2.0);
  BOOST_TEST(cm.combine(4u << 20) == 0.5 * (4u << 20));
  BOOST_TEST(cm.busy_combine(4u << 20) == 4.0 * 0.5 * (4u << 20));
  BOOST_TEST(cm.with_busy_combines(2u << 20).combine(std::size_t{1} << 40) ==
             5.0 * 0.375 * static_cast<double>(std::size_t{1} << 40));
  const tc::cost_model one{.tc_us_per_byte = 0.25, .busy_tc = 6.0};
  BOOST_TEST(one.tc_at(std::size_t{1} << 40) == 0.25);
  BOOST_TEST(one.busy_tc_at(std::size_t{1} << 40) == 6.0);
  BOOST_TEST(one.with_busy_combines(1).busy_tc_at(1) == 1.0);
}

// t_w, busy_tw and duplex_tw move the same way (at 4 MiB half of the way),
// and at_size prices every message of a call at the call's figures. The
// default large figures (0) leave every figure as it is.
BOOST_AUTO_TEST_CASE(message_figures_move_to_the_large_ones_in_log2_of_the_size) {
  const tc::cost_model cm{.ts_us = 0.0,
                          .tw_us_per_byte = 1.0,
                          .busy_tw = 2.0,
                          .duplex_tw = 3.0,
                          .combine_bytes = 1u << 20,
                          .combine_large_bytes = 16u << 20,
                          .tw_large_us_per_byte = 3.0,
                          .busy_tw_large = 4.0,
                          .duplex_tw_large = 1.0};
  const std::size_t mib4 = 4u << 20;
  BOOST_TEST(cm.tw_at(1u << 20) == 1.0);
  BOOST_TEST(cm.tw_at(mib4) == 2.0);
  BOOST_TEST(cm.busy_tw_at(mib4) == 3.0);
  BOOST_TEST(cm.duplex_tw_at(mib4) == 2.0);
  BOOST_TEST(cm.tw_at(std::size_t{1} << 40) == 3.0);
  BOOST_TEST(cm.message(mib4) == 1.0 * mib4);
  const tc::cost_model at = cm.at_size(mib4);
  BOOST_TEST(at.message(1024) == 2.0 * 1024);
  BOOST_TEST(at.message(1024, 4, 4) == 2.0 * 3.0 * 1024);
  BOOST_TEST(at.busy_message(1024) == 2.0 * 3.0 * 2.0 * 1024);
  BOOST_TEST(at.tw_at(std::size_t{1} << 40) == 2.0);
  BOOST_TEST(cm.at_size(16u << 20).busy_message(1024) == 3.0 * 4.0 * 1.0 * 1024);
  const tc::cost_model flat{.ts_us = 0.0, .tw_us_per_byte = 1.0, .busy_tw = 2.0, .duplex_tw = 3.0};
  BOOST_TEST(flat.tw_at(std::size_t{1} << 40) == 1.0);
  BOOST_TEST(flat.busy_tw_at(std::size_t{1} << 40) == 2.0);
  BOOST_TEST(flat.duplex_tw_at(std::size_t{1} << 40) == 3.0);
  BOOST_TEST(flat.at_size(std::size_t{1} << 40).busy_message(1024) == 6.0 * 1024);
}

// The Hypercube<> all_reduce of 512 KiB above with busy_tc = 20, where t_w
// grows 5 times from 128 KiB to 512 KiB (the combine figures unchanged): the
// trees' 4 t_w m now cost more than the pieces' 1.5 t_w m and their busy
// combines (2206 us against 1577), and the pieces win again.
BOOST_AUTO_TEST_CASE(large_messages_move_a_large_all_reduce_back_to_the_pieces) {
  BOOST_TEST(all_reduce_512kib_sends(tc::cost_model{.busy_tc = 20.0}) == 2u);
  BOOST_TEST(all_reduce_512kib_sends(tc::cost_model{.busy_tc = 20.0,
                                                    .combine_bytes = 128u << 10,
                                                    .combine_large_bytes = 512u << 10,
                                                    .busy_tc_large = 20.0,
                                                    .tw_large_us_per_byte = 1e-3}) == 4u);
}

// The same Ring of 4 with duplex_ts = 4: an exchange of every rank costs 4 t_s,
// a tree's step t_s. 16 doubles (128 B): the fold's 3 exchanges cost 12.1 us,
// the trees' 4 steps 4.1, and rank 0 sends 2 messages. With short_bytes = 256
// the 128 B exchanges are short (duplex_ts_short 1): the fold costs 3.1 us and
// stays (3 sends). 64 doubles (512 B) are long either way: the trees.
BOOST_AUTO_TEST_CASE(short_messages_keep_their_own_duplex_start_up) {
  auto allred = [&](tc::cost_model cm, std::size_t m) {
    return rank0_sends([&](auto& c) {
      std::vector<double> in(m, c.rank() + 1.0), out(m);
      tc::all_reduce<tc::Ring>(c, std::span<const double>(in), std::span<double>(out),
                               std::plus<>{}, {tc::algorithm::automatic, cm});
      if (out != std::vector<double>(m, 10.0)) throw std::runtime_error("wrong all_reduce");
    });
  };
  BOOST_TEST(allred(tc::cost_model{.duplex_ts = 4.0}, 16) == 2u);
  BOOST_TEST(allred(tc::cost_model{.duplex_ts = 4.0, .short_bytes = 256}, 16) == 3u);
  BOOST_TEST(allred(tc::cost_model{.duplex_ts = 4.0}, 64) == 2u);
  BOOST_TEST(allred(tc::cost_model{.duplex_ts = 4.0, .short_bytes = 256}, 64) == 2u);
}

// 2 ranks, 512 KiB of doubles: recursive doubling is one exchange of m and one
// combine of m, reduce-scatter + all-gather two exchanges of m / 2 and one
// combine of m / 2. With t_c = 0 (the seeds' model) one message wins by a
// start-up; at the default t_c = 1e-4 us/B the half combine saves 26 us
// against 1 us, and rank 0 sends 2 messages. Below 2 t_s / t_c = 20 KB, one.
BOOST_AUTO_TEST_CASE(the_operators_cost_moves_a_large_two_rank_all_reduce_to_the_pieces) {
  auto allred = [&](tc::cost_model cm, std::size_t m) {
    return rank0_sends(
        [&](auto& c) {
          std::vector<double> in(m, c.rank() + 1.0), out(m);
          tc::all_reduce<tc::Hypercube<>>(c, std::span<const double>(in), std::span<double>(out),
                                          std::plus<>{}, {tc::algorithm::automatic, cm});
          if (out != std::vector<double>(m, 3.0)) throw std::runtime_error("wrong all_reduce");
        },
        2);
  };
  BOOST_TEST(allred(tc::cost_model{.tc_us_per_byte = 0.0}, 1u << 16) == 1u);
  BOOST_TEST(allred(tc::cost_model{}, 1u << 16) == 2u);
  BOOST_TEST(allred(tc::cost_model{}, 2048) == 1u);  // 16 KiB
}
