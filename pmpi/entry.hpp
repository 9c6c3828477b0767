#pragma once
// The shape of every intercepted function:
//
//   return intercept(function::allreduce, comm, [&] { ...; return reason::none; },
//                    [&] { return PMPI_Allreduce(...); });
//
// serve() decides, before any communication, whether to serve the call (from
// arguments that agree on every rank) and returns the reason if not; else it
// runs the collective and returns reason::none. An exception it throws never
// crosses the C frame: it is reported (function, rank, values) and handed to
// the communicator's error handler (MPI_ERRORS_ARE_FATAL aborts the job; with
// MPI_ERRORS_RETURN the MPI error code is returned).

#include <cstddef>
#include <exception>
#include <utility>

#include "adapter.hpp"
#include "progress_thread.hpp"
#include "selection.hpp"
#include "stats.hpp"
#include "transport.hpp"

namespace topocoll::pmpi {

// Parses TOPOCOLL_PMPI once (MPI_Init, or the first intercepted call when
// MPI_Init did not come through here); aborts the job on a bad entry.
void ensure_started();

// The reasons every function shares: MPI_COMM_NULL, an inter-communicator.
reason common_reason(MPI_Comm comm);

// The current exception as an MPI error: message on stderr, error handler
// called, error code returned.
int failed(function f, MPI_Comm comm) noexcept;
// The same without the error handler (a nonblocking call's error, which its
// completion function returns).
int reported(function f, MPI_Comm comm) noexcept;

// Calls made while one is being served (a user operation calling MPI, say)
// go straight to MPI.
class nesting {
 public:
  nesting() { ++depth_; }
  ~nesting() { --depth_; }
  nesting(const nesting&) = delete;
  nesting& operator=(const nesting&) = delete;
  static bool active() { return depth_ > 0; }

 private:
  static thread_local int depth_;
};

// What deciding a call came to: served, not served (why), or failed as it
// started (the error reported, its code).
struct outcome {
  reason why = reason::none;
  bool failed = false;
  int code = MPI_SUCCESS;
};

template <class Serve>
outcome decided(function f, MPI_Comm comm, Serve& serve) {
  outcome o{common_reason(comm)};
  if (o.why != reason::none) return o;
  const nesting scope;
  try {
    o.why = serve();
  } catch (...) {
    o = {reason::none, true, reported(f, comm)};
  }
  return o;
}

// TOPOCOLL_PMPI_PROGRESS=thread: the progress thread decides and serves;
// a call not served goes to MPI here, on the caller's thread. Out of line,
// cold, and given copies of the closures (they hold references), so that
// the calls served here keep theirs in registers.
template <class Serve, class Native>
[[gnu::noinline, gnu::cold]] int intercept_handed(function f, MPI_Comm comm, Serve serve,
                                                  Native native) {
  stats::handed_over();
  const outcome o = handed_over([&] { return decided(f, comm, serve); });
  if (o.failed) {
    PMPI_Comm_call_errhandler(comm, o.code);
    return o.code;
  }
  if (o.why == reason::none) {
    stats::served(f);
    return MPI_SUCCESS;
  }
  stats::fell_back(f, o.why);
  return native();
}

// The call decided and served on this thread.
template <class Serve, class Native>
int intercept_here(function f, MPI_Comm comm, Serve&& serve, Native&& native) {
  // A call made while one is served is the adapter's own (mpi::Comm's
  // settings check when it is built) or a user operation's: not the
  // application's, so neither served nor counted.
  if (nesting::active()) return native();
  reason why = common_reason(comm);
  if (why == reason::none) {
    const nesting scope;
    try {
      why = serve();
    } catch (...) {
      return failed(f, comm);
    }
  }
  if (why == reason::none) {
    stats::served(f);
    return MPI_SUCCESS;
  }
  stats::fell_back(f, why);
  return native();
}

template <class Serve, class Native>
int intercept(function f, MPI_Comm comm, Serve&& serve, Native&& native) {
  if (hands_over() && !nesting::active()) [[unlikely]]
    return intercept_handed(f, comm, serve, native);
  return intercept_here(f, comm, serve, native);
}

// The communicator's size and this process's rank in it.
struct place {
  int rank, size;
};
place place_of(MPI_Comm comm);

// What the topology of a call is decided on (topology_for): the
// communicator's size and the bytes per rank (per block), which agree on
// every rank; and this process's rank, which explains the plan on rank 0.
struct call_size {
  place at;
  std::size_t bytes;
};

// Runs run.template operator()<Topo>() on the topology that serves this call
// of f, counted for the statistics and explained where TOPOCOLL_EXPLAIN asks.
template <class Run>
decltype(auto) on_topology(function f, call_size s, Run&& run) {
  const topology t = topology_for(f, s.at.size, s.bytes);
  stats::ran_on(f, t);
  explain(f, s.at.rank, s.at.size, s.bytes, t);
  return with_topology(t, std::forward<Run>(run));
}

// The options for f's selected algorithm: where none is forced, the default
// object itself, which the collective's checks and its remembered choice
// tell by its address (core/options.hpp) instead of checking and comparing
// the cost model at every call.
inline const options& options_of(function f) {
  const choice& c = selected(f);
  return c.algo == algorithm::automatic ? detail::default_options : c.forced;
}

}  // namespace topocoll::pmpi
