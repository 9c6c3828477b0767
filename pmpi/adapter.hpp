#pragma once
// The PMPI adapter's shared vocabulary: the intercepted functions, the reasons
// a call falls back to the native MPI_ function, and the entry-point guard.
// Internal to libtopocoll_pmpi; see doc/pmpi.md.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace topocoll::pmpi {

// The functions the adapter defines, in the order the statistics print them:
// the blocking ones, then the nonblocking ones in the same order.
enum class function {
  bcast,
  reduce,
  allreduce,
  allgather,
  reduce_scatter_block,
  reduce_scatter,
  scan,
  exscan,
  scatter,
  gather,
  alltoall,
  alltoallv,
  ibcast,
  ireduce,
  iallreduce,
  iallgather,
  ireduce_scatter_block,
  ireduce_scatter,
  iscan,
  iexscan,
  iscatter,
  igather,
  ialltoall,
  ialltoallv,
  count_
};
inline constexpr std::size_t function_count = static_cast<std::size_t>(function::count_);
inline constexpr std::size_t blocking_count = static_cast<std::size_t>(function::ibcast);
static_assert(function_count == 2 * blocking_count, "one nonblocking function per blocking one");

// The blocking function whose TOPOCOLL_PMPI entry, model and algorithms a
// nonblocking one shares (MPI_Iallreduce: MPI_Allreduce's); f itself when
// blocking.
constexpr function blocking_of(function f) {
  const auto i = static_cast<std::size_t>(f);
  return static_cast<function>(i < blocking_count ? i : i - blocking_count);
}

// Its MPI name ("MPI_Allreduce", "MPI_Iallreduce") and its TOPOCOLL_PMPI key
// ("allreduce"; a nonblocking function's is its blocking function's).
std::string_view mpi_name(function f);
std::string_view key_name(function f);

// Why a call went to PMPI_. Every reason depends only on arguments MPI
// requires to agree across the communicator (the communicator itself, the
// operation, the reduction datatype, reduce_scatter's recvcounts), so every
// rank takes the same branch.
enum class reason {
  none,  // served
  inter_communicator,
  null_or_invalid,     // MPI_COMM_NULL, a negative count, ...: MPI reports it
  reduction_datatype,  // a reduction on a datatype that is not (contiguous) predefined
  operation,           // MPI_REPLACE, MPI_NO_OP, an op made outside MPI_Op_create
  uneven_counts,       // MPI_Reduce_scatter with different recvcounts
  no_progress,         // a nonblocking call under an MPI whose progress cannot drive it
  count_
};
inline constexpr std::size_t reason_count = static_cast<std::size_t>(reason::count_);
std::string_view reason_name(reason r);

// An error the adapter detected itself (an operation undefined on a
// datatype, send and receive sizes that disagree on one rank): what() names
// the values; code is the MPI error class the caller gets.
struct usage_error {
  int code;
  std::string what;
};

}  // namespace topocoll::pmpi
