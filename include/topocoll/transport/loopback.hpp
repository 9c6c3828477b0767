#pragma once
// In-process transport: p ranks, each a thread, exchanging messages through
// per-rank mailboxes. No dependency beyond the standard library.
//
// Semantics (those of MPI's standard mode):
//  * messages between one pair with one tag arrive in the order the sends
//    (send, isend or sendrecv) were started;
//  * a trivially copyable message of at most `eager_limit` bytes is copied into
//    the mailbox and send returns at once; a larger one costs one copy: send
//    blocks until the receiver has copied straight out of the sender's buffer;
//  * other types are copied into the mailbox and moved out by the receiver;
//  * isend (core/nonblocking.hpp) never blocks: an eager or non-trivially-
//    copyable message is copied into the mailbox at once and its request is
//    complete; a rendezvous one is queued referencing the sender's buffer,
//    which must stay valid and unchanged until wait_all has returned for it.
//    wait_all blocks until the receivers have copied every such message. A
//    request destroyed while pending (an exception unwinding) withdraws its
//    message if no receiver has taken it yet, or waits for the copy under way
//    to end; a message withdrawn that way while no rank had failed is reported
//    by run() like any message never received;
//  * a receive whose buffer differs in size or type throws message_error.
//
// No hang, ever. All mailbox state sits under one mutex, and each rank that
// waits says what for. A rank whose wait becomes satisfiable is marked runnable
// by whoever satisfied it, under that mutex, so "every live rank waits for
// something that cannot come" is an exact, immediate test: no timeout. Then
// every waiting rank throws deadlock_error naming all blocked ranks (a rank in
// wait_all waits "in send" for its first request not yet copied). When a rank
// throws, the others are released with aborted_error and run() rethrows the
// first exception after joining every thread.
//
// Speed. A rendezvous message costs one memcpy, by the receiver, straight
// from the sender's buffer into its own. A rank about to wait first polls an
// atomic for a short while (options::poll; see world::poll for when), since a
// sleep and wake-up on the condition variable costs 10-40 us, paid twice per
// rendezvous message, and dominated messages up to a few MiB. A polling rank
// has not started to wait yet: it re-checks under the mutex before it sleeps,
// so deadlock detection stays exact (at most one poll budget later).
//
// Sub-communicators (Comm::split) share the run's mailboxes: a message carries
// the context of its communicator and matches only a receive on that context,
// so the traffic of several communicators never mixes; deadlock detection
// covers them all at once.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "../core/errors.hpp"
#include "../core/nonblocking.hpp"

