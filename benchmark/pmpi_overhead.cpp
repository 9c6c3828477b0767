// The adapter's own cost per call: MPI_Allreduce / MPI_Bcast of one double
// through libtopocoll_pmpi.so, against topocoll::all_reduce / broadcast called
// from C++ on a topocoll::mpi::Comm (the same algorithm, no adapter), and
// PMPI_ (native). At np 1 no message is sent, so the difference is the
// adapter alone: argument checks, the fallback decision, the datatype and
// operator lookup, the cached transport, the dispatch. Mean per call of the
// median of 7 trials of `calls` calls each.
//   pmpi_overhead [calls]
#include <mpi.h>

#include <topocoll/topocoll.hpp>
#include <topocoll/transport/mpi.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace {

template <class F>
double per_call_us(long calls, F&& f) {
  std::array<double, 7> t{};
  for (double& x : t) {
    PMPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long i = 0; i < calls; ++i) f();
    x = (MPI_Wtime() - t0) / static_cast<double>(calls) * 1e6;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long calls = argc > 1 ? std::atol(argv[1]) : 200000;
  {
    topocoll::mpi::Comm c{boost::mpi::communicator(MPI_COMM_WORLD, boost::mpi::comm_attach)};
    double x = 1.0, y = 0.0;
    const double adapter_ar =
        per_call_us(calls, [&] { MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); });
    const double cxx_ar = per_call_us(calls, [&] {
      topocoll::all_reduce<topocoll::Hypercube<>>(c, std::span<const double>(&x, 1),
                                                  std::span<double>(&y, 1), std::plus<>{});
    });
    const double native_ar =
        per_call_us(calls, [&] { PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); });
    const double adapter_bc =
        per_call_us(calls, [&] { MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); });
    const double cxx_bc = per_call_us(
        calls, [&] { topocoll::broadcast<topocoll::Hypercube<>>(c, std::span<double>(&x, 1), 0); });
    const double native_bc =
        per_call_us(calls, [&] { PMPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); });
    int rank = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (rank == 0) {
      std::printf("np %d, 8 B, us per call   adapter   C++ topocoll   adapter - C++   native\n", p);
      std::printf("MPI_Allreduce             %7.3f   %12.3f   %13.3f   %6.3f\n", adapter_ar, cxx_ar,
                  adapter_ar - cxx_ar, native_ar);
      std::printf("MPI_Bcast                 %7.3f   %12.3f   %13.3f   %6.3f\n", adapter_bc, cxx_bc,
                  adapter_bc - cxx_bc, native_bc);
    }
  }
  MPI_Finalize();
}
