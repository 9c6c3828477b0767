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

// The functions the adapter defines, in the order the statistics print them.
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
  count_
};
inline constexpr std::size_t function_count = static_cast<std::size_t>(function::count_);

// Its MPI name ("MPI_Allreduce") and its TOPOCOLL_PMPI key ("allreduce").
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