namespace topocoll::loopback {

struct options {
  // Trivially copyable messages up to this many bytes are buffered; larger
  // ones are rendezvous (one copy). 0 makes every send synchronous, the
  // strictest test of an algorithm's send/recv order.
  std::size_t eager_limit = 16384;
  // A rank about to wait first polls for up to this long (a sender whose
  // message is being copied: up to 4 times as long, until the copy ends)
  // while the ranks not waiting fit on the machine's cores; see world::poll.
  // 0: every wait sleeps on the condition variable at once.
  std::chrono::microseconds poll{50};
};

class Comm;

namespace detail {

using topocoll::detail::concat;

struct envelope {
  int src = 0;  // ranks of the run (a sub-communicator's are mapped in Comm)
  int dest = 0;
  int tag = 0;
  int context = 0;  // the communicator: 0 the run's, see group
  std::size_t count = 0;
  const std::type_info* type = nullptr;
  // Exactly one of these carries the payload.
  const void* borrowed = nullptr;      // rendezvous: the sender's buffer
  std::unique_ptr<std::byte[]> bytes;  // eager, trivially copyable
  std::shared_ptr<void> objects;       // other types: a std::vector<T>
  enum state_t { queued, copying, done };
  std::atomic<state_t> state = queued;  // written under the world's mutex, polled without it
  bool rendezvous() const { return borrowed != nullptr; }
};
using envelope_ptr = std::shared_ptr<envelope>;

enum class wait_kind { none, recv, send };

// What a waiting rank waits for: a message from peer with tag on a context
// (recv), or the copy of its rendezvous message `send` (send).
struct wait_for {
  wait_kind kind = wait_kind::none;
  int peer = -1;
  int tag = -1;
  int context = 0;
  const envelope* send = nullptr;
  bool matches(const envelope& e) const {
    return kind == wait_kind::recv && peer == e.src && tag == e.tag && context == e.context;
  }
};

// A communicator split off the run's ranks (Comm::split). Its context is even
// and > 0: the run's own is 0, and context + 1 carries the splits of the
// communicator itself, apart from its users' messages.
struct group {
  int context = 0;
  std::vector<int> run;     // member i as a rank of the run
  std::vector<int> parent;  // member i as a rank of the communicator it was split from
  int rank_of(int run_rank) const {
    return static_cast<int>(std::find(run.begin(), run.end(), run_rank) - run.begin());
  }
};
using group_ptr = std::shared_ptr<const group>;

struct rank_state {
  std::condition_variable cv;
  std::deque<envelope_ptr> inbox;          // messages addressed to this rank, in arrival order
  std::atomic<std::uint64_t> arrivals{0};  // messages ever posted here; polled without the mutex
  wait_for wait;
  bool blocked = false;  // waiting, and nothing yet satisfies it
  bool finished = false;
  // See world::poll; touched by the rank's own thread only.
  int poll_skip = 0;      // waits left to sleep at once, without polling
  int poll_backoff = 16;  // poll_skip after the next yield that lost the core
};

class world {
 public:
  world(int p, options o) : p_(p), opt_(o), ranks_(new rank_state[static_cast<std::size_t>(p)]) {
    cores_ = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }

  int size() const { return p_; }
  const options& opts() const { return opt_; }

