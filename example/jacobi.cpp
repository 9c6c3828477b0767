// A Jacobi iteration with its convergence test as a persistent collective.
//
// Each rank holds a slice of a 1-D grid (u'' = 0 with u = 0 at the left end
// and u = 1 at the right end). Each sweep exchanges one halo value with each
// neighbour (an all_gather of the slice ends: small, and every rank needs
// only two of them) and then needs the largest change over all ranks, to
// decide whether to stop. That all_reduce has the same arguments every
// sweep, so it is set up once (all_reduce_init) and started each sweep; the
// halo all_gather is started (iall_gather) before the interior update, which
// does not need it, and waited for after.
//
//   jacobi [p] [cells per rank]     loopback ranks (defaults: p = 6, 10)
//
// The result is checked against the same sweeps run sequentially; a
// difference prints WRONG. Rank 0 prints the persistent plan (describe()).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include <topocoll/topocoll.hpp>

namespace tc = topocoll;

namespace {

constexpr double tolerance = 1e-3;
constexpr int max_sweeps = 20000;

// One sweep over cells [1, n] of u (u[0], u[n + 1]: the halo); returns the
// largest change. The interior cells [2, n - 1] do not read the halo.
double sweep(std::vector<double>& u, std::vector<double>& next, std::size_t lo, std::size_t hi) {
  double change = 0;
  for (std::size_t i = lo; i <= hi; ++i) {
    next[i] = 0.5 * (u[i - 1] + u[i + 1]);
    change = std::max(change, std::abs(next[i] - u[i]));
  }
  return change;
}

// The sequential reference: the whole grid, the same sweeps.
std::vector<double> sequential(int p, std::size_t n, int& sweeps) {
  const std::size_t cells = static_cast<std::size_t>(p) * n;
  std::vector<double> u(cells + 2, 0.0), next;
  u[cells + 1] = 1.0;
  next = u;
  for (sweeps = 1; sweeps <= max_sweeps; ++sweeps) {
    const double change = sweep(u, next, 1, cells);
    std::swap(u, next);
    if (change < tolerance) break;
  }
  return {u.begin() + 1, u.end() - 1};
}

}  // namespace

int main(int argc, char** argv) {
  const int p = argc > 1 ? std::atoi(argv[1]) : 6;
  const std::size_t n = argc > 2 ? static_cast<std::size_t>(std::atoi(argv[2])) : 10;
  if (p < 1 || n < 2) {
    std::fprintf(stderr, "usage: jacobi [p >= 1] [cells per rank >= 2]\n");
    return 2;
  }
  int want_sweeps = 0;
  const std::vector<double> want = sequential(p, n, want_sweeps);
  std::vector<double> got(static_cast<std::size_t>(p) * n);
  std::vector<int> sweeps(static_cast<std::size_t>(p));

  tc::loopback::run(p, [&](tc::loopback::Comm& c) {
    const int r = c.rank();
    std::vector<double> u(n + 2, 0.0), next;
    if (r == p - 1) u[n + 1] = 1.0;  // the right boundary
    next = u;
    double change = 0, largest = 0;
    tc::persistent_request converged = tc::all_reduce_init<tc::Hypercube<>>(
        c, std::span<const double>(&change, 1), std::span<double>(&largest, 1), tc::ops::max{});
    if (r == 0) std::printf("%s\n", converged.describe().c_str());
    std::vector<double> ends(2), all_ends(2 * static_cast<std::size_t>(p));
    int s = 1;
    for (; s <= max_sweeps; ++s) {
      ends = {u[1], u[n]};
      tc::request halo = tc::iall_gather<tc::Ring>(c, ends, all_ends);
      change = sweep(u, next, 2, n - 1);  // the interior, while the halo is under way
      halo.wait();
      if (r > 0) u[0] = all_ends[2 * static_cast<std::size_t>(r) - 1];
      if (r < p - 1) u[n + 1] = all_ends[2 * static_cast<std::size_t>(r) + 2];
      change = std::max({change, sweep(u, next, 1, 1), sweep(u, next, n, n)});
      next[0] = u[0];
      next[n + 1] = u[n + 1];
      std::swap(u, next);
      converged.start();
      converged.wait();
      if (largest < tolerance) break;
    }
    sweeps[static_cast<std::size_t>(r)] = s;
    std::copy(u.begin() + 1, u.end() - 1, got.begin() + static_cast<std::ptrdiff_t>(r * n));
  });

  bool ok = got == want;
  for (int s : sweeps) ok = ok && s == want_sweeps;
  std::printf("%d ranks x %zu cells: every change below %g after %d sweeps, as sequentially: %s\n",
              p, n, tolerance, want_sweeps, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
