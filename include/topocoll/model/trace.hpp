#pragma once
// From per-rank call logs (model::Counting::events()) to a global schedule:
// every message gets a round, the earliest step at which it can happen given
// that a rank does one call at a time and a receive waits for its send. The
// number of rounds is the algorithm's count of t_s terms; the largest message
// of each round its t_w term. Drawn by model/svg.hpp.

#include <algorithm>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../version.hpp"
#include "counting.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

struct message {
  int src, dest, tag;
  std::size_t count, bytes;
  int round;  // from 1
};

struct schedule {
  int p = 0;
  int rounds = 0;
  std::vector<message> messages;  // ordered by round, then source

  // sum over rounds of (t_s + t_w * largest message of the round), in the units given
  double cost(double ts, double tw_per_element) const {
    std::vector<std::size_t> largest(static_cast<std::size_t>(rounds) + 1, 0);
    for (const message& m : messages)
      largest[static_cast<std::size_t>(m.round)] =
          std::max(largest[static_cast<std::size_t>(m.round)], m.count);
    double t = 0;
    for (int r = 1; r <= rounds; ++r)
      t += ts + tw_per_element * static_cast<double>(largest[static_cast<std::size_t>(r)]);
    return t;
  }
};

namespace detail {
// Replays per-rank logs, one call at a time per rank, as far as matching
// allows, assigning each message its round.
class scheduler {
 public:
  explicit scheduler(const std::vector<std::vector<event>>& logs)
      : logs_(logs), next_(logs.size(), 0), clock_(logs.size(), 0), posted_(logs.size(), 0) {
    s_.p = static_cast<int>(logs.size());
  }

  schedule run() {
    for (bool progress = true; progress;) {
      moved_ = false;
      for (std::size_t r = 0; r < logs_.size(); ++r)
        while (next_[r] < logs_[r].size() && advance(r)) {
        }
      progress = moved_;
    }
    for (std::size_t r = 0; r < logs_.size(); ++r)
      if (next_[r] != logs_[r].size())
        throw std::invalid_argument("model::make_schedule: rank " + std::to_string(r) +
                                    " receives a message nobody sent");
    std::stable_sort(s_.messages.begin(), s_.messages.end(),
                     [](const message& a, const message& b) {
                       return std::tie(a.round, a.src) < std::tie(b.round, b.src);
                     });
    return s_;
  }

 private:
  using key = std::tuple<int, int, int>;  // src, dest, tag

  // Rank r's next call (all events with one step: a sendrecv has two):
  // posts its sends when it starts, then completes once its receives match.
  bool advance(std::size_t r) {
    const auto& log = logs_[r];
    const std::size_t i = next_[r];
    std::size_t j = i;
    while (j < log.size() && log[j].step == log[i].step) ++j;
    int at = clock_[r] + 1;
    if (!posted_[r]) {
      for (std::size_t k = i; k < j; ++k)
        if (log[k].kind == event::send) post(static_cast<int>(r), log[k], at);
      posted_[r] = true;
      moved_ = true;
    }
    for (std::size_t k = i; k < j; ++k) {
      if (log[k].kind != event::recv) continue;
      const key kk{log[k].peer, static_cast<int>(r), log[k].tag};
      const auto& q = posted_msgs_[kk];
      if (taken_[kk] >= q.size()) return false;
      at = std::max(at, s_.messages[q[taken_[kk]]].round);
    }
    for (std::size_t k = i; k < j; ++k)
      if (log[k].kind == event::recv) ++taken_[{log[k].peer, static_cast<int>(r), log[k].tag}];
    posted_[r] = false;
    clock_[r] = at;  // a send posted in this call at round `at` is received no earlier
    s_.rounds = std::max(s_.rounds, at);
    next_[r] = j;
    moved_ = true;
    return true;
  }

  void post(int r, const event& e, int round) {
    s_.messages.push_back({r, e.peer, e.tag, e.count, e.bytes, round});
    posted_msgs_[{r, e.peer, e.tag}].push_back(s_.messages.size() - 1);
  }

  const std::vector<std::vector<event>>& logs_;
  std::vector<std::size_t> next_;                        // next event per rank
  std::vector<int> clock_;                               // round of the rank's last call
  std::vector<char> posted_;                             // the current call's sends are out
  std::map<key, std::vector<std::size_t>> posted_msgs_;  // indices into s_.messages
  std::map<key, std::size_t> taken_;
  schedule s_;
  bool moved_ = false;  // a call posted its sends or completed in this pass
};
}  // namespace detail

// logs[r] = rank r's events. Sends and receives are matched like MPI: in
// order per (source, destination, tag).
inline schedule make_schedule(const std::vector<std::vector<event>>& logs) {
  return detail::scheduler(logs).run();
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model
