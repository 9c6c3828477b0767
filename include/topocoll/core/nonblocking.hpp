#pragma once
// The optional non-blocking extension of Transport, and the one helper the
// kernels use to send to several peers at once.
//
// A transport may offer, on top of send/recv/sendrecv,
//
//   typename C::request                           move-only, default-constructible
//   C::request c.isend(peer, tag, std::span<const T>)  starts a send, returns at once
//   c.wait_all(std::span<C::request>)               completes every request given
//
// with MPI's meaning: the buffer of an isend must stay valid and unchanged
// until wait_all has returned for its request; messages between one pair with
// one tag still arrive in the order the sends were started. A request
// destroyed before it completed (an exception unwinding a collective) must
// not block forever: loopback::Comm withdraws the message or waits for a copy
// under way; mpi::Comm hands the send to MPI (MPI_Request_free, since Open MPI
// cannot cancel a send), so there the caller's buffer should outlive the
// peer's receive. wait_all leaves every request it completed empty
// (re-waiting one is a no-op).
//
// Receives stay blocking: an MPI receive cannot check the incoming size
// before it writes without a probe (see doc/transports.md), and every
// algorithm here posts its sends first and then receives in a fixed order, so
// non-blocking sends alone give the overlap (a root feeding all its children
// at once, a pipeline forwarding segment k while segment k + 1 arrives).
//
// Both library transports (mpi::Comm, loopback::Comm) provide it. A transport
// without it (model::Counting, a user's) gets the blocking sends, in the same
// order: the algorithms are the same, only the overlap is lost.

#include <concepts>
#include <cstddef>
#include <new>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "../version.hpp"
#include "concepts.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

template <class C, class T>
concept NonblockingTransport = Transport<C> && std::movable<typename C::request> &&
    std::default_initializable<typename C::request> &&
    requires(C& c, int peer, int tag, std::span<const T> out, std::span<typename C::request> reqs) {
  { c.isend(peer, tag, out) } -> std::same_as<typename C::request>;
  c.wait_all(reqs);
};

namespace detail {

// Pending requests: the first few inline (no allocation for a tree's fan-out),
// the rest in a vector (a pipeline's many segments). The inline slots are
// raw storage: a request is built in place from isend's result and destroyed
// after its wait, so a batch of one send constructs, moves and destroys one
// request, not eight. An empty store (a tree sweep whose one send is held,
// send_batch below) costs two tests to wait for and to destroy: the loops
// over requests, and the overflow vector, are reached only when there are
// requests.
template <class C, class T, bool = NonblockingTransport<C, T>>
class request_store {
 public:
  void reserve(std::size_t) {}
  void push(int, int, std::span<const T>, C&) {}
  void wait(C&) {}
};
template <class C, class T>
class request_store<C, T, true> {
 public:
  using request = typename C::request;
  request_store() = default;
  request_store(const request_store&) = delete;
  request_store& operator=(const request_store&) = delete;
  // Pending requests (an exception) abandon their sends.
  [[gnu::always_inline]] ~request_store() {
    if (n_ != 0) destroy_inline();
  }

  void reserve(std::size_t n) {
    if (n > capacity) overflow().reserve(n - capacity);
  }
  void push(int peer, int tag, std::span<const T> data, C& c) {
    if (n_ < capacity) {
      ::new (static_cast<void*>(slots_ + n_ * sizeof(request))) request(c.isend(peer, tag, data));
      ++n_;
    } else {
      overflow().push_back(c.isend(peer, tag, data));
    }
  }
  [[gnu::always_inline]] void wait(C& c) {
    if (n_ != 0) wait_pending(c);  // none inline, so none in the overflow either
  }

 private:
  static constexpr std::size_t capacity = 8;
  void wait_pending(C& c) {
    c.wait_all(std::span<request>(inline_requests(), n_));
    destroy_inline();
    if (overflow_ && !overflow_->empty()) {
      c.wait_all(std::span<request>(*overflow_));
      overflow_->clear();
    }
  }
  request* inline_requests() { return std::launder(reinterpret_cast<request*>(slots_)); }
  std::vector<request>& overflow() {
    if (!overflow_) overflow_.emplace();
    return *overflow_;
  }
  void destroy_inline() noexcept {
    std::destroy_n(inline_requests(), n_);
    n_ = 0;
  }
  alignas(request) std::byte slots_[capacity * sizeof(request)];
  std::size_t n_ = 0;
  std::optional<std::vector<request>> overflow_;  // only past `capacity` requests
};

// How the sends of a batch follow one another.
enum class sends_follow {
  // Something runs between them (a pipeline receives its next segment while
  // the last one travels): each send starts at once.
  overlapped,
  // Nothing waits between them (a tree sweep feeding a rank's children): the
  // last one is held and goes at wait() as a blocking send, which for a
  // message that fits the eager protocol costs about half of an MPI_Isend and
  // its MPI_Waitall. The others still start at once.
  back_to_back,
};

// A batch of sends of T that run concurrently where the transport allows it:
//
//   detail::send_batch<C, T> sb(c);
//   sb.send(child1, tag, block1);   // isend, or a blocking send
//   sb.send(child2, tag, block2);
//   sb.wait();                      // every buffer reusable from here
//
// The buffers must stay valid until wait() (or the destructor) returns. A
// batch destroyed with sends pending (an exception) withdraws or completes them
// (the requests' destructors); a held send is then never started.
template <Transport C, class T>
class send_batch {
 public:
  static constexpr bool nonblocking = NonblockingTransport<C, T>;

  // expected: how many sends to make room for (a hint; a tree's fan-out needs none).
  explicit send_batch(C& c, std::size_t expected = 0) : c_(c) { reqs_.reserve(expected); }
  send_batch(C& c, sends_follow f) : c_(c), follow_(f) {}
  send_batch(const send_batch&) = delete;
  send_batch& operator=(const send_batch&) = delete;
  [[gnu::always_inline]] ~send_batch() = default;

  void send(int peer, int tag, std::span<const T> data) {
    if constexpr (!nonblocking) {
      c_.send(peer, tag, data);
    } else if (follow_ == sends_follow::overlapped) {
      reqs_.push(peer, tag, data, c_);
    } else {
      if (held_.peer >= 0) reqs_.push(held_.peer, held_.tag, held_.data, c_);
      held_ = held{peer, tag, data};
    }
  }

  [[gnu::always_inline]] void wait() {
    if constexpr (nonblocking) {
      if (held_.peer >= 0) {
        const held h = std::exchange(held_, held{});
        c_.send(h.peer, h.tag, h.data);
      }
      reqs_.wait(c_);
    }
  }

 private:
  struct held {  // the back-to-back send not yet started; none where peer < 0
    int peer = -1, tag = 0;
    std::span<const T> data;
  };
  C& c_;
  sends_follow follow_ = sends_follow::overlapped;
  held held_;
  request_store<C, T> reqs_;
};

}  // namespace detail
}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
