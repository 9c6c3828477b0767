// What including Boost.MPI costs a program that calls nothing, included as
// its documentation does.
#include <boost/mpi.hpp>

int main() {}
