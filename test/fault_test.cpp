// Faults on the MPI transport, under mpiexec (built with TOPOCOLL_TEST_MPI:
// the MPI runner provides main). Every case builds a Comm of its own, with a
// timeout, so that nothing it leaves behind reaches another case and nothing
// hangs:
//  * a rank that skips a collective: the others get timeout_error within the
//    timeout + 2 s, naming a peer; following the peers leads to the missing rank;
//  * a rank that skips a collective under the agreement check: the others'
//    timeout_error names it;
//  * ranks that disagree on a collective's arguments, under TOPOCOLL_CHECK:
//    std::invalid_argument on every rank, naming the values and their ranks;
//  * a message never received: the sender's wait ends in timeout_error, and a
//    Comm that timed out says so when used again.
// Two cases end the job on purpose and are disabled here; ctest runs them
// alone (--run_test): one rank throws in the middle of a collective (the
// runner ends the job with MPI_Abort and that rank's message), and a link of
// one host goes down (scripts/netns-cluster, label multihost).
#define BOOST_TEST_MODULE fault
#include "support/harness.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <topocoll/transport/mpi.hpp>

#ifndef TOPOCOLL_TEST_MPI
#error "fault_test is built with TOPOCOLL_TEST_MPI (see test/CMakeLists.txt)"
#endif

namespace mpi = topocoll::mpi;
using tc_test::Check;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr double timeout_s = 1;

template <class F>
void on_every_rank(F&& f) {
  tc_test::Mpi::sweep<topocoll::Ring>([&](int, auto on_ranks) { on_ranks(f); });
}

// A Comm of the test's own over the runner's ranks, with a timeout.
mpi::Comm timed_comm(const mpi::Comm& c, mpi::options::agreement check,
                     double seconds = timeout_s) {
  mpi::options o;
  o.timeout = std::chrono::duration<double>(seconds);
  o.check = check;
  return mpi::Comm(c.base(), o);
}

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Every rank's value, in rank order (on the runner's base communicator).
std::vector<int> all_ranks(const mpi::Comm& c, int mine) {
  std::vector<int> all(static_cast<std::size_t>(c.size()));
  MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, c.base());
  return all;
}

// Sets an environment variable for one scope, on this rank.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~scoped_env() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::vector<double> ones(std::size_t n) {
  return std::vector<double>(n, 1.0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_skipped_collective_times_out_naming_the_path_to_the_missing_rank) {
  on_every_rank([](mpi::Comm& world, Check& check) {
    const int p = world.size(), missing = p - 1;
    if (p == 1) return;
    mpi::Comm c = timed_comm(world, mpi::options::agreement::off);
    const topocoll::options rd{topocoll::algorithm::recursive_doubling};
    std::vector<double> in = ones(4), out(4);
    int peer = -2;  // -2: no timeout here
    if (c.rank() != missing) {
      const auto t0 = clock_type::now();
      try {
        topocoll::all_reduce<topocoll::Hypercube<>>(c, in, out, std::plus<>{}, rd);
        check.fail("rank ", c.rank(), ": all_reduce returned without rank ", missing);
      } catch (const topocoll::timeout_error& e) {
        peer = e.peer();
        const double waited = since(t0);
        check.expect(waited >= timeout_s && waited < timeout_s + 2, "rank ", c.rank(),
                     ": timeout_error after ", waited, " s, timeout ", timeout_s, " s");
        const std::string what = e.what(),
                          here = topocoll::detail::concat(" on rank ", c.rank(), " of ", p);
        for (const std::string& part :
             {std::string("topocoll::all_reduce"), here,
              topocoll::detail::concat("rank ", e.peer()),
              topocoll::detail::concat("tag ", e.tag()), std::string("bytes expected"),
              std::string("timed out after")})
          check.expect(what.find(part) != std::string::npos, "rank ", c.rank(), ": \"", what,
                       "\" does not name \"", part, "\"");
      }
      check.throws<topocoll::timeout_error>(
          [&] { topocoll::all_reduce<topocoll::Hypercube<>>(c, in, out, std::plus<>{}); },
          {"is unusable", "timed out"}, "a Comm used after its timeout");
    }
    // Each rank waited for one that waited in turn: following the peers from
    // any rank that timed out reaches the missing rank.
    const std::vector<int> peers = all_ranks(world, peer);
    for (int r = 0; r < p; ++r) {
      if (r == missing) continue;
      check.expect(peers[r] != -2, "rank ", r, " did not time out");
      int at = r;
      for (int hops = 0; hops < p && at != missing && at >= 0 && peers[at] >= 0; ++hops)
        at = peers[at];
      check.expect(at == missing, "from rank ", r, " the peers waited for lead to rank ", at,
                   ", not to the missing rank ", missing);
    }
  });
}

