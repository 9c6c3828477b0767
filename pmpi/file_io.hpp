#pragma once
// Open MPI's file I/O beside the progress thread (TOPOCOLL_PMPI_PROGRESS=
// thread). Open MPI 4.1's io component OMPIO completes a nonblocking file
// request in a progress callback that takes no lock: two threads inside MPI
// at once can both complete one, the second takes the first's completion
// mark for a waiter's address, and the process dies (a plain
// MPI_THREAD_MULTIPLE program's too). ROMIO's requests are progressed under
// a lock. See doc/pmpi.md, "Progress".

namespace topocoll::pmpi {

// Before MPI_Init, under the thread: where Open MPI has both components and
// nothing chose one (the io parameter, from OMPI_MCA_io, mpiexec --mca or a
// parameter file, is empty), leaves OMPIO out (OMPI_MCA_io=^ompio). Reads
// the parameters with MPI_T, which may be used before MPI_Init.
void keep_file_io_off_ompio();

// Once MPI is initialized and the thread runs: rank 0 warns where OMPIO may
// still open files, because the io parameter lets it in or there is no
// ROMIO.
void warn_where_ompio_stays(int rank);

}  // namespace topocoll::pmpi
