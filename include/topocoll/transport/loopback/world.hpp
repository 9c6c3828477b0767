#pragma once
// The loopback transport's world: every rank's mailbox under one mutex, the
// waits on it, and the exact deadlock test. Each waiting rank says what it
// waits for, and whoever satisfies a wait marks that rank runnable under the
// mutex, so "every live rank waits for something that cannot come" is an
// exact, immediate test (doc/transports.md, "No hang, ever").

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../../core/errors.hpp"
#include "../../version.hpp"
#include "mailbox.hpp"
#include "polling.hpp"
#include "reports.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback::detail {

class world {
 public:
  world(int p, options o)
      : p_(p), opt_(o), ranks_(new rank_state[static_cast<std::size_t>(p)]), poller_(p, o.poll) {}

  int size() const { return p_; }
  const options& opts() const { return opt_; }

  // Queues a message; returns the envelope for a rendezvous send to wait on.
  envelope_ptr post(envelope_ptr e) {
    std::unique_lock lk(mu_);
    throw_if_stopped(lk, e->src);
    rank_state& d = ranks_[e->dest];
    d.inbox.push_back(e);
    d.arrivals.fetch_add(1, std::memory_order_release);
    const bool woken = d.blocked && d.wait.matches(*e);
    if (woken) make_runnable(d);
    lk.unlock();
    if (woken) d.cv.notify_one();
    return e;
  }

  // Waits for the first message that `w` (a recv) describes, takes it out of
  // the mailbox and calls deliver(envelope&) outside the lock.
  template <class Deliver>
  void receive(int me, const wait_for& w, Deliver&& deliver) {
    std::unique_lock lk(mu_);
    rank_state& s = ranks_[me];
    envelope_ptr e;
    clock::time_point until{};
    const int src = w.peer;
    for (;;) {
      throw_if_stopped(lk, me);
      auto it = std::find_if(s.inbox.begin(), s.inbox.end(),
                             [&](const envelope_ptr& x) { return w.matches(*x); });
      if (it != s.inbox.end()) {
        e = std::move(*it);
        s.inbox.erase(it);
        break;
      }
      // Poll for a new arrival before sleeping (see poll), then look again.
      if (!ranks_[src].finished && poller_.may_poll(s, until)) {
        const std::uint64_t seen = s.arrivals.load(std::memory_order_relaxed);
        lk.unlock();
        poller_.poll(
            s, [&] { return s.arrivals.load(std::memory_order_acquire) != seen; }, until);
        lk.lock();
        continue;
      }
      block(lk, me, w);
    }
    e->state = envelope::copying;
    lk.unlock();
    std::exception_ptr err;
    try {
      deliver(*e);
    } catch (...) {
      err = std::current_exception();
    }
    lk.lock();
    e->state = envelope::done;
    rank_state* sender = nullptr;  // waits for this copy to end
    if (e->rendezvous()) {
      rank_state& snd = ranks_[e->src];
      if (snd.wait.kind == wait_kind::send && snd.wait.send == e.get()) {
        sender = &snd;
        if (snd.blocked) make_runnable(snd);  // else released by an abort, in withdraw
      }
    }
    lk.unlock();
    if (sender != nullptr) sender->cv.notify_one();
    if (err) std::rethrow_exception(err);
  }

  // Waits until the receiver has copied a rendezvous message. On abort or
  // deadlock the envelope is withdrawn (and the rank throws).
  void complete(int me, const envelope_ptr& e) {
    // Poll first (see poll): while the message is queued, for the budget;
    // once a receiver copies it, until the copy ends (4 budgets at most, room
    // for a copy of a few MiB). The acquire load that sees `done` orders
    // the receiver's copy before the caller's next write to the buffer.
    clock::time_point until{};
    if (e->state.load(std::memory_order_acquire) == envelope::done) return;
    rank_state& s = ranks_[me];
    if (poller_.may_poll(s, until)) {
      bool copying = false;
      if (poller_.poll(
              s,
              [&] {
                const auto st = e->state.load(std::memory_order_acquire);
                if (st == envelope::copying && !copying) {
                  copying = true;
                  until = std::max(until, clock::now() + 4 * opt_.poll);
                }
                return st == envelope::done;
              },
              until))
        return;
    }
    std::unique_lock lk(mu_);
    while (e->state != envelope::done) {
      if (stopped()) {
        withdraw(lk, me, e);
        throw_if_stopped(lk, me);
      }
      block(lk, me, {wait_kind::send, e->dest, e->tag, e->context, e.get()});
    }
  }

  // Takes back a rendezvous message whose sender is leaving (an exception
  // unwinds its frame). If a receiver is copying from the sender's buffer right
  // now, waits for the copy to end: the buffer must outlive every reader.
  void cancel(int me, const envelope_ptr& e) {
    std::unique_lock lk(mu_);
    withdraw(lk, me, e);
  }

  // The same for an isend request destroyed before wait_all completed it. A
  // message taken back while no rank has failed was lost by the program (a
  // request dropped, or an exception caught inside the rank): it is kept for
  // check_drained to report.
  void abandon(int me, const envelope_ptr& e) noexcept {
    std::unique_lock lk(mu_);
    if (e->state == envelope::queued && !stopped()) {
      try {
        auto lost = std::make_shared<envelope>();
        lost->src = e->src;
        lost->dest = e->dest;
        lost->tag = e->tag;
        lost->context = e->context;
        lost->count = e->count;
        lost->type = e->type;
        abandoned_.push_back(std::move(lost));
      } catch (...) {  // out of memory: the report is lost, the withdrawal is not
      }
    }
    withdraw(lk, me, e);
  }

