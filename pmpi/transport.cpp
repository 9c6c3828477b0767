#include "transport.hpp"

#include "nonblocking.hpp"
#include "progress_thread.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace topocoll::pmpi {
namespace {

int keyval = MPI_KEYVAL_INVALID;
std::once_flag keyval_once;
std::mutex registry_mutex;
std::vector<MPI_Comm> registry;  // the communicators holding a transport

// The last transport each thread looked up, valid while no transport has
// been deleted since (generation): a program's calls mostly go to one
// communicator, found then without MPI's attribute lookup.
std::atomic<unsigned> generation{0};
struct last_lookup {
  MPI_Comm comm = MPI_COMM_NULL;
  mpi::Comm* transport = nullptr;
  unsigned generation = 0;
};
thread_local last_lookup last;

int delete_transport(MPI_Comm comm, int, void* value, void*) {
  // MPI lets a communicator be freed with calls pending
  handed_over([comm] { complete_started_on(comm); });
  generation.fetch_add(1, std::memory_order_acq_rel);
  delete static_cast<mpi::Comm*>(value);
  const std::lock_guard lock(registry_mutex);
  std::erase(registry, comm);
  return MPI_SUCCESS;
}

void make_keyval() {
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &delete_transport, &keyval, nullptr);
}

}  // namespace

void start_transports() {
  std::call_once(keyval_once, make_keyval);
}

mpi::Comm* remembered_transport(MPI_Comm comm) {
  const bool current = generation.load(std::memory_order_acquire) == last.generation;
  return comm == last.comm && current ? last.transport : nullptr;
}

mpi::Comm& transport_of(MPI_Comm comm) {
  if (mpi::Comm* c = remembered_transport(comm)) return *c;
  const unsigned now = generation.load(std::memory_order_acquire);  // before the lookup
  start_transports();
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval, &value, &found);
  auto* c = static_cast<mpi::Comm*>(value);
  if (!found) {
    c = new mpi::Comm(boost::mpi::communicator(comm, boost::mpi::comm_attach));
    PMPI_Comm_set_attr(comm, keyval, c);
    const std::lock_guard lock(registry_mutex);
    registry.push_back(comm);
  }
  last = {comm, c, now};
  return *c;
}

void stop_transports() {
  if (keyval == MPI_KEYVAL_INVALID) return;
  std::vector<MPI_Comm> held;
  {
    const std::lock_guard lock(registry_mutex);
    held = registry;
  }
  for (MPI_Comm c : held) PMPI_Comm_delete_attr(c, keyval);
  PMPI_Comm_free_keyval(&keyval);
}

}  // namespace topocoll::pmpi
