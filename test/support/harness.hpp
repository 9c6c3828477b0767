#pragma once
// The shared test harness. A suite is written once and templated over
// topology x transport (a `Config`); the transport's runner decides where the
// ranks come from:
//   Loopback  sweeps p over sweep_p (those the topology holds), one
//             loopback::run per p, every rank a thread;
//   Mpi       (test/support/mpi_runner.hpp, TOPOCOLL_TEST_MPI) runs once at
//             the world size of mpiexec.
//
//   BOOST_AUTO_TEST_CASE_TEMPLATE(broadcast_matches, Cfg, tc_test::Configs) {
//     Cfg::sweep([](int p, auto on_ranks) {
//       auto want = ...;                         // computed once, outside the ranks
//       on_ranks([&](auto& comm, tc_test::Check& check) {
//         ...
//         check.equal(got, want, "root=", root, " m=", m);
//       });
//     });
//   }
//
// Boost.Test's assertions are not thread-safe, so ranks never call them: they
// record into a Check, and the runner reports on the test's own thread.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <topocoll/topocoll.hpp>

#include "types.hpp"

namespace tc_test {

// Sanitizer builds (ASan, TSan) run the same suites over fewer p and with
// lighter data at the largest p, to stay within CI's time; release builds
// sweep everything.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#if defined(__SANITIZE_THREAD__)
inline constexpr bool thread_sanitized = true;
#else
inline constexpr bool thread_sanitized = false;
#endif

// AddressSanitizer leaves out 10, 11, 13, 14 and 15 (the primes 2, 3, 5, 7,
// 17 and 31, the powers of two to 32 and the composites 6, 9 and 12 stay),
// and 64, which took half of its suites' time (personalized_test: 38 of
// 75 s) and runs no layout that 32 does not: one more hypercube dimension,
// mesh side or tree level. Release runs them.
// ThreadSanitizer runs 1 to 5, 7, 8, 12 and 17. It looks for races between
// the rank threads, which meet only in the loopback transport's mailboxes:
// 17 threads already run every kind of meeting there (eager, rendezvous and
// synchronous sends, many in flight at once). 6, 9 and 16 add none and took
// a third of its time (one_to_all_test: 31 of 96 s), and the larger p most
// of the rest. Release and AddressSanitizer run them.
inline const std::vector<int> sweep_p =
    thread_sanitized ? std::vector<int>{1, 2, 3, 4, 5, 7, 8, 12, 17}
    : sanitized
        ? std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 31, 32}
        : std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 32, 64};
inline const std::vector<std::size_t> sizes = {0, 1, 7, 1000};

// Every root for p <= 9; three (first, middle, last) above.
inline std::vector<int> roots_for(int p) {
  std::vector<int> r;
  if (p <= 9) {
    for (int i = 0; i < p; ++i) r.push_back(i);
  } else {
    r = {0, p / 2 + 1, p - 1};
  }
  return r;
}

template <class T>
concept Printable = requires(std::ostream& os, const T& t) {
  os << t;
};

// Failures seen by the ranks of one run; safe to use from every rank at once.
class Check {
 public:
  // The message is written by topocoll::detail::concat, which passes string
  // literals on as pointers: messages that differ in their literals alone
  // share the code that writes them.
  template <class... Ctx>
  void fail(const Ctx&... ctx) {
    record(topocoll::detail::concat(ctx...));
  }

  template <class... Ctx>
  void expect(bool ok, const Ctx&... ctx) {
    if (!ok) fail(ctx...);
  }

  // got == want elementwise; reports the length or the first mismatch.
  template <class R1, class R2, class... Ctx>
  void equal(const R1& got, const R2& want, const Ctx&... ctx) {
    auto g = std::begin(got);
    auto w = std::begin(want);
    std::size_t ng = std::size(got), nw = std::size(want);
    if (ng != nw) return fail(ctx..., ": length ", ng, ", expected ", nw);
    for (std::size_t i = 0; i < ng; ++i, ++g, ++w) {
      if (*g == *w) continue;
      if constexpr (Printable<std::decay_t<decltype(*g)>>)
        return fail(ctx..., ": element ", i, " is ", *g, ", expected ", *w);
      else
        return fail(ctx..., ": element ", i, " differs");
    }
  }

