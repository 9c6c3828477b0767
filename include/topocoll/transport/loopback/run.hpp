#pragma once
// loopback::run: p ranks, each a thread, on one world.

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../../core/errors.hpp"
#include "../../version.hpp"
#include "comm.hpp"
#include "world.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback {

// Runs f(comm) on p ranks, each a thread (rank 0 on the calling thread), and
// joins them all. Rethrows the first exception; throws message_error if a
// message was never received.
template <class F>
void run(int p, F&& f, options opt = {}) {
  if (p < 1)
    throw std::invalid_argument(
        topocoll::detail::concat("loopback::run: p = ", p, ", need p >= 1"));
  detail::world w(p, opt);
  auto body = [&](int r) {
    try {
      w.attach(r, topocoll::detail::started_on_this_thread());
      Comm c(w, r);
      f(c);
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

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback
