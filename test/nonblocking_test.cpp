#define BOOST_TEST_MODULE nonblocking
#include "support/harness.hpp"
#include "support/suite.hpp"

// The nonblocking (i*) and persistent (*_init) collectives on every topology x
// transport, against the sequential references: all ten started at once (and
// iall_to_all_v, with uneven counts),
// completed in several orders (forward, reverse, wait_all, test); every
// persistent form restarted with new data; a request destroyed before its
// wait, and one destroyed by an exception (withdrawn); the blocking call's
// argument errors at the i-call and at init; a wait inside a running
// collective. A non-commutative operator (2x2 matrices) keeps rank order.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using namespace topocoll;
using tc_test::Check;
using tc_test::Mat2;
using tc_test::mat_mul;
using T = Mat2;

// ThreadSanitizer leaves out 16, which took 63 % of its time here (68 of
// 107 s) and adds no kind of meeting between the rank threads that 8 and 9
// do not run (tc_test::sweep_p).
const std::vector<int> ps = tc_test::thread_sanitized ? std::vector<int>{1, 2, 3, 5, 8, 9}
                            : tc_test::sanitized
                                ? std::vector<int>{1, 2, 3, 5, 8, 9, 16}
                                : std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16};

// Concatenation of blocks.
std::vector<T> joined(const std::vector<std::vector<T>>& blocks) {
  std::vector<T> v;
  for (const auto& b : blocks) v.insert(v.end(), b.begin(), b.end());
  return v;
}
std::vector<T> block(const std::vector<T>& v, std::size_t i, std::size_t m) {
  return {v.begin() + static_cast<std::ptrdiff_t>(i * m),
          v.begin() + static_cast<std::ptrdiff_t>((i + 1) * m)};
}

// Rank r's buffers for all ten collectives at m elements (per block), with
// inputs drawn from `salt`, and what each output must hold afterwards.
struct ten {
  int p, r, root;
  std::size_t m;
  unsigned salt;
  std::vector<T> bcast, red_in, red_out, ar_in, ar_out, ag_in, ag_out, rs_in, rs_out, sc_in, sc_out,
      ex_in, ex_out, sca_in, sca_out, ga_in, ga_out, a2a_in, a2a_out, v_in, v_out;
  // all_to_all_v's counts: (r + j) % 3 * m elements from rank r to rank j.
  // It has no persistent form: checked once start() has started it.
  std::vector<std::size_t> v_send, v_recv;
  bool v_started = false;

  ten(int p_, int r_, std::size_t m_, unsigned s) : p(p_), r(r_), root(p_ - 1), m(m_), salt(s) {
    const std::size_t P = static_cast<std::size_t>(p);
    auto in = [&](int rank, std::size_t n) { return tc_test::input<T>(rank, n, salt); };
    bcast = r == root ? in(r, m) : std::vector<T>(m);
    red_in = in(r, m), red_out.resize(r == root ? m : 0);
    ar_in = in(r, m), ar_out.resize(m);
    ag_in = in(r, m), ag_out.resize(P * m);
    rs_in = in(r, P * m), rs_out.resize(m);
    sc_in = in(r, m), sc_out.resize(m);
    ex_in = in(r, m), ex_out.resize(m);
    sca_in = r == root ? in(r, P * m) : std::vector<T>{}, sca_out.resize(m);
    ga_in = in(r, m), ga_out.resize(r == root ? P * m : 0);
    a2a_in = in(r, P * m), a2a_out.resize(P * m);
    for (int j = 0; j < p; ++j) v_send.push_back(v_count(r, j)), v_recv.push_back(v_count(j, r));
    v_in = in(r, total(v_send)), v_out.resize(total(v_recv));
  }

  std::size_t v_count(int from, int to) const {
    return static_cast<std::size_t>((from + to) % 3) * m;
  }
  static std::size_t total(const std::vector<std::size_t>& counts) {
    std::size_t n = 0;
    for (std::size_t c : counts) n += c;
    return n;
  }

