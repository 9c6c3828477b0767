#pragma once
// Error types of topocoll and the one helper every collective uses to report
// bad arguments, so that every message has the same shape:
//   "topocoll::reduce on rank 3 of 8: root 9 is outside [0, 8)"

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

// A message arrived whose size or type differs from the receive buffer, or a
// message was never received. Thrown instead of writing past a buffer.
class message_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every live rank waits and nothing can ever match (loopback transport). The
// text names each blocked rank, whom it waits for and the tag.
class deadlock_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Another rank failed; this rank was released from its wait.
class aborted_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A blocking wait outlasted the transport's timeout (mpi::Comm with
// TOPOCOLL_TIMEOUT or mpi::options::timeout). what() names the collective,
// this rank and p, the peer waited for, the tag, the bytes expected and the
// seconds waited; peer() and tag() give the same as numbers (peer -1: the
// wait was on every rank at once, as in the agreement check).
class timeout_error : public std::runtime_error {
 public:
  timeout_error(const std::string& what, int peer, int tag)
      : std::runtime_error(what), peer_(peer), tag_(tag) {}
  int peer() const noexcept { return peer_; }
  int tag() const noexcept { return tag_; }

 private:
  int peer_;
  int tag_;
};

namespace detail {

template <class... Args>
std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

// Throws std::invalid_argument("topocoll::<op> on rank <r> of <p>: <what>").
template <class... Args>
[[noreturn]] void invalid(std::string_view op, int rank, int p, Args&&... what) {
  throw std::invalid_argument(
      concat("topocoll::", op, " on rank ", rank, " of ", p, ": ", std::forward<Args>(what)...));
}

}  // namespace detail
}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
