// MPI_Init, MPI_Finalize and the user-operation bookkeeping, intercepted
// around the collectives.

#include <array>

#include "entry.hpp"
#include "nonblocking.hpp"
#include "progress_thread.hpp"
#include "reduction_ops.hpp"

namespace topocoll::pmpi {
namespace {
constexpr std::array<std::string_view, function_count> mpi_names = {"MPI_Bcast",
                                                                    "MPI_Reduce",
                                                                    "MPI_Allreduce",
                                                                    "MPI_Allgather",
                                                                    "MPI_Reduce_scatter_block",
                                                                    "MPI_Reduce_scatter",
                                                                    "MPI_Scan",
                                                                    "MPI_Exscan",
                                                                    "MPI_Scatter",
                                                                    "MPI_Gather",
                                                                    "MPI_Alltoall",
                                                                    "MPI_Alltoallv",
                                                                    "MPI_Ibcast",
                                                                    "MPI_Ireduce",
                                                                    "MPI_Iallreduce",
                                                                    "MPI_Iallgather",
                                                                    "MPI_Ireduce_scatter_block",
                                                                    "MPI_Ireduce_scatter",
                                                                    "MPI_Iscan",
                                                                    "MPI_Iexscan",
                                                                    "MPI_Iscatter",
                                                                    "MPI_Igather",
                                                                    "MPI_Ialltoall",
                                                                    "MPI_Ialltoallv"};
constexpr std::array<std::string_view, blocking_count> key_names = {
    "bcast",          "reduce",   "allreduce", "allgather", "reduce_scatter_block",
    "reduce_scatter", "scan",     "exscan",    "scatter",   "gather",
    "alltoall",       "alltoallv"};
constexpr std::array<std::string_view, reason_count> reason_names = {
    "served",    "inter_communicator", "null_or_invalid", "reduction_datatype",
    "operation", "uneven_counts",      "no_progress"};
}  // namespace

std::string_view mpi_name(function f) {
  return mpi_names[static_cast<std::size_t>(f)];
}
std::string_view key_name(function f) {
  return key_names[static_cast<std::size_t>(blocking_of(f))];
}
std::string_view reason_name(reason r) {
  return reason_names[static_cast<std::size_t>(r)];
}

}  // namespace topocoll::pmpi

using namespace topocoll::pmpi;

extern "C" {

// Under TOPOCOLL_PMPI_PROGRESS=thread both ask MPI for MPI_THREAD_MULTIPLE
// (progress_thread.hpp).
int MPI_Init(int* argc, char*** argv) {
  const int level = prepare_init(MPI_THREAD_SINGLE);
  int provided = MPI_THREAD_SINGLE;
  const int rc = level == MPI_THREAD_SINGLE ? PMPI_Init(argc, argv)
                                            : PMPI_Init_thread(argc, argv, level, &provided);
  if (rc == MPI_SUCCESS) ensure_started();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, prepare_init(required), provided);
  if (rc == MPI_SUCCESS) ensure_started();
  return rc;
}

int MPI_Finalize(void) {
  stop_progress_thread();  // after the started calls have completed
  unhook_progress();       // the same, where no thread runs them
  stats::report();
  stop_transports();
  return PMPI_Finalize();
}

int MPI_Op_create(MPI_User_function* fn, int commute, MPI_Op* op) {
  const int rc = PMPI_Op_create(fn, commute, op);
  if (rc == MPI_SUCCESS) remember_user_op(*op, fn, commute != 0);
  return rc;
}

int MPI_Op_free(MPI_Op* op) {
  if (op != nullptr) forget_user_op(*op);
  return PMPI_Op_free(op);
}

}  // extern "C"
