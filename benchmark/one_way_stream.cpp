// one_way_stream: why loops of one-way calls run at two speeds.
//
//   mpiexec -n 2 --bind-to core build/release/benchmark/one_way_stream [rounds]
//
// Rank 1 sends, rank 0 receives, in loops of back-to-back calls: a stream of
// MPI_Send / MPI_Recv, the same stream through mpi::Comm (the transport alone,
// with its size check: the floor of topocoll's one-way calls), and gather and
// reduce to root 0 (MPI_Gather, MPI_Reduce, topocoll's on a Ring), 8 and
// 64 B. After each call one side spins a fixed time: none, the sender 50 ns,
// the receiver 100 ns. Rounds alternate the contenders; each figure is the
// median over rounds of the time per call.
//
// A loop of one-way calls runs at the pace of its slower side, but not at
// that side's own cost. While the receiver is the slower one, messages wait
// for it in Open MPI's shared-memory fast boxes and it takes them one after
// another. While the sender is, every message finds the receiver polling the
// line it is written to, and each send pays for taking that line back: a
// sender that spins 50 ns per message slows a stream of 8 B messages from
// about 0.10 us to 0.21 us, while a receiver that spins 100 ns adds only
// those 100 ns. So a few dozen nanoseconds more work per call on the sending
// side than on the receiving side doubles the loop's time. Diagnostic only:
// not part of benchmark/results.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <topocoll/topocoll.hpp>
#include <topocoll/transport/mpi.hpp>

namespace {

void spin(int ns) {
  if (ns <= 0) return;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::nanoseconds(ns)) {
  }
}

struct load {
  const char* name;
  int send_ns, recv_ns;
};

struct contender {
  std::string name;
  std::function<void()> call;
  std::vector<double> us = {};  // per round: time per call
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p != 2) {
    if (rank == 0) std::fprintf(stderr, "one_way_stream: run with mpiexec -n 2\n");
    MPI_Finalize();
    return 2;
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 11;
  const int calls = 20000;
  topocoll::mpi::Comm comm(boost::mpi::communicator(MPI_COMM_WORLD, boost::mpi::comm_attach));
  const load loads[] = {{"none", 0, 0}, {"sender 50 ns", 50, 0}, {"receiver 100 ns", 0, 100}};
  if (rank == 0) std::printf("us per call, median of %d rounds of %d calls\n", rounds, calls);
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{64}}) {
    const int m = static_cast<int>(bytes / sizeof(double));
    std::vector<double> in(static_cast<std::size_t>(m), rank + 1.0), out(2 * bytes);
    const std::span<const double> cin(in);
    const std::span<double> all(out.data(), rank == 0 ? 2 * static_cast<std::size_t>(m) : 0);
    const std::span<double> red(out.data(), rank == 0 ? static_cast<std::size_t>(m) : 0);
    for (const load& l : loads) {
      const int mine = rank == 0 ? l.recv_ns : l.send_ns;
      std::vector<contender> cs = {
          {"MPI_Send / MPI_Recv",
           [&] {
             if (rank == 1)
               MPI_Send(in.data(), m, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
             else
               MPI_Recv(out.data(), m, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
           }},
          {"mpi::Comm send / recv",
           [&] {
             if (rank == 1)
               comm.send(0, 0, cin);
             else
               comm.recv(1, 0, red);
           }},
          {"MPI_Gather",
           [&] {
             MPI_Gather(in.data(), m, MPI_DOUBLE, out.data(), m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
           }},
          {"topocoll::gather<Ring>", [&] { topocoll::gather<topocoll::Ring>(comm, cin, all, 0); }},
          {"MPI_Reduce",
           [&] { MPI_Reduce(in.data(), out.data(), m, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); }},
          {"topocoll::reduce<Ring>",
           [&] { topocoll::reduce<topocoll::Ring>(comm, cin, red, std::plus<>{}, 0); }},
      };
      for (int r = 0; r < rounds; ++r)
        for (contender& c : cs) {
          MPI_Barrier(MPI_COMM_WORLD);
          const double t0 = MPI_Wtime();
          for (int i = 0; i < calls; ++i) {
            c.call();
            spin(mine);
          }
          MPI_Barrier(MPI_COMM_WORLD);
          c.us.push_back((MPI_Wtime() - t0) / calls * 1e6);
        }
      if (rank != 0) continue;
      std::printf("\n%zu B, spin: %s\n", bytes, l.name);
      for (const contender& c : cs) std::printf("  %-26s %7.3f\n", c.name.c_str(), median(c.us));
    }
  }
  MPI_Finalize();
  return 0;
}
