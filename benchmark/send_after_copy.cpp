// send_after_copy: why all_gather sends its own block from the caller's input.
//
//   mpiexec -n 2 --bind-to core build/release/benchmark/send_after_copy [rounds]
//
// The two-rank all_gather three ways, in loops of back-to-back calls, in
// alternating rounds (median time per call over the rounds), 16 KiB - 1 MiB
// per rank, doubles:
//   copy, then send from out: the own block is copied into out, then
//     exchanged from there (MPI_Sendrecv) -- what topocoll did before;
//   send from in, then copy: exchanged from the caller's input, then copied
//     into out -- Open MPI's two-process all_gather, and topocoll's now;
//   send only: the exchange alone, no copy;
// beside MPI_Allgather and topocoll::all_gather<Hypercube<>>. Above Open MPI's
// eager limit the receiver reads the sender's buffer with one single copy
// (CMA, process_vm_readv). In some runs a read of lines the other core has
// just written (copy, then send from out) costs up to 3x the same read of
// lines it has not touched; in others the two cost the same, which is the
// run-to-run variance of the all_gather cells. Diagnostic only: not part of
// benchmark/results.

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <topocoll/topocoll.hpp>
#include <topocoll/transport/mpi.hpp>

namespace {

struct contender {
  const char* name;
  std::function<void()> call;
  std::vector<double> us = {};  // per round: time per call
};

// Runs the contenders in alternating rounds of `iters` calls each.
void measure(std::vector<contender>& cs, int rounds, int iters) {
  for (int round = 0; round < rounds; ++round)
    for (contender& c : cs) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < iters; ++i) c.call();
      double t = (MPI_Wtime() - t0) / iters * 1e6;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      c.us.push_back(t);
    }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void one_size(topocoll::mpi::Comm& comm, std::size_t n, int rounds) {
  const int r = comm.rank(), o = 1 - r;
  const int count = static_cast<int>(n);
  std::vector<double> in(n, r + 1.0), out(2 * n);
  double* const mine = out.data() + static_cast<std::size_t>(r) * n;
  double* const theirs = out.data() + static_cast<std::size_t>(o) * n;
  auto exchange = [&](const double* from) {
    MPI_Sendrecv(from, count, MPI_DOUBLE, o, 7, theirs, count, MPI_DOUBLE, o, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  };
  std::vector<contender> cs{
      {"MPI_Allgather",
       [&] {
         MPI_Allgather(in.data(), count, MPI_DOUBLE, out.data(), count, MPI_DOUBLE, MPI_COMM_WORLD);
       }},
      {"topocoll all_gather<Hypercube<>>",
       [&] {
         topocoll::all_gather<topocoll::Hypercube<>>(comm, std::span<const double>(in),
                                                     std::span<double>(out));
       }},
      {"copy, then send from out", [&] { std::memcpy(mine, in.data(), n * 8), exchange(mine); }},
      {"send from in, then copy",
       [&] { exchange(in.data()), std::memcpy(mine, in.data(), n * 8); }},
      {"send only", [&] { exchange(in.data()); }},
  };
  measure(cs, rounds, static_cast<int>(std::max<std::size_t>(20, (64u << 20) / (n * 8) / 8)));
  if (r != 0) return;
  const double native = median(cs[0].us);
  std::printf("%zu KiB per rank\n", n * 8 / 1024);
  for (const contender& c : cs)
    std::printf("  %-34s %9.1f us  %5.2fx native\n", c.name, median(c.us), median(c.us) / native);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p != 2) {
    std::fprintf(stderr, "send_after_copy: run it on 2 ranks (mpiexec -n 2), not %d\n", p);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rounds = argc > 1 ? std::stoi(argv[1]) : 15;
  {
    topocoll::mpi::Comm comm(boost::mpi::communicator(MPI_COMM_WORLD, boost::mpi::comm_attach));
    for (std::size_t kib : {16, 64, 256, 1024}) one_size(comm, kib * 1024 / 8, rounds);
  }
  MPI_Finalize();
}
