#pragma once
// Counts of served and fallen-back calls, per function and per reason
// (TOPOCOLL_PMPI_STATS). Counting is one relaxed atomic increment per call.

#include "adapter.hpp"
#include "selection.hpp"

namespace topocoll::pmpi::stats {

void served(function f);
void fell_back(function f, reason r);
// A call of f is about to run on topology t.
void ran_on(function f, topology t);
// A call was handed to the progress thread (progress_thread.hpp).
void handed_over();

// At MPI_Finalize, before PMPI_Finalize: with TOPOCOLL_PMPI_STATS=1 rank 0
// prints "topocoll-pmpi: served=N fallback=M" summed over MPI_COMM_WORLD
// (PMPI_Reduce); with =2 also one line per function and reason, and one per
// function with the topologies its calls ran on. Where the progress thread
// ran, both add "topocoll-pmpi: progress thread: N calls handed over". Collective
// over MPI_COMM_WORLD when enabled.
void report();

}  // namespace topocoll::pmpi::stats
