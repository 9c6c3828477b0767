#pragma once
// The nonblocking functions (MPI_Ibcast, MPI_Iallreduce, ...): a served call
// starts topocoll's nonblocking collective (topocoll::ibroadcast, ...) and
// returns an MPI generalized request (MPI_Grequest_start) that completes
// with it. Every MPI completion function then works on it as on any request,
// in arrays mixed with native ones: MPI_Wait, MPI_Test, their -all, -any and
// -some forms, MPI_Request_get_status, MPI_Request_free, in C and Fortran.
//
// Progress: the adapter registers a callback with Open MPI's progress engine
// (opal_progress_register, as Open MPI's own nonblocking collectives do), so
// the started collectives advance inside every MPI call that progresses
// Open MPI's requests: the completion functions, blocking point-to-point and
// collective calls, MPI_Iprobe, ... Each pass resumes each communicator's
// oldest collective until it would wait again. Under an MPI without that
// hook the nonblocking functions fall back (reason no_progress). See
// doc/pmpi.md, "Nonblocking collectives".

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "byte_image.hpp"
#include "entry.hpp"
#include "progress_thread.hpp"
#include "runs.hpp"

namespace topocoll::pmpi {

// Whether the progress callback is registered (at MPI_Init).
bool progress_hooked();
// Registers it / takes it back and completes every started call (MPI_Finalize).
void hook_progress();
void unhook_progress();
// Completes the calls started on comm (before its transport goes).
void complete_started_on(MPI_Comm comm);
// The calling thread's started calls: whether any has not finished, and one
// progress pass over them (the callback's), returning how many finished.
bool started_pending();
int progress_pass();

// A blocking call whose collective the progress thread runs (intercept_blocking):
// what its caller waits on instead of a request.
struct blocking_wait {
  std::atomic<bool> done{false};
  bool started = false;
  int code = MPI_SUCCESS;  // the collective's error
};

// What a started call holds until its collective completes. Records are
// reused: one that is done goes back to its thread's spares (recycle_record),
// keeping its lists' capacity, so that a call that keeps only byte images
// allocates nothing of its own once the first calls have run.
struct started_record {
  struct held_base {
    virtual ~held_base() = default;
  };
  template <class T>
  struct held final : held_base {
    explicit held(T&& v) : value(std::move(v)) {}
    T value;
  };

  function f;
  MPI_Comm comm;
  place at;
  // The byte images and count arrays the collective reads and writes: the
  // first images in the record's own slots, anything else held on the heap.
  // The request goes first (members are destroyed last to first).
  std::array<byte_image, 2> images{};
  std::size_t images_kept = 0;
  std::vector<std::unique_ptr<held_base>> kept;
  topocoll::request request;
  std::function<void()> then;  // after the collective: store the images
  MPI_Request greq = MPI_REQUEST_NULL;
  blocking_wait* waiter = nullptr;  // instead of greq, for a blocking call
  int code = MPI_SUCCESS;           // the collective's error, at completion
};

// Gives a record back to this thread's spares (or frees it), its request,
// then() and kept values released in that order.
void recycle_record(started_record* r) noexcept;
struct record_return {
  void operator()(started_record* r) const noexcept { recycle_record(r); }
};

// A nonblocking function's run: the collective started.
class started_call {
 public:
  started_call(function fn, MPI_Comm comm);

  const function f;

  // Moves local to the record; a byte image or block list takes a datatype of
  // its own there (hold_type), which it unpacks with at completion.
  byte_image& keep(byte_image& local) {
    if (record_->images_kept == record_->images.size()) return keep<byte_image>(local);
    local.hold_type();
    byte_image& slot = record_->images[record_->images_kept++];
    slot = std::move(local);
    return slot;
  }
  template <class T>
  T& keep(T& local) {
    local.hold_type();
    auto h = std::make_unique<started_record::held<T>>(std::move(local));
    T& value = h->value;
    record_->kept.push_back(std::move(h));
    return value;
  }
  template <class Call, class Topo, class... A>
  void go(A&&... a) {
    record_->request = Call::template start<Topo>(std::forward<A>(a)...);
  }
  template <class Then>
  void then(Then&& step) {
    record_->then = std::forward<Then>(step);
  }

  // The generalized request that completes with the collective; the first
  // messages leave now.
  MPI_Request launch();
  // The same for a blocking call: w is marked done instead.
  void launch(blocking_wait& w);

 private:
  std::unique_ptr<started_record, record_return> record_;
};

// Serves a nonblocking call of f: serve(run) on a started_call, whose
// request goes to *request. Returns why it is not served.
template <class Serve>
[[gnu::always_inline]] inline reason start(function f, MPI_Comm comm, MPI_Request* request,
                                           Serve&& serve) {
  if (request == nullptr) return reason::null_or_invalid;
  if (!progress_hooked()) return reason::no_progress;
  started_call run(f, comm);
  const reason why = serve(run);
  if (why == reason::none) *request = run.launch();
  return why;
}

// A blocking function's call: serve(run) on a run_now, the collective at
// once; or, where calls are handed to the progress thread, on a
// started_call there, whose collective the caller then waits for. So the
// progress thread never blocks in a collective: the collectives that other
// threads of the program start or wait for meanwhile keep moving.
template <class Serve, class Native>
[[gnu::noinline, gnu::cold]] int intercept_blocking_handed(function f, MPI_Comm comm, Serve serve,
                                                           Native native) {
  blocking_wait w;
  const int rc = intercept(
      f, comm,
      [&] {
        started_call run(f, comm);
        const reason why = serve(run);
        if (why == reason::none) run.launch(w);
        return why;
      },
      native);
  if (!w.started) return rc;
  wait_done(w.done);
  if (w.code != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, w.code);
  return w.code;
}

template <class Serve, class Native>
int intercept_blocking(function f, MPI_Comm comm, Serve&& serve, Native&& native) {
  if (hands_over() && !nesting::active()) [[unlikely]]
    return intercept_blocking_handed(f, comm, serve, native);
  run_now run{f};
  return intercept_here(
      f, comm, [&] { return serve(run); }, native);
}

}  // namespace topocoll::pmpi
