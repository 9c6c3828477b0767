// topocoll demo: every collective on every topology, each result checked
// against a sequential computation, with the traffic it took.
//
//   demo [p] [m]        loopback transport, p ranks (default 8), m elements per rank (default 1000)
//   mpiexec -n 4 demo_mpi [m]    the same on the Boost.MPI transport (built when MPI is found)
//
// The statistics of each run are collected to rank 0 with topocoll::gather
// itself, so the program is the same on both transports.

#include <topocoll/topocoll.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#ifdef TOPOCOLL_DEMO_MPI
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <topocoll/transport/mpi.hpp>
#endif

namespace tc = topocoll;
using value = std::int64_t;

namespace {

// Rank r's input, element i: small distinct integers, so sums stay exact.
value x(int r, std::size_t i) {
  return static_cast<value>(r) * 1000 + static_cast<value>(i % 997);
}

struct row_stats {  // one rank's view of one run; gathered to rank 0
  std::uint64_t sends;
  std::uint64_t bytes;
  double micros;
  int ok;
};

template <class Comm>
class demo {
 public:
  demo(Comm& c, std::size_t m) : c_(c), p_(c.size()), r_(c.rank()), m_(m) {}

  template <class Topo>
  void all() {
    const int root = p_ > 1 ? 1 : 0;  // not rank 0: shows the relabelling at work
    const std::size_t m = m_, P = static_cast<std::size_t>(p_);
    std::vector<value> mine(m), all_blocks(m * P), out(m), outp(m * P);
    for (std::size_t i = 0; i < m; ++i) mine[i] = x(r_, i);
    for (std::size_t i = 0; i < m * P; ++i) all_blocks[i] = x(r_, i);
    auto sum_over = [&](int lo, int hi, auto&& elem) {  // sequential reference
      value s = 0;
      for (int q = lo; q <= hi; ++q) s += elem(q);
      return s;
    };

    run<Topo>("broadcast", [&](auto& cc) {
      std::vector<value> buf = r_ == root ? mine : std::vector<value>(m);
      tc::broadcast<Topo>(cc, std::span<value>(buf), root);
      for (std::size_t i = 0; i < m; ++i)
        if (buf[i] != x(root, i)) return false;
      return true;
    });
    run<Topo>("reduce", [&](auto& cc) {
      std::vector<value> res(r_ == root ? m : 0);
      tc::reduce<Topo>(cc, std::span<const value>(mine), std::span<value>(res), std::plus<>{},
                       root);
      for (std::size_t i = 0; i < res.size(); ++i)
        if (res[i] != sum_over(0, p_ - 1, [&](int q) { return x(q, i); })) return false;
      return true;
    });
    run<Topo>("scatter", [&](auto& cc) {
      std::span<const value> in =
          r_ == root ? std::span<const value>(all_blocks) : std::span<const value>();
      tc::scatter<Topo>(cc, in, std::span<value>(out), root);
      for (std::size_t i = 0; i < m; ++i)
        if (out[i] != x(root, static_cast<std::size_t>(r_) * m + i)) return false;
      return true;
    });
    run<Topo>("gather", [&](auto& cc) {
      std::vector<value> res(r_ == root ? m * P : 0);
      tc::gather<Topo>(cc, std::span<const value>(mine), std::span<value>(res), root);
      for (std::size_t i = 0; i < res.size(); ++i)
        if (res[i] != x(static_cast<int>(i / m), i % m)) return false;
      return true;
    });
    run<Topo>("all_gather", [&](auto& cc) {
      tc::all_gather<Topo>(cc, std::span<const value>(mine), std::span<value>(outp));
      for (std::size_t i = 0; i < m * P; ++i)
        if (outp[i] != x(static_cast<int>(i / m), i % m)) return false;
      return true;
    });
    run<Topo>("reduce_scatter", [&](auto& cc) {
      tc::reduce_scatter<Topo>(cc, std::span<const value>(all_blocks), std::span<value>(out),
                               std::plus<>{});
      const std::size_t off = static_cast<std::size_t>(r_) * m;
      for (std::size_t i = 0; i < m; ++i)
        if (out[i] != sum_over(0, p_ - 1, [&](int q) { return x(q, off + i); })) return false;
      return true;
    });
    run<Topo>("all_reduce", [&](auto& cc) {
      tc::all_reduce<Topo>(cc, std::span<const value>(mine), std::span<value>(out), std::plus<>{});
      for (std::size_t i = 0; i < m; ++i)
        if (out[i] != sum_over(0, p_ - 1, [&](int q) { return x(q, i); })) return false;
      return true;
    });
    run<Topo>("scan", [&](auto& cc) {
      tc::scan<Topo>(cc, std::span<const value>(mine), std::span<value>(out), std::plus<>{});
      for (std::size_t i = 0; i < m; ++i)
        if (out[i] != sum_over(0, r_, [&](int q) { return x(q, i); })) return false;
      return true;
    });
    run<Topo>("exclusive_scan", [&](auto& cc) {
      std::fill(out.begin(), out.end(), value{-1});
      tc::exclusive_scan<Topo>(cc, std::span<const value>(mine), std::span<value>(out),
                               std::plus<>{});
      for (std::size_t i = 0; i < m; ++i)
        if (out[i] != (r_ == 0 ? -1 : sum_over(0, r_ - 1, [&](int q) { return x(q, i); })))
          return false;
      return true;
    });
    run<Topo>("all_to_all", [&](auto& cc) {
      // block j of rank r is x(r, j*m + i); rank r receives block r of every rank
      tc::all_to_all<Topo>(cc, std::span<const value>(all_blocks), std::span<value>(outp));
      for (std::size_t i = 0; i < m * P; ++i)
        if (outp[i] != x(static_cast<int>(i / m), static_cast<std::size_t>(r_) * m + i % m))
          return false;
      return true;
    });
    run<Topo>("all_to_all_v", [&](auto& cc) {
      // rank r sends (r + j) % 3 * m / 2 elements to rank j: uneven, some empty
      std::vector<std::size_t> counts(P);
      for (std::size_t j = 0; j < P; ++j)
        counts[j] = (static_cast<std::size_t>(r_) + j) % 3 * m / 2;
      std::vector<value> send(std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
      for (std::size_t k = 0; k < send.size(); ++k) send[k] = x(r_, k);
      auto res = tc::all_to_all_v<Topo>(cc, std::span<const value>(send),
                                        std::span<const std::size_t>(counts));
      std::size_t at = 0;
      for (int q = 0; q < p_; ++q) {
        std::size_t n = (static_cast<std::size_t>(q) + static_cast<std::size_t>(r_)) % 3 * m / 2;
        std::size_t from = 0;  // offset of rank r's block in q's send buffer
        for (int j = 0; j < r_; ++j)
          from += (static_cast<std::size_t>(q) + static_cast<std::size_t>(j)) % 3 * m / 2;
        if (res.counts[static_cast<std::size_t>(q)] != n) return false;
        for (std::size_t k = 0; k < n; ++k)
          if (res.data[at + k] != x(q, from + k)) return false;
        at += n;
      }
      return at == res.data.size();
    });
  }

  int failures() const { return failures_; }

 private:
  // Runs one collective through a counting decorator, checks it, and prints
  // the row on rank 0.
  template <class Topo, class F>
  void run(const char* name, F&& f) {
    tc::model::Counting<Comm> cc(c_);
    auto t0 = std::chrono::steady_clock::now();
    bool ok = f(cc);
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    row_stats mine{cc.sends(), cc.bytes_sent(), us, ok ? 1 : 0};
    std::vector<row_stats> all(r_ == 0 ? static_cast<std::size_t>(p_) : 0);
    tc::gather<tc::Tree<2>>(c_, std::span<const row_stats>(&mine, 1), std::span<row_stats>(all), 0);
    if (r_ != 0) return;
    std::uint64_t max_sends = 0, max_bytes = 0, bytes = 0;
    double max_us = 0;
    int good = 0;
    for (const row_stats& s : all) {
      max_sends = std::max(max_sends, s.sends);
      max_bytes = std::max(max_bytes, s.bytes);
      bytes += s.bytes;
      max_us = std::max(max_us, s.micros);
      good += s.ok;
    }
    failures_ += p_ - good;
    std::printf("%-15s %-12s %4d %7zu %10llu %12llu %12.1f %9.1f  %s\n", name, Topo::name().c_str(),
                p_, m_, static_cast<unsigned long long>(max_sends),
                static_cast<unsigned long long>(max_bytes), static_cast<double>(bytes) / p_, max_us,
                good == p_ ? "ok" : "WRONG");
  }

  Comm& c_;
  int p_, r_;
  std::size_t m_;
  int failures_ = 0;
};

template <class Comm>
int run_all(Comm& c, std::size_t m) {
  if (c.rank() == 0) {
    std::printf("%-15s %-12s %4s %7s %10s %12s %12s %9s  %s\n", "collective", "topology", "p", "m",
                "sends/rank", "bytes/rank", "bytes/rank", "time", "check");
    std::printf("%-15s %-12s %4s %7s %10s %12s %12s %9s\n", "", "", "", "", "(max)", "(max)",
                "(mean)", "(us,max)");
  }
  demo<Comm> d(c, m);
  d.template all<tc::Ring>();
  d.template all<tc::Mesh<2>>();
  d.template all<tc::Hypercube<>>();
  d.template all<tc::Tree<2>>();
  d.template all<tc::Tree<4>>();
  return d.failures();
}

std::size_t parse(const char* s, const char* what) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*end != '\0' || v < 0) {
    std::fprintf(stderr, "demo: %s must be a non-negative integer, got '%s'\n", what, s);
    std::exit(2);
  }
  return static_cast<std::size_t>(v);
}

}  // namespace

