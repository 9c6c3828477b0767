#pragma once
// topocoll::request and topocoll::persistent_request: a started collective
// as a value (collectives/nonblocking.hpp starts them; doc/nonblocking.md).
//
//   tc::request r = tc::iall_reduce<Topo>(c, in, out, op);
//   r.test();  r.wait();  tc::wait_all(std::span<tc::request>(v));
//
// Both are move-only and type-erased: requests of any collectives on any
// transports fit in one container. An empty or completed request tests true.
// test() advances the collectives this thread started and says whether this
// one has finished; wait() advances them until it has (core/progress.hpp,
// doc/nonblocking.md). Either rethrows the collective's error, once.
//
// Destroyed before completion, a request completes its collective in the
// destructor, as std::jthread joins: the library never touches the buffers
// after the request is gone, and the other ranks are not left waiting. An
// error there cannot be thrown, so it is written to stderr. While an
// exception unwinds the stack, a collective that has not run is withdrawn
// instead: this rank takes no part in it, and the other ranks get what any
// rank that stops gives them (timeout_error on MPI with a timeout,
// deadlock_error or aborted_error on loopback).

#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "../core/options.hpp"
#include "../core/progress.hpp"
#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// What request and persistent_request share: one started collective.
class request_handle {
 public:
  request_handle() = default;
  explicit request_handle(std::shared_ptr<started_collective> s)
      : s_(std::move(s)), unwinding_(std::uncaught_exceptions()) {}
  request_handle(request_handle&&) noexcept = default;
  request_handle& operator=(request_handle&& other) noexcept {
    if (this != &other) {
      settle();
      s_ = std::move(other.s_);
      unwinding_ = other.unwinding_;
    }
    return *this;
  }
  ~request_handle() { settle(); }

  // A finished collective needs nothing of the queue (a request destroyed
  // after its wait(), the common case, settles here).
  bool test() {
    if (!s_) return true;
    if (!s_->finished() && !started_on_this_thread().test(*s_)) return false;
    rethrow();
    return true;
  }
  void wait() {
    if (!s_) return;
    if (!s_->finished()) started_on_this_thread().run_through(*s_);
    rethrow();
  }

 protected:
  started_collective* state() const { return s_.get(); }
  bool active() const { return s_ && !s_->finished(); }

 private:
  void rethrow() {
    if (s_->error) std::rethrow_exception(std::exchange(s_->error, nullptr));
  }

  // The destructor's completion (see the header comment).
  void settle() noexcept {
    if (!s_) return;
    if (!s_->finished() && std::uncaught_exceptions() > unwinding_ &&
        started_on_this_thread().withdraw(*s_))
      return;
    try {
      wait();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "topocoll: %.*s failed in a request destroyed unwaited: %s\n",
                   static_cast<int>(s_->name.size()), s_->name.data(), e.what());
    } catch (...) {
      std::fprintf(stderr, "topocoll: %.*s failed in a request destroyed unwaited\n",
                   static_cast<int>(s_->name.size()), s_->name.data());
    }
  }

  std::shared_ptr<started_collective> s_;
  // The exceptions unwinding where the collective was started (an empty
  // handle settles nothing, so it does not ask).
  int unwinding_ = 0;
};

}  // namespace detail

// A nonblocking collective (ibroadcast, iall_reduce, ...).
class request : private detail::request_handle {
 public:
  request() = default;
  explicit request(std::shared_ptr<detail::started_collective> s) : request_handle(std::move(s)) {}

  // Advances the started collectives; true once this one has finished. On
  // MPI it never waits for other ranks; on loopback it runs the collective
  // whole (doc/nonblocking.md).
  using request_handle::test;
  // Advances them until this one has finished. Both rethrow the collective's
  // error (message_error, timeout_error, deadlock_error, ...) once.
  using request_handle::wait;
};

// Completes every request, in order; then rethrows the first error, if any.
inline void wait_all(std::span<request> requests) {
  std::exception_ptr first;
  for (request& r : requests) try {
      r.wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  if (first) std::rethrow_exception(first);
}

// What a persistent collective was planned as: its algorithm and the model's
// word on it (persistent.hpp computes it at the first describe()).
struct plan_summary {
  algorithm algo = algorithm::automatic;
  std::string text;
};

// A persistent collective (broadcast_init, all_reduce_init, ...): its buffers
// and arguments are bound at init; start() runs it again, with the data the
// buffers hold then.
class persistent_request : private detail::request_handle {
 public:
  persistent_request() = default;
  // chosen: the algorithm init chose (automatic where it chose none: one
  // rank, no elements, strings, the scans); plan: the model's word on it.
  persistent_request(std::shared_ptr<detail::started_collective> s, topocoll::algorithm chosen,
                     std::function<plan_summary()> plan)
      : request_handle(std::move(s)), chosen_(chosen), plan_(std::move(plan)) {}

  void start() {
    detail::started_collective* s = state();
    if (s == nullptr || active()) [[unlikely]]
      refuse_start(s);
    detail::started_on_this_thread().push(*s);
  }
  using request_handle::test;
  using request_handle::wait;

  // The algorithm this collective runs, never algorithm::automatic: the one
  // chosen at init, or where none was, the one whose schedule the model finds
  // automatic's to be.
  topocoll::algorithm algorithm() const {
    return chosen_ != topocoll::algorithm::automatic ? chosen_ : summary().algo;
  }
  // One line: collective, topology, p, m, element size, the algorithm and its
  // predicted time, and each alternative's predicted time.
  std::string describe() const { return summary().text; }

 private:
  const plan_summary& summary() const {
    if (!plan_) throw std::logic_error("topocoll::persistent_request: no collective");
    if (!summary_) summary_ = std::make_shared<plan_summary>(plan_());
    return *summary_;
  }

  // start()'s refusals, out of line: the common path then needs no frame.
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_start(
      const detail::started_collective* s) {
    if (s == nullptr) throw std::logic_error("topocoll::persistent_request::start: no collective");
    throw std::logic_error("topocoll::persistent_request::start: " + std::string(s->name) +
                           " was started and has not completed (test or wait for it first)");
  }

  topocoll::algorithm chosen_ = topocoll::algorithm::automatic;
  std::function<plan_summary()> plan_;
  mutable std::shared_ptr<const plan_summary> summary_;
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
