#pragma once
// TOPOCOLL_PMPI_PROGRESS=thread: a thread of the adapter's own runs every
// served call and keeps the started collectives moving while the
// application computes without calling MPI.
//
// The adapter's collectives, their fibers and their queue are per thread
// (core/progress.hpp), so the thread does not share them: it owns them. An
// intercepted function hands it the call (handed_over, entry.hpp): the
// thread checks the arguments, decides whether to serve, and starts the
// collective, while the caller waits. A call not served goes to MPI on the
// caller's thread; a served blocking call then waits there until its
// collective has finished (intercept_blocking, nonblocking.hpp), so the
// thread itself never blocks in one. Between calls the thread resumes the
// started collectives, one pass after another, as Open MPI's progress
// callback does inside the application's MPI calls (nonblocking.hpp), and
// sleeps once none is left.
// A second thread inside MPI needs MPI_THREAD_MULTIPLE: MPI_Init and
// MPI_Init_thread ask for it under this setting (prepare_init). Where
// MPI gives less, the thread is not started, rank 0 says so, and progress
// stays inside the MPI calls. See doc/pmpi.md, "Progress".

#include <atomic>
#include <type_traits>

namespace topocoll::pmpi {

// Before MPI is initialized: the thread level to ask it for,
// MPI_THREAD_MULTIPLE when TOPOCOLL_PMPI_PROGRESS=thread, else `required`.
// Under that setting Open MPI's file I/O is kept off OMPIO too, which is not
// safe with two threads inside MPI (file_io.hpp).
int prepare_init(int required);

// Once MPI is initialized (the adapter's start): starts the thread where it
// is asked for and MPI is thread-multiple; otherwise rank 0 says why not.
// Stops the job on an unknown setting.
void start_progress_thread();

// At MPI_Finalize: every started call completes, then the thread ends.
void stop_progress_thread();

// Runs task() on the progress thread and returns once it has run: at once,
// here, on the thread itself or where there is none.
void run_on_progress_thread(void (*task)(void*), void* arg);

// Has the progress thread run dispose(obj) at its next pass, where it runs
// and this is not it (false: the caller disposes of obj itself). What the
// thread made goes back to it: a started call's fiber stack returns to the
// thread's pool of spare stacks (core/fiber.hpp), not to the pool of the
// thread that waited for the call.
bool disposed_on_progress_thread(void (*dispose)(void*), void* obj);

// done set, and its waiter woken (wait_done): done may go with the waiter
// as soon as it is set.
void mark_done(std::atomic<bool>& done);
// Returns once done is set: spinning a while, then asleep.
void wait_done(const std::atomic<bool>& done);

namespace progress_state {
extern std::atomic<bool> running;              // the thread runs
extern std::atomic<bool> polling;              // it has started collectives to progress
extern thread_local constinit bool on_worker;  // this is it
}  // namespace progress_state

// Whether the progress thread runs started collectives now and this is
// another thread: one waiting inside MPI then yields its core to it
// (nonblocking.cpp), which matters where they share one.
inline bool progress_thread_polling() {
  return progress_state::polling.load(std::memory_order_relaxed) && !progress_state::on_worker;
}

// Whether an intercepted function hands its call over: the thread runs and
// this is not it. Inline: every intercepted call asks.
inline bool hands_over() {
  return progress_state::running.load(std::memory_order_acquire) && !progress_state::on_worker;
}

// f() run on the progress thread (run_on_progress_thread), its result back.
template <class F>
decltype(auto) handed_over(F&& f) {
  using R = decltype(f());
  using Fn = std::remove_reference_t<F>;
  if constexpr (std::is_void_v<R>) {
    run_on_progress_thread([](void* p) { (*static_cast<Fn*>(p))(); }, &f);
  } else {
    struct call {
      Fn* f;
      R result{};
    } c{&f};
    run_on_progress_thread(
        [](void* p) {
          auto& k = *static_cast<call*>(p);
          k.result = (*k.f)();
        },
        &c);
    return c.result;
  }
}

}  // namespace topocoll::pmpi
