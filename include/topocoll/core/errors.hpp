#pragma once
// Error types of topocoll and the one helper every collective uses to report
// bad arguments, so that every message has the same shape:
//   "topocoll::reduce on rank 3 of 8: root 9 is outside [0, 8)"

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
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

// An argument as concat and invalid pass it on: a string literal as a pointer,
// so that messages which differ only in their literals' lengths share one
// instantiation of the code that writes them.
template <class T>
using message_arg = std::conditional_t<std::is_array_v<std::remove_cvref_t<T>>, std::decay_t<T>,
                                       std::remove_cvref_t<T>>;

template <class... Args>
std::string concat_of(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// The arguments written one after the other, as std::ostream writes them.
template <class... Args>
[[gnu::always_inline]] inline std::string concat(Args&&... args) {
  return concat_of<message_arg<Args>...>(args...);
}

template <class... Args>
[[noreturn]] void invalid_of(std::string_view op, int rank, int p, const Args&... what) {
  throw std::invalid_argument(
      concat_of<const char*, std::string_view, const char*, int, const char*, int, const char*,
                Args...>("topocoll::", op, " on rank ", rank, " of ", p, ": ", what...));
}

// Throws std::invalid_argument("topocoll::<op> on rank <r> of <p>: <what>").
template <class... Args>
[[noreturn, gnu::always_inline]] inline void invalid(std::string_view op, int rank, int p,
                                                     Args&&... what) {
  invalid_of<message_arg<Args>...>(op, rank, p, what...);
}

}  // namespace detail
}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
