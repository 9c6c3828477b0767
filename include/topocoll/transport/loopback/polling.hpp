#pragma once
// Polling before sleeping, for the loopback transport's waits: when the
// partner of a wait runs on another core the wait ends within microseconds,
// far less than a sleep and wake-up on a condition variable costs. Why it
// yields rather than spins, and when it stops: doc/transports.md, "loopback".

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "../../version.hpp"
#include "mailbox.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback::detail {

// A rank about to wait first polls an atomic (its inbox's arrival count, or
// the envelope's state) for up to options::poll, yielding its core at each
// turn. It polls only while the ranks not waiting fit on the machine's cores:
// with 64 ranks on 2 cores the ranks that would satisfy the wait need the
// core, and they sleep at once. A polling rank is not "blocked": afterwards
// it re-checks its condition under the world's mutex and blocks, so deadlock
// detection stays exact, at most one budget later.
class poller {
 public:
  using clock = std::chrono::steady_clock;

  poller(int p, std::chrono::microseconds budget) : p_(p), budget_(budget) {
    cores_ = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }

  // The ranks blocked or finished (the world counts them under its mutex).
  void set_idle(int n) { idle_.store(n, std::memory_order_relaxed); }
  // A rank failed or the run deadlocked: nobody polls from now on.
  void halt() { halted_.store(true, std::memory_order_relaxed); }

  // Starts the budget at the first call in one wait; false once it is spent.
  bool may_poll(rank_state& s, clock::time_point& until) const {
    if (budget_ <= clock::duration::zero()) return false;
    if (until == clock::time_point{}) {  // the first call in this wait
      if (s.poll_skip > 0) {
        --s.poll_skip;
        return false;
      }
      if (!room_to_poll()) return false;
      until = clock::now() + budget_;
      return true;
    }
    return room_to_poll() && clock::now() < until;
  }

  // Polls ready() until it holds (true), or until `until`, or no room (false).
  // A yield that takes long (100 us) means another process got the core for
  // a time slice, and polling then loses against sleeping (a sleeper is woken
  // with priority). So the rank stops, and sleeps at once in its next 16
  // waits (32, 64, ... up to 4096 while it keeps happening; back to 16 after
  // a poll that succeeded).
  template <class Ready>
  bool poll(rank_state& s, Ready&& ready, const clock::time_point& until) const {
    for (;;) {
      if (ready()) {
        s.poll_backoff = 16;
        return true;
      }
      const auto t0 = clock::now();
      if (t0 >= until || !room_to_poll()) return false;
      std::this_thread::yield();
      if (clock::now() - t0 > std::chrono::microseconds(100)) {
        s.poll_skip = s.poll_backoff;
        s.poll_backoff = std::min(2 * s.poll_backoff, 4096);
        return ready();
      }
    }
  }

 private:
  bool room_to_poll() const {
    return p_ - idle_.load(std::memory_order_relaxed) <= cores_ &&
           !halted_.load(std::memory_order_relaxed);
  }

  int p_;
  std::chrono::microseconds budget_;
  int cores_ = 1;
  std::atomic<int> idle_{0};         // blocked + finished ranks, for room_to_poll
  std::atomic<bool> halted_{false};  // aborted or deadlocked
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback::detail
