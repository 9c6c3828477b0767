#pragma once
// model::calibrate(c): the cost model of the transport at hand, measured.
//
//   mpi::Comm c{boost::mpi::communicator{}};
//   const model::calibration cal = model::calibrate(c);   // every rank calls it
//   all_reduce<Ring>(c, in, out, std::plus<>{}, options{.cost = cal.cost});
//
// It times ping-pongs, every rank's exchange at once, the operator's combine,
// a segmented reduce and a pipelined broadcast, each the median of `reps` repetitions, and fits
// core/options.hpp's cost_model to them. It is a collective call; on one rank
// it returns the default model. The fit needs a transport that moves bytes.
// doc/model.md, "Calibration", lists each measurement and the fit.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "../collectives/all_reduce.hpp"
#include "../collectives/broadcast.hpp"
#include "../collectives/reduce.hpp"
#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../plan/one_to_all_pieces.hpp"
#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

struct calibration_settings {
  std::size_t max_bytes = 1u << 20;             // the largest ping-pong and shift
  int reps = 15;                                // timed repetitions per figure (median)
  std::size_t segment_probe_bytes = 16u << 20;  // the reduce that picks segment_bytes (0: none)
  std::array<std::size_t, 2> segment_candidates{1u << 20, 2u << 20};
  std::size_t combine_large_bytes = 16u << 20;  // the large figures' size: t_c, busy_tc, t_w,
                                                // busy_tw, duplex_tw (not above max_bytes:
                                                // none)
  std::size_t floor_probe_bytes = 1u << 20;     // the broadcasts that pick segment_floor and
                                                // piece_floor (0: none)
  std::array<double, 3> floor_candidates{50.0, 10.0, 0.0};  // the first is kept unless beaten
};

struct calibration {
  cost_model cost;  // every figure of the model
  struct point {
    std::size_t bytes;
    double one_way_us;
  };
  std::vector<point> ping_pong;  // ranks 0 and 1's one way: t_s and t_w's
  std::vector<point> pairs;      // every pair's one way at once: busy_ts and busy_tw's
  std::vector<point> shift;      // the ring shift: the duplex figures'
  std::vector<point> lone;       // rank 0's lone send to rank 1: the posted figures'
  double combine_us = 0;         // t_c max_bytes: std::plus on doubles, every rank at once
  struct fold_time {
    std::size_t bytes;
    double us;          // two ring shifts of `bytes`, every rank at once
    double combine_us;  // the same, each shift followed by its combine
  };
  std::vector<fold_time> folds;  // max_bytes (busy_tc's), combine_large_bytes (busy_tc_large's)
  struct message_time {
    std::size_t bytes;
    double one_way_us;  // ranks 0 and 1's one way
    double pairs_us;    // every pair's one way at once
    double shift_us;    // the ring shift
  };
  std::vector<message_time> large_messages;  // combine_large_bytes: the large t_w figures
  struct segment_time {
    std::size_t segment_bytes;  // 0: the partials whole
    double us;                  // the reduce of segment_probe_bytes, slowest rank
  };
  std::vector<segment_time> segments;  // what segment_bytes was picked from
  struct floor_time {
    double floor;          // the candidate
    double us;             // the broadcast of floor_probe_bytes, slowest rank
    std::size_t schedule;  // what the candidate changes: the pipeline's segment count, or
                           // whether the automatic broadcast goes in pieces (1) or not (0)
  };
  std::vector<floor_time> segment_floors;  // the Ring's pipelined broadcast (none on p < 3)
  std::vector<floor_time> piece_floors;    // Hypercube<>'s automatic broadcast (none on p < 3)
};

