#include "progress_thread.hpp"

#include <mpi.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "file_io.hpp"
#include "nonblocking.hpp"

namespace topocoll::pmpi {

std::atomic<bool> progress_state::running{false};
std::atomic<bool> progress_state::polling{false};
thread_local constinit bool progress_state::on_worker = false;

namespace {

enum class setting { calls, thread, unknown };

setting asked() {
  const char* v = std::getenv("TOPOCOLL_PMPI_PROGRESS");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "calls") return setting::calls;
  return std::string_view(v) == "thread" ? setting::thread : setting::unknown;
}

// A call handed over, on the stack of the thread that waits for it.
struct task {
  void (*run)(void*);
  void* arg;
  std::atomic<bool> done{false};
};

std::mutex m;
std::condition_variable wake;      // the thread: a task, or the end
std::condition_variable finished;  // the callers: a task has run
std::deque<task*> tasks;
std::vector<std::pair<void (*)(void*), void*>> disposals;
bool ending = false;
std::atomic<bool> waking{false};  // a task queued or the end asked for, read while spinning
std::thread worker;
using progress_state::on_worker;
using progress_state::polling;
using progress_state::running;

// How long a caller waits spinning for its task, and the thread for the next
// one once nothing is left to progress, before either sleeps: a call that
// follows another at once is handed over without a wake-up. Where the
// process may run on one core only (mpiexec --bind-to core), the two threads
// share it: each turn of the wait gives the core to the other instead.
constexpr int spins = 2000;
bool one_core = false;

void pause() {
  if (one_core) {
    ::sched_yield();
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

template <class Pred>
bool spun_until(Pred pred) {
  for (int i = 0; i < (one_core ? spins / 10 : spins); ++i) {
    if (pred()) return true;
    pause();
  }
  return pred();
}

void serve_tasks(std::unique_lock<std::mutex>& lk) {
  if (!disposals.empty()) {
    const auto due = std::exchange(disposals, {});
    lk.unlock();
    for (const auto& [dispose, obj] : due) dispose(obj);
    lk.lock();
  }
  while (!tasks.empty()) {
    task* t = tasks.front();
    tasks.pop_front();
    waking.store(!tasks.empty() || ending, std::memory_order_relaxed);
    lk.unlock();
    t->run(t->arg);
    mark_done(t->done);
    lk.lock();
  }
}

// The thread: the calls handed to it, then one progress pass over the
// started collectives, again and again; asleep when there is neither.
void loop() {
  on_worker = true;
  std::unique_lock lk(m);
  for (;;) {
    serve_tasks(lk);
    polling.store(started_pending(), std::memory_order_relaxed);
    if (polling.load(std::memory_order_relaxed)) {
      lk.unlock();
      if (progress_pass() == 0) ::sched_yield();
      lk.lock();
      continue;
    }
    if (ending) return;
    lk.unlock();
    spun_until([] { return waking.load(std::memory_order_relaxed); });
    lk.lock();
    wake.wait(lk, [] { return !tasks.empty() || ending; });
  }
}

}  // namespace

int prepare_init(int required) {
  if (asked() != setting::thread) return required;
  keep_file_io_off_ompio();
  return MPI_THREAD_MULTIPLE;
}

void start_progress_thread() {
  const setting s = asked();
  if (s == setting::calls) return;
  int rank = 0, provided = MPI_THREAD_SINGLE;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Query_thread(&provided);
  if (s == setting::unknown) {
    std::fprintf(stderr,
                 "topocoll-pmpi: MPI_Init on rank %d: TOPOCOLL_PMPI_PROGRESS=%s: expected thread "
                 "or calls\n",
                 rank, std::getenv("TOPOCOLL_PMPI_PROGRESS"));
    std::fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      std::fprintf(stderr,
                   "topocoll-pmpi: TOPOCOLL_PMPI_PROGRESS=thread needs MPI_THREAD_MULTIPLE, and "
                   "MPI was initialized with less (MPI_Init_thread asked for less, or MPI gives "
                   "no more): progress stays inside the MPI calls\n");
    return;
  }
  warn_where_ompio_stays(rank);
  cpu_set_t cpus;
  one_core = ::sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1;
  worker = std::thread(loop);
  running.store(true, std::memory_order_release);
}

void stop_progress_thread() {
  if (!running.load(std::memory_order_acquire)) return;
  {
    const std::lock_guard g(m);
    ending = true;
    waking.store(true, std::memory_order_relaxed);
  }
  wake.notify_one();
  worker.join();
  running.store(false, std::memory_order_release);
  for (const auto& [dispose, obj] : std::exchange(disposals, {})) dispose(obj);
}

bool disposed_on_progress_thread(void (*dispose)(void*), void* obj) {
  if (!hands_over()) return false;
  const std::lock_guard g(m);
  disposals.emplace_back(dispose, obj);
  return true;
}

void run_on_progress_thread(void (*run)(void*), void* arg) {
  if (!hands_over()) return run(arg);
  task t{run, arg};
  {
    const std::lock_guard g(m);
    tasks.push_back(&t);
    waking.store(true, std::memory_order_relaxed);
  }
  wake.notify_one();
  wait_done(t.done);
}

void mark_done(std::atomic<bool>& done) {
  const std::lock_guard g(m);
  done.store(true, std::memory_order_release);
  finished.notify_all();
}

void wait_done(const std::atomic<bool>& done) {
  const auto set = [&] { return done.load(std::memory_order_acquire); };
  if (spun_until(set)) return;
  std::unique_lock lk(m);
  finished.wait(lk, set);
}

}  // namespace topocoll::pmpi
