#pragma once
// model::simulate_v: many-to-many personalized communication (all_to_all_v)
// from a count matrix, predicted as model::simulate predicts the others.
//
//   std::vector<std::size_t> counts(p * p);  // counts[i * p + j]: from rank i to rank j
//   sim::result r = sim::simulate_v<topocoll::Ring>(counts, p, net, cost, opt);
//
// Rank i calls all_to_all_v with row i of the matrix as its send counts, in
// one of its two forms:
//   v_counts::given      column i as its receive counts (MPI_Alltoallv's form,
//                        whose automatic is the direct exchange);
//   v_counts::exchanged  the form that exchanges the counts first and returns
//                        the result; its automatic, on a blocking transport
//                        (ports::single), takes two_stage where it is priced
//                        lower (as simulate prices: choosing_by).
// Unlike the other collectives' schedules, this one depends on what the
// ranks tell each other: two_stage sends every piece's counts before the
// pieces. So the ranks run at once, one thread each, and a message of any
// type but the inert element (model::phantom) travels from sender to receiver
// for real; the elements' messages are recorded only. The threads' schedules
// then go through the same timing as simulate's.
//
// simulate_v_trace adds every message's timing, and traffic_counts makes the
// lecture's patterns (uniform, skewed, to_root, random) as count matrices.
//
// Bad input throws std::invalid_argument, as simulate does, and also for a
// matrix that is not p x p or p above max_threaded_ranks.

#include <algorithm>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "../collectives/all_to_all_v.hpp"
#include "../core/inert.hpp"
#include "../version.hpp"
#include "recording.hpp"
#include "simulate.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

// One thread per rank: simulate_v's limit on p.
inline constexpr int max_threaded_ranks = 1024;

// Which all_to_all_v a rank calls (above).
enum class v_counts { given, exchanged };

namespace detail {

// What a rank's wait throws once another rank has failed: not the failure.
struct another_rank_failed : std::exception {
  const char* what() const noexcept override {
    return "topocoll::model::simulate_v: another rank failed";
  }
};

// The messages of every type but the inert element, between the recording
// threads: in order per (source, destination, tag), as MPI matches them. Each
// rank has its own box, so a message wakes its receiver only.
class post_office {
 public:
  explicit post_office(int p) : boxes_(static_cast<std::size_t>(p)) {}

  void put(int src, int dst, int tag, std::span<const std::byte> bytes) {
    box& b = boxes_[static_cast<std::size_t>(dst)];
    {
      const std::lock_guard<std::mutex> lock(b.mu);
      b.from[{src, tag}].emplace_back(bytes.begin(), bytes.end());
    }
    b.cv.notify_one();
  }

  // The next message from src to dst with tag. Throws where another rank has
  // failed, and where none comes for `patience` (a schedule that deadlocks).
  std::vector<std::byte> take(int src, int dst, int tag) {
    box& b = boxes_[static_cast<std::size_t>(dst)];
    std::unique_lock<std::mutex> lock(b.mu);
    auto& queue = b.from[{src, tag}];
    if (!b.cv.wait_for(lock, patience, [&] { return b.failed || !queue.empty(); }))
      throw std::logic_error("topocoll::model::simulate_v: rank " + std::to_string(dst) +
                             " waited 60 s for a message from rank " + std::to_string(src) +
                             ": the schedule deadlocks");
    if (queue.empty()) throw another_rank_failed();
    std::vector<std::byte> front = std::move(queue.front());
    queue.pop_front();
    return front;
  }

  // A rank has failed: every take waiting, or to come, throws.
  void fail() {
    for (box& b : boxes_) {
      {
        const std::lock_guard<std::mutex> lock(b.mu);
        b.failed = true;
      }
      b.cv.notify_all();
    }
  }

 private:
  static constexpr std::chrono::seconds patience{60};
  struct box {
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> from;  // (source, tag)
    bool failed = false;
  };
  std::vector<box> boxes_;
};

// A recorder (model/recording.hpp) whose messages of non-inert types also
// carry their contents, through the post office.
template <class Recorder>
class carrying : public Recorder {
 public:
  carrying(int rank, schedule_log& log, post_office& office)
      : Recorder(rank, log), office_(&office) {}

