#pragma once
// What the simulator (model/simulate.hpp) runs the library's kernels on: a
// stand-in element that is never read or written, buffers of address space
// that is never touched, and transports that record each rank's calls as a
// compact schedule instead of moving anything.
//
//   model::phantom        an inert element (core/inert.hpp) of 8 bytes, the size
//                         of a double, which is what the plan's automatic
//                         choices see; work buffers of it are address space only
//   model::phantom_op     a reduction operator on it that does nothing (commutative)
//   detail::address_arena PROT_NONE address space handed out by a bump pointer:
//                         a kernel that touched an element would fault
//   detail::schedule_log  every rank's calls, 12 bytes per call, rank after rank
//   detail::copy_counter  the elements a rank copies locally between two calls,
//                         where the simulation times them (cost_params::t_r)
//   detail::recorder<P>   the transport one rank runs on: blocking (ports::single)
//                         or with isend / wait_all (ports::multi)

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/ops.hpp"
#include "../core/tags.hpp"
#include "../version.hpp"
#include "network.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

struct phantom;

namespace detail {

// A large reservation of address space that is never backed: PROT_NONE and
// MAP_NORESERVE. take(n) hands out n bytes after the last, from the start again
// once the end is reached (nothing is ever stored, so reuse is harmless);
// reset() rewinds it, before each rank's call. `largest`: the size it tries
// first (several at once share the address space: model/simulate_v.hpp).
class address_arena {
 public:
  static constexpr std::size_t largest_size = std::size_t{1} << 42;
  explicit address_arena(std::size_t largest = largest_size) {
    for (std::size_t size = largest; size >= (std::size_t{1} << 30); size /= 4) {
      void* p =
          ::mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p != MAP_FAILED) {
        base_ = static_cast<std::byte*>(p);
        size_ = size;
        return;
      }
    }
    throw std::bad_alloc();
  }
  address_arena(const address_arena&) = delete;
  address_arena& operator=(const address_arena&) = delete;
  ~address_arena() { ::munmap(base_, size_); }

  std::size_t capacity() const { return size_; }
  void reset() { used_ = 0; }
  // A work buffer: may reuse addresses from the start once the end is reached.
  std::byte* take(std::size_t bytes) {
    bytes = rounded(bytes);
    if (size_ - used_ < bytes) used_ = 0;
    return bump(bytes);
  }
  // One of the call's own buffers (in, out): never a reused address, or two
  // of them could overlap and the collective would reject them, or take them
  // for an in-place call and simulate a different call than the one asked.
  std::byte* take_distinct(std::size_t bytes) {
    bytes = rounded(bytes);
    if (size_ - used_ < bytes) too_large(bytes, " with the call's other buffers");
    return bump(bytes);
  }

  // The arena the simulation on this thread uses (set by simulate()).
  static address_arena*& current() {
    thread_local address_arena* a = nullptr;
    return a;
  }

 private:
  // invalid_argument, like every other input the simulator rejects, so that
  // a sweep skips the point instead of aborting.
  [[noreturn]] void too_large(std::size_t bytes, const char* with) const {
    throw std::invalid_argument("topocoll::model::simulate: too large to simulate: a buffer of " +
                                std::to_string(bytes) + " bytes" + with +
                                " exceeds the simulator's address space of " +
                                std::to_string(size_) + " bytes");
  }
  std::size_t rounded(std::size_t bytes) const {
    if (bytes > size_) too_large(bytes, "");
    return (bytes + 63) / 64 * 64;
  }
  std::byte* bump(std::size_t bytes) {
    std::byte* p = base_ + used_;
    used_ += bytes;
    return p;
  }

  std::byte* base_ = nullptr;
  std::size_t size_ = 0, used_ = 0;
};

// The elements the recording rank has copied since its last call, where
// the simulation times local copies (on_this_thread() is null otherwise).
class copy_counter {
 public:
  static std::uint64_t*& on_this_thread() {
    thread_local std::uint64_t* n = nullptr;
    return n;
  }
  static void add(std::size_t n) {
    if (std::uint64_t* c = on_this_thread()) *c += n;
  }
};