int main(int argc, char** argv) {
#ifdef TOPOCOLL_DEMO_MPI
  boost::mpi::environment env(argc, argv);
  tc::mpi::Comm c{boost::mpi::communicator{}};
  std::size_t m = argc > 1 ? parse(argv[1], "m") : 1000;
  if (c.rank() == 0)
    std::printf("topocoll demo: %d ranks on the Boost.MPI transport, m = %zu int64 per rank\n\n",
                c.size(), m);
  int failures = run_all(c, m);
  if (c.rank() == 0)
    std::printf("\n%s\n", failures ? "some results were WRONG" : "every result verified");
  return failures != 0;
#else
  int p = argc > 1 ? static_cast<int>(parse(argv[1], "p")) : 8;
  std::size_t m = argc > 2 ? parse(argv[2], "m") : 1000;
  if (p < 1) {
    std::fprintf(stderr, "demo: p must be at least 1\n");
    return 2;
  }
  std::printf("topocoll demo: %d ranks on the loopback transport, m = %zu int64 per rank\n\n", p,
              m);
  int failures = 0;
  tc::loopback::run(p, [&](tc::loopback::Comm& c) {
    int f = run_all(c, m);
    if (c.rank() == 0) failures = f;
  });
  std::printf("\n%s\n", failures ? "some results were WRONG" : "every result verified");
  return failures != 0;
#endif
}
