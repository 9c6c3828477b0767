#pragma once
// The collectives a thread has started and not completed: the progress engine
// behind the nonblocking and persistent collectives (collectives/nonblocking.hpp,
// doc/nonblocking.md).
//
// A started collective is the blocking collective's own code, run later. On
// a transport that can suspend (ResumableTransport: mpi::Comm) it runs as a
// fiber, a stack of its own: where the transport would block, it polls once
// and suspends instead, and the next test() or wait() resumes it where it
// stopped. So test() never waits for the other ranks, the kernels stay the
// one blocking definition of each pattern, and collectives on different
// communicators progress side by side. On one communicator they run one after
// another, in the order they were started (their messages share tags).
// Blocking collectives and the transport's waits drive the same progress
// (while_blocked), so a blocking call on one communicator never stalls the
// collectives started on another.
//
// On any other transport (loopback, a user's) a started collective runs whole,
// on the caller's stack, at the first test(), wait() or blocking collective
// of the thread, oldest first across communicators.
//
// Under AddressSanitizer and ThreadSanitizer no fiber is made: switching
// stacks needs their annotations, which this file does not make. Started
// collectives then run whole, as on loopback.
//
// A communicator is known by its transport object's address: collectives
// started on two objects over one MPI communicator are not ordered against
// each other. Everything here is per thread: an MPI process, or one loopback
// rank.

#include <sched.h>

#include <cstddef>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../version.hpp"
#include "fiber.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

// A transport whose blocking waits suspend a started collective's fiber
// instead of blocking (they call detail::while_blocked() as they poll).
template <class C>
concept ResumableTransport = requires {
  requires C::topocoll_resumable;
};

namespace detail {

// One started collective: what runs it, where it is, and what came of it.
struct started_collective {
  // The two finished states last: finished() is one comparison.
  enum class state : unsigned char { queued, running, done, idle };

  std::string_view name;  // "iall_reduce", "all_reduce_init" (a literal): for errors and reports
  // The collective, checked when it was started: a plain function of the
  // object that holds its arguments (collectives/nonblocking.hpp).
  void (*run)(started_collective&) = nullptr;
  const void* comm = nullptr;  // its transport object: one at a time on each
  bool resumable = false;      // runs as a fiber
  state at = state::idle;
  std::exception_ptr error;  // what run threw, until a test() or wait() takes it

  // The fiber, while it runs as one.
  std::unique_ptr<fiber_stack> stack;
  fiber_context context, caller;
  bool suspended = false;              // in a fiber, between suspend and resume
  started_collective* next = nullptr;  // the next one queued (started_queue)

  started_collective() = default;
  started_collective(const started_collective&) = delete;
  started_collective& operator=(const started_collective&) = delete;
  ~started_collective() {
    if (stack) spare_stacks::give(std::move(stack));
  }

  bool finished() const { return at >= state::done; }
};

// The started collective running on this thread's stack or in a fiber now.
// In a fiber it is the fiber's own (started_queue::resume sets both), so
// in_fiber implies started_running.
inline thread_local started_collective* started_running = nullptr;
inline thread_local bool in_fiber = false;

// Whether a started collective runs on this thread now, on its stack or in a
// fiber: a test() or wait() of another started collective would then
// advance nothing (or refuse, started_queue::run_through).
inline bool started_collective_running() {
  return started_running != nullptr;
}

// Inside a fiber: back to whoever resumed it.
inline void suspend_fiber() {
  started_collective* s = started_running;
  s->suspended = true;
  in_fiber = false;
  fiber_context::swap(s->context, s->caller);
  in_fiber = true;
}

// run_through's refusal, out of line: the common path then needs no frame.
[[noreturn, gnu::cold, gnu::noinline]] inline void waited_inside_a_collective(
    std::string_view name) {
  throw std::logic_error("topocoll: " + std::string(name) +
                         " was tested or waited for inside a running collective");
}

// The collectives this thread started and has not run to their end, oldest
// first, linked through started_collective::next: start + wait, the common
// case, pushes one and takes it off the front again, with no allocation and
// no test of a capacity. Two pointers, constant-initialized and trivially
// destroyed, so the thread's queue needs no guard of its first use.
class started_queue {
 public:
  // The request that owns s completes or withdraws it before it lets s go
  // (collectives/requests.hpp), so the queue holds it by address.
  void push(started_collective& s) {
    s.at = started_collective::state::queued;
    if (s.error) s.error = nullptr;  // an error nobody took from the last run
    s.next = nullptr;
    (tail_ != nullptr ? tail_->next : head_) = &s;
    tail_ = &s;
  }

  // One pass: each communicator's oldest collective, if it runs as a fiber,
  // runs until it suspends or ends. The others wait for run_through.
  void step() {
    if (in_fiber) return;
    for (started_collective* q = head_; q != nullptr; q = q->next)
      if (oldest_of_its_communicator(*q) && suspends(*q)) resume(*q);
    erase_finished();
  }

  // Until s has finished. A collective that cannot suspend runs whole, after
  // every such one started before it. One that can runs on this stack if it
  // is its communicator's oldest and has not begun (start + wait costs no
  // fiber); otherwise its fiber steps. Inside a running collective (a blocking
  // collective's scope within a started one), nothing: the outer call runs
  // them in order. The common case, s alone and not begun (start + wait), is
  // inlined: s runs at once, which is what next_for would find.
  [[gnu::always_inline]] void run_through(started_collective& s) {
    if (head_ == &s && s.next == nullptr && !s.suspended && !started_collective_running())
        [[likely]] {
      head_ = tail_ = nullptr;
      return run_here(s);
    }
    run_through_queue(s);
  }

