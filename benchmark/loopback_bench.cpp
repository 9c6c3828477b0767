// loopback_bench: the loopback transport's throughput against memcpy measured
// in the same run (no MPI needed).
//
//   loopback_bench [--csv FILE] [--reps N]
//
// point-to-point: rank 0 streams messages of n bytes to rank 1 (two threads);
// a message's time is the interval between two receive completions on rank 1,
// so the figure is the steady-state bandwidth. A rendezvous message (above
// the eager limit) costs exactly one copy, the receiver's memcpy straight out
// of the sender's buffer, so memcpy's bandwidth is the ceiling: efficiency =
// loopback bytes/s / memcpy bytes/s (same n, same process, same run).
// The "poll off" rows repeat the measurement with options::poll = 0 (every
// wait sleeps on the condition variable at once, the transport before
// polling), for a comparison within one run.
// Collectives at p = 4, and at p = 32 (more ranks than cores): time, and
// "bus bandwidth" = bytes every rank receives / time, against memcpy (a single
// copy stream).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <topocoll/topocoll.hpp>

namespace {

using clk = std::chrono::steady_clock;
namespace lb = topocoll::loopback;

double seconds(clk::time_point a, clk::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int reps_for(std::size_t n, int base) {
  return std::max(
      5, static_cast<int>(base * std::min(1.0, (1 << 20) / static_cast<double>(n + 1)) * 4));
}

// memcpy of n bytes between two buffers, median over reps (buffers touched first).
double memcpy_time(std::size_t n, int reps) {
  std::vector<char> a(n, 1), b(n, 2);
  std::vector<double> t;
  for (int i = 0; i < reps + 2; ++i) {
    auto t0 = clk::now();
    std::memcpy(b.data(), a.data(), n);
    auto t1 = clk::now();
    a[i % n] = b[(i * 7) % n];  // keep the copy observable
    if (i >= 2) t.push_back(seconds(t0, t1));
  }
  return median(t);
}

// Steady-state time per message of n bytes from rank 0 to rank 1.
double p2p_time(std::size_t n, int reps, lb::options opt = {}) {
  std::vector<double> t;
  lb::run(
      2,
      [&](lb::Comm& c) {
        std::vector<char> buf(n, static_cast<char>(c.rank()));
        if (c.rank() == 0) {
          for (int i = 0; i < reps + 2; ++i) c.send(1, 0, std::span<const char>(buf));
        } else {
          auto last = clk::now();
          for (int i = 0; i < reps + 2; ++i) {
            c.recv(0, 0, std::span<char>(buf));
            auto now = clk::now();
            if (i >= 2) t.push_back(seconds(last, now));
            last = now;
          }
        }
      },
      opt);
  return median(t);
}

// Round trip of n bytes, halved: the latency of one message.
double pingpong_time(std::size_t n, int reps, lb::options opt = {}) {
  std::vector<double> t;
  lb::run(
      2,
      [&](lb::Comm& c) {
        std::vector<char> buf(n);
        for (int i = 0; i < reps + 2; ++i) {
          auto t0 = clk::now();
          if (c.rank() == 0) {
            c.send(1, 0, std::span<const char>(buf));
            c.recv(1, 0, std::span<char>(buf));
            if (i >= 2) t.push_back(seconds(t0, clk::now()) / 2);
          } else {
            c.recv(0, 0, std::span<char>(buf));
            c.send(0, 0, std::span<const char>(buf));
          }
        }
      },
      opt);
  return median(t);
}

// A collective at p ranks: median over reps of the slowest rank's time
// (ranks meet at a barrier made of messages before each repetition).
double collective_time(int p, int reps, const std::function<void(lb::Comm&)>& f) {
  std::vector<std::vector<double>> t(static_cast<std::size_t>(p));
  lb::run(p, [&](lb::Comm& c) {
    char x = 0;
    auto barrier = [&] {  // gather to 0 and release
      if (c.rank() == 0) {
        for (int r = 1; r < c.size(); ++r) c.recv(r, 99, std::span<char>(&x, 1));
        for (int r = 1; r < c.size(); ++r) c.send(r, 99, std::span<const char>(&x, 1));
      } else {
        c.send(0, 99, std::span<const char>(&x, 1));
        c.recv(0, 99, std::span<char>(&x, 1));
      }
    };
    for (int i = 0; i < reps + 1; ++i) {
      barrier();
      auto t0 = clk::now();
      f(c);
      if (i >= 1) t[static_cast<std::size_t>(c.rank())].push_back(seconds(t0, clk::now()));
    }
  });
  std::vector<double> worst(t[0].size());
  for (std::size_t i = 0; i < worst.size(); ++i)
    for (auto& v : t) worst[i] = std::max(worst[i], v[i]);
  return median(worst);
}

struct row {
  std::string what;
  std::size_t bytes;
  double us, gbs, memcpy_gbs;
};

}  // namespace

int main(int argc, char** argv) {
  std::string csv;
  int base_reps = 50;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--csv" && i + 1 < argc)
      csv = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      base_reps = std::stoi(argv[++i]);
    else {
      std::fprintf(a == "--help" ? stdout : stderr,
                   "usage: loopback_bench [--csv FILE] [--reps N]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  std::vector<row> rows;
  auto gbs = [](std::size_t n, double s) { return static_cast<double>(n) / s / 1e9; };

  std::printf("loopback transport vs memcpy (same run)\n\n");
  std::printf("%-30s %10s %12s %10s %12s %8s\n", "what", "bytes", "time us", "GB/s", "memcpy GB/s",
              "eff");
  auto print = [&](const row& r) {
    std::printf("%-30s %10zu %12.2f %10.2f %12.2f %7.0f%%\n", r.what.c_str(), r.bytes, r.us, r.gbs,
                r.memcpy_gbs, 100 * r.gbs / r.memcpy_gbs);
    std::fflush(stdout);
    rows.push_back(r);
  };

  const std::vector<std::size_t> ns = {8,       1 << 10, 16 << 10, 64 << 10, 256 << 10,
                                       1 << 20, 4 << 20, 16 << 20, 64 << 20};
  // memcpy and loopback alternate, three rounds, best median of each: the
  // machine may be shared, and both should see the same conditions.
  auto best_of_3 = [](auto&& f) {
    double t = f();
    for (int i = 0; i < 2; ++i) t = std::min(t, f());
    return t;
  };
  for (std::size_t n : ns) {
    const int reps = reps_for(n, base_reps);
    double mc = 1e30, lt = 1e30;
    for (int round = 0; round < 3; ++round) {
      mc = std::min(mc, memcpy_time(n, reps));
      lt = std::min(lt, p2p_time(n, reps));
    }
    print({"p2p stream (eager <= 16 KiB)", n, lt * 1e6, gbs(n, lt), gbs(n, mc)});
  }
  for (std::size_t n : {std::size_t{8}, std::size_t{1} << 20}) {
    const double mc = best_of_3([&] { return memcpy_time(n, 50); });
    const double pp = best_of_3([&] { return pingpong_time(n, n > 4096 ? 50 : 2000); });
    print({"p2p ping-pong (half round trip)", n, pp * 1e6, gbs(n, pp), gbs(n, mc)});
  }
  // the same without polling: every wait sleeps at once
  lb::options no_poll;
  no_poll.poll = std::chrono::microseconds{0};
  for (std::size_t n : {std::size_t{1} << 20, std::size_t{4} << 20}) {
    const int reps = reps_for(n, base_reps);
    double mc = 1e30, lt = 1e30;
    for (int round = 0; round < 3; ++round) {
      mc = std::min(mc, memcpy_time(n, reps));
      lt = std::min(lt, p2p_time(n, reps, no_poll));
    }
    print({"p2p stream, poll off", n, lt * 1e6, gbs(n, lt), gbs(n, mc)});
  }
  for (std::size_t n : {std::size_t{8}, std::size_t{1} << 20}) {
    const double mc = best_of_3([&] { return memcpy_time(n, 50); });
    const double pp = best_of_3([&] { return pingpong_time(n, n > 4096 ? 50 : 2000, no_poll); });
    print({"p2p ping-pong, poll off", n, pp * 1e6, gbs(n, pp), gbs(n, mc)});
  }
  // synchronous sends: every message rendezvous, one copy
  for (std::size_t n : {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20}) {
    const int reps = reps_for(n, base_reps);
    const double mc = best_of_3([&] { return memcpy_time(n, reps); });
    const double lt = best_of_3([&] { return p2p_time(n, reps, lb::options{0}); });
    print({"p2p stream, eager_limit 0", n, lt * 1e6, gbs(n, lt), gbs(n, mc)});
  }

  const int p = 4;
  for (std::size_t n : {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20}) {
    const std::size_t m = n / sizeof(double);
    const int reps = std::max(5, reps_for(n, base_reps) / 4);
    const double mc = best_of_3([&] { return memcpy_time(n, reps); });
    {
      const double t = collective_time(p, reps, [&](lb::Comm& c) {
        thread_local std::vector<double> buf;
        buf.assign(m, c.rank());
        topocoll::broadcast<topocoll::Hypercube<>>(c, std::span<double>(buf), 0);
      });
      // every non-root rank receives n bytes
      print({"broadcast<Hypercube> p=4", n, t * 1e6, gbs(n * (p - 1), t), gbs(n, mc)});
    }
    {
      const double t = collective_time(p, reps, [&](lb::Comm& c) {
        thread_local std::vector<double> in, out;
        in.assign(m / p, c.rank());
        out.resize(m / p * p);
        topocoll::all_gather<topocoll::Ring>(c, std::span<const double>(in),
                                             std::span<double>(out));
      });
      // every rank receives (p-1)/p * n bytes
      print(
          {"all_gather<Ring> p=4 (n total)", n, t * 1e6, gbs(n / p * (p - 1) * p, t), gbs(n, mc)});
    }
    {
      const double t = collective_time(p, reps, [&](lb::Comm& c) {
        thread_local std::vector<double> in, out;
        in.assign(m, c.rank());
        out.resize(m);
        topocoll::all_reduce<topocoll::Ring>(c, std::span<const double>(in), std::span<double>(out),
                                             std::plus<>{});
      });
      print({"all_reduce<Ring> p=4", n, t * 1e6, gbs(n * p, t), gbs(n, mc)});
    }
  }
  // More ranks than cores: every wait sleeps, so a collective's time is
  // mostly its ranks' wake-ups (doc/transports.md, "loopback").
  const int many = 32;
  for (std::size_t n : {std::size_t{256}, std::size_t{64} << 10}) {
    const std::size_t m = n / sizeof(double);
    const int reps = std::max(5, reps_for(n, base_reps) / 4);
    const double mc = best_of_3([&] { return memcpy_time(n, reps); });
    {
      const double t = collective_time(many, reps, [&](lb::Comm& c) {
        thread_local std::vector<double> in, out;
        in.assign(m / many, c.rank());
        out.resize(m / many * many);
        topocoll::all_gather<topocoll::Ring>(c, std::span<const double>(in),
                                             std::span<double>(out));
      });
      print({"all_gather<Ring> p=32 (n total)", n, t * 1e6, gbs(n / many * (many - 1) * many, t),
             gbs(n, mc)});
    }
    {
      const double t = collective_time(many, reps, [&](lb::Comm& c) {
        thread_local std::vector<double> in, out;
        in.assign(m, c.rank());
        out.resize(m);
        topocoll::all_reduce<topocoll::Hypercube<>>(c, std::span<const double>(in),
                                                    std::span<double>(out), std::plus<>{});
      });
      print({"all_reduce<Hypercube> p=32", n, t * 1e6, gbs(n * many, t), gbs(n, mc)});
    }
  }
  if (!csv.empty()) {
    std::ofstream f(csv);
    f << "what,bytes,time_us,gbytes_per_s,memcpy_gbytes_per_s,efficiency\n";
    for (const auto& r : rows)
      f << '"' << r.what << "\"," << r.bytes << ',' << r.us << ',' << r.gbs << ',' << r.memcpy_gbs
        << ',' << r.gbs / r.memcpy_gbs << '\n';
  }
  return 0;
}
