#include "nonblocking.hpp"

#include "progress_thread.hpp"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>

#include <topocoll/core/spares.hpp>

namespace topocoll::pmpi {
namespace {

// Open MPI's progress callbacks (opal/runtime/opal_progress.h): called on
// every pass of its progress engine, returning the events they saw.
using progress_callback = int (*)();
using progress_registrar = int (*)(progress_callback);

bool hooked = false;

// The calls this thread started whose collectives have not finished, oldest
// first. A thread's started collectives advance on that thread only
// (core/progress.hpp).
thread_local std::vector<started_record*> pending;
thread_local bool polling = false;

// Records of this thread's finished calls, for its next calls (at most 16).
using record_spares = topocoll::detail::thread_spares<started_record, 16>;

std::unique_ptr<started_record, record_return> record_for(function f, MPI_Comm comm) {
  started_record* r = record_spares::take();
  if (r == nullptr)
    return std::unique_ptr<started_record, record_return>(
        new started_record{f, comm, place_of(comm), {}, 0, {}, {}, {}});
  r->f = f;
  r->comm = comm;
  r->at = place_of(comm);
  return std::unique_ptr<started_record, record_return>(r);
}

// The generalized request's status: a collective's, as Open MPI gives its own
// completed ones (source MPI_PROC_NULL, no tag, no elements, not
// cancelled); MPI_ERROR is left to the completion function, which returns
// the collective's error.
int query(void* state, MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_PROC_NULL;
  status->MPI_TAG = MPI_ANY_TAG;
  return static_cast<started_record*>(state)->code;
}

// MPI is done with the request (completed and waited for, tested or freed):
// the record goes, on the thread that ran its collective.
int release(void* state) {
  constexpr auto dispose = [](void* r) { recycle_record(static_cast<started_record*>(r)); };
  if (!hands_over() || !disposed_on_progress_thread(dispose, state)) dispose(state);
  return MPI_SUCCESS;
}

int refuse_cancel(void* state, int) {
  const started_record& r = *static_cast<started_record*>(state);
  std::fprintf(stderr,
               "topocoll-pmpi: MPI_Cancel on rank %d of %d: the request of %.*s cannot be "
               "cancelled (MPI does not let a collective's request be)\n",
               r.at.rank, r.at.size, static_cast<int>(mpi_name(r.f).size()), mpi_name(r.f).data());
  std::fflush(stderr);
  return MPI_ERR_REQUEST;
}

// Whether r's collective has finished; then() has run once it has. An error
// is reported now and returned by the completion function.
bool finished(started_record& r) {
  try {
    if (!r.request.test()) return false;
    if (r.then) r.then();
  } catch (...) {
    r.code = reported(r.f, r.comm);
  }
  return true;
}

// One pass over the started calls: each communicator's oldest collective
// runs until it would wait; the finished ones complete their requests.
// Nothing while a collective runs on this thread (the pass would be inside
// it) or a pass is on (a collective's own MPI calls progress Open MPI).
int progress() {
  if (pending.empty()) {
    if (progress_thread_polling()) ::sched_yield();  // MPI_Wait for the thread's collective
    return 0;
  }
  if (polling || detail::started_collective_running()) return 0;
  polling = true;
  const nesting scope;  // a user operation's MPI calls go to MPI
  int events = 0;
  for (std::size_t i = 0; i < pending.size();) {
    started_record* r = pending[i];
    if (!finished(*r)) {
      ++i;
      continue;
    }
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    ++events;
    if (blocking_wait* w = r->waiter) {
      w->code = r->code;
      recycle_record(r);
      mark_done(w->done);
    } else {
      PMPI_Grequest_complete(r->greq);  // may release r (a request freed before completion)
    }
  }
  polling = false;
  return events;
}

template <class Pred>
void complete_where(Pred pred) {
  while (std::ranges::any_of(pending, pred)) {
    if (progress() == 0) ::sched_yield();
  }
}

}  // namespace

bool progress_hooked() {
  return hooked;
}

void hook_progress() {
  const auto reg =
      reinterpret_cast<progress_registrar>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
  hooked = reg != nullptr && reg(&progress) == 0;
}

void unhook_progress() {
  complete_where([](const started_record*) { return true; });
  if (!hooked) return;
  const auto unreg =
      reinterpret_cast<progress_registrar>(dlsym(RTLD_DEFAULT, "opal_progress_unregister"));
  if (unreg != nullptr) unreg(&progress);
  hooked = false;
}

bool started_pending() {
  return !pending.empty();
}

int progress_pass() {
  return progress();
}

void complete_started_on(MPI_Comm comm) {
  complete_where([comm](const started_record* r) { return r->comm == comm; });
}

void recycle_record(started_record* r) noexcept {
  r->request = {};
  r->then = nullptr;
  r->kept.clear();
  for (std::size_t i = 0; i < r->images_kept; ++i) r->images[i].release();
  r->images_kept = 0;
  r->greq = MPI_REQUEST_NULL;
  r->waiter = nullptr;
  r->code = MPI_SUCCESS;
  if (!record_spares::give(r)) delete r;
}

started_call::started_call(function fn, MPI_Comm comm) : f(fn), record_(record_for(fn, comm)) {}

MPI_Request started_call::launch() {
  MPI_Request request = MPI_REQUEST_NULL;
  started_record* r = record_.get();
  if (const int rc = PMPI_Grequest_start(&query, &release, &refuse_cancel, r, &request);
      rc != MPI_SUCCESS)
    throw usage_error{rc, "MPI_Grequest_start failed"};
  r->greq = request;
  pending.push_back(record_.release());
  progress();
  return request;
}

void started_call::launch(blocking_wait& w) {
  w.started = true;
  record_->waiter = &w;
  pending.push_back(record_.release());
  progress();
}

}  // namespace topocoll::pmpi
