#pragma once
// loopback::run: p ranks, each a thread, on one world.

#include <cstddef>
#include <exception>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "../../core/errors.hpp"
#include "../../version.hpp"
#include "comm.hpp"
#include "world.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback {

namespace detail {

// run's body, compiled once: f is seen only through call(f, comm).
inline void run_ranks(int p, const options& opt, void (*call)(void* f, Comm& c), void* f) {
  if (p < 1)
    throw std::invalid_argument(
        topocoll::detail::concat("loopback::run: p = ", p, ", need p >= 1"));
  world w(p, opt);
  auto body = [&](int r) {
    try {
      w.attach(r, topocoll::detail::started_on_this_thread());
      Comm c(w, r);
      call(f, c);
    } catch (...) {
      w.abort(std::current_exception());
    }
    w.finish(r);
  };
  std::vector<std::jthread> threads;
  threads.reserve(static_cast<std::size_t>(p - 1));
  try {
    for (int r = 1; r < p; ++r) threads.emplace_back(body, r);
  } catch (...) {  // could not start a thread: release those that did
    w.abort(std::current_exception());
    for (int r = static_cast<int>(threads.size()) + 1; r < p; ++r) w.finish(r);
  }
  body(0);
  threads.clear();  // joins
  if (auto err = w.first_error()) std::rethrow_exception(err);
  w.check_drained();
}

}  // namespace detail

// Runs f(comm) on p ranks, each a thread (rank 0 on the calling thread), and
// joins them all. Rethrows the first exception; throws message_error if a
// message was never received. Only the call of f is compiled per F.
template <class F>
void run(int p, F&& f, options opt = {}) {
  using fn = std::remove_reference_t<F>;
  detail::run_ranks(
      p, opt, [](void* g, Comm& c) { (*static_cast<fn*>(g))(c); },
      const_cast<void*>(static_cast<const void*>(std::addressof(f))));
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback
