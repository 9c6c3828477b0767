#pragma once
// A transport that sends nothing: rank r of p, every call a no-op. For a
// collective that finishes without a message (p = 1) or must reject its
// arguments before its first one. It needs only <span>, so a test of the
// light header can use it.

#include <span>

namespace tc_test {
struct silent_transport {
  int r = 0, p = 1;
  int rank() const { return r; }
  int size() const { return p; }
  template <class T>
  void send(int, int, std::span<const T>) {}
  template <class T>
  void recv(int, int, std::span<T>) {}
  template <class T, class U>
  void sendrecv(int, std::span<T>, int, std::span<U>, int) {}
};
}  // namespace tc_test