  template <class T>
  void send(int dest, int tag, std::span<T> data) {
    Recorder::send(dest, tag, data);
    carry(dest, tag, data);
  }
  template <class T>
  void recv(int source, int tag, std::span<T> data) {
    Recorder::recv(source, tag, data);
    deliver(source, tag, data);
  }
  template <class T, class U>
  void sendrecv(int dest, std::span<T> out, int source, std::span<U> in, int tag) {
    Recorder::sendrecv(dest, out, source, in, tag);
    carry(dest, tag, out);
    deliver(source, tag, in);
  }
  template <class T, class R = Recorder>
  auto isend(int dest, int tag, std::span<T> data)
      -> decltype(std::declval<R&>().isend(dest, tag, data)) {
    carry(dest, tag, data);
    return Recorder::isend(dest, tag, data);
  }

 private:
  template <class T>
  static constexpr bool carried = !topocoll::detail::inert_element<std::remove_const_t<T>>;

  template <class T>
  void carry(int dest, int tag, std::span<T> data) {
    if constexpr (carried<T>) {
      static_assert(std::is_trivially_copyable_v<T>, "simulate_v carries raw bytes");
      office_->put(this->rank(), dest, tag, std::as_bytes(data));
    }
  }
  template <class T>
  void deliver(int source, int tag, std::span<T> data) {
    if constexpr (carried<T>) {
      const std::vector<std::byte> got = office_->take(source, this->rank(), tag);
      if (got.size() != data.size_bytes())
        throw std::logic_error("topocoll::model::simulate_v: rank " + std::to_string(this->rank()) +
                               " expected " + std::to_string(data.size_bytes()) +
                               " bytes from rank " + std::to_string(source) + ", got " +
                               std::to_string(got.size()));
      std::memcpy(data.data(), got.data(), got.size());
    }
  }

  post_office* office_;
};

// One rank's calls, on its own thread: its own arena, copy counter and log.
template <class Run>
void record_one_rank(int r, ports port, local_copies copies, post_office& office, schedule_log& log,
                     Run& run) {
  address_arena arena(address_arena::largest_size /
                      std::bit_ceil(static_cast<std::size_t>(log.p())));
  const current_scope<address_arena> in_arena(address_arena::current(), &arena);
  std::uint64_t copied = 0;
  const current_scope<std::uint64_t> counted(copy_counter::on_this_thread(),
                                             copies == local_copies::recorded ? &copied : nullptr);
  if (port == ports::single) {
    carrying<recorder> c(r, log, office);
    run(c, arena);
    c.record_copies();
  } else {
    carrying<posting_recorder> c(r, log, office);
    run(c, arena);
    c.record_copies();
  }
}

// Rethrows the first rank's failure, passing over the ranks that only
// stopped because of it.
inline void rethrow_first_failure(const std::vector<std::exception_ptr>& errors) {
  for (const std::exception_ptr& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const another_rank_failed&) {
    }
  }
}

// Every rank's calls, the ranks at once: run(c, arena) makes one rank's.
template <class Run>
schedule_log record_ranks_at_once(int p, ports port, local_copies copies, Run&& run) {
  post_office office(p);
  std::vector<schedule_log> logs(static_cast<std::size_t>(p), schedule_log(p));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(p));
  {
    std::vector<std::jthread> ranks;
    for (int r = 0; r < p; ++r)
      ranks.emplace_back([&, r] {
        const auto i = static_cast<std::size_t>(r);
        try {
          record_one_rank(r, port, copies, office, logs[i], run);
        } catch (...) {
          errors[i] = std::current_exception();
          office.fail();
        }
      });
  }
  rethrow_first_failure(errors);
  schedule_log log(p);
  for (const schedule_log& one : logs) log.append_rank(one);
  return log;
}

}  // namespace detail