// The time per byte of dst[i] = op(lo[i], hi[i]) with lo and hi the two
// halves of `sample`, per byte of a half, the median of `reps` passes after
// one to warm up: a cost_model's tc_us_per_byte for op. Local; call it on
// every rank and pass the same figure to all of them (automatic choices must
// agree).
template <class T, class Op>
double measure_combine(const Op& op, std::span<const T> sample, int reps = 15) {
  using clock = std::chrono::steady_clock;
  const std::size_t n = sample.size() / 2;
  if (n == 0) return 0.0;
  std::vector<T> dst(n);
  std::vector<double> t;
  for (int i = -1; i < std::max(reps, 1); ++i) {
    const auto t0 = clock::now();
    topocoll::detail::combine_into(std::span<T>(dst), sample.first(n), sample.subspan(n, n), op);
    const double us = std::chrono::duration<double, std::micro>(clock::now() - t0).count();
    if (i >= 0) t.push_back(us);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] / static_cast<double>(n * sizeof(T));
}

namespace detail_calibrate {

using clock = std::chrono::steady_clock;
constexpr int tag = topocoll::detail::tag::calibrate;

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Every rank leaves after every rank has entered (an all_reduce of one byte).
template <Transport C>
void barrier(C& c) {
  const std::array<unsigned char, 1> in{1};
  std::array<unsigned char, 1> out{};
  all_reduce<Tree<2>>(c, std::span<const unsigned char>(in), std::span<unsigned char>(out),
                      std::plus<>{});
}

// Back-to-back calls per timed repetition: enough that the ranks' skew on
// leaving the barrier (tens of microseconds where ranks share cores) does not
// count, as in the OSU micro-benchmarks.
inline int batch(std::size_t n) {
  return static_cast<int>(
      std::clamp<std::size_t>((std::size_t{256} << 10) / std::max<std::size_t>(n, 1), 1, 64));
}

// The largest of the ranks' `mine`, on every rank.
template <Transport C>
double slowest(C& c, double mine) {
  const std::array<double, 1> in{mine};
  std::array<double, 1> out{};
  all_reduce<Tree<2>>(c, std::span<const double>(in), std::span<double>(out), ops::max{});
  return out[0];
}

inline double us_since(clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(clock::now() - t0).count();
}

// The slowest rank's time since t0 divided by k, on every rank.
template <Transport C>
double slowest_since(C& c, clock::time_point t0, int k) {
  return slowest(c, us_since(t0) / k);
}

// One-way time of n bytes between the pairs (2i, 2i + 1), i < pairs, at once,
// the others idle (a batch of round trips / 2 per repetition): the slowest
// rank's, median over reps, on every rank. Each rank sends from one half of
// buf and receives into the other, as the OSU latency test does.
template <Transport C>
double ping_pong(C& c, std::vector<unsigned char>& buf, std::size_t n, int pairs, int reps) {
  const int r = c.rank(), partner = r ^ 1, k = batch(n);
  const bool in = r < 2 * pairs && partner < c.size();
  const std::span<const unsigned char> out(buf.data(), n);
  const std::span<unsigned char> back(buf.data() + n, n);
  std::vector<double> t;
  for (int i = -1; i < reps; ++i) {  // i = -1 warms up
    barrier(c);
    const auto t0 = clock::now();
    for (int j = 0; in && j < k; ++j) {
      if (r % 2 == 0) c.send(partner, tag, out);
      c.recv(partner, tag, back);
      if (r % 2 == 1) c.send(partner, tag, out);
    }
    const double us = slowest_since(c, t0, 2 * k);
    if (i >= 0) t.push_back(us);
  }
  return median(t);
}

// The time rank 0 takes to send a lone message of n bytes to rank 1 that
// nobody answers, the others idle, one per repetition: median over reps, on
// every rank. No batch: the next message of a batch would find its receiver
// running.
template <Transport C>
double lone_send(C& c, std::vector<unsigned char>& buf, std::size_t n, int reps) {
  const int r = c.rank();
  std::vector<double> t;
  for (int i = -1; i < reps; ++i) {
    barrier(c);
    const auto t0 = clock::now();
    if (r == 0) c.send(1, tag, std::span<const unsigned char>(buf.data(), n));
    const double us = r == 0 ? us_since(t0) : 0.0;
    if (r == 1) c.recv(0, tag, std::span<unsigned char>(buf.data() + n, n));
    const double sender = slowest(c, us);
    if (i >= 0) t.push_back(sender);
  }
  return median(t);
}

// A ring shift of n bytes, every rank sending to rank + 1 and receiving from
// rank - 1 at once: the slowest rank's time per shift, median over reps, on
// every rank.
template <Transport C>
double shift(C& c, std::vector<unsigned char>& buf, std::size_t n, int reps) {
  const int r = c.rank(), p = c.size(), k = batch(n);
  std::vector<double> t;
  for (int i = -1; i < reps; ++i) {
    barrier(c);
    const auto t0 = clock::now();
    for (int j = 0; j < k; ++j)
      c.sendrecv((r + 1) % p, std::span<const unsigned char>(buf.data(), n), (r + p - 1) % p,
                 std::span<unsigned char>(buf.data() + n, n), tag);
    const double us = slowest_since(c, t0, k);
    if (i >= 0) t.push_back(us);
  }
  return median(t);
}

// Two steps of a fold of n bytes of doubles, every rank at once: the ring
// shift, and the ring shift followed by the combine of what arrived into an
// accumulator, in turn in every repetition. The slowest rank's median time
// of each, on every rank: alone, and with the combines.
template <Transport C>
calibration::fold_time fold_steps(C& c, std::size_t n, int reps) {
  const int r = c.rank(), p = c.size();
  const std::size_t m = n / sizeof(double);
  const std::vector<double> mine(m, 1.0);
  std::vector<double> got(m), acc(m);
  std::array<std::vector<double>, 2> t;
  for (int i = -1; i < reps; ++i) {
    for (int with = 0; with < 2; ++with) {
      barrier(c);
      const auto t0 = clock::now();
      std::span<const double> send(mine);
      for (int step = 0; step < 2; ++step) {
        c.sendrecv((r + 1) % p, send, (r + p - 1) % p, std::span<double>(got), tag);
        if (!with) continue;
        topocoll::detail::combine_into(std::span<double>(acc), send, std::span<const double>(got),
                                       std::plus<>{});
        send = acc;
      }
      const double us = slowest_since(c, t0, 1);
      if (i >= 0) t[with].push_back(us);
    }
  }
  return {n, median(t[0]), median(t[1])};
}

// A Tree<2> reduce of s.segment_probe_bytes of doubles to rank 0, its partials
// whole and in segments of each candidate size, the variants in turn in every
// repetition (so that a drift in the machine's speed reaches all alike): the
// slowest rank's median time of each, on every rank. [0] is whole.
template <Transport C>
std::vector<calibration::segment_time> reduce_segments(C& c, const calibration_settings& s) {
  const std::vector<double> in(s.segment_probe_bytes / sizeof(double), 1.0);
  std::vector<double> out(in.size());
  std::vector<calibration::segment_time> v{{0, 0.0}};
  for (std::size_t bytes : s.segment_candidates) v.push_back({bytes, 0.0});
  std::vector<std::vector<double>> t(v.size());
  for (int i = -1; i < s.reps; ++i) {
    for (std::size_t k = 0; k < v.size(); ++k) {
      options o{algorithm::tree};
      o.cost.segment_bytes = v[k].segment_bytes;
      barrier(c);
      const auto t0 = clock::now();
      reduce<Tree<2>>(c, std::span<const double>(in), std::span<double>(out), std::plus<>{}, 0, o);
      const double us = slowest_since(c, t0, 1);
      if (i >= 0) t[k].push_back(us);
    }
  }
  for (std::size_t k = 0; k < v.size(); ++k) v[k].us = median(t[k]);
  return v;
}

// The candidate that beat the whole partials ([0]) by more than 3 %, the
// fastest if several did; 0 if none.
inline std::size_t fastest_segment(const std::vector<calibration::segment_time>& v) {
  std::size_t best = 0;
  double best_us = v.empty() ? 0.0 : v[0].us / 1.03;
  for (std::size_t k = 1; k < v.size(); ++k)
    if (v[k].us < best_us) best = v[k].segment_bytes, best_us = v[k].us;
  return best;
}

// A broadcast of s.floor_probe_bytes of doubles from rank 0 under `cost` with
// each candidate for the figure `floor` (segment_floor: the Ring's pipeline;
// piece_floor: Hypercube<>'s automatic choice between the tree and the
// pieces), the variants in turn in every repetition: the slowest rank's
// median time of each, on every rank. Where ranks share cores the segments
// of ICS 632's optimum cost far more than their start-ups; where each rank
// has a core of its own they may pay.
template <Transport C>
std::vector<calibration::floor_time> floor_times(C& c, const calibration_settings& s,
                                                 const cost_model& cost,
                                                 double cost_model::*floor) {
  std::vector<double> buf(s.floor_probe_bytes / sizeof(double), 1.0);
  const bool pipeline = floor == &cost_model::segment_floor;
  std::vector<calibration::floor_time> v;
  for (double f : s.floor_candidates) {
    cost_model m = cost;
    m.*floor = f;
    v.push_back({f, 0.0,
                 pipeline
                     ? topocoll::detail::pipeline::ring_segments<double>(buf.size(), c.size(), m)
                     : topocoll::detail::plan::one_to_all_pieces::pieces_win<Hypercube<>, double>(
                           Hypercube<>::shape(c.size()), buf.size(), 0,
                           topocoll::detail::all_to_all_broadcast::rs_messages::one, m)});
  }
  std::vector<std::vector<double>> t(v.size());
  for (int i = -1; i < s.reps; ++i) {
    for (std::size_t k = 0; k < v.size(); ++k) {
      options o{pipeline ? algorithm::pipelined : algorithm::automatic, cost};
      o.cost.*floor = v[k].floor;
      barrier(c);
      const auto t0 = clock::now();
      if (pipeline)
        broadcast<Ring>(c, std::span<double>(buf), 0, o);
      else
        broadcast<Hypercube<>>(c, std::span<double>(buf), 0, o);
      const double us = slowest_since(c, t0, 1);
      if (i >= 0) t[k].push_back(us);
    }
  }
  for (std::size_t k = 0; k < v.size(); ++k) v[k].us = median(t[k]);
  return v;
}

// The first candidate (the default floor) unless a later one with another
// schedule beat the best so far by more than 3 %. Candidates of one schedule
// run the same messages, and their differences are noise: the largest floor
// of the schedule picked is kept.
inline double fastest_floor(const std::vector<calibration::floor_time>& v) {
  if (v.empty()) return cost_model{}.segment_floor;
  std::size_t best = 0;
  for (std::size_t k = 1; k < v.size(); ++k)
    if (v[k].schedule != v[best].schedule && v[k].us < v[best].us / 1.03) best = k;
  return v[best].floor;
}

// t_s + t_w n fitted to the points, minimizing the squared relative error:
// the weighted normal equations of y_i ~ t_s + t_w n_i with weights 1 / y_i^2.
inline cost_model fit(const std::vector<calibration::point>& pts) {
  double s = 0, sn = 0, snn = 0, sy = 0, sny = 0;
  for (const auto& q : pts) {
    const double w = 1.0 / std::max(q.one_way_us * q.one_way_us, 1e-12);
    const double n = static_cast<double>(q.bytes);
    s += w, sn += w * n, snn += w * n * n, sy += w * q.one_way_us, sny += w * n * q.one_way_us;
  }
  const double det = s * snn - sn * sn;
  cost_model cm;
  if (det <= 0) return cm;
  cm.tw_us_per_byte = std::max((s * sny - sn * sy) / det, 1e-9);
  cm.ts_us = std::max((sy - cm.tw_us_per_byte * sn) / s, 1e-3);
  return cm;
}

// t_c on a sample of max_bytes and on one of combine_large_bytes (0 where
// that is not larger), every rank at once, and the folds of the same sizes.
template <Transport C>
std::array<double, 2> combine_figures(C& c, const calibration_settings& s,
                                      std::vector<calibration::fold_time>& folds) {
  std::array<double, 2> tc{};
  std::vector<std::size_t> sizes{s.max_bytes};
  if (s.combine_large_bytes > s.max_bytes) sizes.push_back(s.combine_large_bytes);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::vector<double> ones(sizes[k] / sizeof(double), 1.0);
    barrier(c);
    tc[k] = measure_combine(std::plus<>{}, std::span<const double>(ones), s.reps);
    folds.push_back(fold_steps(c, sizes[k], s.reps));
  }
  return tc;
}