// What makes the simulator's element E inert (core/inert.hpp): its work
// buffers are address space the running simulation hands out, and its
// copies are counted.
template <class E>
struct inert_element {
  static constexpr bool topocoll_inert = true;
  static E* topocoll_reserve(std::size_t n) {
    address_arena* a = address_arena::current();
    if (a == nullptr) throw std::logic_error("topocoll::model::phantom: no simulation is running");
    return reinterpret_cast<E*>(a->take(n * sizeof(E)));
  }
  static void topocoll_copied(std::size_t n) { copy_counter::add(n); }
};

}  // namespace detail

// The simulator's element: 8 bytes that nothing reads or writes.
struct phantom : detail::inert_element<phantom> {
  double unused;
};

// The same with another element size: what a persistent collective's plan
// (persistent.hpp, plan_of) simulates, so that the choices that depend
// on bytes see its element's.
template <std::size_t Bytes>
struct sized_phantom : detail::inert_element<sized_phantom<Bytes>> {
  std::byte unused[Bytes];
};

// The simulator's reduction operator: commutative, and never called on data
// (combinations of an inert type are skipped).
struct phantom_op {
  template <class E>
  E operator()(const E& a, const E&) const {
    return a;
  }
};

namespace detail {

// One call of a rank, 12 bytes. kinds:
//   post      a non-blocking send (isend); its request is the rank's next id
//   send      a blocking send: done when the message has arrived
//   exchange  the send half of a sendrecv; the next op is its receive, and the
//             call is done when both are
//   recv      a blocking receive
//   wait      wait for requests [peer, peer + count)
//   local     copy count elements locally (recorded only where they are timed)
struct op {
  enum kind_t : std::uint8_t { post, send, exchange, recv, wait, local };
  std::uint32_t peer;
  std::uint32_t count_lo;
  std::uint16_t count_hi;
  kind_t kind;
  std::uint8_t tag;  // the kernel's tag minus tag::base
  std::uint64_t count() const { return count_lo | (std::uint64_t{count_hi} << 32); }
  bool operator==(const op&) const = default;
};
static_assert(sizeof(op) == 12);

// Every rank's calls, rank 0's first: rank r's are ops[start[r] .. start[r + 1]).
class schedule_log {
 public:
  explicit schedule_log(int p) : p_(p) {
    start_.reserve(static_cast<std::size_t>(p) + 1);
    start_.push_back(0);
  }
  int p() const { return p_; }
  // After rank 0, room for p times its calls is reserved: address space,
  // which costs memory only as it is filled, and no copying as the log grows.
  // A log past max_bytes is rejected first, as invalid_argument like every
  // input the simulator rejects (an allocator may abort instead of throwing
  // std::bad_alloc, as AddressSanitizer's does).
  static constexpr double max_bytes = 32.0 * (1ull << 30);
  void end_rank() {
    start_.push_back(ops_.size());
    if (start_.size() != 2) return;
    const double bytes = static_cast<double>(ops_.size()) * p_ * sizeof(op);
    if (bytes > max_bytes)
      throw std::invalid_argument(
          "topocoll::model::simulate: too large to simulate: " + std::to_string(p_) + " ranks of " +
          std::to_string(ops_.size()) + " calls each need a log of about " +
          std::to_string(static_cast<long long>(bytes / (1ull << 30))) +
          " GiB, more than the simulator's 32 GiB");
    ops_.reserve(ops_.size() * static_cast<std::size_t>(p_) + 64);
  }
  std::span<const op> of(int r) const {
    const auto i = static_cast<std::size_t>(r);
    return std::span<const op>(ops_).subspan(start_[i], start_[i + 1] - start_[i]);
  }
  std::size_t size() const { return ops_.size(); }
  // Appends the calls of `one`, a log of one rank's calls, as the next rank's.
  void append_rank(const schedule_log& one) {
    ops_.insert(ops_.end(), one.ops_.begin(), one.ops_.end());
    end_rank();
  }
  std::size_t bytes() const { return ops_.capacity() * sizeof(op); }
  // The same calls, rank by rank, in the same order.
  bool operator==(const schedule_log& o) const {
    return p_ == o.p_ && start_ == o.start_ && ops_ == o.ops_;
  }

