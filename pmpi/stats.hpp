#pragma once
// Counts of served and fallen-back calls, per function and per reason
// (TOPOCOLL_PMPI_STATS). Counting is one relaxed atomic increment per call.

#include "adapter.hpp"

namespace topocoll::pmpi::stats {

void served(function f);
void fell_back(function f, reason r);

// At MPI_Finalize, before PMPI_Finalize: with TOPOCOLL_PMPI_STATS=1 rank 0
// prints "topocoll-pmpi: served=N fallback=M" summed over MPI_COMM_WORLD
// (PMPI_Reduce); with =2 also one line per function and reason. Collective
// over MPI_COMM_WORLD when enabled.
void report();

}  // namespace topocoll::pmpi::stats
