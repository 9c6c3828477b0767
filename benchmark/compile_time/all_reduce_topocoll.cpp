// One all_reduce of doubles on topocoll's MPI transport.
#include <topocoll/topocoll.hpp>
#include <topocoll/transport/mpi.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <functional>
#include <vector>

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  topocoll::mpi::Comm c(boost::mpi::communicator{});
  std::vector<double> x(1000, c.rank()), sum(1000);
  topocoll::all_reduce<topocoll::Hypercube<>>(c, x, sum, std::plus<>{});
  return sum[0] > 0 ? 0 : 1;
}
