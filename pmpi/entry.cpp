#include "entry.hpp"

#include "nonblocking.hpp"
#include "transport.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include <topocoll/core/errors.hpp>
#include <topocoll/transport/mpi.hpp>

namespace topocoll::pmpi {

thread_local int nesting::depth_ = 0;

namespace {
std::once_flag started;

void begin() {
  const char* spec = std::getenv("TOPOCOLL_PMPI");
  try {
    if (spec != nullptr) select(spec);
  } catch (const std::exception& e) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "topocoll-pmpi: MPI_Init on rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
  start_transports();
  hook_progress();
  start_progress_thread();
}
}  // namespace

void ensure_started() {
  std::call_once(started, begin);
}

reason common_reason(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return reason::null_or_invalid;
  if (remembered_transport(comm) != nullptr) return reason::none;  // served before: intra
  ensure_started();
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return reason::null_or_invalid;
  return inter ? reason::inter_communicator : reason::none;
}

place place_of(MPI_Comm comm) {
  if (const mpi::Comm* c = remembered_transport(comm)) return {c->rank(), c->size()};
  place p{0, 1};
  PMPI_Comm_rank(comm, &p.rank);
  PMPI_Comm_size(comm, &p.size);
  return p;
}

int reported(function f, MPI_Comm comm) noexcept {
  int code = MPI_ERR_INTERN;
  std::string what = "unknown exception";
  try {
    throw;
  } catch (const usage_error& e) {
    code = e.code;
    what = e.what;
  } catch (const message_error& e) {
    code = MPI_ERR_TRUNCATE;  // counts that disagree between ranks
    what = e.what();
  } catch (const mpi::error& e) {
    code = e.code();
    what = e.what();
  } catch (const std::invalid_argument& e) {
    code = MPI_ERR_ARG;
    what = e.what();
  } catch (const std::bad_alloc&) {
    code = MPI_ERR_NO_MEM;
    what = "out of memory";
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  const place p = place_of(comm);
  std::fprintf(stderr, "topocoll-pmpi: %.*s on rank %d of %d failed: %s\n",
               static_cast<int>(mpi_name(f).size()), mpi_name(f).data(), p.rank, p.size,
               what.c_str());
  std::fflush(stderr);
  return code;
}

int failed(function f, MPI_Comm comm) noexcept {
  const int code = reported(f, comm);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace topocoll::pmpi
