// busy_steps: what a step costs when every rank sends and receives at once,
// against one message alone, and what the calibrated cost model makes of it.
//
//   mpiexec -n 4 --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
//       build/release/benchmark/busy_steps [rounds]
//   mpiexec -n 2 --bind-to core build/release/benchmark/busy_steps [rounds]
//
// Plain MPI, doubles, 8 B - 512 KiB per message, in alternating rounds of
// back-to-back calls (median time per call over the rounds, slowest rank):
//   one way: a ping-pong between ranks 0 and 1, half the round trip, the
//     others idle -- what t_s + t_w n is fitted to;
//   one way, every pair: the same between every (r, r xor 1) at once -- a
//     tree's step of every rank (busy_ts, busy_tw);
//   exchange, one pair: MPI_Sendrecv between ranks 0 and 1, the others idle;
//   exchange, every pair: the same between every (r, r xor 1) at once -- the
//     step of recursive doubling on a hypercube;
//   ring shift: every rank sends to r + 1 and receives from r - 1 at once --
//     the step of a ring fold or pipeline (duplex_ts, duplex_tw);
// beside model::calibrate's one message (t_s + t_w n) and its fold step
// (all_busy: the busy and duplex factors on top). Where ranks share cores, an
// exchange of every rank costs a multiple of one message that changes with
// Open MPI's protocol (inline sends up to 256 B on shared memory, copies up to
// its 4 KiB eager limit, single copy above): the model's short class
// (benchmark/README.md, "What limits the cells"). Diagnostic only: not part of
// benchmark/results.

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <topocoll/model/calibrate.hpp>
#include <topocoll/transport/mpi.hpp>

namespace {

struct contender {
  const char* name;
  std::function<void()> call;
  double per_call = 1.0;        // a ping-pong call is two messages: 0.5
  std::vector<double> us = {};  // per round: time per message
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs the contenders in alternating rounds of `iters` calls each.
void measure(std::vector<contender>& cs, int rounds, int iters) {
  for (int round = -1; round < rounds; ++round)  // round -1 warms up
    for (contender& c : cs) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < iters; ++i) c.call();
      double t = (MPI_Wtime() - t0) / iters * 1e6 * c.per_call;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (round >= 0) c.us.push_back(t);
    }
}

void one_size(const topocoll::cost_model& cm, std::size_t bytes, int rounds) {
  int r = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int n = static_cast<int>(bytes / sizeof(double)), x = r ^ 1;
  std::vector<double> a(static_cast<std::size_t>(n), 1.0), b(a.size());
  const auto sendrecv = [&](int to, int from) {
    MPI_Sendrecv(a.data(), n, MPI_DOUBLE, to, 7, b.data(), n, MPI_DOUBLE, from, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  };
  std::vector<contender> cs{
      {"one way (ping-pong / 2)",
       [&] {
         if (r == 0) {
           MPI_Send(a.data(), n, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
           MPI_Recv(b.data(), n, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
         } else if (r == 1) {
           MPI_Recv(b.data(), n, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
           MPI_Send(a.data(), n, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
         }
       },
       0.5},
      {"one way, every pair",
       [&] {
         if (x >= p) return;
         if (r % 2 == 0) {
           MPI_Send(a.data(), n, MPI_DOUBLE, x, 7, MPI_COMM_WORLD);
           MPI_Recv(b.data(), n, MPI_DOUBLE, x, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
         } else {
           MPI_Recv(b.data(), n, MPI_DOUBLE, x, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
           MPI_Send(a.data(), n, MPI_DOUBLE, x, 7, MPI_COMM_WORLD);
         }
       },
       0.5},
      {"exchange, one pair", [&] { r < 2 ? sendrecv(x, x) : void(); }},
      {"exchange, every pair", [&] { x < p ? sendrecv(x, x) : void(); }},
      {"ring shift", [&] { sendrecv((r + 1) % p, (r + p - 1) % p); }},
  };
  measure(cs, rounds, static_cast<int>(std::clamp<std::size_t>((256u << 10) / bytes, 1, 64)));
  if (r != 0) return;
  const double one_way = median(cs[0].us);
  std::printf("%7zu B   ", bytes);
  for (const contender& c : cs)
    std::printf(" %8.2f (%4.2fx)", median(c.us), median(c.us) / one_way);
  std::printf("   model %7.2f, busy %7.2f\n", cm.message(bytes), cm.busy_message(bytes));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p = 0, r = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  if (p < 2) {
    std::fprintf(stderr, "busy_steps: run it on 2 or more ranks (mpiexec -n 4)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rounds = argc > 1 ? std::stoi(argv[1]) : 15;
  topocoll::cost_model cm;
  {
    topocoll::mpi::Comm comm(boost::mpi::communicator(MPI_COMM_WORLD, boost::mpi::comm_attach));
    topocoll::model::calibration_settings s;
    s.segment_probe_bytes = 0;
    cm = topocoll::model::calibrate(comm, s).cost;
  }
  if (r == 0) {
    std::printf(
        "p = %d; calibrated: t_s %.3g us, t_w %.3g us/B, busy_ts %.3g, busy_tw %.3g, "
        "duplex_ts %.3g (%.3g up to %zu B), duplex_tw %.3g\n",
        p, cm.ts_us, cm.tw_us_per_byte, cm.busy_ts, cm.busy_tw, cm.duplex_ts, cm.duplex_ts_short,
        cm.short_bytes, cm.duplex_tw);
    std::printf("us per message (x one way):\n  size      ");
    for (const char* h :
         {"one way", "one way, all pairs", "exchange, one pair", "every pair", "ring shift"})
      std::printf(" %-16s", h);
    std::printf("   the calibrated model\n");
  }
  for (std::size_t bytes = 8; bytes <= (512u << 10); bytes *= 4) one_size(cm, bytes, rounds);
  MPI_Finalize();
}