  // Rank me's thread, as it begins: where its started collectives are.
  void attach(int me, const topocoll::detail::started_queue& started) {
    ranks_[me].started = &started;
  }

  void finish(int me) {
    std::unique_lock lk(mu_);
    ranks_[me].finished = true;
    ++finished_;
    count_idle();
    detect_deadlock();
  }

  // Records the first failure and releases every waiting rank.
  void abort(std::exception_ptr err) {
    std::unique_lock lk(mu_);
    if (!first_error_) first_error_ = err;
    aborted_ = true;
    poller_.halt();
    for (int r = 0; r < p_; ++r) ranks_[r].cv.notify_all();
  }

  std::exception_ptr first_error() const { return first_error_; }

  // Registers a communicator split off another; returns it, with its context.
  group_ptr add_group(std::vector<int> run, std::vector<int> parent) {
    std::unique_lock lk(mu_);
    auto g = std::make_shared<group>();
    g->context = 2 * static_cast<int>(groups_.size() + 1);
    g->run = std::move(run);
    g->parent = std::move(parent);
    groups_.push_back(g);
    return g;
  }
  group_ptr group_of(int context) {
    std::unique_lock lk(mu_);
    return groups_[static_cast<std::size_t>(context / 2 - 1)];
  }

  // After every rank has returned: a message still in a mailbox means the
  // ranks disagreed on what to exchange.
  void check_drained() const {
    const reports say(groups_);
    for (int r = 0; r < p_; ++r)
      for (const envelope_ptr& e : ranks_[r].inbox) say.never_received(*e, "");
    for (const envelope_ptr& e : abandoned_)
      say.never_received(*e, " (its isend request was destroyed before wait_all completed it)");
  }

 private:
  using clock = std::chrono::steady_clock;

  bool stopped() const { return aborted_ || deadlocked_; }

  void count_idle() { poller_.set_idle(blocked_ + finished_); }

  void throw_if_stopped(std::unique_lock<std::mutex>&, int me) const {
    if (deadlocked_) throw deadlock_error(deadlock_text_);
    if (aborted_)
      throw aborted_error(concat("loopback: rank ", me, " released because another rank failed"));
  }

  void withdraw(std::unique_lock<std::mutex>& lk, int me, const envelope_ptr& e) {
    if (e->state == envelope::queued) {
      auto& inbox = ranks_[e->dest].inbox;
      inbox.erase(std::find(inbox.begin(), inbox.end(), e));
      e->state = envelope::done;
      return;
    }
    rank_state& s = ranks_[me];  // copying: not blocked, the copy always ends
    s.wait = {wait_kind::send, e->dest, e->tag, e->context, e.get()};
    s.cv.wait(lk, [&] { return e->state == envelope::done; });
    s.wait = {};
  }

  // Marks a blocked rank runnable. The caller notifies its condition variable
  // after unlocking the mutex, so that the rank, once woken, does not wait for
  // that mutex at once: a rank's cv lives as long as the world, and a late
  // notify finds the rank re-checking its condition at worst.
  void make_runnable(rank_state& s) {
    s.blocked = false;
    --blocked_;
    count_idle();
  }

  // Waits until woken or stopped; the caller re-checks its condition.
  void block(std::unique_lock<std::mutex>& lk, int me, const wait_for& w) {
    rank_state& s = ranks_[me];
    s.wait = w;
    s.blocked = true;
    ++blocked_;
    count_idle();
    detect_deadlock();
    s.cv.wait(lk, [&] { return !s.blocked || stopped(); });
    if (s.blocked) {  // released by abort or deadlock
      s.blocked = false;
      --blocked_;
      count_idle();
    }
    s.wait = {};
  }

  void detect_deadlock() {
    if (deadlocked_ || aborted_ || blocked_ == 0 || blocked_ + finished_ < p_) return;
    const reports say(groups_);
    std::string text = "loopback deadlock: every live rank waits and nothing can arrive:";
    for (int r = 0; r < p_; ++r) {
      const rank_state& s = ranks_[r];
      if (s.blocked) text += "\n  " + say.waits(r, s.wait, ranks_[s.wait.peer].finished);
    }
    for (int r = 0; r < p_; ++r)
      if (const auto* started = ranks_[r].started; started != nullptr && ranks_[r].blocked)
        for (const std::string& name : started->not_begun())
          text +=
              topocoll::detail::concat("\n  rank ", r, ": ", name, " started, never waited for");
    deadlock_text_ = std::move(text);
    deadlocked_ = true;
    poller_.halt();
    for (int r = 0; r < p_; ++r) ranks_[r].cv.notify_all();
  }

  int p_;
  options opt_;
  std::unique_ptr<rank_state[]> ranks_;
  poller poller_;  // knows blocked_ + finished_ and whether stopped()
  std::mutex mu_;
  int blocked_ = 0;
  int finished_ = 0;
  bool aborted_ = false;
  bool deadlocked_ = false;
  std::string deadlock_text_;
  std::exception_ptr first_error_;
  std::vector<envelope_ptr> abandoned_;  // isend messages withdrawn unreceived (see abandon)
  std::vector<group_ptr> groups_;        // the communicator of context 2(i + 1) is groups_[i]
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback::detail