// The ping-pong of ranks 0 and 1, every pair's and the ring shift on
// messages of combine_large_bytes, where that is above max_bytes.
template <Transport C>
std::vector<calibration::message_time> large_messages(C& c, const calibration_settings& s) {
  if (s.combine_large_bytes <= s.max_bytes) return {};
  const std::size_t n = s.combine_large_bytes;
  std::vector<unsigned char> buf(2 * n);
  return {{n, ping_pong(c, buf, n, 1, s.reps), ping_pong(c, buf, n, c.size() / 2, s.reps),
           shift(c, buf, n, s.reps)}};
}

// The large t_w, busy_tw and duplex_tw from the times of large messages, each
// factor over the figures before it, as at the sweep's sizes (at least 1).
inline void large_message_figures(cost_model& cm, const calibration::message_time& m) {
  const double n = static_cast<double>(m.bytes);
  cm.tw_large_us_per_byte = std::max((m.one_way_us - cm.ts_us) / n, 1e-9);
  const double busy_ts = cm.ts_us * cm.busy_ts;
  cm.busy_tw_large = std::max(1.0, (m.pairs_us - busy_ts) / (cm.tw_large_us_per_byte * n));
  cm.duplex_tw_large = std::max(1.0, (m.shift_us - busy_ts * cm.duplex_ts) /
                                         (cm.tw_large_us_per_byte * cm.busy_tw_large * n));
}

