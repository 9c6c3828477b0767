#pragma once
// model::Counting<C>: a transport decorator that forwards every call to the
// transport it wraps and records it. Tests use it to prove a collective's
// communication pattern (who talks to whom, at which step, how many words);
// the demo uses it for its messages/bytes columns.
//
//   loopback::run(8, [](loopback::Comm& c) {
//     model::Counting cc(c);
//     broadcast<Hypercube<3>>(cc, std::span(v), 0);
//     cc.sends();  // 3 on the root
//   });
//
// A step is one call: send, recv, or sendrecv (which records one send and one
// receive with the same step number).

#include <cstddef>
#include <span>
#include <vector>

#include "../core/concepts.hpp"
#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

struct event {
  enum kind_t { send, recv } kind;
  int step;  // the call's number on this rank, from 0
  int peer;  // destination of a send, source of a receive
  int tag;
  std::size_t count;  // elements
  std::size_t bytes;  // count * sizeof(T)
};

template <Transport C>
class Counting {
 public:
  explicit Counting(C& inner) : inner_(&inner) {}

  int rank() const { return inner_->rank(); }
  int size() const { return inner_->size(); }

  template <class T>
  void send(int dest, int tag, std::span<const T> data) {
    record(event::send, dest, tag, data);
    ++step_;
    inner_->send(dest, tag, data);
  }
  template <class T>
  void send(int dest, int tag, std::span<T> data) {
    send(dest, tag, std::span<const T>(data));
  }
  template <class T>
  void recv(int source, int tag, std::span<T> data) {
    record(event::recv, source, tag, data);
    ++step_;
    inner_->recv(source, tag, data);
  }
  template <class T, class U>
  void sendrecv(int dest, std::span<T> out, int source, std::span<U> in, int tag) {
    record(event::send, dest, tag, out);
    record(event::recv, source, tag, in);
    ++step_;
    inner_->sendrecv(dest, out, source, in, tag);
  }

  C& inner() { return *inner_; }
  const std::vector<event>& events() const { return events_; }
  void clear() { events_.clear(), step_ = 0; }

  int steps() const { return step_; }
  std::size_t sends() const { return count(event::send); }
  std::size_t recvs() const { return count(event::recv); }
  std::size_t bytes_sent() const { return total(event::send); }
  std::size_t bytes_received() const { return total(event::recv); }
  // element counts of this rank's sends, in order
  std::vector<std::size_t> send_counts() const {
    std::vector<std::size_t> v;
    for (const event& e : events_)
      if (e.kind == event::send) v.push_back(e.count);
    return v;
  }

 private:
  template <class T>
  void record(event::kind_t k, int peer, int tag, std::span<T> d) {
    events_.push_back({k, step_, peer, tag, d.size(), d.size_bytes()});
  }
  std::size_t count(event::kind_t k) const {
    std::size_t n = 0;
    for (const event& e : events_) n += e.kind == k;
    return n;
  }
  std::size_t total(event::kind_t k) const {
    std::size_t n = 0;
    for (const event& e : events_)
      if (e.kind == k) n += e.bytes;
    return n;
  }

  C* inner_;
  std::vector<event> events_;
  int step_ = 0;
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model