  // test(): one step of the fibers; true once s has finished. A collective
  // that cannot suspend runs whole.
  bool test(started_collective& s) {
    if (!s.finished() && !suspends(s)) run_through(s);
    if (!s.finished()) step();
    return s.finished();
  }

  // Before a blocking collective on `comm`: every collective started on it
  // has finished, and every one that cannot suspend (they run in start order).
  void settle(const void* comm) {
    if (started_collective_running()) return;
    for (;;) {
      started_collective* q = head_;
      while (q != nullptr && q->comm != comm && suspends(*q)) q = q->next;
      if (q == nullptr) return;
      run_through(*q);
    }
  }

  // Whether any collective is queued (started and not run to its end).
  bool holds_any() const { return head_ != nullptr; }

  // The collectives started and not yet begun, oldest first (a deadlock
  // report names them).
  std::vector<std::string> not_begun() const {
    std::vector<std::string> names;
    for (const started_collective* q = head_; q != nullptr; q = q->next)
      if (q->at == started_collective::state::queued && !q->suspended) names.emplace_back(q->name);
    return names;
  }

  // Takes s out of the queue if it has not begun (the rank then never takes
  // part in it); true if it was there.
  bool withdraw(started_collective& s) {
    if (s.at != started_collective::state::queued || s.suspended || !holds(s)) return false;
    unlink(s);
    s.at = started_collective::state::done;
    return true;
  }

 private:
  [[gnu::noinline]] void run_through_queue(started_collective& s) {
    if (started_collective_running()) {
      if (!s.finished()) waited_inside_a_collective(s.name);
      return;
    }
    while (!s.finished()) {
      if (started_collective* q = next_for(s)) {
        unlink(*q);
        run_here(*q);
      } else
        step();
      if (!s.finished()) ::sched_yield();  // not <thread>: collectives.hpp stays thread-free
    }
  }

  static bool suspends(const started_collective& s) { return s.resumable && fibers_available; }

  bool holds(const started_collective& s) const {
    for (const started_collective* q = head_; q != nullptr; q = q->next)
      if (q == &s) return true;
    return false;
  }

  // Whether no collective on s's communicator runs now or was queued before s.
  bool oldest_of_its_communicator(const started_collective& s) const {
    if (started_running != nullptr && started_running->comm == s.comm) return false;
    for (const started_collective* q = head_; q != &s; q = q->next)
      if (q->comm == s.comm) return false;
    return true;
  }

  // What run_through(s) runs on this stack next: the oldest collective that
  // cannot suspend, up to s; else s, if it is its communicator's oldest and
  // has not begun; else none.
  started_collective* next_for(const started_collective& s) const {
    for (started_collective* q = head_; q != nullptr; q = q->next) {
      if (!suspends(*q)) return q;
      if (q->comm == s.comm) return q == &s && !q->suspended ? q : nullptr;
      if (q == &s) break;
    }
    return nullptr;
  }

  // Takes s (which the queue holds) out of it.
  void unlink(started_collective& s) {
    started_collective* prev = nullptr;
    if (head_ == &s) {  // the oldest: start + wait's only one
      head_ = s.next;
    } else {
      prev = head_;
      while (prev->next != &s) prev = prev->next;
      prev->next = s.next;
    }
    if (tail_ == &s) tail_ = prev;
    s.next = nullptr;
  }

  // Runs s, taken out of the queue, whole, on this stack.
  void run_here(started_collective& s) {
    s.at = started_collective::state::running;
    started_running = &s;
    try {
      s.run(s);
    } catch (...) {
      s.error = std::current_exception();
    }
    started_running = nullptr;
    s.at = started_collective::state::done;
  }

  static void fiber_entry() {
    started_collective& s = *started_running;
    try {
      s.run(s);
    } catch (...) {
      s.error = std::current_exception();
    }
    s.at = started_collective::state::done;
    s.suspended = false;
    in_fiber = false;
    fiber_context::swap(s.context, s.caller);  // never resumed again
  }

  // Starts s as a fiber, or resumes it where it suspended.
  static void resume(started_collective& s) {
    if (!s.suspended) {
      if (!s.stack) s.stack = spare_stacks::take();
      s.context.begin(s.stack->bottom(), fiber_stack::bytes, &fiber_entry);
      s.at = started_collective::state::running;
    }
    s.suspended = false;
    started_collective* const outer = started_running;  // one running on this stack
    started_running = &s;
    in_fiber = true;
    fiber_context::swap(s.caller, s.context);
    in_fiber = false;
    started_running = outer;
  }

  void erase_finished() {
    for (started_collective* q = head_; q != nullptr;) {
      started_collective* const next = q->next;
      if (q->finished()) unlink(*q);
      q = next;
    }
  }

  started_collective* head_ = nullptr;
  started_collective* tail_ = nullptr;
};

inline thread_local started_queue started_of_this_thread;

inline started_queue& started_on_this_thread() {
  return started_of_this_thread;
}

// Whether this thread has started collectives it has not run to their end;
// read by every blocking collective and, on a resumable transport, by every
// wait, so the common case (none) is one load.
inline bool started_collectives_waiting() {
  return started_of_this_thread.holds_any();
}

// What a resumable transport calls each time it polls a wait: inside a
// fiber, suspend; in a blocking call with collectives started, step them.
inline void while_blocked() {
  if (in_fiber)
    suspend_fiber();
  else if (started_collectives_waiting())
    started_on_this_thread().step();
}

// Whether a resumable transport must poll its waits (and call
// while_blocked) rather than block: in a fiber, or with collectives started.
inline bool polling_for_progress() {
  return in_fiber || started_collectives_waiting();
}

// What a blocking collective on `comm` does first when collectives wait (cold).
[[gnu::cold, gnu::noinline]] inline void run_started_collectives(const void* comm) {
  started_on_this_thread().settle(comm);
}

}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
