// What including topocoll's headers costs a program that calls nothing:
// <topocoll/topocoll.hpp>, the MPI transport and the Boost.MPI headers its
// constructor takes.
#include <topocoll/topocoll.hpp>
#include <topocoll/transport/mpi.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

int main() {}