  void expect(Check& check, const std::string& ctx) const {
    const std::size_t P = static_cast<std::size_t>(p);
    auto in = [&](int rank, std::size_t n) { return tc_test::input<T>(rank, n, salt); };
    std::vector<std::vector<T>> all_m, all_pm;
    for (int q = 0; q < p; ++q) all_m.push_back(in(q, m)), all_pm.push_back(in(q, P * m));
    const auto pre = tc_test::prefixes<T>(p, m, mat_mul{}, salt);
    check.equal(bcast, in(root, m), ctx, " broadcast");
    if (r == root)
      check.equal(red_out, tc_test::fold<T>(0, p - 1, m, mat_mul{}, salt), ctx, " reduce");
    check.equal(ar_out, tc_test::fold<T>(0, p - 1, m, mat_mul{}, salt), ctx, " all_reduce");
    check.equal(ag_out, joined(all_m), ctx, " all_gather");
    std::vector<T> rs = block(all_pm[0], P * 0 + static_cast<std::size_t>(r), m);
    for (int q = 1; q < p; ++q) {
      const std::vector<T> b =
          block(all_pm[static_cast<std::size_t>(q)], static_cast<std::size_t>(r), m);
      for (std::size_t i = 0; i < m; ++i) rs[i] = mat_mul{}(rs[i], b[i]);
    }
    check.equal(rs_out, rs, ctx, " reduce_scatter");
    check.equal(sc_out, pre[static_cast<std::size_t>(r)], ctx, " scan");
    if (r > 0) check.equal(ex_out, pre[static_cast<std::size_t>(r - 1)], ctx, " exclusive_scan");
    check.equal(sca_out, block(in(root, P * m), static_cast<std::size_t>(r), m), ctx, " scatter");
    if (r == root) check.equal(ga_out, joined(all_m), ctx, " gather");
    std::vector<std::vector<T>> mine;
    for (int q = 0; q < p; ++q)
      mine.push_back(block(all_pm[static_cast<std::size_t>(q)], static_cast<std::size_t>(r), m));
    check.equal(a2a_out, joined(mine), ctx, " all_to_all");
    if (!v_started) return;
    std::vector<T> from_each;
    for (int q = 0; q < p; ++q) {
      std::size_t at = 0;
      for (int j = 0; j < r; ++j) at += v_count(q, j);
      const std::vector<T> all = in(q, v_in_total(q));
      from_each.insert(from_each.end(), all.begin() + static_cast<std::ptrdiff_t>(at),
                       all.begin() + static_cast<std::ptrdiff_t>(at + v_count(q, r)));
    }
    check.equal(v_out, from_each, ctx, " all_to_all_v");
  }

  std::size_t v_in_total(int q) const {
    std::size_t n = 0;
    for (int j = 0; j < p; ++j) n += v_count(q, j);
    return n;
  }

  template <class Topo, class C>
  std::vector<request> start(C& c) {
    const int rt = root;
    std::vector<request> v;
    v.push_back(ibroadcast<Topo>(c, std::span<T>(bcast), rt));
    v.push_back(ireduce<Topo>(c, red_in, red_out, mat_mul{}, rt));
    v.push_back(iall_reduce<Topo>(c, ar_in, ar_out, mat_mul{}));
    v.push_back(iall_gather<Topo>(c, ag_in, ag_out));
    v.push_back(ireduce_scatter<Topo>(c, rs_in, rs_out, mat_mul{}));
    v.push_back(iscan<Topo>(c, sc_in, sc_out, mat_mul{}));
    v.push_back(iexclusive_scan<Topo>(c, ex_in, ex_out, mat_mul{}));
    v.push_back(iscatter<Topo>(c, sca_in, sca_out, rt));
    v.push_back(igather<Topo>(c, ga_in, ga_out, rt));
    v.push_back(iall_to_all<Topo>(c, a2a_in, a2a_out));
    v.push_back(iall_to_all_v<Topo>(c, v_in, v_send, v_out, v_recv));
    v_started = true;
    return v;
  }

  template <class Topo, class C>
  std::vector<persistent_request> init(C& c) {
    const int rt = root;
    std::vector<persistent_request> v;
    v.push_back(broadcast_init<Topo>(c, std::span<T>(bcast), rt));
    v.push_back(reduce_init<Topo>(c, red_in, red_out, mat_mul{}, rt));
    v.push_back(all_reduce_init<Topo>(c, ar_in, ar_out, mat_mul{}));
    v.push_back(all_gather_init<Topo>(c, ag_in, ag_out));
    v.push_back(reduce_scatter_init<Topo>(c, rs_in, rs_out, mat_mul{}));
    v.push_back(scan_init<Topo>(c, sc_in, sc_out, mat_mul{}));
    v.push_back(exclusive_scan_init<Topo>(c, ex_in, ex_out, mat_mul{}));
    v.push_back(scatter_init<Topo>(c, sca_in, sca_out, rt));
    v.push_back(gather_init<Topo>(c, ga_in, ga_out, rt));
    v.push_back(all_to_all_init<Topo>(c, a2a_in, a2a_out));
    return v;
  }

