// Global numbering of a distributed array with a prefix sum (Grama et al.,
// Section 4.3: "prefix sums ... the position of each element").
//
// Every rank holds a different number of items (some none at all). The
// exclusive scan of the counts is, on rank r, the number of items on ranks
// 0 .. r-1: the global index of r's first item. Its items are numbered from
// there, and the inclusive scan's value on the last rank is the global total.
// One collective, whatever p: PREFIX_SUMS_HCUBE on a hypercube,
// (t_s + t_w) ceil(log p) for one count per rank.
//
//   numbering [p] [seed]          loopback ranks (defaults: p = 8, seed = 1)
//   mpiexec -n P numbering_mpi [seed]
//
// Each rank then checks its numbers against the sequential reference (the
// counts of all ranks, added up in rank order); on loopback, the items are
// also written into one global array at their indices, which must come out as
// the ranks' items in rank order, every slot written exactly once.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <span>
#include <vector>

#include <topocoll/topocoll.hpp>

#ifdef TOPOCOLL_EXAMPLE_MPI
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <topocoll/transport/mpi.hpp>
#endif

namespace tc = topocoll;
using count = std::uint64_t;

namespace {

// How many items rank r holds: 0 to 6, irregular, and 0 for every third rank.
count items_on(int r, unsigned seed) {
  return r % 3 == 2 ? 0 : (static_cast<count>(r) * 5 + seed * 3 + 1) % 7;
}

// An item's payload: which rank holds it, and its local position there.
struct item {
  int rank;
  count local;
};

struct numbered {
  count first;  // the global index of this rank's first item
  count total;  // items on all ranks
};

template <class Comm>
numbered number_items(Comm& c, count mine) {
  count before = 0;  // rank 0's exclusive scan is left untouched: no items before it
  tc::exclusive_scan<tc::Hypercube<>>(c, std::span<const count>(&mine, 1),
                                      std::span<count>(&before, 1), std::plus<>{});
  count through = 0;
  tc::scan<tc::Hypercube<>>(c, std::span<const count>(&mine, 1), std::span<count>(&through, 1),
                            std::plus<>{});
  count total = c.rank() == c.size() - 1 ? through : 0;
  tc::broadcast<tc::Hypercube<>>(c, std::span<count>(&total, 1), c.size() - 1);
  return {before, total};
}

// The sequential reference for rank r, and whether n matches it.
bool check(int r, int p, unsigned seed, const numbered& n) {
  count before = 0, total = 0;
  for (int q = 0; q < p; ++q) {
    if (q < r) before += items_on(q, seed);
    total += items_on(q, seed);
  }
  if (n.first == before && n.total == total) return true;
  std::printf("rank %d: first index %llu, total %llu; expected %llu and %llu: WRONG\n", r,
              static_cast<unsigned long long>(n.first), static_cast<unsigned long long>(n.total),
              static_cast<unsigned long long>(before), static_cast<unsigned long long>(total));
  return false;
}

unsigned parse(const char* s) {
  return static_cast<unsigned>(std::strtoul(s, nullptr, 10));
}

}  // namespace

#ifdef TOPOCOLL_EXAMPLE_MPI
int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  tc::mpi::Comm c{boost::mpi::communicator{}};
  const unsigned seed = argc > 1 ? parse(argv[1]) : 1;
  const numbered n = number_items(c, items_on(c.rank(), seed));
  int wrong = check(c.rank(), c.size(), seed, n) ? 0 : 1, wrong_ranks = 0;
  tc::all_reduce<tc::Hypercube<>>(c, std::span<const int>(&wrong, 1),
                                  std::span<int>(&wrong_ranks, 1), std::plus<>{});
  if (c.rank() == 0)
    std::printf("global numbering of %llu items on %d ranks: %s\n",
                static_cast<unsigned long long>(n.total), c.size(),
                wrong_ranks == 0 ? "every index verified" : "WRONG");
  return wrong_ranks != 0;
}
#else
int main(int argc, char** argv) {
  const int p = argc > 1 ? static_cast<int>(parse(argv[1])) : 8;
  const unsigned seed = argc > 2 ? parse(argv[2]) : 1;
  if (p < 1) {
    std::fprintf(stderr, "usage: numbering [p >= 1] [seed]\n");
    return 2;
  }
  std::vector<item> global;  // sized by the first rank that knows the total
  std::vector<int> writes;   // how often each slot was written
  std::mutex mu;
  int wrong = 0;
  tc::loopback::run(p, [&](tc::loopback::Comm& c) {
    const count mine = items_on(c.rank(), seed);
    const numbered n = number_items(c, mine);
    std::lock_guard lk(mu);
    wrong += !check(c.rank(), p, seed, n);
    if (global.size() != n.total) global.resize(n.total), writes.resize(n.total);
    for (count i = 0; i < mine && n.first + i < n.total; ++i) {
      global[n.first + i] = {c.rank(), i};
      ++writes[n.first + i];
    }
  });
  // The ranks' items in rank order, each slot written once.
  std::size_t k = 0;
  for (int r = 0; r < p; ++r)
    for (count i = 0; i < items_on(r, seed); ++i, ++k)
      wrong += k >= global.size() || global[k].rank != r || global[k].local != i || writes[k] != 1;
  wrong += k != global.size();
  std::printf("global numbering of %zu items on %d ranks: %s\n", global.size(), p,
              wrong == 0 ? "every index verified" : "WRONG");
  return wrong != 0;
}
#endif
