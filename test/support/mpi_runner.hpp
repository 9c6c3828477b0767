#pragma once
// The MPI test runner (included by harness.hpp when TOPOCOLL_TEST_MPI is
// defined). A suite is the same source as on loopback; here each process of
// mpiexec is one rank, so Mpi::sweep runs the body once, at p = world size.
//
// on_ranks(f) runs f(comm, check) on this process's mpi::Comm, then every
// rank meets in an agreement step on a control communicator of its own:
//  * failures (Check records and exceptions) of every rank are gathered to
//    rank 0 and reported there, so one rank's failure shows in the log and
//    fails the test case on every rank;
//  * ranks that disagree on how many on_ranks steps they ran (one skipped or
//    repeated a step) abort: from there on their messages cannot match;
//  * a rank whose f threw waits at most TOPOCOLL_TEST_MPI_GRACE seconds (60)
//    for the others: an exception on one rank leaves its peers blocked in a
//    receive that will never be matched, and only MPI_Abort can free them
//    (ctest then fails). A rank that returned normally waits at most
//    TOPOCOLL_TEST_MPI_WAIT seconds (240) before aborting with a message
//    naming the test, rather than hanging until ctest's timeout.
//  * after an exception on any rank the library's communicator is replaced by
//    a fresh duplicate, so a message the thrower left unreceived cannot be
//    matched by a later test.
//
// main: MPI is initialized around Boost.Test; ranks other than 0 run with
// --log_level=nothing --report_level=no (TOPOCOLL_TEST_MPI_ALL_RANKS=1 keeps
// their output), and the exit code is the maximum over the ranks.

#include <mpi.h>

#include <boost/core/demangle.hpp>
#include <boost/mpi/collectives/gather.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/string.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include <topocoll/transport/mpi.hpp>

namespace tc_test {

namespace mpi_detail {

struct state {
  boost::mpi::communicator control;           // the runner's own agreement traffic
  std::unique_ptr<topocoll::mpi::Comm> comm;  // what the suites' f receives
  long steps = 0;                             // on_ranks calls so far
};

inline state*& current() {
  static state* s = nullptr;
  return s;
}

inline double env_seconds(const char* name, double dflt) {
  const char* v = std::getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  double d = std::strtod(v, &end);
  return end != v && d > 0 ? d : dflt;
}

inline std::string test_name() {
  try {
    return boost::unit_test::framework::current_test_case().full_name();
  } catch (...) {
    return "(outside a test case)";
  }
}

[[noreturn]] inline void abort_run(const std::string& why) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "\ntopocoll MPI runner, rank %d, %s: %s\nCalling MPI_Abort.\n", rank,
               test_name().c_str(), why.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

// Completes req, polling, or aborts the whole run after `seconds`.
inline void wait_or_abort(MPI_Request& req, double seconds, const std::string& why) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(seconds);
  for (long spin = 0;; ++spin) {
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (clock::now() > deadline) abort_run(why);
    if (spin < 2000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace mpi_detail

struct Mpi {
  static constexpr const char* name = "mpi";
  using comm_type = topocoll::mpi::Comm;

  static comm_type& comm() {
    auto* s = mpi_detail::current();
    if (!s) throw std::logic_error("tc_test::Mpi used before the MPI runner's main set it up");
    return *s->comm;
  }

  // body(p, on_ranks) once, at p = the world size, if the topology holds it.
  // ps and the loopback options do not apply to MPI: the world size is p.
  template <class Topo, class Body>
  static void sweep(Body&& body, const std::vector<int>& ps = sweep_p,
                    topocoll::loopback::options = {}) {
    (void)ps;
    const int p = comm().size();
    if (!Topo::holds(p)) return;
    auto on_ranks = [&](auto&& f) { run_step<Topo>(p, f); };
    body(p, on_ranks);
  }

 private:
  // f(comm, check), with the step's agreement: the suite's f is the only part
  // of a step whose type varies, so the rest is compiled once (run_step below).
  template <class Topo, class F>
  static void run_step(int p, F& f) {
    run_step(
        Topo::name(), p,
        [](void* g, comm_type& c, Check& check) { (*static_cast<F*>(g))(c, check); }, &f);
  }

  static void run_step(const std::string& topology, int p,
                       void (*call)(void* f, comm_type& c, Check& check), void* f) {
    mpi_detail::state& s = *mpi_detail::current();
    const long step = ++s.steps;
    Check check;
    bool threw = false;
    try {
      call(f, *s.comm, check);
    } catch (const std::exception& e) {
      threw = true;
      check.fail("threw ", boost::core::demangle(typeid(e).name()), ": ", e.what());
    } catch (...) {
      threw = true;
      check.fail("threw an exception not derived from std::exception");
    }

    // Agreement, under MAX: any failure, any exception, and the step number
    // and test case (max and min) to catch ranks that drifted apart.
    const long test = static_cast<long>(std::hash<std::string>{}(mpi_detail::test_name()) >> 2);
    long mine[6] = {check.count() > 0, threw, step, -step, test, -test};
    long all[6];
    MPI_Request req;
    MPI_Iallreduce(mine, all, 6, MPI_LONG, MPI_MAX, s.control, &req);
    if (threw)
      mpi_detail::wait_or_abort(
          req, mpi_detail::env_seconds("TOPOCOLL_TEST_MPI_GRACE", 60),
          topocoll::detail::concat("this rank threw (", check.report(),
                                   "\n) and the other ranks did not reach the end of the step "
                                   "(they are most likely blocked waiting for its messages)"));
    else
      mpi_detail::wait_or_abort(
          req, mpi_detail::env_seconds("TOPOCOLL_TEST_MPI_WAIT", 240),
          topocoll::detail::concat("step ", step,
                                   " ended here but not on every rank (a deadlock, or ranks that "
                                   "disagree on the messages to exchange)"));
    if (all[2] != -all[3] || all[4] != -all[5])
      mpi_detail::abort_run(topocoll::detail::concat(
          "the ranks are at different on_ranks steps (numbers ", -all[3], " to ", all[2],
          ", or different test cases): a rank skipped or repeated one, so their messages no "
          "longer match"));

    const std::string text = all[0] ? reports(s, check) : std::string();
    if (all[1]) {  // someone threw: drop whatever it left unreceived
      s.comm = std::make_unique<topocoll::mpi::Comm>(s.comm->base(), s.comm->opts());
    }
    BOOST_CHECK_MESSAGE(all[0] == 0, topology << " on " << name << ", p = " << p << ":" << text);
  }

  // Every rank's failures of a step some rank failed, at rank 0; this rank's
  // own elsewhere.
  static std::string reports(const mpi_detail::state& s, const Check& check) {
    const int rank = s.control.rank();
    const std::string own = check.count()
                                ? topocoll::detail::concat("\n rank ", rank, ":", check.report())
                                : std::string();
    if (rank != 0) {
      boost::mpi::gather(s.control, own, 0);
      return own;
    }
    std::vector<std::string> all;
    boost::mpi::gather(s.control, own, all, 0);
    std::string text;
    for (const auto& r : all) text += r;
    return text;
  }
};

}  // namespace tc_test

// Generated by BOOST_TEST_MODULE (with BOOST_TEST_DYN_LINK).
bool init_unit_test();

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv, boost::mpi::threading::funneled);
  boost::mpi::communicator world;
  const int rank = world.rank();