  // New inputs in the same buffers (a persistent request's restart).
  void refill(unsigned s) {
    const ten fresh(p, r, m, s);
    salt = s;
    std::ranges::copy(fresh.bcast, bcast.begin());
    std::ranges::copy(fresh.red_in, red_in.begin());
    std::ranges::copy(fresh.ar_in, ar_in.begin());
    std::ranges::copy(fresh.ag_in, ag_in.begin());
    std::ranges::copy(fresh.rs_in, rs_in.begin());
    std::ranges::copy(fresh.sc_in, sc_in.begin());
    std::ranges::copy(fresh.ex_in, ex_in.begin());
    std::ranges::copy(fresh.sca_in, sca_in.begin());
    std::ranges::copy(fresh.ga_in, ga_in.begin());
    std::ranges::copy(fresh.a2a_in, a2a_in.begin());
  }
};

enum class order { forward, reverse, all, testing };

template <class R>
void complete(std::vector<R>& v, order o) {
  switch (o) {
    case order::forward:
      for (auto& x : v) x.wait();
      break;
    case order::reverse:
      for (auto it = v.rbegin(); it != v.rend(); ++it) it->wait();
      break;
    case order::all:
      if constexpr (std::is_same_v<R, request>) {
        wait_all(std::span<request>(v));
        break;
      }
      [[fallthrough]];
    case order::testing:
      for (auto& x : v)
        while (!x.test()) {
        }
      break;
  }
}

}  // namespace