namespace detail {

// The checks simulate_v makes (p * the most one rank sends or receives, as
// check_size counts it).
inline void check_v_inputs(std::span<const std::size_t> counts, int p, const network& net,
                           const cost_params& cost) {
  check_size(p, 0);
  if (p > max_threaded_ranks)
    bad_input("simulate_v runs a thread per rank: p = " + std::to_string(p) + " exceeds " +
              std::to_string(max_threaded_ranks));
  const auto P = static_cast<std::size_t>(p);
  if (counts.size() != P * P)
    bad_input("simulate_v needs a p x p count matrix: " + std::to_string(counts.size()) +
              " counts for p = " + std::to_string(p));
  std::size_t largest = 0;
  for (std::size_t i = 0; i < P; ++i) {
    std::size_t row = 0, column = 0;
    for (std::size_t j = 0; j < P; ++j) {
      row += counts[i * P + j];
      column += counts[j * P + i];
    }
    largest = std::max({largest, row, column});
  }
  check_inputs(p, largest, net, cost);
}

// Every rank's calls of all_to_all_v over the count matrix.
template <Topology Topo>
schedule_log record_v(std::span<const std::size_t> counts, int p, const network& net,
                      const cost_params& cost, const options& opt, v_counts form) {
  check_v_inputs(counts, p, net, cost);
  const options o = choosing_by(opt, cost, sizeof(phantom));
  const auto P = static_cast<std::size_t>(p);
  return record_ranks_at_once(
      p, net.port_model(), copies_for(cost), [&](auto& c, address_arena& a) {
        const auto r = static_cast<std::size_t>(c.rank());
        const std::span<const std::size_t> sends = counts.subspan(r * P, P);
        std::vector<std::size_t> receives(P);
        for (std::size_t i = 0; i < P; ++i) receives[i] = counts[i * P + r];
        const auto buffer = [&](std::size_t n) {
          return std::span<phantom>(
              reinterpret_cast<phantom*>(a.take_distinct(n * sizeof(phantom))), n);
        };
        const std::span<const phantom> in = buffer(std::reduce(sends.begin(), sends.end()));
        if (form == v_counts::exchanged) {
          topocoll::all_to_all_v<Topo>(c, in, sends, o);
          return;
        }
        const std::span<phantom> out = buffer(std::reduce(receives.begin(), receives.end()));
        topocoll::all_to_all_v<Topo>(c, in, sends, out, std::span<const std::size_t>(receives), o);
      });
}

}  // namespace detail

// The predicted time, message count and worst congestion of all_to_all_v on
// Topo, rank i sending counts[i * p + j] elements to rank j, on the network
// net.
template <Topology Topo>
result simulate_v(std::span<const std::size_t> counts, int p, const network& net,
                  const cost_params& cost, const options& opt = {},
                  v_counts form = v_counts::given) {
  const detail::schedule_log log = detail::record_v<Topo>(counts, p, net, cost, opt, form);
  return detail::finite_time(detail::timeline(log, net, cost, nullptr).run(), cost);
}

// ... with every message's timing as well (for drawing).
template <Topology Topo>
traced_result simulate_v_trace(std::span<const std::size_t> counts, int p, const network& net,
                               const cost_params& cost, const options& opt = {},
                               v_counts form = v_counts::given) {
  const detail::schedule_log log = detail::record_v<Topo>(counts, p, net, cost, opt, form);
  traced_result t;
  t.summary = detail::finite_time(detail::timeline(log, net, cost, &t.messages).run(), cost);
  return t;
}

// The lecture's traffic patterns, as count matrices for simulate_v (m: the
// size they are built around):
//   uniform   every block m elements (all_to_all's traffic)
//   skewed    rank i sends m to rank (2i + 1) mod p and 1 to every other rank:
//             a few large blocks, S and R about m, which stall the direct
//             exchange in every step that carries one
//   to_root   every rank m to rank 0 and nothing to the others: R = p m
//   random    every block uniform in [0, m], the same on every call
enum class traffic { uniform, skewed, to_root, random };
inline constexpr std::string_view traffic_names[] = {"uniform", "skewed", "to_root", "random"};

constexpr std::string_view to_string(traffic kind) {
  return traffic_names[static_cast<int>(kind)];
}

inline traffic parse_traffic(std::string_view name) {
  std::string known;
  for (std::size_t k = 0; k < std::size(traffic_names); ++k) {
    if (traffic_names[k] == name) return static_cast<traffic>(k);
    known += (k ? ", " : "") + std::string(traffic_names[k]);
  }
  throw std::invalid_argument("topocoll::model: unknown traffic pattern \"" + std::string(name) +
                              "\" (" + known + ")");
}

inline std::vector<std::size_t> traffic_counts(traffic kind, int p, std::size_t m) {
  const auto P = static_cast<std::size_t>(p);
  std::vector<std::size_t> counts(P * P);
  std::mt19937_64 random_counts(7);  // the same matrix on every call and every platform
  for (std::size_t i = 0; i < P; ++i)
    for (std::size_t j = 0; j < P; ++j) {
      std::size_t& n = counts[i * P + j];
      switch (kind) {
        case traffic::uniform:
          n = m;
          break;
        case traffic::skewed:
          n = j == (2 * i + 1) % P ? m : 1;
          break;
        case traffic::to_root:
          n = j == 0 ? m : 0;
          break;
        case traffic::random:
          n = static_cast<std::size_t>(random_counts() % (m + 1));
          break;
      }
    }
  return counts;
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model
