#pragma once
// Algorithm choice. Every collective takes an optional trailing `options`:
// leave it default and the algorithm is chosen from the topology, m, p and the
// t_s + t_w*m cost model; set `algo` to force one (a forced algorithm that does
// not apply, e.g. one that reorders operands with a non-commutative operator,
// throws std::invalid_argument).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

enum class algorithm {
  automatic,
  // one-to-all / all-to-one
  tree,                   // the topology's own tree: mask loop, linear-array halving, k-nomial
  pipelined,              // ring: farthest destination first, one hop at a time
  scatter_all_gather,     // broadcast: scatter in p pieces, then all-to-all broadcast of them
  reduce_scatter_gather,  // reduce: all-to-all reduction of p pieces, then gather
  // all-to-all broadcast / reduction
  recursive_doubling,         // constant message size, log p steps (all_reduce, scan)
  reduce_scatter_all_gather,  // bandwidth-optimal all_reduce
  reduce_broadcast,           // all_reduce as reduce + broadcast
  // all-to-all personalized
  store_and_forward,  // log p (or per-dimension) steps with local rearrangement
  pairwise,           // p - 1 direct exchanges, partner = rank XOR j or (rank + j) mod p
  two_stage,          // many-to-many with bounded traffic (all_to_all_v)
  bidirectional,      // store-and-forward round each ring both ways (linear dimensions)
  // all_gather, reduce_scatter
  fold,  // the topology's own all-to-all broadcast / reduction, dimension by dimension
  // the seeds' baselines (broadcast, reduce, all_gather, all_to_all), on any
  // topology; automatic never takes them
  naive,  // one message per pair of ranks, straight to or from each, one after another
};

// The number of algorithms: algorithm{0} .. algorithm{algorithm_count - 1}.
inline constexpr int algorithm_count = static_cast<int>(algorithm::naive) + 1;

constexpr std::string_view to_string(algorithm a) {
  constexpr std::string_view names[] = {"automatic",
                                        "tree",
                                        "pipelined",
                                        "scatter_all_gather",
                                        "reduce_scatter_gather",
                                        "recursive_doubling",
                                        "reduce_scatter_all_gather",
                                        "reduce_broadcast",
                                        "store_and_forward",
                                        "pairwise",
                                        "two_stage",
                                        "bidirectional",
                                        "fold",
                                        "naive"};
  static_assert(std::size(names) == algorithm_count, "to_string: one name per algorithm");
  const auto i = static_cast<std::size_t>(a);
  return i < std::size(names) ? names[i] : "?";
}