  std::vector<char*> args(argv, argv + argc);
  const char* all_ranks = std::getenv("TOPOCOLL_TEST_MPI_ALL_RANKS");
  static char log_off[] = "--log_level=nothing";
  static char report_off[] = "--report_level=no";
  if (rank != 0 && !(all_ranks && *all_ranks && std::strcmp(all_ranks, "0") != 0)) {
    // Drop the caller's log and report levels, then silence this rank.
    std::vector<char*> kept;
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::string a = args[i];
      auto is = [&](const char* opt) { return a.rfind(opt, 0) == 0; };
      if (i > 0 && (is("--log_level") || is("--report_level") || is("-l") || is("-r"))) {
        if (a.find('=') == std::string::npos &&
            (a == "--log_level" || a == "--report_level" || a == "-l" || a == "-r"))
          ++i;  // the value is the next argument
        continue;
      }
      kept.push_back(args[i]);
    }
    args = kept;
    args.push_back(log_off);
    args.push_back(report_off);
  }
  args.push_back(nullptr);

  tc_test::mpi_detail::state s{boost::mpi::communicator(world, boost::mpi::comm_duplicate),
                               std::make_unique<topocoll::mpi::Comm>(world), 0};
  tc_test::mpi_detail::current() = &s;

  int rc = boost::unit_test::unit_test_main(&init_unit_test, static_cast<int>(args.size()) - 1,
                                            args.data());

  // Every rank agrees on the result (the worst exit code wins).
  int worst = rc;
  MPI_Request req;
  MPI_Iallreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, s.control, &req);
  tc_test::mpi_detail::wait_or_abort(
      req, tc_test::mpi_detail::env_seconds("TOPOCOLL_TEST_MPI_WAIT", 240),
      "this rank finished every test but the others did not finish");
  std::vector<int> codes;
  if (rank == 0) {
    boost::mpi::gather(s.control, rc, codes, 0);
    std::string failed;
    for (std::size_t r = 1; r < codes.size(); ++r)
      if (codes[r] != 0) failed += " " + std::to_string(r);
    if (!failed.empty() && codes[0] == 0)  // rank 0 passed: nothing in its log says why
      std::fprintf(stderr,
                   "topocoll MPI runner: failures on rank(s)%s, whose output is silenced "
                   "(TOPOCOLL_TEST_MPI_ALL_RANKS=1 shows it)\n",
                   failed.c_str());
  } else {
    boost::mpi::gather(s.control, rc, 0);
  }
  tc_test::mpi_detail::current() = nullptr;
  s.comm.reset();
  return worst;
}