  // Queues a message; returns the envelope for a rendezvous send to wait on.
  envelope_ptr post(envelope_ptr e) {
    std::unique_lock lk(mu_);
    throw_if_stopped(lk, e->src);
    rank_state& d = ranks_[e->dest];
    d.inbox.push_back(e);
    d.arrivals.fetch_add(1, std::memory_order_release);
    if (d.blocked && d.wait.matches(*e)) wake(d);
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
      if (!ranks_[src].finished && may_poll(s, until)) {
        const std::uint64_t seen = s.arrivals.load(std::memory_order_relaxed);
        lk.unlock();
        poll(
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
    if (e->rendezvous()) {
      rank_state& snd = ranks_[e->src];
      if (snd.wait.kind == wait_kind::send && snd.wait.send == e.get()) {
        if (snd.blocked)
          wake(snd);
        else
          snd.cv.notify_one();  // released by an abort, waiting for the copy to end
      }
    }
    lk.unlock();
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
    if (may_poll(s, until)) {
      bool copying = false;
      if (poll(
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
    halted_.store(true, std::memory_order_relaxed);
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
  void check_drained() {
    auto report = [&](const envelope& e, const char* why) {
      const int c = e.context;
      throw message_error(concat("loopback::run: a message from ", who(c, e.src), " to ",
                                 who(c, e.dest), tag_text(c, e.tag, " with tag "),
                                 c % 2 ? " in split" + sub(c, " of") : "", " (", e.count,
                                 " elements of ", e.type->name(), ") was never received", why));
    };
    for (int r = 0; r < p_; ++r)
      for (const envelope_ptr& e : ranks_[r].inbox) report(*e, "");
    for (const envelope_ptr& e : abandoned_)
      report(*e, " (its isend request was destroyed before wait_all completed it)");
  }

 private:
  using clock = std::chrono::steady_clock;

  bool stopped() const { return aborted_ || deadlocked_; }

  // Run rank r as a rank of the communicator of `context` (context + 1: the
  // splits of that communicator): "rank 1 (rank 3 of the parent)". Under mu_.
  std::string who(int context, int r) const {
    if (context < 2) return concat("rank ", r);
    const group& g = *groups_[static_cast<std::size_t>(context / 2 - 1)];
    const int i = g.rank_of(r);
    return concat("rank ", i, " (rank ", g.parent[static_cast<std::size_t>(i)], " of the parent)");
  }
  static std::string sub(int context, const char* lead) {
    return context < 2 ? "" : concat(lead, " sub-communicator ", context / 2);
  }
  // ", tag 9, on sub-communicator 1"; the splits' own tag says nothing
  static std::string tag_text(int context, int tag, const char* lead) {
    return context % 2 ? "" : concat(lead, tag, sub(context, ", on"));
  }
  std::string waits_text(int r, const wait_for& w) const {
    const int c = w.context;
    return concat(who(c, r), c % 2 ? " waits in split" + sub(c, " of") + ", in " : " waits in ",
                  w.kind == wait_kind::recv ? "recv from " : "send to ", who(c, w.peer),
                  tag_text(c, w.tag, ", tag "),
                  ranks_[w.peer].finished ? " (which has returned)" : "");
  }

  // Polling. When the partner of a wait runs on another core, the wait ends
  // within microseconds, far less than a sleep and wake-up on a condition
  // variable costs (10-40 us on a VM, twice per rendezvous message). So a rank
  // about to wait first polls an atomic (its inbox's arrival count, or the
  // envelope's state) for up to options::poll, yielding its core at each
  // turn. It polls only while the ranks not waiting fit on the machine's
  // cores, and stops as soon as they no longer do: with 64 ranks on 2 cores
  // the ranks that would satisfy the wait need the core, and they sleep at
  // once as before. A polling rank is not "blocked": afterwards it re-checks
  // its condition under the mutex and blocks as before, so deadlock detection
  // stays exact, at most one budget later.
  //
  // Why yield, not a busy loop with a pause instruction: the scheduler often
  // queues the partner on the poller's own core (a thread is woken where its
  // waker runs), where a busy loop would hold it off for the whole budget
  // (doc/transports.md has the figures).
  bool room_to_poll() const {
    return p_ - idle_.load(std::memory_order_relaxed) <= cores_ &&
           !halted_.load(std::memory_order_relaxed);
  }
  // Starts the budget at the first call in one wait; false once it is spent.
  bool may_poll(rank_state& s, clock::time_point& until) const {
    if (opt_.poll <= clock::duration::zero()) return false;
    if (until == clock::time_point{}) {  // the first call in this wait
      if (s.poll_skip > 0) {
        --s.poll_skip;
        return false;
      }
      if (!room_to_poll()) return false;
      until = clock::now() + opt_.poll;
      return true;
    }
    return room_to_poll() && clock::now() < until;
  }
  // Polls ready() until it holds (true), or until `until`, or no room (false).
  // A yield that takes long (100 us) means another process got the core for
  // a time slice: on a machine loaded by other processes polling loses badly
  // against sleeping (a sleeper is woken with priority; doc/transports.md). So
  // the rank stops, and sleeps at once in its next 16 waits (32, 64, ... up to
  // 4096 while it keeps happening; back to 16 after a poll that succeeded).
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

  void count_idle() { idle_.store(blocked_ + finished_, std::memory_order_relaxed); }

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

  void wake(rank_state& s) {
    s.blocked = false;
    --blocked_;
    count_idle();
    s.cv.notify_one();
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
    std::string text = "loopback deadlock: every live rank waits and nothing can arrive:";
    for (int r = 0; r < p_; ++r) {
      const rank_state& s = ranks_[r];
      if (s.blocked) text += "\n  " + waits_text(r, s.wait);
    }
    deadlock_text_ = std::move(text);
    deadlocked_ = true;
    halted_.store(true, std::memory_order_relaxed);
    for (int r = 0; r < p_; ++r) ranks_[r].cv.notify_all();
  }

  int p_;
  options opt_;
  std::unique_ptr<rank_state[]> ranks_;
  std::mutex mu_;
  int blocked_ = 0;
  int finished_ = 0;
  std::atomic<int> idle_{0};         // blocked_ + finished_, for room_to_poll
  std::atomic<bool> halted_{false};  // aborted_ || deadlocked_, for poll
  int cores_ = 1;
  bool aborted_ = false;
  bool deadlocked_ = false;
  std::string deadlock_text_;
  std::exception_ptr first_error_;
  std::vector<envelope_ptr> abandoned_;  // isend messages withdrawn unreceived (see abandon)
  std::vector<group_ptr> groups_;        // the communicator of context 2(i + 1) is groups_[i]
};

}  // namespace detail

// One rank's handle on a loopback world; models topocoll::Transport.
class Comm {
 public:
  Comm(detail::world& w, int rank) : w_(&w), me_(rank), rank_(rank), size_(w.size()) {}
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  Comm(Comm&&) noexcept = default;
  Comm& operator=(Comm&&) noexcept = default;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // The communicator of the ranks here that pass the same color (>= 0),
  // ranked by key, then by their rank here (MPI_Comm_split). Collective: every
  // rank calls it, and a rank that does not leaves the others waiting "in
  // split", which deadlock detection reports. Its messages never match those
  // of this or any other communicator, and a deadlock names its ranks as
  // "rank 1 (rank 3 of the parent)". A negative color throws
  // std::invalid_argument once the rank has taken part, so the others still
  // get theirs. The result must not outlive run(), and a rank uses all its
  // communicators from its own thread, one call at a time.
  Comm split(int color, int key) {
    const std::vector<int> mine{color, key};
    std::vector<int> got(2);  // {context, rank}; context -1: no group
    Comm ctl = control();
    if (rank_ == 0) {
      got = lead_split(ctl, mine);
    } else {
      ctl.send(0, 0, std::span<const int>(mine));
      ctl.recv(0, 0, std::span<int>(got));
    }
    if (color < 0)
      topocoll::detail::invalid("loopback::Comm::split", rank_, size_, "color ", color,
                                " is negative, need color >= 0");
    return Comm(*w_, me_, got[1], w_->group_of(got[0]));
  }

  template <class T>
  void send(int dest, int tag, std::span<const T> data) {
    auto e = post<T>("send", dest, tag, data);
    if (e->rendezvous()) w_->complete(me_, e);
  }
  template <class T>
  void send(int dest, int tag, std::span<T> data) {
    send(dest, tag, std::span<const T>(data));
  }

  // A started send (core/nonblocking.hpp): move-only, and empty unless it
  // holds a rendezvous message no wait_all has completed yet. One destroyed
  // while pending withdraws its message, or waits for the receiver's copy if it
  // has begun, so no reader outlives the sender's buffer.
  class request {
   public:
    request() = default;
    request(request&& o) noexcept : w_(o.w_), rank_(o.rank_), e_(std::move(o.e_)) {}
    request& operator=(request&& o) noexcept {
      if (this != &o) {
        abandon();
        w_ = o.w_;
        rank_ = o.rank_;
        e_ = std::move(o.e_);
      }
      return *this;
    }
    ~request() { abandon(); }
    bool pending() const { return e_ != nullptr; }

   private:
    friend class Comm;
    void abandon() noexcept {
      if (!e_) return;
      w_->abandon(rank_, e_);
      e_.reset();
    }
    detail::world* w_ = nullptr;
    int rank_ = -1;
    detail::envelope_ptr e_;  // a rendezvous message, until completed
  };

  // Starts a send and returns at once (see the header comment): an eager or
  // non-trivially-copyable message is copied now and its request is empty; a
  // rendezvous one reads `data` when received, so `data` must stay valid and
  // unchanged until wait_all has returned for the request.
  template <class T>
  request isend(int dest, int tag, std::span<const T> data) {
    auto e = post<T>("isend", dest, tag, data);
    request r;
    if (e->rendezvous()) {
      r.w_ = w_;
      r.rank_ = me_;
      r.e_ = std::move(e);
    }
    return r;
  }
  template <class T>
  request isend(int dest, int tag, std::span<T> data) {
    return isend(dest, tag, std::span<const T>(data));
  }

  // Blocks until every request's message has been copied by its receiver, in
  // the order given (the rank waits "in send" for the first one not yet
  // copied, for deadlock detection); every request is empty afterwards. On
  // abort or deadlock the requests not yet complete are withdrawn and the
  // error is thrown.
  void wait_all(std::span<request> reqs) {
    std::size_t i = 0;
    try {
      for (; i < reqs.size(); ++i) {
        request& r = reqs[i];
        if (!r.e_) continue;
        r.w_->complete(r.rank_, r.e_);
        r.e_.reset();
      }
    } catch (...) {
      for (; i < reqs.size(); ++i) reqs[i].abandon();
      throw;
    }
  }

  template <class T>
  void recv(int source, int tag, std::span<T> data) {
    static_assert(!std::is_const_v<T>, "loopback::Comm::recv needs a writable buffer");
    check_peer("recv", "source", source);
    w_->receive(me_, {detail::wait_kind::recv, run_rank(source), tag, ctx_},
                [&](detail::envelope& e) { deliver(e, source, data); });
  }

  // Sends and receives at once: the send is posted first, so two ranks that
  // sendrecv with each other never deadlock, whatever the message sizes.
  template <class T, class U>
  void sendrecv(int dest, std::span<T> out, int source, std::span<U> in, int tag) {
    using V = std::remove_const_t<T>;
    static_assert(std::is_same_v<V, U>,
                  "loopback::Comm::sendrecv: send and receive element types differ");
    auto e = post<V>("sendrecv", dest, tag, std::span<const V>(out));
    try {
      recv(source, tag, in);
    } catch (...) {
      if (e->rendezvous()) w_->cancel(me_, e);
      throw;
    }
    if (e->rendezvous()) w_->complete(me_, e);
  }

 private:
  Comm(detail::world& w, int me, int rank, detail::group_ptr g)
      : w_(&w),
        me_(me),
        rank_(rank),
        size_(static_cast<int>(g->run.size())),
        ctx_(g->context),
        g_(std::move(g)) {}

  int run_rank(int r) const { return g_ ? g_->run[static_cast<std::size_t>(r)] : r; }

  // This communicator on the context of its splits (ctx_ + 1).
  Comm control() const {
    Comm c = g_ ? Comm(*w_, me_, rank_, g_) : Comm(*w_, me_);
    c.ctx_ += 1;
    return c;
  }

  // Rank 0's part of split: gathers every rank's {color, key}, forms the
  // groups, and sends each rank its {context, rank}; returns its own.
  std::vector<int> lead_split(Comm& ctl, const std::vector<int>& mine) {
    const auto p = static_cast<std::size_t>(size_);
    std::vector<int> asked(2 * p), told(2 * p, -1);
    std::copy(mine.begin(), mine.end(), asked.begin());
    for (int r = 1; r < size_; ++r)
      ctl.recv(r, 0, std::span<int>(asked).subspan(2 * static_cast<std::size_t>(r), 2));
    std::vector<int> order(p);
    std::iota(order.begin(), order.end(), 0);
    auto color = [&](int r) { return asked[2 * static_cast<std::size_t>(r)]; };
    auto key = [&](int r) { return asked[2 * static_cast<std::size_t>(r) + 1]; };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return std::pair(color(a), key(a)) < std::pair(color(b), key(b));
    });
    for (std::size_t i = 0, j = 0; i < p; i = j) {  // [i, j): one color
      while (j < p && color(order[j]) == color(order[i])) ++j;
      if (color(order[i]) < 0) continue;
      std::vector<int> run, parent(order.begin() + i, order.begin() + j);
      for (int r : parent) run.push_back(run_rank(r));
      const int context = w_->add_group(std::move(run), parent)->context;
      for (std::size_t k = i; k < j; ++k) {
        told[2 * static_cast<std::size_t>(order[k])] = context;
        told[2 * static_cast<std::size_t>(order[k]) + 1] = static_cast<int>(k - i);
      }
    }
    for (int r = 1; r < size_; ++r)
      ctl.send(r, 0, std::span<const int>(told).subspan(2 * static_cast<std::size_t>(r), 2));
    return {told[0], told[1]};
  }

  void check_peer(const char* op, const char* what, int peer) const {
    if (peer < 0 || peer >= size())
      topocoll::detail::invalid(std::string("loopback::Comm::") + op, rank_, size(), what, " ",
                                peer, " is outside [0, ", size(), ")");
  }

  template <class T>
  detail::envelope_ptr post(const char* op, int dest, int tag, std::span<const T> data) {
    check_peer(op, "destination", dest);
    auto e = std::make_shared<detail::envelope>();
    e->src = me_;
    e->dest = run_rank(dest);
    e->context = ctx_;
    e->tag = tag;
    e->count = data.size();
    e->type = &typeid(T);
    if constexpr (std::is_trivially_copyable_v<T>) {
      const std::size_t n = data.size_bytes();
      if (n > w_->opts().eager_limit) {
        e->borrowed = data.data();
      } else if (n > 0) {
        e->bytes.reset(new std::byte[n]);
        std::memcpy(e->bytes.get(), data.data(), n);
      }
    } else {
      e->objects = std::make_shared<std::vector<T>>(data.begin(), data.end());
    }
    return w_->post(std::move(e));
  }

  template <class T>
  void deliver(detail::envelope& e, int source, std::span<T> data) const {
    if (*e.type != typeid(T))
      throw message_error(topocoll::detail::concat(
          "loopback recv on rank ", rank_, ": the message from rank ", source, " with tag ", e.tag,
          " holds ", e.type->name(), ", the receive buffer ", typeid(T).name()));
    if (e.count != data.size())
      throw message_error(topocoll::detail::concat(
          "loopback recv on rank ", rank_, ": the message from rank ", source, " with tag ", e.tag,
          " has ", e.count, " elements, the receive buffer holds ", data.size()));
    if constexpr (std::is_trivially_copyable_v<T>) {
      const void* from = e.rendezvous() ? e.borrowed : e.bytes.get();
      if (!data.empty()) std::memcpy(data.data(), from, data.size_bytes());
    } else {
      auto& v = *static_cast<std::vector<T>*>(e.objects.get());
      std::move(v.begin(), v.end(), data.begin());
    }
  }

  detail::world* w_;
  int me_;    // the rank in the run: the world's mailboxes are the run's
  int rank_;  // the rank in this communicator
  int size_;
  int ctx_ = 0;          // the context this communicator's messages carry
  detail::group_ptr g_;  // null for the run's own communicator
};

static_assert(topocoll::Transport<Comm>);
static_assert(topocoll::SplittableTransport<Comm>);
static_assert(topocoll::NonblockingTransport<Comm, double>);
static_assert(topocoll::NonblockingTransport<Comm, std::string>);

// Runs f(comm) on p ranks, each a thread (rank 0 on the calling thread), and
// joins them all. Rethrows the first exception; throws message_error if a
// message was never received.
template <class F>
void run(int p, F&& f, options opt = {}) {
  if (p < 1)
    throw std::invalid_argument(
        topocoll::detail::concat("loopback::run: p = ", p, ", need p >= 1"));
  detail::world w(p, opt);
  auto body = [&](int r) {
    try {
      Comm c(w, r);
      f(c);
    } catch (...) {
      w.abort(std::current_exception());
    }
    w.finish(r);
  };
  std::vector<std::jthread> threads;
  threads.reserve(static_cast<std::size_t>(p - 1));
  try {
    for (int r = 1; r < p; ++r) threads.emplace_back(body, r);
  } catch (...) {  // could not start a thread: release those that did
    w.abort(std::current_exception());
    for (int r = static_cast<int>(threads.size()) + 1; r < p; ++r) w.finish(r);
  }
  body(0);
  threads.clear();  // joins
  if (auto err = w.first_error()) std::rethrow_exception(err);
  w.check_drained();
}

}  // namespace topocoll::loopback