// A fold's difference per combine over t_c's combine of its size (at least 1).
inline double busy_factor(const calibration::fold_time& f, const cost_model& cm) {
  const double combine = cm.combine(f.bytes);
  return combine > 0 ? std::max(1.0, (f.combine_us - f.us) / 2 / combine) : 1.0;
}

// The sizes [0, k) of a class that starts at the smallest of n sizes: k is
// the first size outside it whose next size is outside too (or that is the
// last), so that one stray size does not end the class. 0 where nothing ends
// it: without a limit there is no class.
template <class Outside>
std::size_t leading_class(std::size_t n, Outside outside) {
  std::size_t k = 0;
  while (k < n && !(outside(k) && (k + 1 == n || outside(k + 1)))) ++k;
  return k == n ? 0 : k;
}

// The busy and duplex figures of cm (t_s and t_w fitted to the lone pair's
// one-way times) from every pair's one-way times and the ring shifts at the
// same sizes, as the header says.
inline void busy_figures(cost_model& cm, const std::vector<calibration::point>& pairs,
                         const std::vector<calibration::point>& shifts) {
  const cost_model busy = fit(pairs);
  cm.busy_ts = std::max(1.0, busy.ts_us / cm.ts_us);
  cm.busy_tw = std::max(1.0, busy.tw_us_per_byte / cm.tw_us_per_byte);
  const std::size_t n = std::min(pairs.size(), shifts.size());
  std::vector<double> ratio(n);
  for (std::size_t i = 0; i < n; ++i)
    ratio[i] = shifts[i].one_way_us / std::max(pairs[i].one_way_us, 1e-9);
  const std::vector<double> first(ratio.begin(), ratio.begin() + std::min<std::size_t>(n, 3));
  const double limit = 1.5 * std::max(1.0, median(first));
  const std::size_t k = leading_class(n, [&](std::size_t i) { return ratio[i] > limit; });
  cm.short_bytes = k == 0 ? 0 : shifts[k - 1].bytes;
  cm.duplex_ts_short = std::max(1.0, median(std::vector<double>(ratio.begin(), ratio.begin() + k)));
  const std::vector<calibration::point> rest(shifts.begin() + static_cast<std::ptrdiff_t>(k),
                                             shifts.begin() + static_cast<std::ptrdiff_t>(n));
  if (rest.size() < 2) {  // nothing to fit a line to: one factor for both
    cm.duplex_ts = cm.duplex_tw = std::max(1.0, rest.empty() ? 1.0 : ratio.back());
    return;
  }
  const cost_model duplex = fit(rest);
  cm.duplex_ts = std::max(1.0, duplex.ts_us / (cm.ts_us * cm.busy_ts));
  cm.duplex_tw = std::max(1.0, duplex.tw_us_per_byte / (cm.tw_us_per_byte * cm.busy_tw));
}

