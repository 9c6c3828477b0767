// The phases of a string broadcast, timed one by one in the same run (run under
// mpiexec; see README.md):
//
//   mpiexec -n 4 ... build-d/benchmark/string_phases [strings]   (default 2048)
//
// strings of 32 characters (2048 = 64 KiB per rank, as in collectives_bench).
// Each row is alternated with the others, MPI_Barrier before each repetition,
// and timed as the slowest rank's time (t_max); median and min of 200. Rows:
// topocoll's string broadcast; its parts (a broadcast of the encoded bytes, of
// the 2 KiB head, the root's encoding, a non-root's decoding); MPI_Bcast of
// the same bytes; Boost.MPI's value broadcast. It shows what a string
// broadcast must spend besides moving bytes when ranks share cores.

#include <boost/mpi.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <topocoll/topocoll.hpp>
#include <topocoll/transport/mpi.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  namespace bmpi = boost::mpi;
  namespace d = topocoll::detail;
  using S = std::string;
  bmpi::environment env(argc, argv);
  bmpi::communicator world;
  topocoll::mpi::Comm comm(world);
  const std::size_t k = argc > 1 ? std::stoul(argv[1]) : 2048;
  std::vector<S> in(k), buf(k), bv;
  for (std::size_t i = 0; i < k; ++i) {
    in[i] = std::to_string(i);
    in[i].resize(32, static_cast<char>('a' + i % 26));
  }
  buf = in;
  if (world.rank() == 0) bv = in;
  const std::size_t n = d::flat_size(std::span<const S>(in));
  std::vector<std::byte> bytes(n), head(2048);
  d::flat_encode(std::span<const S>(in), bytes.data());
  const bool root = world.rank() == 0;
  std::vector<std::pair<const char*, std::function<void()>>> rows = {
      {"topocoll broadcast<Tree<4>>(strings)",
       [&] { topocoll::broadcast<topocoll::Tree<4>>(comm, std::span<S>(buf), 0); }},
      {"  broadcast<Tree<4>> of the encoded bytes",
       [&] { topocoll::broadcast<topocoll::Tree<4>>(comm, std::span<std::byte>(bytes), 0); }},
      {"  broadcast<Tree<4>> of a 2 KiB head",
       [&] { topocoll::broadcast<topocoll::Tree<4>>(comm, std::span<std::byte>(head), 0); }},
      {"  flat_encode at the root",
       [&] {
         if (root) d::flat_encode(std::span<const S>(in), bytes.data());
       }},
      {"  flat_decode on a non-root",
       [&] {
         if (!root) d::flat_decode(bytes.data(), n, std::span<S>(buf));
       }},
      {"MPI_Bcast of the encoded bytes",
       [&] { MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_BYTE, 0, world); }},
      {"Boost.MPI broadcast(vector<string>)", [&] { bmpi::broadcast(world, bv, 0); }},
  };
  std::vector<std::vector<double>> t(rows.size());
  for (int r = 0; r < 200; ++r)
    for (std::size_t j = 0; j < rows.size(); ++j) {
      auto& row = rows[(j + static_cast<std::size_t>(r)) % rows.size()];
      MPI_Barrier(world);
      const double t0 = MPI_Wtime();
      row.second();
      double mine = MPI_Wtime() - t0, slowest = 0;
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, world);
      t[(j + static_cast<std::size_t>(r)) % rows.size()].push_back(slowest * 1e6);
    }
  if (!root) return 0;
  std::printf("string broadcast phases: p = %d, %zu strings of 32 characters, %zu bytes encoded\n",
              world.size(), k, n);
  for (std::size_t j = 0; j < rows.size(); ++j) {
    std::sort(t[j].begin(), t[j].end());
    std::printf("  %-44s median %8.1f us   min %8.1f us\n", rows[j].first, t[j][t[j].size() / 2],
                t[j].front());
  }
}
