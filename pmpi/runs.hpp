#pragma once
// How a served call runs its collective. Each function's serving is written
// once, as a template over the run:
//
//   template <class Run>
//   reason serve_bcast(Run& run, ...) {
//     byte_image local(buf, count, dt);
//     byte_image& img = run.keep(local);          // lives as long as the call
//     on_topology(run.f, ..., [&]<class Topo>() {
//       run.template go<broadcast_call, Topo>(c, img.bytes(), root, options_of(run.f));
//     });
//     run.then([&img] { img.store(); });          // after the collective
//     return reason::none;
//   }
//
// run_now (the blocking functions, here; under the progress thread a
// blocking function serves on a started_call, intercept_blocking in
// nonblocking.hpp) runs the collective at once, and
// keep() and then() are the plain code they stand for: keep(local) is local
// itself, so a local kept must live until the collective has run (declare it
// at the serving function's scope, not in a branch). started_call (the
// nonblocking functions, nonblocking.hpp) starts it as a topocoll::request:
// keep() moves what the collective reads and writes to the call's record,
// and then() runs when the collective has completed.

#include <topocoll/collectives.hpp>

#include <utility>

#include "adapter.hpp"

namespace topocoll::pmpi {

// The topocoll collective behind a function: now<Topo>(args...) runs the
// blocking form, start<Topo>(args...) returns the nonblocking form's request.
#define TOPOCOLL_PMPI_CALL(name)                             \
  struct name##_call {                                       \
    template <class Topo, class... A>                        \
    static void now(A&&... a) {                              \
      topocoll::name<Topo>(std::forward<A>(a)...);           \
    }                                                        \
    template <class Topo, class... A>                        \
    static topocoll::request start(A&&... a) {               \
      return topocoll::i##name<Topo>(std::forward<A>(a)...); \
    }                                                        \
  };
TOPOCOLL_PMPI_CALL(broadcast)
TOPOCOLL_PMPI_CALL(reduce)
TOPOCOLL_PMPI_CALL(all_reduce)
TOPOCOLL_PMPI_CALL(all_gather)
TOPOCOLL_PMPI_CALL(reduce_scatter)
TOPOCOLL_PMPI_CALL(scan)
TOPOCOLL_PMPI_CALL(exclusive_scan)
TOPOCOLL_PMPI_CALL(scatter)
TOPOCOLL_PMPI_CALL(gather)
TOPOCOLL_PMPI_CALL(all_to_all)
TOPOCOLL_PMPI_CALL(all_to_all_v)
#undef TOPOCOLL_PMPI_CALL

// A blocking function's run: the collective at once.
struct run_now {
  function f;

  template <class T>
  T& keep(T& local) {
    return local;
  }
  template <class Call, class Topo, class... A>
  void go(A&&... a) {
    Call::template now<Topo>(std::forward<A>(a)...);
  }
  template <class Then>
  void then(Then&& step) {
    step();
  }
};

}  // namespace topocoll::pmpi