// The posted figures of cm from the lone messages and the ping-pong's one
// way at the same sizes, as the header says.
inline void posted_figures(cost_model& cm, const std::vector<calibration::point>& ping_pong,
                           const std::vector<calibration::point>& lone) {
  const std::size_t n = std::min(ping_pong.size(), lone.size());
  const std::size_t k = leading_class(  // the posted sizes
      n, [&](std::size_t i) { return lone[i].one_way_us >= 0.5 * ping_pong[i].one_way_us; });
  std::vector<double> t;
  for (std::size_t i = 0; i < k; ++i) t.push_back(lone[i].one_way_us);
  cm.posted_bytes = k == 0 ? 0 : lone[k - 1].bytes;
  cm.posted_us = median(t);
}

}  // namespace detail_calibrate

template <Transport C>
calibration calibrate(C& c, const calibration_settings& s = {}) {
  calibration cal;
  if (c.size() < 2) return cal;
  std::vector<unsigned char> buf(2 * s.max_bytes);
  const int pairs = c.size() / 2;
  for (int i = 0; i < 3; ++i)  // the first messages of a job are slow: warm up
    detail_calibrate::ping_pong(c, buf, 8, pairs, s.reps),
        detail_calibrate::shift(c, buf, 8, s.reps);
  for (std::size_t n = 8; n <= s.max_bytes; n *= 2) {
    cal.ping_pong.push_back({n, detail_calibrate::ping_pong(c, buf, n, 1, s.reps)});
    cal.pairs.push_back({n, detail_calibrate::ping_pong(c, buf, n, pairs, s.reps)});
    cal.shift.push_back({n, detail_calibrate::shift(c, buf, n, s.reps)});
    cal.lone.push_back({n, detail_calibrate::lone_send(c, buf, n, s.reps)});
  }
  cal.large_messages = detail_calibrate::large_messages(c, s);
  const std::array<double, 2> tc = detail_calibrate::combine_figures(c, s, cal.folds);
  if (s.segment_probe_bytes > 0) cal.segments = detail_calibrate::reduce_segments(c, s);
  cal.cost = detail_calibrate::fit(cal.ping_pong);
  detail_calibrate::busy_figures(cal.cost, cal.pairs, cal.shift);
  detail_calibrate::posted_figures(cal.cost, cal.ping_pong, cal.lone);
  cal.cost.tc_us_per_byte = tc[0];
  cal.cost.busy_tc = detail_calibrate::busy_factor(cal.folds[0], cal.cost);
  cal.cost.combine_bytes = s.max_bytes;
  if (cal.folds.size() > 1) {
    cal.cost.combine_large_bytes = s.combine_large_bytes;
    cal.cost.tc_large_us_per_byte = tc[1];
    cal.cost.busy_tc_large = detail_calibrate::busy_factor(cal.folds[1], cal.cost);
    detail_calibrate::large_message_figures(cal.cost, cal.large_messages.front());
  }
  // The times are the slowest rank's, the same on every rank, but t_c is
  // local: rank 0's model for all.
  std::array<cost_model, 1> model{cal.cost};
  broadcast<Tree<2>>(c, std::span<cost_model>(model), 0);
  cal.cost = model[0];
  cal.cost.segment_bytes =
      detail_calibrate::fastest_segment(cal.segments);          // the same times on every rank
  if (s.floor_probe_bytes >= sizeof(double) && c.size() > 2) {  // a chain of 2 has no segments
    cal.segment_floors = detail_calibrate::floor_times(c, s, cal.cost, &cost_model::segment_floor);
    cal.piece_floors = detail_calibrate::floor_times(c, s, cal.cost, &cost_model::piece_floor);
    cal.cost.segment_floor = detail_calibrate::fastest_floor(cal.segment_floors);
    cal.cost.piece_floor = detail_calibrate::fastest_floor(cal.piece_floors);
  }
  cal.combine_us = cal.cost.combine(s.max_bytes);
  return cal;
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model