TOPOCOLL_TEST_SUITE(nonblocking)
BOOST_AUTO_TEST_CASE_TEMPLATE(ten_outstanding_complete_in_every_order, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const int r = comm.rank();
          unsigned salt = 1;
          for (std::size_t m : tc_test::sizes)
            for (order o : {order::forward, order::reverse, order::all, order::testing}) {
              ten t(p, r, m, ++salt);
              std::vector<request> v = t.template start<Topo>(comm);
              complete(v, o);
              for (request& x : v) check.expect(x.test(), "test() after completion");
              t.expect(check, std::string(Topo::name()) + " rank " + std::to_string(r) + " m " +
                                  std::to_string(m) + " order " + std::to_string(int(o)));
            }
        });
      },
      ps);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(persistent_requests_restart_with_new_data, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const int r = comm.rank();
          for (std::size_t m : tc_test::sizes) {
            ten t(p, r, m, 100);
            std::vector<persistent_request> v = t.template init<Topo>(comm);
            for (unsigned round = 0; round < 3; ++round) {
              t.refill(200 + round);
              for (auto& x : v) x.start();
              // started requests move (the queue knows the collectives, not
              // the request objects)
              v.reserve(v.capacity() + 1);
              complete(v, round == 1 ? order::reverse : order::forward);
              t.expect(check, std::string(Topo::name()) + " persistent rank " + std::to_string(r) +
                                  " m " + std::to_string(m) + " round " + std::to_string(round));
            }
            // algorithm() and describe() run the model, whose address-space
            // reservation ThreadSanitizer refuses (simulate_test runs it elsewhere)
            if (tc_test::thread_sanitized) continue;
            for (const auto& x : v) {
              if (x.algorithm() == algorithm::automatic)
                check.fail(Topo::name(), " p ", p, " m ", m, ": ", x.describe());
              const std::string d = x.describe();
              if (d.find(to_string(x.algorithm())) == std::string::npos ||
                  d.find(Topo::name()) == std::string::npos ||
                  d.find("p = " + std::to_string(p)) == std::string::npos)
                check.fail("describe() leaves out the algorithm, topology or p: ", d);
            }
          }
        });
      },
      ps);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_request_destroyed_unwaited_completes, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const int r = comm.rank();
          std::vector<T> in = tc_test::input<T>(r, 7, 9), out(7);
          { request dropped = iall_reduce<Topo>(comm, in, out, mat_mul{}); }
          check.equal(out, tc_test::fold<T>(0, p - 1, 7, mat_mul{}, 9), Topo::name(),
                      " dropped iall_reduce rank ", r);
          // a blocking call runs the started ones first, in order
          std::vector<T> out2(7), out3(7);
          request first = iall_reduce<Topo>(comm, in, out2, mat_mul{});
          all_reduce<Topo>(comm, in, out3, mat_mul{});
          check.equal(out2, out3, Topo::name(), " started before a blocking call, rank ", r);
          check.expect(first.test(), "test() of a completed request");
          request empty;
          check.expect(empty.test(), "test() of an empty request");
        });
      },
      ps);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(bad_arguments_throw_at_the_call_with_the_blocking_words, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  using E = std::invalid_argument;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const std::string who =
              "rank " + std::to_string(comm.rank()) + " of " + std::to_string(p);
          std::vector<int> buf(3), wrong(p + 3);
          const std::string bad = "root " + std::to_string(p);
          check.throws<E>([&] { (void)ibroadcast<Topo>(comm, std::span<int>(buf), p); },
                          {"broadcast", who, bad, "outside"}, "ibroadcast");
          check.throws<E>([&] { (void)broadcast_init<Topo>(comm, std::span<int>(buf), p); },
                          {"broadcast", who, bad, "outside"}, "broadcast_init");
          check.throws<E>([&] { (void)iall_reduce<Topo>(comm, buf, wrong, std::plus<>{}); },
                          {"all_reduce", who, "holds " + std::to_string(p + 3)}, "iall_reduce");
          check.throws<E>([&] { (void)all_gather_init<Topo>(comm, buf, wrong); },
                          {"all_gather", who}, "all_gather_init");
          persistent_request pr = all_reduce_init<Topo>(comm, buf, buf, std::plus<>{});
          pr.start();
          check.throws<std::logic_error>([&] { pr.start(); }, {"all_reduce_init", "not completed"},
                                         "start twice");
          pr.wait();
          persistent_request none;
          check.throws<std::logic_error>([&] { none.start(); }, {"start", "no collective"},
                                         "start without a collective");
        });
      },
      ps);
}
// On a transport whose waits suspend (mpi::Comm), test() returns at once while
// a rank has not joined, and collectives on different communicators progress
// side by side: the ranks start them in different orders, and a blocking call
// on one waits while the other is started.
BOOST_AUTO_TEST_CASE_TEMPLATE(fibers_progress_communicators_side_by_side, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          if constexpr (ResumableTransport<std::remove_cvref_t<decltype(comm)>>) {
            if (!detail::fibers_available) return;
            const int r = comm.rank();
            auto other = comm.split(0, r);
            std::vector<int> in(1000, r + 1), a(1000), b(1000), z(1000);
            const int total = p * (p + 1) / 2;
            // rank 0 tests while the others sleep
            request q = iall_reduce<Topo>(comm, in, a, std::plus<>{});
            int early = 0;
            if (r == 0 && p > 1) {
              while (!q.test()) ++early;
              check.expect(early > 0, "test() never returned false while the others slept");
            } else {
              if (p > 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
              q.wait();
            }
            check.equal(a, std::vector<int>(1000, total), Topo::name(), " tested, rank ", r);
            // different orders on odd and even ranks
            std::vector<request> v;
            v.push_back(r % 2 ? iall_reduce<Topo>(other, in, b, std::plus<>{})
                              : iall_reduce<Topo>(comm, in, a, std::plus<>{}));
            v.push_back(r % 2 ? iall_reduce<Topo>(comm, in, a, std::plus<>{})
                              : iall_reduce<Topo>(other, in, b, std::plus<>{}));
            v[0].wait();
            v[1].wait();
            check.equal(a, b, Topo::name(), " two communicators, rank ", r);
            // a blocking call on one while the other is started on rank 0 only
            if (r == 0) {
              request s = iall_reduce<Topo>(comm, in, a, std::plus<>{});
              all_reduce<Topo>(other, in, z, std::plus<>{});
              s.wait();
            } else {
              all_reduce<Topo>(other, in, z, std::plus<>{});
              all_reduce<Topo>(comm, in, a, std::plus<>{});
            }
            check.equal(z, std::vector<int>(1000, total), Topo::name(), " blocking beside, rank ",
                        r);
            check.equal(a, z, Topo::name(), " started beside, rank ", r);
          }
        });
      },
      ps);
}
// On MPI, a message of unexpected size raises message_error at the wait and
// is never written past the buffer, at every protocol size (small messages
// without a probe, probed ones, and the .probe run that probes all), whether
// the collective runs on the caller's stack (wait) or as a fiber (test).
BOOST_AUTO_TEST_CASE_TEMPLATE(a_message_of_unexpected_size_surfaces_at_the_wait, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          if constexpr (ResumableTransport<std::remove_cvref_t<decltype(comm)>>) {
            // the check would refuse it first; the pair needs a topology of 2 ranks
            if (p < 2 || comm.checks_agreement() || !Topo::holds(2)) return;
            auto pair = comm.split(comm.rank() / 2, comm.rank());  // ranks 0 and 1, 2 and 3, ...
            if (pair.size() != 2) return;
            for (std::size_t m : {std::size_t{3}, std::size_t{900}, std::size_t{100000}})
              for (bool testing : {false, true}) {
                const std::size_t mine = m + static_cast<std::size_t>(pair.rank());
                std::vector<int> in(mine, 1), out(mine + 1, -7);
                // recursive doubling on 2 ranks: one exchange, so both ranks
                // get a message of the wrong size, and neither waits for more
                request q = iall_reduce<Topo>(pair, std::span<const int>(in),
                                              std::span<int>(out.data(), mine), std::plus<>{},
                                              options{algorithm::recursive_doubling});
                check.throws<message_error>(
                    [&] {
                      if (testing)
                        while (!q.test()) {
                        }
                      else
                        q.wait();
                    },
                    {"bytes"}, "m " + std::to_string(m));
                check.expect(out.back() == -7, "written past the buffer at m ", m);
              }
          }
        });
      },
      ps);
}
BOOST_AUTO_TEST_SUITE_END()