// The seeds' cost of one message of n bytes: t_s + t_w * n (microseconds).
// The defaults are the order of magnitude of shared-memory MPI on one node.
//
// busy_ts and busy_tw say how much slower a start-up and a byte are when every
// rank communicates at once than in one message alone: 1 where each rank has
// a core of its own (the seeds' model), more where ranks share cores, as 4
// ranks on 2 do. A step in which `active` of the p ranks send or receive is
// priced between the two, in proportion to its active ranks beyond one pair:
// a tree's first steps as a lone pair, its last as busy.
//
// duplex_ts and duplex_tw say how much slower again a step is in which every
// rank sends and receives at once (a fold, a pipeline, an exchange) than one
// in which each sends or receives (a tree's): 1 on the seeds' full-duplex
// links, more where the sends and receives of ranks that share a core take
// turns. A transport may send short messages by a cheaper protocol, where an
// exchange costs about as much as a one-way step (doc/model.md,
// "Calibration"). Messages of 1 to short_bytes bytes have duplex_ts_short
// instead of duplex_ts (short_bytes 0, the default: none).
// model::calibrate (model/calibrate.hpp) measures all of these, the cost of
// std::plus on doubles, tc_us_per_byte, and busy_tc, its factor in a fold;
// t_w, busy_tw, duplex_tw, t_c and busy_tc again on messages of 16 MiB.
struct cost_model {
  double ts_us = 1.0;            // start-up time per message
  double tw_us_per_byte = 2e-4;  // per byte (about 5 GB/s)
  double busy_ts = 1.0;          // t_s's factor when every rank communicates
  double busy_tw = 1.0;          // t_w's factor when every rank communicates
  // A tree reduction's partial of at least twice this size travels in
  // segments of about this size, each combined as it arrives while it is
  // still in cache (0: whole, the default). Each segment costs a start-up, so
  // whether segments pay depends on the transport and the caches:
  // model::calibrate measures it (doc/model.md, "Segments").
  std::size_t segment_bytes = 0;
  // The operator's cost: combining n bytes of partial into an accumulator
  // takes tc_us_per_byte * n (the default is std::plus on doubles, about
  // 10 GB/s; model::measure_combine measures a given operator).
  double tc_us_per_byte = 1e-4;
  double duplex_ts = 1.0;        // t_s's further factor when every rank also receives
  double duplex_tw = 1.0;        // t_w's
  std::size_t short_bytes = 0;   // the longest short message (0: none)
  double duplex_ts_short = 1.0;  // duplex_ts of a short message
  // t_c's factor for a fold's combines, made by every rank at once between
  // its exchanges, when a fold is priced against a tree (all_reduce's and
  // reduce_scatter's automatic choice on more than two ranks). Where ranks
  // share cores a rank's combine waits for the core its partners poll on.
  double busy_tc = 1.0;
  // Combines of large operands: t_c and busy_tc hold up to combine_bytes;
  // from there to combine_large_bytes they move to tc_large_us_per_byte and
  // busy_tc_large, linearly in log2 of the size, and stay there. Operands
  // that no longer fit in cache combine at the memory's speed
  // (combine_bytes or combine_large_bytes 0: t_c and busy_tc at every size,
  // the default).
  std::size_t combine_bytes = 0;
  std::size_t combine_large_bytes = 0;
  double tc_large_us_per_byte = 1e-4;
  double busy_tc_large = 1.0;
  // Calls of large messages move the same way between the same two sizes:
  // t_w, busy_tw and duplex_tw towards these (0: the figure at every size,
  // the default), for a whole call at once (at_size). Once a call's data
  // leaves the cache its copies run at the memory's speed, and where ranks
  // share cores the copies of every pair at once share it.
  double tw_large_us_per_byte = 0;
  double busy_tw_large = 0;
  double duplex_tw_large = 0;
  // A message its sender may leave before its receiver runs: Open MPI's
  // shared memory sends short messages inline, and where ranks share cores
  // such a lone message costs far less than the one way of a ping-pong,
  // whose partner must be scheduled to answer. A message of up to
  // posted_bytes that nobody answers costs posted_us, in the choice between
  // the tree and the pipeline of scatter and gather, whose tree messages
  // carry whole subtrees' blocks (posted_bytes 0: none, the default).
  std::size_t posted_bytes = 0;
  double posted_us = 0;
  // The shortest pipeline segment, in start-ups' worth of bytes
  // (segment_floor * t_s / t_w), and the shortest piece of a broadcast or
  // reduce in pieces (piece_floor * t_s / t_w). Each segment or piece is a
  // message, and where ranks share cores, or a chain's ranks wait on each
  // other, a message costs more than the model's t_s, so the segments of
  // ICS 632's optimum can be too short. model::calibrate measures both
  // (doc/model.md, "Calibration").
  double segment_floor = 50.0;
  double piece_floor = 50.0;
  constexpr bool posted(std::size_t bytes) const { return bytes > 0 && bytes <= posted_bytes; }
  // Whether every busy and duplex factor is at least 1: a step of many ranks
  // costs no less than one of a lone pair, as calibrate always finds.
  constexpr bool busy_at_least_alone() const {
    return busy_ts >= 1 && busy_tw >= 1 && duplex_ts >= 1 && duplex_ts_short >= 1 && duplex_tw >= 1;
  }
  constexpr double message(std::size_t bytes) const {
    return ts_us + tw_us_per_byte * static_cast<double>(bytes);
  }
  // How far `bytes` is from combine_bytes to combine_large_bytes, 0 to 1.
  double large_share(std::size_t bytes) const {
    if (combine_bytes == 0 || combine_large_bytes <= combine_bytes || bytes <= combine_bytes)
      return 0.0;
    if (bytes >= combine_large_bytes) return 1.0;
    return std::log2(static_cast<double>(bytes) / static_cast<double>(combine_bytes)) /
           std::log2(static_cast<double>(combine_large_bytes) / static_cast<double>(combine_bytes));
  }
  // t_c and busy_tc for operands of `bytes`.
  double tc_at(std::size_t bytes) const {
    return towards_large(tc_us_per_byte, tc_large_us_per_byte, bytes);
  }
  double busy_tc_at(std::size_t bytes) const {
    return towards_large(busy_tc, busy_tc_large, bytes);
  }
  // t_w, busy_tw and duplex_tw for a call of `bytes`.
  double tw_at(std::size_t bytes) const {
    return towards_large(tw_us_per_byte, tw_large_us_per_byte, bytes);
  }
  double busy_tw_at(std::size_t bytes) const {
    return towards_large(busy_tw, busy_tw_large, bytes);
  }
  double duplex_tw_at(std::size_t bytes) const {
    return towards_large(duplex_tw, duplex_tw_large, bytes);
  }
  // This model with t_w, busy_tw and duplex_tw at their figures for a call
  // of `bytes`, for every message of it. A call is priced at the figures of
  // its whole data, which is what streams through the caches however it is
  // cut: priced at each message's own size, two halves would cost less than
  // the whole.
  cost_model at_size(std::size_t bytes) const {
    cost_model m = *this;
    m.tw_us_per_byte = tw_at(bytes);
    m.busy_tw = busy_tw_at(bytes);
    m.duplex_tw = duplex_tw_at(bytes);
    m.tw_large_us_per_byte = m.busy_tw_large = m.duplex_tw_large = 0;
    return m;
  }
  double combine(std::size_t bytes) const { return tc_at(bytes) * static_cast<double>(bytes); }
  // A combine of `bytes` in a fold's step, every rank combining at once.
  double busy_combine(std::size_t bytes) const { return busy_tc_at(bytes) * combine(bytes); }
  // This model with every combine at the busy price of operands of `bytes`.
  cost_model with_busy_combines(std::size_t bytes) const {
    cost_model m = *this;
    m.tc_us_per_byte = busy_tc_at(bytes) * tc_at(bytes);
    m.busy_tc = 1.0;
    m.combine_bytes = m.combine_large_bytes = 0;
    return m;
  }
  // duplex_ts for a message of `bytes`: duplex_ts_short for a short one.
  constexpr double duplex_ts_for(std::size_t bytes) const {
    return bytes > 0 && bytes <= short_bytes ? duplex_ts_short : duplex_ts;
  }
  // One message of a step in which `active` of p ranks send or receive at once.
  constexpr double message(std::size_t bytes, int active, int p) const {
    const double a = p > 2 && active > 2 ? std::min(1.0, (active - 2.0) / (p - 2.0)) : 0.0;
    return ts_us * (1.0 + (busy_ts - 1.0) * a) +
           tw_us_per_byte * (1.0 + (busy_tw - 1.0) * a) * static_cast<double>(bytes);
  }
  // The model of a step in which every rank sends and receives (a fold, a
  // pipeline, an exchange) with messages of about `bytes`: t_s and t_w at
  // their busy and duplex values. Without `bytes`: long messages.
  constexpr cost_model all_busy(std::size_t bytes = SIZE_MAX) const {
    cost_model m{ts_us * busy_ts * duplex_ts_for(bytes),
                 tw_us_per_byte * busy_tw * duplex_tw,
                 1.0,
                 1.0,
                 segment_bytes,
                 tc_us_per_byte};
    m.segment_floor = segment_floor;
    m.piece_floor = piece_floor;
    return m;
  }
  // One message of `bytes` in a step in which every rank sends and receives.
  constexpr double busy_message(std::size_t bytes) const { return all_busy(bytes).message(bytes); }

 private:
  // `figure` moved large_share(bytes) of the way to `large`.
  double towards_large(double figure, double large, std::size_t bytes) const {
    return large <= 0 ? figure : figure + (large - figure) * large_share(bytes);
  }
};

struct options {
  algorithm algo = algorithm::automatic;
  cost_model cost{};
};

namespace detail {

// The options of a call that passes none: one object, the default argument of
// every collective, so that a collective tells them by their address. Their
// figures are known to be valid, so the per-call check of the cost model
// (call_args::cost) and a remembered choice's comparison of models
// (remembered) take one pointer comparison for them. A call that passes its
// own options, equal to these or not, is checked and compared in full.
inline constexpr options default_options{};

// The options a started collective keeps until it runs: a copy of the
// caller's, or, for a call that passed none, the default object itself, so
// that the started run keeps the one-comparison checks above.
class kept_options {
 public:
  explicit kept_options(const options& o) {
    if (&o != &default_options) copy_.emplace(o);
  }
  operator const options&() const { return copy_ ? *copy_ : default_options; }

 private:
  std::optional<options> copy_;
};

}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