BOOST_AUTO_TEST_CASE(a_skipped_collective_under_the_check_times_out_naming_the_missing_rank) {
  on_every_rank([](mpi::Comm& world, Check& check) {
    const int p = world.size();
    if (p == 1) return;
    for (const int missing : {0, p - 1}) {
      mpi::Comm c = timed_comm(world, mpi::options::agreement::on);
      std::vector<double> buf = ones(3);
      if (c.rank() == missing) {
        MPI_Barrier(world.base());  // the others have timed out and named this rank
        continue;
      }
      const auto t0 = clock_type::now();
      int peer = -2;
      check.throws<topocoll::timeout_error>(
          [&] {
            try {
              topocoll::broadcast<topocoll::Tree<2>>(c, buf, 0);
            } catch (const topocoll::timeout_error& e) {
              peer = e.peer();
              throw;
            }
          },
          {"topocoll::broadcast", topocoll::detail::concat("rank ", c.rank(), " of ", p),
           "agreement check", "bytes",
           topocoll::detail::concat("; rank ", missing, " never arrived at topocoll::broadcast")},
          topocoll::detail::concat("rank ", missing, " skipped broadcast"));
      check.expect(peer == missing, "rank ", c.rank(), ": timeout_error names peer ", peer,
                   ", not the missing rank ", missing);
      check.expect(since(t0) < timeout_s + 2, "rank ", c.rank(), ": ", since(t0), " s");
      MPI_Barrier(world.base());
    }
  });
}

BOOST_AUTO_TEST_CASE(mismatched_counts_under_TOPOCOLL_CHECK_throw_on_every_rank) {
  on_every_rank([](mpi::Comm& world, Check& check) {
    const int p = world.size();
    if (p == 1) return;
    const scoped_env on("TOPOCOLL_CHECK", "1");                         // every rank sets it
    mpi::Comm c = timed_comm(world, mpi::options::agreement::off, 30);  // the variable wins
    check.expect(c.opts().check == mpi::options::agreement::on, "TOPOCOLL_CHECK=1 ignored");
    const int odd = p - 1;
    std::vector<double> in = ones(c.rank() == odd ? 3 : 4), out(in.size());
    check.throws<std::invalid_argument>(
        [&] { topocoll::all_reduce<topocoll::Ring>(c, in, out, std::plus<>{}); },
        {"topocoll::all_reduce", topocoll::detail::concat("rank ", c.rank(), " of ", p),
         topocoll::detail::concat("count: rank ", odd, " has 3, rank 0 has 4")},
        "all_reduce, 3 elements on the last rank");
    // The hang: broadcast with an empty buffer at the root only.
    std::vector<double> buf = ones(c.rank() == 0 ? 0 : 5);
    check.throws<std::invalid_argument>(
        [&] { topocoll::broadcast<topocoll::Hypercube<>>(c, buf, 0); },
        {"count: rank 0 has 0, rank 1 has 5"}, "broadcast, empty at the root");
    // Different roots, different collectives, different algorithms.
    std::vector<double> b = ones(2);
    check.throws<std::invalid_argument>(
        [&] { topocoll::broadcast<topocoll::Ring>(c, b, c.rank() == odd ? 1 : 0); },
        {topocoll::detail::concat("root: rank 0 has 0, rank ", odd, " has 1")}, "roots differ");
    check.throws<std::invalid_argument>(
        [&] {
          if (c.rank() == odd)
            topocoll::broadcast<topocoll::Ring>(c, b, 0);
          else
            topocoll::all_reduce<topocoll::Ring>(c, b, b, std::plus<>{});
        },
        {topocoll::detail::concat("collective: rank ", odd,
                                  " has broadcast, rank 0 has all_reduce")},
        "collectives differ");
    const topocoll::options tree{topocoll::algorithm::tree};
    check.throws<std::invalid_argument>(
        [&] {
          topocoll::broadcast<topocoll::Ring>(c, b, 0,
                                              c.rank() == odd ? tree : topocoll::options{});
        },
        {topocoll::detail::concat("algorithm: rank 0 has automatic, rank ", odd, " has tree")},
        "algorithms differ");
    // What may differ does not trip it: all_to_all_v's counts, the root's
    // buffers; and the Comm is still usable after a disagreement.
    std::vector<std::size_t> counts(static_cast<std::size_t>(p));
    for (int j = 0; j < p; ++j) counts[j] = static_cast<std::size_t>(c.rank() + j);
    std::vector<double> vin(std::accumulate(counts.begin(), counts.end(), std::size_t{0}), 1.0);
    const auto r = topocoll::all_to_all_v<topocoll::Ring>(c, vin, counts);
    for (int i = 0; i < p; ++i)
      check.expect(r.counts[i] == static_cast<std::size_t>(i + c.rank()), "all_to_all_v count ", i);
    std::vector<double> red(c.rank() == 0 ? 4 : 0);
    topocoll::reduce<topocoll::Ring>(c, ones(4), red, std::plus<>{}, 0);
    if (c.rank() == 0) check.equal(red, std::vector<double>(4, p), "reduce after the check");
  });
}

