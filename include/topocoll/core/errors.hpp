#pragma once
// Error types of topocoll and the one helper every collective uses to report
// bad arguments, so that every message has the same shape:
//   "topocoll::reduce on rank 3 of 8: root 9 is outside [0, 8)"

#include <initializer_list>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

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

// One argument of a message: its address and the function that writes it to
// a std::ostream. Every message is written by one function (concat_pieces);
// each argument type adds one small writer that every message shares, where
// a std::ostringstream written per list of argument types would be compiled
// again for every list.
struct message_piece {
  const void* value;
  void (*write)(std::ostream&, const void*);
};

template <class T>
void write_piece(std::ostream& os, const void* value) {
  os << *static_cast<const T*>(value);
}

inline void write_chars(std::ostream& os, const void* value) {
  os << static_cast<const char*>(value);
}

// A string literal is written as the characters it holds, whatever its length.
template <class T>
message_piece piece_of(const T& value) {
  if constexpr (std::is_array_v<T>) {
    static_assert(std::is_same_v<std::remove_extent_t<T>, char>,
                  "topocoll: a message's array arguments are string literals");
    return {value, &write_chars};
  } else {
    return {&value, &write_piece<T>};
  }
}

inline void write_pieces(std::ostream& os, std::initializer_list<message_piece> pieces) {
  for (const message_piece& piece : pieces) piece.write(os, piece.value);
}

inline std::string concat_pieces(std::initializer_list<message_piece> pieces) {
  std::ostringstream os;
  write_pieces(os, pieces);
  return os.str();
}

// The arguments written one after the other, as std::ostream writes them.
template <class... Args>
std::string concat(const Args&... args) {
  return concat_pieces({piece_of(args)...});
}

[[noreturn]] inline void invalid_pieces(std::string_view op, int rank, int p,
                                        std::initializer_list<message_piece> what) {
  std::ostringstream os;
  os << "topocoll::" << op << " on rank " << rank << " of " << p << ": ";
  write_pieces(os, what);
  throw std::invalid_argument(os.str());
}

// Throws std::invalid_argument("topocoll::<op> on rank <r> of <p>: <what>").
template <class... Args>
[[noreturn]] void invalid(std::string_view op, int rank, int p, const Args&... what) {
  invalid_pieces(op, rank, p, {piece_of(what)...});
}

}  // namespace detail
}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
