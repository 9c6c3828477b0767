// Distributed matrix transpose with all_to_all (Grama et al., Example 4.2).
//
// An n x n matrix is split by rows over p ranks: rank r holds the n/p rows
// [r*b, (r+1)*b), b = n/p, as one row-major b x n array. Cut into p blocks of
// b x b, block j of rank r is the part of A^T that rank j will own, so one
// all-to-all personalized exchange moves every block to its owner; each rank
// then transposes the p blocks it received, locally.
//
//   transpose [p] [n]      (defaults: p = 8, n = 64; n must be a multiple of p)
//
// Runs on the in-process loopback transport; with MPI, replace loopback::run
// by an mpi::Comm and run the body once per process.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <span>
#include <vector>

#include <topocoll/topocoll.hpp>

int main(int argc, char** argv) {
  const int p = argc > 1 ? std::atoi(argv[1]) : 8;
  const int n = argc > 2 ? std::atoi(argv[2]) : 64;
  if (p < 1 || n < 1 || n % p != 0) {
    std::fprintf(stderr, "usage: transpose [p] [n], with n a positive multiple of p\n");
    return 2;
  }
  const int b = n / p;  // rows per rank, and the block side
  const auto B = static_cast<std::size_t>(b);
  const auto N = static_cast<std::size_t>(n);
  auto a = [n](int row, int col) { return static_cast<double>(row) * n + col; };  // A[row][col]

  // The sequential reference: the whole transpose, row-major.
  std::vector<double> reference(N * N);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) reference[static_cast<std::size_t>(j) * N + i] = a(i, j);

  std::vector<double> result(N * N);  // each rank writes its rows of A^T here
  std::mutex mu;

  topocoll::loopback::run(p, [&](topocoll::loopback::Comm& comm) {
    const int r = comm.rank();

    // Pack: block j = my rows, columns [j*b, (j+1)*b), row-major, contiguous.
    std::vector<double> send(B * N), recv(B * N);
    for (int j = 0; j < p; ++j)
      for (int x = 0; x < b; ++x)
        for (int y = 0; y < b; ++y)
          send[(static_cast<std::size_t>(j) * B + x) * B + y] = a(r * b + x, j * b + y);

    // Block j goes to rank j; block i of recv came from rank i:
    // recv block i = A[i*b + x][r*b + y].
    topocoll::all_to_all<topocoll::Hypercube<>>(comm, std::span<const double>(send),
                                                std::span<double>(recv));

    // Local transpose of each block: my row x of A^T, column i*b + y, is
    // A[i*b + y][r*b + x].
    std::vector<double> mine(B * N);
    for (int i = 0; i < p; ++i)
      for (int x = 0; x < b; ++x)
        for (int y = 0; y < b; ++y)
          mine[static_cast<std::size_t>(x) * N + static_cast<std::size_t>(i * b + y)] =
              recv[(static_cast<std::size_t>(i) * B + y) * B + x];

    std::lock_guard lk(mu);
    std::copy(mine.begin(), mine.end(), result.begin() + static_cast<std::ptrdiff_t>(r * B * N));
  });

  std::size_t wrong = 0;
  for (std::size_t k = 0; k < N * N; ++k) wrong += result[k] != reference[k];
  std::printf("transpose of a %d x %d matrix on %d ranks (all_to_all of %d x %d blocks): %s\n", n,
              n, p, b, b, wrong == 0 ? "matches the sequential transpose" : "MISMATCH");
  if (wrong != 0) std::printf("%zu of %zu elements differ\n", wrong, N * N);
  return wrong == 0 ? 0 : 1;
}