BOOST_AUTO_TEST_CASE(a_send_never_received_times_out) {
  on_every_rank([](mpi::Comm& world, Check& check) {
    if (world.size() == 1) return;
    mpi::Comm c = timed_comm(world, mpi::options::agreement::off);
    // Large enough to need the receiver (rendezvous); kept for MPI, which
    // may still read it once the request is handed over.
    static std::vector<char> big(8 << 20, 'x');
    if (c.rank() == 0)
      check.throws<topocoll::timeout_error>(
          [&] { c.send(1, 3, std::span<const char>(big)); },
          {"mpi::Comm on rank 0", "rank 1 to receive a message (tag 3, 8388608 bytes)"},
          "an unmatched send");
  });
}

BOOST_AUTO_TEST_CASE(bad_settings_in_the_environment_are_rejected) {
  on_every_rank([](mpi::Comm& world, Check& check) {
    {
      const scoped_env bad("TOPOCOLL_TIMEOUT", "2s");
      check.throws<std::invalid_argument>([&] { mpi::Comm c(world.base()); },
                                          {"TOPOCOLL_TIMEOUT=2s", "seconds"}, "TOPOCOLL_TIMEOUT");
    }
    {
      const scoped_env bad("TOPOCOLL_CHECK", "yes");
      check.throws<std::invalid_argument>([&] { mpi::Comm c(world.base()); },
                                          {"TOPOCOLL_CHECK=yes"}, "TOPOCOLL_CHECK");
    }
    if (world.size() == 1) return;
    // Settings the ranks must share: every rank throws when one differs.
    mpi::options o;
    if (world.rank() == 1) o.timeout = std::chrono::duration<double>(5);
    check.throws<std::invalid_argument>([&] { mpi::Comm c(world.base(), o); },
                                        {"timeout here but not on every rank"}, "one timeout");
    o = {};
    if (world.rank() == 1) o.check = mpi::options::agreement::on;
    if (world.rank() == 0) o.check = mpi::options::agreement::off;
    check.throws<std::invalid_argument>([&] { mpi::Comm c(world.base(), o); },
                                        {"agreement check is", "not on every rank"}, "one check");
  });
}

// Run alone (ctest fault_test.rank_throws): rank 1 throws from the operator
// in the middle of a scan; the ranks after it wait for it. The runner ends the job
// with MPI_Abort and rank 1's message once TOPOCOLL_TEST_MPI_GRACE has passed.
BOOST_AUTO_TEST_CASE(a_rank_that_throws_mid_collective, *boost::unit_test::disabled()) {
  on_every_rank([](mpi::Comm& c, Check&) {
    int calls = 0;
    auto op = [&](double a, double b) {
      if (c.rank() == 1 && ++calls == 1)
        throw std::runtime_error("rank 1's operator fails at its first element");
      return a + b;
    };
    std::vector<double> in = ones(8), out(8);
    topocoll::scan<topocoll::Ring>(c, in, out, op);  // a chain: ranks 2.. wait for rank 1
  });
}

// Run by scripts/netns-cluster (ctest fault_test.link_down, label multihost):
// collectives in a loop until the script takes a host's link down; the ranks
// then waiting report their timeout_error on stderr.
BOOST_AUTO_TEST_CASE(a_link_that_goes_down, *boost::unit_test::disabled()) {
  on_every_rank([](mpi::Comm& world, Check& check) {
    mpi::Comm c = timed_comm(world, mpi::options::agreement::off);
    std::vector<double> in = ones(1 << 14), out(in.size());
    const auto t0 = clock_type::now();
    try {
      for (long i = 0; since(t0) < 60; ++i) {
        topocoll::all_reduce<topocoll::Ring>(c, in, out, std::plus<>{});
        if (i == 10 && c.rank() == 0) std::fprintf(stderr, "fault_test: collectives running\n");
      }
      check.fail("rank ", c.rank(), ": no timeout within 60 s");
    } catch (const topocoll::timeout_error& e) {
      std::fprintf(stderr, "fault_test: rank %d got timeout_error: %s\n", c.rank(), e.what());
    }
  });
}