  // f() throws E and its what() contains every one of `parts`.
  template <class E, class F>
  void throws(F&& f, std::initializer_list<std::string> parts, const std::string& ctx = {}) {
    try {
      f();
    } catch (const E& e) {
      return mentions(e.what(), parts, ctx);
    } catch (const std::exception& e) {
      return fail(ctx, ": threw the wrong exception: ", e.what());
    }
    fail(ctx, ": did not throw");
  }

  std::size_t count() const { return count_; }
  std::string report() const {
    std::string s;
    for (const auto& m : messages_) s += "\n  " + m;
    if (count_ > messages_.size())
      s += "\n  ... and " + std::to_string(count_ - messages_.size()) + " more";
    return s;
  }

 private:
  void record(std::string message) {
    std::lock_guard lk(mu_);
    if (++count_ <= max_kept) messages_.push_back(std::move(message));
  }

  // The message `what` contains every one of `parts`.
  void mentions(const std::string& what, std::initializer_list<std::string> parts,
                const std::string& ctx) {
    for (const auto& s : parts)
      if (what.find(s) == std::string::npos)
        fail(ctx, ": message \"", what, "\" does not mention \"", s, "\"");
  }

  static constexpr std::size_t max_kept = 10;
  std::mutex mu_;
  std::size_t count_ = 0;
  std::vector<std::string> messages_;
};

struct Loopback {
  static constexpr const char* name = "loopback";
  using comm_type = topocoll::loopback::Comm;

  // body(p, on_ranks) for every p in ps the topology holds; on_ranks(f) runs
  // f(comm, check) on p ranks and reports the failures.
  template <class Topo, class Body>
  static void sweep(Body&& body, const std::vector<int>& ps = sweep_p,
                    topocoll::loopback::options opt = {}) {
    for (int p : ps) {
      if (!Topo::holds(p)) continue;
      auto on_ranks = [&](auto&& f) {
        Check check;
        topocoll::loopback::run(
            p, [&](comm_type& c) { f(c, check); }, opt);
        report(check, Topo::name(), p);
      };
      body(p, on_ranks);
    }
  }

 private:
  static void report(const Check& check, const std::string& topology, int p) {
    BOOST_CHECK_MESSAGE(check.count() == 0,
                        topology << " on " << name << ", p = " << p << ":" << check.report());
  }
};

template <class Topo, class Runner>
struct Config {
  using topology = Topo;
  using runner = Runner;
  template <class Body>
  static void sweep(Body&& body) {
    Runner::template sweep<Topo>(std::forward<Body>(body));
  }
  template <class Body>
  static void sweep(Body&& body, const std::vector<int>& ps) {
    Runner::template sweep<Topo>(std::forward<Body>(body), ps);
  }
};

}  // namespace tc_test

#ifdef TOPOCOLL_TEST_MPI
#include "mpi_runner.hpp"
#define TC_TEST_RUNNERS tc_test::Mpi
#else
#define TC_TEST_RUNNERS tc_test::Loopback
#endif

namespace tc_test {
using Runner = TC_TEST_RUNNERS;

// Every topology the suites sweep. Hypercube<D> with a fixed D only runs where
// p = 2^D (the runner skips the other p). Sanitizer builds leave out Mesh<2>:
// its kernels are the Ring's (kernel_topology), which the Ring and Mesh<3>
// (sides of 1 to p) run under the sanitizers too, and the release build
// sweeps it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
using Configs =
    std::tuple<Config<topocoll::Ring, Runner>, Config<topocoll::Mesh<3>, Runner>,
               Config<topocoll::Hypercube<>, Runner>, Config<topocoll::Hypercube<3>, Runner>,
               Config<topocoll::Tree<2>, Runner>, Config<topocoll::Tree<3>, Runner>>;
#else
using Configs = std::tuple<Config<topocoll::Ring, Runner>, Config<topocoll::Mesh<2>, Runner>,
                           Config<topocoll::Mesh<3>, Runner>, Config<topocoll::Hypercube<>, Runner>,
                           Config<topocoll::Hypercube<3>, Runner>,
                           Config<topocoll::Tree<2>, Runner>, Config<topocoll::Tree<3>, Runner>>;
#endif
}  // namespace tc_test
