#include "stats.hpp"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace topocoll::pmpi::stats {
namespace {

constexpr std::size_t row = reason_count;  // column 0 (reason::none) counts served calls
// Per function: a row of reasons, then a row of topologies.
constexpr std::size_t width = row + topology_count;
std::array<std::atomic<std::uint64_t>, function_count * width> counts{};
std::atomic<std::uint64_t> handed{0};
using totals = std::array<std::uint64_t, function_count * width>;

std::atomic<std::uint64_t>& cell(function f, reason r) {
  return counts[static_cast<std::size_t>(f) * width + static_cast<std::size_t>(r)];
}

int level() {
  const char* v = std::getenv("TOPOCOLL_PMPI_STATS");
  return v == nullptr ? 0 : std::atoi(v);
}

// "topocoll-pmpi:   MPI_Allreduce served=N" and "... fallback(reason)=M"
std::string reasons(const totals& sum, std::size_t f) {
  std::string out;
  for (std::size_t r = 0; r < row; ++r) {
    const std::uint64_t n = sum[f * width + r];
    if (n == 0) continue;
    out += "topocoll-pmpi:   " + std::string(mpi_name(static_cast<function>(f))) + " " +
           (r == 0 ? std::string("served")
                   : "fallback(" + std::string(reason_name(static_cast<reason>(r))) + ")") +
           "=" + std::to_string(n) + "\n";
  }
  return out;
}

// "topocoll-pmpi:   MPI_Allreduce topologies Hypercube=N Ring=M"
std::string topologies(const totals& sum, std::size_t f) {
  std::string list;
  for (std::size_t t = 0; t < topology_count; ++t)
    if (const std::uint64_t n = sum[f * width + row + t]; n > 0)
      list += " " + std::string(topology_name(static_cast<topology>(t))) + "=" + std::to_string(n);
  if (list.empty()) return "";
  return "topocoll-pmpi:   " + std::string(mpi_name(static_cast<function>(f))) + " topologies" +
         list + "\n";
}

void print(const totals& sum, std::uint64_t handed_sum, int lvl) {
  std::uint64_t served = 0, fallback = 0;
  for (std::size_t f = 0; f < function_count; ++f)
    for (std::size_t r = 0; r < row; ++r) (r == 0 ? served : fallback) += sum[f * width + r];
  std::string out = "topocoll-pmpi: served=" + std::to_string(served) +
                    " fallback=" + std::to_string(fallback) + "\n";
  if (handed_sum > 0)
    out += "topocoll-pmpi: progress thread: " + std::to_string(handed_sum) + " calls handed over\n";
  for (std::size_t f = 0; lvl >= 2 && f < function_count; ++f)
    out += reasons(sum, f) + topologies(sum, f);
  std::fputs(out.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

void served(function f) {
  cell(f, reason::none).fetch_add(1, std::memory_order_relaxed);
}

void fell_back(function f, reason r) {
  cell(f, r).fetch_add(1, std::memory_order_relaxed);
}

void ran_on(function f, topology t) {
  counts[static_cast<std::size_t>(f) * width + row + static_cast<std::size_t>(t)].fetch_add(
      1, std::memory_order_relaxed);
}

void handed_over() {
  handed.fetch_add(1, std::memory_order_relaxed);
}

void report() {
  const int lvl = level();
  if (lvl <= 0) return;
  totals mine{}, sum{};
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = counts[i].load();
  PMPI_Reduce(mine.data(), sum.data(), static_cast<int>(mine.size()), MPI_UINT64_T, MPI_SUM, 0,
              MPI_COMM_WORLD);
  const std::uint64_t handed_mine = handed.load();
  std::uint64_t handed_sum = 0;
  PMPI_Reduce(&handed_mine, &handed_sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) print(sum, handed_sum, lvl);
}

}  // namespace topocoll::pmpi::stats
