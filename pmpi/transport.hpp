#pragma once
// The topocoll transport of an MPI communicator: a topocoll::mpi::Comm made
// at the first served collective on it and cached as an attribute of the
// communicator (MPI_Comm_create_keyval), so that it is found again at the
// next call and destroyed when the communicator is freed.
//
// Isolation: mpi::Comm duplicates the communicator (MPI_Comm_dup) and sends
// every adapter message on the duplicate, so no message of the application,
// whatever its tag or MPI_ANY_SOURCE / MPI_ANY_TAG, can match one of ours.
// The duplicate is made inside a collective call that every rank of the
// communicator makes in the same order, and only when the call is served,
// which every rank decides alike: it is collective where MPI needs it to be.
// The attribute is not copied by MPI_Comm_dup (MPI_COMM_NULL_COPY_FN): a
// duplicate gets a transport of its own.

#include <mpi.h>

#include <topocoll/transport/mpi.hpp>

namespace topocoll::pmpi {

mpi::Comm& transport_of(MPI_Comm comm);

// comm's transport where it is the last one this thread looked up and no
// transport has been deleted since; otherwise null. Its rank and size are
// comm's (place_of).
mpi::Comm* remembered_transport(MPI_Comm comm);

// Creates the keyval (MPI_Init) / frees every cached transport and the
// keyval (MPI_Finalize, before PMPI_Finalize).
void start_transports();
void stop_transports();

}  // namespace topocoll::pmpi