#ifndef TOPOCOLL_TEST_MPI
// On loopback, a deadlock report names the collectives a blocked rank
// started and never waited for.
BOOST_AUTO_TEST_CASE(a_deadlock_names_the_requests_never_waited_for) {
  std::string what;
  try {
    loopback::run(3, [](loopback::Comm& c) {
      std::vector<int> in(4, c.rank()), out(4);
      request r = iall_reduce<Ring>(c, in, out, std::plus<>{});
      if (c.rank() == 2) {
        int x;
        c.recv(0, 9, std::span<int>(&x, 1));  // never sent: rank 2 never reaches its wait
      }
      r.wait();
    });
  } catch (const deadlock_error& e) {
    what = e.what();
  }
  BOOST_TEST(what.find("rank 2 waits in recv from rank 0, tag 9") != std::string::npos, what);
  BOOST_TEST(what.find("rank 2: iall_reduce started, never waited for") != std::string::npos, what);
  BOOST_TEST(what.find("rank 0: iall_reduce started") == std::string::npos, what);
}

// A request destroyed while an exception unwinds withdraws a collective that
// has not run: rank 1 takes no part in it, so rank 0, which waits for it, is
// told so (deadlock_error: rank 1 has ended) instead of given a result.
BOOST_AUTO_TEST_CASE(a_request_destroyed_by_an_exception_withdraws_its_collective) {
  std::string unwound, waiter = "not reached";  // recorded by the ranks, checked here
  try {
    loopback::run(2, [&](loopback::Comm& c) {
      std::vector<int> in(4, c.rank() + 1), out(4, 0);
      if (c.rank() == 1) {
        try {
          request r = iall_reduce<Ring>(c, in, out, std::plus<>{});
          throw std::runtime_error("rank 1 stops");
        } catch (const std::runtime_error& e) {
          unwound = e.what();
        }
        return;
      }
      request r = iall_reduce<Ring>(c, in, out, std::plus<>{});
      try {
        r.wait();
        waiter = "completed with " + std::to_string(out[0]);
      } catch (const deadlock_error&) {
        waiter = "deadlock_error";
        throw;
      }
    });
  } catch (const deadlock_error&) {
  }
  BOOST_TEST(unwound == "rank 1 stops");
  BOOST_TEST(waiter == "deadlock_error");
}

// A wait inside a running collective (here an operator's) on a collective
// that has not finished is refused by name, at the outer collective's wait;
// the refused request completes later at its own.
BOOST_AUTO_TEST_CASE(a_wait_inside_a_running_collective_is_refused) {
  // Boost.Test is not thread-safe: the ranks record, the main thread checks
  std::array<std::string, 2> what;
  std::array<std::vector<int>, 2> out, x;
  loopback::run(2, [&](loopback::Comm& c) {
    const int r = c.rank();
    auto other = c.split(0, r);
    std::vector<int> in(3, r + 1);
    x[r].assign(3, r == 1 ? 7 : 0);
    out[r].assign(3, 0);
    std::optional<request> a;
    const auto starts_and_waits = [&](int u, int v) {
      if (r == 0 && !a) {
        a = ibroadcast<Ring>(other, std::span<int>(x[r]), 1);
        a->wait();
      }
      return u + v;
    };
    request b = iall_reduce<Ring>(c, in, std::span<int>(out[r]), starts_and_waits);
    try {
      b.wait();
    } catch (const std::logic_error& e) {
      what[r] = e.what();
    }
    if (r == 1) a = ibroadcast<Ring>(other, std::span<int>(x[r]), 1);
    a->wait();
  });
  BOOST_TEST(what[0].find("ibroadcast was tested or waited for inside a running collective") !=
                 std::string::npos,
             what[0]);
  BOOST_TEST(what[1].empty(), what[1]);
  BOOST_TEST(out[1] == std::vector<int>(3, 3));
  for (const auto& v : x) BOOST_TEST(v == std::vector<int>(3, 7));
}
#endif
