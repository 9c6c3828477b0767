// Matrix-vector multiplication on a 2-D mesh (Grama et al., Example 4.1 and
// Figure 4.4): y = A x for an n x n matrix A on a q0 x q1 mesh of processes.
//
// Process (i, j) holds the block of A in block row i and block column j
// (blocks of n/q0 by n/q1, give or take one). The vector x is distributed
// over the topmost row: process (0, j) holds block j. Then, as in the seed:
//  1. each column performs a one-to-all broadcast of its block of x, with its
//     topmost process as the source (a column is a linear array);
//  2. every process multiplies its block of A with that block of x;
//  3. each row performs an all-to-one reduction (sum) of those products,
//     onto its leftmost process, which ends up with block i of y.
// The columns and rows are the communicators of mesh_lines<2>, in the
// coordinates of Mesh<2>: a square mesh where p is a square, otherwise the
// balanced q0 x q1 (q0 >= q1) that MPI_Dims_create would choose. With p = 16:
// 4 broadcasts of n/4 elements along 4 ranks, then 4 reductions likewise.
//
//   matvec [p] [n]                loopback ranks (defaults: p = 16, n = 100)
//   mpiexec -n P matvec_mpi [n]
//
// The leftmost processes check their block of y against the sequential
// product; A and x hold small integers, so the sums are exact and compare
// with ==. The exit code is non-zero on a mismatch.

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>
#include <vector>

#include <topocoll/topocoll.hpp>

#ifdef TOPOCOLL_EXAMPLE_MPI
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <topocoll/transport/mpi.hpp>
#endif

namespace tc = topocoll;

namespace {

double a(int row, int col) {
  return (row * 7 + col * 3) % 11 - 5;
}
double x(int col) {
  return col % 5 - 2;
}

// The first row (or column) of block k of q over n: the blocks' sizes differ
// by one at most.
int lo(int k, int n, int q) {
  return static_cast<int>(static_cast<long long>(k) * n / q);
}

// Rows [begin, end) of the sequential product A x.
std::vector<double> sequential(int begin, int end, int n) {
  std::vector<double> y;
  for (int i = begin; i < end; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += a(i, j) * x(j);
    y.push_back(s);
  }
  return y;
}

// Runs Example 4.1 on this rank; returns how many elements of y are wrong on
// all ranks together.
template <class Comm>
int matvec(Comm& c, int n) {
  const int p = c.size();
  const auto q = tc::Mesh<2>::sides(p);              // q[0] rows of processes, q[1] columns
  const auto at = tc::Mesh<2>::coords(p, c.rank());  // my row i = at[0], my column j = at[1]
  auto lines = tc::mesh_lines<2>(c);
  auto& column = lines[0];  // the processes (0, j) .. (q0 - 1, j), ranked by row
  auto& row = lines[1];     // the processes (i, 0) .. (i, q1 - 1), ranked by column
  const int r0 = lo(at[0], n, q[0]), r1 = lo(at[0] + 1, n, q[0]);
  const int c0 = lo(at[1], n, q[1]), c1 = lo(at[1] + 1, n, q[1]);

  // 1. Block j of x, from the top of column j down the column.
  std::vector<double> xj(static_cast<std::size_t>(c1 - c0));
  if (at[0] == 0)
    for (int k = c0; k < c1; ++k) xj[static_cast<std::size_t>(k - c0)] = x(k);
  tc::broadcast<tc::Ring>(column, std::span<double>(xj), 0);

  // 2. The local product: my block of A times block j of x.
  std::vector<double> part(static_cast<std::size_t>(r1 - r0));
  for (int i = r0; i < r1; ++i)
    for (int k = c0; k < c1; ++k)
      part[static_cast<std::size_t>(i - r0)] += a(i, k) * xj[static_cast<std::size_t>(k - c0)];

  // 3. The sum of the row's products, onto its leftmost process.
  std::vector<double> y(at[1] == 0 ? part.size() : 0);
  tc::reduce<tc::Ring>(row, std::span<const double>(part), std::span<double>(y), std::plus<>{}, 0);

  int wrong = 0, wrong_everywhere = 0;
  if (at[1] == 0) {
    const auto want = sequential(r0, r1, n);
    for (std::size_t k = 0; k < y.size(); ++k) wrong += y[k] != want[k];
  }
  tc::all_reduce<tc::Mesh<2>>(c, std::span<const int>(&wrong, 1),
                              std::span<int>(&wrong_everywhere, 1), std::plus<>{});
  if (c.rank() == 0)
    std::printf("y = A x, A of %d x %d, on a %d x %d mesh of %d ranks: %s\n", n, n, q[0], q[1], p,
                wrong_everywhere == 0 ? "matches the sequential product" : "WRONG");
  return wrong_everywhere;
}

int parse(const char* s) {
  return static_cast<int>(std::strtol(s, nullptr, 10));
}

}  // namespace

#ifdef TOPOCOLL_EXAMPLE_MPI
int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  tc::mpi::Comm c{boost::mpi::communicator{}};
  const int n = argc > 1 ? parse(argv[1]) : 100;
  return n >= 1 && matvec(c, n) == 0 ? 0 : 1;
}
#else
int main(int argc, char** argv) {
  const int p = argc > 1 ? parse(argv[1]) : 16;
  const int n = argc > 2 ? parse(argv[2]) : 100;
  if (p < 1 || n < 1) {
    std::fprintf(stderr, "usage: matvec [p >= 1] [n >= 1]\n");
    return 2;
  }
  int wrong = 0;
  tc::loopback::run(p, [&](tc::loopback::Comm& c) {
    const int w = matvec(c, n);
    if (c.rank() == 0) wrong = w;
  });
  return wrong != 0;
}
#endif
