#pragma once
// The loopback transport's mailbox: its options, the envelope a message
// travels in, what a waiting rank waits for, a split's group, and the state
// of one rank's mailbox (doc/transports.md, "loopback").

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <typeinfo>
#include <vector>

#include "../../core/agreement.hpp"
#include "../../core/progress.hpp"
#include "../../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback {

struct options {
  // Trivially copyable messages up to this many bytes are buffered; larger
  // ones are rendezvous (one copy). 0 makes every send synchronous, the
  // strictest test of an algorithm's send/recv order.
  std::size_t eager_limit = 16384;
  // A rank about to wait first polls for up to this long (a sender whose
  // message is being copied: up to 4 times as long, until the copy ends)
  // while the ranks not waiting fit on the machine's cores; see detail::poller.
  // 0: every wait sleeps on the condition variable at once.
  std::chrono::microseconds poll{50};
  // Whether every collective first checks that all ranks agree on it
  // (core/agreement.hpp). Off unless asked for: the environment's
  // TOPOCOLL_CHECK is mpi::Comm's alone.
  agreement check = agreement::off;
};

namespace detail {

// The tags of a communicator's own traffic, on its control context
// (context + 1, see group): split, and the agreement check.
inline constexpr int split_tag = 0;
inline constexpr int agreement_tag = 1;

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
  // The rank thread's started collectives (core/progress.hpp), for a
  // deadlock report; read by another thread only while this rank is blocked.
  const topocoll::detail::started_queue* started = nullptr;
  // See poller (polling.hpp); touched by the rank's own thread only.
  int poll_skip = 0;      // waits left to sleep at once, without polling
  int poll_backoff = 16;  // poll_skip after the next yield that lost the core
};

}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback
