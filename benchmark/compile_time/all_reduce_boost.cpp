// The same all_reduce with Boost.MPI, included as its documentation does.
#include <boost/mpi.hpp>

#include <functional>
#include <vector>

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator c;
  std::vector<double> x(1000, c.rank()), sum(1000);
  boost::mpi::all_reduce(c, x.data(), static_cast<int>(x.size()), sum.data(), std::plus<>{});
  return sum[0] > 0 ? 0 : 1;
}