  void add(op::kind_t k, int rank, int peer, int tag, std::uint64_t count) {
    if (k == op::local) tag = topocoll::detail::tag::base;
    if (k != op::wait && (peer < 0 || peer >= p_))
      throw std::logic_error("topocoll::model::simulate: rank " + std::to_string(rank) +
                             " addresses rank " + std::to_string(peer) + " of " +
                             std::to_string(p_));
    const int t = tag - topocoll::detail::tag::base;
    if (k != op::wait && (t < 0 || t > 255))
      throw std::logic_error("topocoll::model::simulate: tag " + std::to_string(tag) +
                             " is not a library tag");
    if (count >> 48)
      throw std::length_error("topocoll::model::simulate: a message of 2^48 elements or more");
    ops_.push_back(op{static_cast<std::uint32_t>(peer), static_cast<std::uint32_t>(count),
                      static_cast<std::uint16_t>(count >> 32), k,
                      static_cast<std::uint8_t>(k == op::wait ? 0 : t)});
  }

 private:
  int p_;
  std::vector<op> ops_;
  std::vector<std::size_t> start_;
};

// One rank's transport, for ports::single: send, recv, sendrecv, all blocking.
class recorder {
 public:
  recorder(int rank, schedule_log& log) : rank_(rank), log_(&log) {}
  int rank() const { return rank_; }
  int size() const { return log_->p(); }

  template <class T>
  void send(int dest, int tag, std::span<T> data) {
    record(op::send, dest, tag, data.size());
  }
  template <class T>
  void recv(int source, int tag, std::span<T> data) {
    record(op::recv, source, tag, data.size());
  }
  template <class T, class U>
  void sendrecv(int dest, std::span<T> out, int source, std::span<U> in, int tag) {
    record(op::exchange, dest, tag, out.size());
    record(op::recv, source, tag, in.size());
  }

  // The local copies since the last call, as one op (where they are timed).
  void record_copies() {
    std::uint64_t* n = copy_counter::on_this_thread();
    if (n == nullptr || *n == 0) return;
    log_->add(op::local, rank_, rank_, 0, *n);
    *n = 0;
  }

 protected:
  void record(op::kind_t k, int peer, int tag, std::uint64_t count) {
    record_copies();
    log_->add(k, rank_, peer, tag, count);
  }

  int rank_;
  schedule_log* log_;
};

// ... and for ports::multi: with the non-blocking extension (core/nonblocking.hpp).
class posting_recorder : public recorder {
 public:
  using recorder::recorder;
  struct request {
    std::uint32_t id = empty;
  };

  template <class T>
  request isend(int dest, int tag, std::span<T> data) {
    record(op::post, dest, tag, data.size());
    return {next_++};
  }
  // Consecutive request ids become one wait op.
  void wait_all(std::span<request> reqs) {
    std::size_t i = 0;
    while (i < reqs.size()) {
      if (reqs[i].id == empty) {
        ++i;
        continue;
      }
      std::size_t j = i + 1;
      while (j < reqs.size() && reqs[j].id == reqs[j - 1].id + 1) ++j;
      record(op::wait, static_cast<int>(reqs[i].id), 0, j - i);
      for (std::size_t k = i; k < j; ++k) reqs[k].id = empty;
      i = j;
    }
  }

 private:
  static constexpr std::uint32_t empty = ~std::uint32_t{0};
  std::uint32_t next_ = 0;
};

}  // namespace detail
}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model

template <>
struct topocoll::is_commutative<topocoll::model::phantom_op, topocoll::model::phantom>
    : std::true_type {};
