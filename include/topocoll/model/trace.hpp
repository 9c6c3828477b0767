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

#include "counting.hpp"

namespace topocoll::model {

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

// logs[r] = rank r's events. Sends and receives are matched like MPI: in
// order per (source, destination, tag).
inline schedule make_schedule(const std::vector<std::vector<event>>& logs) {
  const int p = static_cast<int>(logs.size());
  schedule s;
  s.p = p;
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);  // next event per rank
  std::vector<int> clock(static_cast<std::size_t>(p), 0);         // round of the rank's last call
  using key = std::tuple<int, int, int>;                          // src, dest, tag
  std::map<key, std::vector<std::size_t>> posted;                 // indices into s.messages
  std::map<key, std::size_t> taken;
  std::vector<char> posted_sends(static_cast<std::size_t>(p), 0);  // current call's sends are out
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const auto& log = logs[static_cast<std::size_t>(r)];
      auto& i = next[static_cast<std::size_t>(r)];
      while (i < log.size()) {
        // all events of one call (a sendrecv has two) share a step
        std::size_t j = i;
        while (j < log.size() && log[j].step == log[i].step) ++j;
        int at = clock[static_cast<std::size_t>(r)] + 1;
        // the call's sends are posted when it starts (sendrecv posts before it
        // receives), whether or not its receive can complete yet
        if (!posted_sends[static_cast<std::size_t>(r)]) {
          for (std::size_t k = i; k < j; ++k)
            if (log[k].kind == event::send) {
              s.messages.push_back({r, log[k].peer, log[k].tag, log[k].count, log[k].bytes, at});
              posted[{r, log[k].peer, log[k].tag}].push_back(s.messages.size() - 1);
            }
          posted_sends[static_cast<std::size_t>(r)] = true;
          progress = true;
        }
        bool ready = true;
        for (std::size_t k = i; k < j && ready; ++k) {
          if (log[k].kind != event::recv) continue;
          key kk{log[k].peer, r, log[k].tag};
          auto& q = posted[kk];
          std::size_t n = taken[kk];
          if (n >= q.size())
            ready = false;
          else
            at = std::max(at, s.messages[q[n]].round);
        }
        if (!ready) break;
        for (std::size_t k = i; k < j; ++k)
          if (log[k].kind == event::recv) ++taken[{log[k].peer, r, log[k].tag}];
        posted_sends[static_cast<std::size_t>(r)] = false;
        // a send posted in this call at round `at` is received no earlier
        clock[static_cast<std::size_t>(r)] = at;
        s.rounds = std::max(s.rounds, at);
        i = j;
        progress = true;
      }
    }
  }
  for (int r = 0; r < p; ++r)
    if (next[static_cast<std::size_t>(r)] != logs[static_cast<std::size_t>(r)].size())
      throw std::invalid_argument("model::make_schedule: rank " + std::to_string(r) +
                                  " receives a message nobody sent");
  std::stable_sort(s.messages.begin(), s.messages.end(), [](const message& a, const message& b) {
    return std::tie(a.round, a.src) < std::tie(b.round, b.src);
  });
  return s;
}

}  // namespace topocoll::model
