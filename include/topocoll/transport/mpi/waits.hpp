#pragma once
// The MPI transport's timeouts. With options::timeout (or TOPOCOLL_TIMEOUT)
// every blocking wait polls and gives up after the timeout with a
// timeout_error that names what it waited for; the communicator is unusable
// from then on (doc/transports.md, "When ranks disagree or fail on MPI").
// Without a timeout none of this runs: the calls are the untimed ones.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>

#include "../../core/collective_info.hpp"
#include "../../core/errors.hpp"
#include "../../core/progress.hpp"
#include "../../version.hpp"
#include "endpoint.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail {

class waits : public endpoint {
 public:
  // Called by every collective as it begins and ends (core/collective_info.hpp,
  // collectives/arguments.hpp): the collective is named in a timeout.
  void begin_collective(const collective_info& info) {
    if (timed()) usable();
    collective_ = info.name;
  }
  void end_collective() { collective_ = {}; }

 protected:
  using endpoint::endpoint;

  using clock = std::chrono::steady_clock;

  // Throws if an earlier wait timed out.
  void usable() const {
    if (!broken_->empty())
      throw timeout_error(
          topocoll::detail::concat("topocoll::mpi::Comm on rank ", rank_, " of ", size_,
                                   " is unusable: an earlier wait timed out (", *broken_, ")"),
          -1, -1);
  }

  // What a timed wait waits for, to name it in a timeout_error.
  enum class waiting { message_from, receipt_by, every_rank };
  struct wait_for {
    waiting kind;
    int peer;                // -1: every rank
    int tag;                 // -1: none (a collective of MPI)
    std::size_t bytes;       // expected
    std::size_t serialized;  // > 0: a serialized message of this many elements (bytes unknown)
  };

  template <class T>
  wait_for expecting(int source, int tag, std::span<T> data) const {
    if constexpr (std::is_trivially_copyable_v<T>)
      return {waiting::message_from, source, tag, data.size_bytes(), 0};
    else
      return {waiting::message_from, source, tag, 0, data.size()};
  }

  // Calls done() until it returns true (then true) or the timeout has passed
  // since start (then false). It yields the core at first, then sleeps, 20 us
  // doubling to 1 ms: the ranks it waits for may need the core. Where
  // collectives were started (core/progress.hpp) it polls for them too: in a
  // started collective's fiber it suspends at each turn, and in a blocking
  // call it steps the started ones and only yields; without a timeout it
  // then waits for as long as it takes.
  template <class Done>
  bool poll(Done&& done, clock::time_point start) const {
    const auto deadline = timed()
                              ? start + std::chrono::duration_cast<clock::duration>(opt_.timeout)
                              : clock::time_point::max();
    auto nap = std::chrono::microseconds(20);
    for (int i = 0;; ++i) {
      if (done()) return true;
      if (clock::now() >= deadline) return false;
      if (topocoll::detail::polling_for_progress()) {
        const bool fiber = topocoll::detail::in_fiber;
        topocoll::detail::while_blocked();
        if (!fiber) std::this_thread::yield();
        continue;
      }
      if (i < 100) {
        std::this_thread::yield();
        continue;
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(1000));
    }
  }

  // What a wait waited for, in words.
  std::string waited_for(const wait_for& w) const {
    using topocoll::detail::concat;
    switch (w.kind) {
      case waiting::every_rank:
        return concat("every rank to join the agreement check (an MPI_Iallreduce of ", w.bytes,
                      " bytes): a rank has not reached ", collective_);
      case waiting::receipt_by:
        return concat("rank ", w.peer, " to receive a message (tag ", w.tag, ", ", w.bytes,
                      " bytes)");
      default:
        if (w.serialized)
          return concat("a message from rank ", w.peer, " (tag ", w.tag, ", ", w.serialized,
                        " serialized elements expected)");
        return concat("a message from rank ", w.peer, " (tag ", w.tag, ", ", w.bytes,
                      " bytes expected)");
    }
  }

  // Marks the communicator unusable and returns the timeout's text.
  std::string expire(const wait_for& w, clock::time_point start) {
    const double waited =
        std::round(std::chrono::duration<double>(clock::now() - start).count() * 100) / 100;
    *broken_ = topocoll::detail::concat(
        "topocoll::", collective_.empty() ? "mpi::Comm" : collective_, " on rank ", rank_, " of ",
        size_, ": timed out after ", waited, " s waiting for ", waited_for(w));
    return *broken_;
  }

  [[noreturn]] void timed_out(const wait_for& w, clock::time_point start) {
    const std::string what = expire(w, start);
    throw timeout_error(what + "; the communicator is unusable from now on", w.peer, w.tag);
  }

  // Whether req completed within the timeout; if not, it is handed to MPI
  // (MPI_Request_free) and the communicator marked unusable.
  bool settle(MPI_Request& req, const wait_for& w, clock::time_point start = clock::now()) {
    int done = 0;
    auto completed = [&] {
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test", w.peer, w.tag);
      return done != 0;
    };
    if (broken_->empty() && poll(completed, start)) return true;
    MPI_Request_free(&req);
    if (broken_->empty()) expire(w, start);
    return false;
  }

  // Completes req within the timeout, or throws timeout_error.
  void complete(MPI_Request& req, const wait_for& w, clock::time_point start) {
    if (!settle(req, w, start))
      throw timeout_error(*broken_ + "; the communicator is unusable from now on", w.peer, w.tag);
  }

  std::string_view collective_;  // the collective running, for a timeout's text
  // The first timeout's text once one occurred; shared by the copies (they
  // share the duplicate, and what is in flight on it).
  std::shared_ptr<std::string> broken_ = std::make_shared<std::string>();
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail
