#define BOOST_TEST_MODULE loopback
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <topocoll/topocoll.hpp>

#include "support/types.hpp"

namespace lb = topocoll::loopback;
using topocoll::aborted_error;
using topocoll::deadlock_error;
using topocoll::message_error;

namespace {

int live_threads() {
  int n = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Runs f and returns the what() of the E it must throw.
template <class E, class F>
std::string what_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  BOOST_FAIL("expected exception was not thrown");
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(messages_between_a_pair_with_one_tag_arrive_in_order) {
  for (std::size_t eager : {std::size_t{0}, std::size_t{1} << 20}) {
    std::vector<int> got;
    lb::run(
        2,
        [&](lb::Comm& c) {
          if (c.rank() == 0) {
            for (int i = 0; i < 50; ++i) {
              std::vector<int> m(static_cast<std::size_t>(i % 5 + 1), i);
              c.send(1, 7, std::span<const int>(m));
            }
          } else {
            for (int i = 0; i < 50; ++i) {
              std::vector<int> m(static_cast<std::size_t>(i % 5 + 1));
              c.recv(0, 7, std::span<int>(m));
              got.push_back(m.front());
            }
          }
        },
        lb::options{eager});
    std::vector<int> want(50);
    std::iota(want.begin(), want.end(), 0);
    BOOST_TEST(got == want, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(tags_select_messages_out_of_arrival_order) {
  lb::run(2, [](lb::Comm& c) {
    if (c.rank() == 0) {
      int a = 1, b = 2;
      c.send(1, 10, std::span<const int>(&a, 1));
      c.send(1, 20, std::span<const int>(&b, 1));
    } else {
      int x = 0, y = 0;
      c.recv(0, 20, std::span<int>(&y, 1));
      c.recv(0, 10, std::span<int>(&x, 1));
      if (x != 1 || y != 2) throw std::runtime_error("wrong tag matching");
    }
  });
}

BOOST_AUTO_TEST_CASE(large_messages_cost_one_copy_and_arrive_intact) {
  const std::size_t n = 1 << 20;
  lb::run(3, [&](lb::Comm& c) {
    std::vector<double> out(n), in(n);
    std::iota(out.begin(), out.end(), c.rank() * 1e7);
    int next = (c.rank() + 1) % 3, prev = (c.rank() + 2) % 3;
    // every rank sends first: only correct because sendrecv posts the send
    c.sendrecv(next, std::span<const double>(out), prev, std::span<double>(in), 3);
    for (std::size_t i = 0; i < n; i += 4099)
      if (in[i] != prev * 1e7 + static_cast<double>(i)) throw std::runtime_error("corrupt");
  });
}

BOOST_AUTO_TEST_CASE(user_structs_and_strings_travel) {
  lb::run(2, [](lb::Comm& c) {
    auto parts = tc_test::input<tc_test::Particle>(0, 100);
    auto words = tc_test::input<std::string>(0, 100);
    if (c.rank() == 0) {
      c.send(1, 0, std::span<const tc_test::Particle>(parts));
      c.send(1, 1, std::span<const std::string>(words));
    } else {
      std::vector<tc_test::Particle> p2(100);
      std::vector<std::string> w2(100);
      c.recv(0, 1, std::span<std::string>(w2));
      c.recv(0, 0, std::span<tc_test::Particle>(p2));
      if (p2 != parts || w2 != words) throw std::runtime_error("corrupt struct or string");
    }
  });
}

BOOST_AUTO_TEST_CASE(size_mismatch_throws_message_error_naming_both_sizes) {
  for (std::size_t eager : {std::size_t{0}, std::size_t{4096}}) {
    auto what = what_of<message_error>([&] {
      lb::run(
          2,
          [](lb::Comm& c) {
            std::vector<int> v(5, 1);
            if (c.rank() == 0)
              c.send(1, 4, std::span<const int>(v));
            else
              c.recv(0, 4, std::span<int>(v.data(), 4));
          },
          lb::options{eager});
    });
    BOOST_TEST(contains(what, "5 elements"));
    BOOST_TEST(contains(what, "holds 4"));
    BOOST_TEST(contains(what, "rank 1"));
  }
}

BOOST_AUTO_TEST_CASE(type_mismatch_throws_message_error) {
  BOOST_CHECK_THROW(lb::run(2,
                            [](lb::Comm& c) {
                              if (c.rank() == 0) {
                                int v = 1;
                                c.send(1, 0, std::span<const int>(&v, 1));
                              } else {
                                float f;
                                c.recv(0, 0, std::span<float>(&f, 1));
                              }
                            }),
                    message_error);
}

BOOST_AUTO_TEST_CASE(two_ranks_receiving_first_deadlock_within_a_second) {
  auto t0 = std::chrono::steady_clock::now();
  auto what = what_of<deadlock_error>([] {
    lb::run(2, [](lb::Comm& c) {
      int x;
      c.recv(1 - c.rank(), 9, std::span<int>(&x, 1));
    });
  });
  auto dt = std::chrono::steady_clock::now() - t0;
  BOOST_TEST(dt < std::chrono::seconds(1));
  BOOST_TEST(contains(what, "rank 0 waits in recv from rank 1, tag 9"));
  BOOST_TEST(contains(what, "rank 1 waits in recv from rank 0, tag 9"));
}

BOOST_AUTO_TEST_CASE(polling_before_a_wait_delays_but_never_hides_a_deadlock) {
  // A rank polls before it sleeps (options::poll) only while the ranks not
  // waiting fit on the cores; a deadlock is found once the last one sleeps.
  for (auto poll : {std::chrono::microseconds{0}, std::chrono::microseconds{20000}}) {
    lb::options opt;
    opt.eager_limit = 0;
    opt.poll = poll;
    auto what = what_of<deadlock_error>([&] {
      lb::run(
          3,
          [](lb::Comm& c) {
            std::vector<int> v(4, c.rank());
            if (c.rank() == 2) return;
            c.send(1 - c.rank(), 6, std::span<const int>(v));  // rendezvous both ways
          },
          opt);
    });
    BOOST_TEST(contains(what, "rank 0 waits in send to rank 1, tag 6"), what);
    BOOST_TEST(contains(what, "rank 1 waits in send to rank 0, tag 6"), what);
    BOOST_TEST(!contains(what, "rank 2"), what);
    what = what_of<deadlock_error>([&] {
      lb::run(
          2,
          [](lb::Comm& c) {
            int x;
            c.recv(1 - c.rank(), 9, std::span<int>(&x, 1));
          },
          opt);
    });
    BOOST_TEST(contains(what, "rank 0 waits in recv from rank 1, tag 9"), what);
    BOOST_TEST(contains(what, "rank 1 waits in recv from rank 0, tag 9"), what);
  }
}

BOOST_AUTO_TEST_CASE(synchronous_sends_to_each_other_deadlock) {
  auto what = what_of<deadlock_error>([] {
    lb::run(2, [](lb::Comm& c) {
      std::vector<char> big(1 << 16);
      c.send(1 - c.rank(), 2, std::span<const char>(big));
      c.recv(1 - c.rank(), 2, std::span<char>(big));
    });
  });
  BOOST_TEST(contains(what, "rank 0 waits in send to rank 1, tag 2"));
  BOOST_TEST(contains(what, "rank 1 waits in send to rank 0, tag 2"));
}

BOOST_AUTO_TEST_CASE(waiting_for_a_rank_that_returned_is_a_deadlock) {
  auto what = what_of<deadlock_error>([] {
    lb::run(3, [](lb::Comm& c) {
      int x;
      if (c.rank() == 2) c.recv(0, 1, std::span<int>(&x, 1));
    });
  });
  BOOST_TEST(contains(what, "rank 2 waits in recv from rank 0, tag 1 (which has returned)"));
}

BOOST_AUTO_TEST_CASE(a_throwing_rank_is_rethrown_and_no_thread_is_left_behind) {
  const int before = live_threads();
  struct boom : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  std::atomic<int> released{0};
  BOOST_CHECK_THROW(lb::run(16,
                            [&](lb::Comm& c) {
                              if (c.rank() == 5) throw boom("rank 5 failed");
                              int x;
                              try {
                                c.recv((c.rank() + 1) % 16, 0, std::span<int>(&x, 1));
                              } catch (const aborted_error&) {
                                ++released;
                                throw;
                              }
                            }),
                    boom);
  BOOST_TEST(released.load() == 15);
  BOOST_TEST(live_threads() == before);
}

BOOST_AUTO_TEST_CASE(a_message_never_received_is_reported) {
  auto what = what_of<message_error>([] {
    lb::run(3, [](lb::Comm& c) {
      int x = 1;
      if (c.rank() == 1) c.send(2, 33, std::span<const int>(&x, 1));
    });
  });
  BOOST_TEST(contains(what, "from rank 1 to rank 2 with tag 33"));
}

BOOST_AUTO_TEST_CASE(a_peer_outside_the_world_is_an_invalid_argument) {
  BOOST_CHECK_THROW(lb::run(2,
                            [](lb::Comm& c) {
                              int x = 0;
                              c.send(2, 0, std::span<const int>(&x, 1));
                            }),
                    std::invalid_argument);
  BOOST_CHECK_THROW(lb::run(0, [](lb::Comm&) {}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(one_rank_and_zero_length_messages) {
  lb::run(1, [](lb::Comm& c) {
    if (c.size() != 1 || c.rank() != 0) throw std::runtime_error("bad p = 1 world");
    std::vector<int> none;
    c.sendrecv(0, std::span<const int>(none), 0, std::span<int>(none), 0);
    int x = 4, y = 0;
    c.sendrecv(0, std::span<const int>(&x, 1), 0, std::span<int>(&y, 1), 1);
    if (y != 4) throw std::runtime_error("self sendrecv");
  });
}

BOOST_AUTO_TEST_CASE(two_hundred_fifty_six_ranks_pass_a_token_around) {
  const int p = 256;
  std::atomic<int> seen{0};
  lb::run(p, [&](lb::Comm& c) {
    int token = 0;
    const int r = c.rank();
    if (r == 0) {
      token = 1;
      c.send(1, 0, std::span<const int>(&token, 1));
      c.recv(p - 1, 0, std::span<int>(&token, 1));
      seen = token;
    } else {
      c.recv(r - 1, 0, std::span<int>(&token, 1));
      ++token;
      c.send((r + 1) % p, 0, std::span<const int>(&token, 1));
    }
  });
  BOOST_TEST(seen.load() == p);
}

// ---- non-blocking sends (core/nonblocking.hpp) ----

static_assert(topocoll::NonblockingTransport<lb::Comm, double>);
static_assert(topocoll::NonblockingTransport<lb::Comm, std::string>);

BOOST_AUTO_TEST_CASE(isend_to_several_ranks_completes_whatever_order_they_receive_in) {
  // Rank 0 isends to 1..4 in that order; the receivers take theirs in reverse
  // (rank 4 first, then it lets rank 3 go, ...), which blocking rendezvous
  // sends would deadlock on. Rank 0 also sends two messages to rank 4 with
  // different tags, taken in the other order.
  const int p = 5;
  const std::size_t n = 1 << 12;  // 32 KiB of double: rendezvous by default too
  for (std::size_t eager : {std::size_t{0}, std::size_t{16384}}) {
    std::vector<std::vector<double>> got(p);
    std::vector<int> order;  // completion order of the receives, on rank 0's side of the world
    std::mutex order_mu;
    std::atomic<int> pending_after_isend{-1};
    lb::run(
        p,
        [&](lb::Comm& c) {
          const int r = c.rank();
          if (r == 0) {
            std::vector<std::vector<double>> out(p);
            std::vector<lb::Comm::request> reqs;
            for (int d = 1; d < p; ++d) {
              out[static_cast<std::size_t>(d)].assign(n, d * 1000.0);
              reqs.push_back(
                  c.isend(d, 5, std::span<const double>(out[static_cast<std::size_t>(d)])));
            }
            std::vector<double> extra(n, -1.0);
            reqs.push_back(c.isend(4, 6, std::span<double>(extra)));
            int pending = 0;
            for (auto& q : reqs) pending += q.pending() ? 1 : 0;
            pending_after_isend = pending;
            c.wait_all(std::span<lb::Comm::request>(reqs));
            for (auto& q : reqs)
              if (q.pending())
                throw std::runtime_error("a request is still pending after wait_all");
          } else {
            char token = 0;
            if (r < p - 1) c.recv(r + 1, 1, std::span<char>(&token, 1));
            auto& g = got[static_cast<std::size_t>(r)];
            g.resize(n);
            if (r == 4) {
              std::vector<double> x(n);
              c.recv(0, 6, std::span<double>(x));
              if (x != std::vector<double>(n, -1.0)) throw std::runtime_error("tag 6 corrupt");
            }
            c.recv(0, 5, std::span<double>(g));
            {
              std::lock_guard lk(order_mu);
              order.push_back(r);
            }
            if (r > 1) c.send(r - 1, 1, std::span<const char>(&token, 1));
          }
        },
        lb::options{eager});
    BOOST_TEST(pending_after_isend.load() == 5);  // 32 KiB > either limit: all rendezvous
    BOOST_TEST(order == (std::vector<int>{4, 3, 2, 1}), boost::test_tools::per_element());
    for (int d = 1; d < p; ++d)
      BOOST_TEST(got[static_cast<std::size_t>(d)] == std::vector<double>(n, d * 1000.0));
  }
}

BOOST_AUTO_TEST_CASE(isend_and_send_on_one_pair_and_tag_arrive_in_the_order_started) {
  // Sizes 1..5 ints: eager under the default limit, rendezvous with limit 0.
  for (std::size_t eager : {std::size_t{0}, std::size_t{16384}}) {
    std::vector<int> got;
    int rendezvous_requests = 0;
    lb::run(
        2,
        [&](lb::Comm& c) {
          if (c.rank() == 0) {
            std::vector<std::vector<int>> bufs;
            bufs.reserve(40);
            std::vector<lb::Comm::request> reqs;
            for (int i = 0; i < 40; ++i) {
              bufs.emplace_back(static_cast<std::size_t>(i % 5 + 1), i);
              if (i % 3 == 0) {  // every third one blocking, the others isend
                c.send(1, 7, std::span<const int>(bufs.back()));
              } else {
                reqs.push_back(c.isend(1, 7, std::span<const int>(bufs.back())));
                rendezvous_requests += reqs.back().pending() ? 1 : 0;
              }
            }
            c.wait_all(std::span<lb::Comm::request>(reqs));
          } else {
            for (int i = 0; i < 40; ++i) {
              std::vector<int> m(static_cast<std::size_t>(i % 5 + 1));
              c.recv(0, 7, std::span<int>(m));
              if (m != std::vector<int>(m.size(), m.front()))
                throw std::runtime_error("message mixed up");
              got.push_back(m.front());
            }
          }
        },
        lb::options{eager});
    std::vector<int> want(40);
    std::iota(want.begin(), want.end(), 0);
    BOOST_TEST(got == want, boost::test_tools::per_element());
    // with limit 0 every isend is rendezvous; with 16 KiB none is
    BOOST_TEST(rendezvous_requests == (eager == 0 ? 26 : 0));
  }
}

BOOST_AUTO_TEST_CASE(isend_of_strings_copies_at_once) {
  const auto words = tc_test::input<std::string>(0, 100);
  std::vector<std::string> got(100);
  bool was_pending = true;
  lb::run(
      2,
      [&](lb::Comm& c) {
        if (c.rank() == 0) {
          std::vector<std::string> w = words;
          auto r = c.isend(1, 3, std::span<const std::string>(w));
          was_pending = r.pending();
          for (auto& s : w) s = "overwritten";  // the message is already a copy
          lb::Comm::request rs[1] = {std::move(r)};
          c.wait_all(std::span<lb::Comm::request>(rs));
        } else {
          c.recv(0, 3, std::span<std::string>(got));
        }
      },
      lb::options{0});
  BOOST_TEST(!was_pending);
  BOOST_TEST(got == words, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(rendezvous_isends_to_each_other_then_wait_all_deadlock) {
  auto t0 = std::chrono::steady_clock::now();
  auto what = what_of<deadlock_error>([] {
    lb::run(2, [](lb::Comm& c) {
      std::vector<char> big(1 << 16), in(1 << 16);
      auto r = c.isend(1 - c.rank(), 8, std::span<const char>(big));
      c.wait_all(std::span<lb::Comm::request>(&r, 1));
      c.recv(1 - c.rank(), 8, std::span<char>(in));
    });
  });
  auto dt = std::chrono::steady_clock::now() - t0;
  BOOST_TEST(dt < std::chrono::seconds(1));
  BOOST_TEST(contains(what, "rank 0 waits in send to rank 1, tag 8"), what);
  BOOST_TEST(contains(what, "rank 1 waits in send to rank 0, tag 8"), what);
}

BOOST_AUTO_TEST_CASE(rendezvous_isends_to_each_other_then_receive_do_not_deadlock) {
  lb::run(
      2,
      [](lb::Comm& c) {
        const int other = 1 - c.rank();
        std::vector<int> out(1000, c.rank()), in(1000, -1);
        auto r = c.isend(other, 8, std::span<const int>(out));
        c.recv(other, 8, std::span<int>(in));
        c.wait_all(std::span<lb::Comm::request>(&r, 1));
        if (in != std::vector<int>(1000, other)) throw std::runtime_error("corrupt");
      },
      lb::options{0});
}

BOOST_AUTO_TEST_CASE(wait_all_in_the_middle_of_a_deadlock_names_every_blocked_rank) {
  // rank 0 waits for its isend to rank 1; rank 1 waits in recv from rank 2;
  // rank 2 waits in recv from rank 0, tag 4, which never comes.
  auto what = what_of<deadlock_error>([] {
    lb::run(
        3,
        [](lb::Comm& c) {
          int x = 0;
          if (c.rank() == 0) {
            auto r = c.isend(1, 3, std::span<const int>(&x, 1));
            c.wait_all(std::span<lb::Comm::request>(&r, 1));
          } else if (c.rank() == 1) {
            c.recv(2, 3, std::span<int>(&x, 1));
          } else {
            c.recv(0, 4, std::span<int>(&x, 1));
          }
        },
        lb::options{0});
  });
  BOOST_TEST(contains(what, "rank 0 waits in send to rank 1, tag 3"), what);
  BOOST_TEST(contains(what, "rank 1 waits in recv from rank 2, tag 3"), what);
  BOOST_TEST(contains(what, "rank 2 waits in recv from rank 0, tag 4"), what);
}

BOOST_AUTO_TEST_CASE(a_rank_throwing_with_a_pending_isend_withdraws_it_and_releases_the_others) {
  // The receiver is blocked in recv (a message rank 0 never sends) while
  // rank 0's rendezvous isend is still queued; rank 0 throws, its request is
  // destroyed while unwinding and withdraws the message before the buffer goes.
  struct boom : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  const int before = live_threads();
  std::atomic<int> released{0};
  std::atomic<bool> waiting{false};
  BOOST_CHECK_THROW(lb::run(
                        3,
                        [&](lb::Comm& c) {
                          try {
                            if (c.rank() == 0) {
                              std::vector<double> big(1 << 16, 1.0);
                              auto r = c.isend(1, 2, std::span<const double>(big));
                              if (!r.pending()) throw std::runtime_error("expected rendezvous");
                              while (!waiting) std::this_thread::yield();
                              std::this_thread::sleep_for(std::chrono::milliseconds(5));
                              throw boom("rank 0 failed");
                            }
                            if (c.rank() == 1) {
                              int x;
                              waiting = true;
                              c.recv(0, 1, std::span<int>(&x, 1));  // tag 1: never sent
                            } else {
                              int x;
                              c.recv(1, 1, std::span<int>(&x, 1));
                            }
                          } catch (const aborted_error&) {
                            ++released;
                            throw;
                          }
                        },
                        lb::options{0}),
                    boom);
  BOOST_TEST(released.load() == 2);
  BOOST_TEST(live_threads() == before);
}

BOOST_AUTO_TEST_CASE(a_rank_throwing_while_its_isend_is_being_copied_waits_for_the_copy) {
  // 16 MiB take milliseconds to copy: rank 0 throws while rank 1 copies, most
  // of the time (else before rank 1 took the message: the other path). While
  // unwinding, rank 0 overwrites its buffer right after the request is
  // destroyed, then frees it: the request must have waited for the copy, so
  // rank 1 gets either the whole message intact or aborted_error, never a mix.
  struct boom : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  const std::size_t n = std::size_t{2} << 20;
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> receiving{false};
    std::atomic<int> intact{0}, corrupt{0}, released{0};
    BOOST_CHECK_THROW(
        lb::run(2,
                [&](lb::Comm& c) {
                  if (c.rank() == 0) {
                    auto big = std::make_unique<double[]>(n);
                    std::fill_n(big.get(), n, 2.5);
                    struct overwrite {
                      double* p;
                      std::size_t n;
                      ~overwrite() { std::fill_n(p, n, -1.0); }
                    } after_request{big.get(), n};
                    auto r = c.isend(1, 0, std::span<const double>(big.get(), n));
                    while (!receiving) std::this_thread::yield();
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
                    throw boom("rank 0 failed mid-copy");
                  }
                  std::vector<double> in(n);
                  try {
                    receiving = true;
                    c.recv(0, 0, std::span<double>(in));
                    if (std::all_of(in.begin(), in.end(), [](double v) { return v == 2.5; }))
                      ++intact;
                    else
                      ++corrupt;
                    int x;
                    c.recv(0, 1, std::span<int>(&x, 1));
                  } catch (const aborted_error&) {
                    ++released;
                    throw;
                  }
                }),
        boom);
    BOOST_TEST(released.load() == 1);  // in the first recv, or in the second after an intact copy
    BOOST_TEST(corrupt.load() == 0);
    BOOST_TEST(intact.load() <= 1);
  }
}

BOOST_AUTO_TEST_CASE(wait_all_on_nothing_and_on_completed_requests_returns_at_once) {
  std::vector<int> got(3, -1);
  lb::run(2, [&](lb::Comm& c) {
    std::vector<lb::Comm::request> none;
    c.wait_all(std::span<lb::Comm::request>(none));
    if (c.rank() == 0) {
      std::vector<int> small(3, 7), big(5000, 9);
      std::vector<lb::Comm::request> reqs(2);                      // default-constructed: empty
      reqs.push_back(c.isend(1, 0, std::span<const int>(small)));  // eager: complete now
      reqs.push_back(c.isend(1, 1, std::span<const int>(big)));    // 20 KB: rendezvous
      if (reqs[0].pending() || reqs[2].pending() || !reqs[3].pending())
        throw std::runtime_error("wrong pending state after isend");
      char ack;
      c.recv(1, 2, std::span<char>(&ack, 1));  // rank 1 has copied both
      c.wait_all(std::span<lb::Comm::request>(reqs));
      for (auto& r : reqs)
        if (r.pending()) throw std::runtime_error("pending after wait_all");
      c.wait_all(std::span<lb::Comm::request>(reqs));  // again: a no-op
    } else {
      std::vector<int> big(5000);
      c.recv(0, 1, std::span<int>(big));
      c.recv(0, 0, std::span<int>(got));
      if (big != std::vector<int>(5000, 9)) throw std::runtime_error("corrupt");
      char ack = 1;
      c.send(0, 2, std::span<const char>(&ack, 1));
    }
  });
  BOOST_TEST(got == std::vector<int>(3, 7), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(moving_a_request_keeps_one_owner_and_a_dropped_one_is_reported) {
  // A pending request moved around still completes once; one dropped without
  // wait_all withdraws its message, which run() reports as never received.
  lb::run(2, [](lb::Comm& c) {
    std::vector<int> v(10000, c.rank());
    if (c.rank() == 0) {
      lb::Comm::request a = c.isend(1, 0, std::span<const int>(v));
      lb::Comm::request b(std::move(a));
      lb::Comm::request d;
      d = std::move(b);
      if (a.pending() || b.pending() || !d.pending()) throw std::runtime_error("move");
      c.wait_all(std::span<lb::Comm::request>(&d, 1));
    } else {
      c.recv(0, 0, std::span<int>(v));
      if (v != std::vector<int>(10000, 0)) throw std::runtime_error("corrupt");
    }
  });
  auto what = what_of<message_error>([] {
    lb::run(2, [](lb::Comm& c) {
      std::vector<int> v(10000, 1);
      if (c.rank() == 0) {
        auto r = c.isend(1, 44, std::span<const int>(v));
        if (!r.pending()) throw std::runtime_error("expected rendezvous");
      }  // r destroyed here, never waited on, never received
    });
  });
  BOOST_TEST(contains(what, "from rank 0 to rank 1 with tag 44"), what);
  BOOST_TEST(contains(what, "request was destroyed"), what);
}

BOOST_AUTO_TEST_CASE(an_unreceived_eager_isend_is_reported_like_a_send) {
  auto what = what_of<message_error>([] {
    lb::run(3, [](lb::Comm& c) {
      int x = 1;
      if (c.rank() == 1) {
        auto r = c.isend(2, 34, std::span<const int>(&x, 1));
        c.wait_all(std::span<lb::Comm::request>(&r, 1));
      }
    });
  });
  BOOST_TEST(contains(what, "from rank 1 to rank 2 with tag 34"), what);
}

// The agreement check (core/agreement.hpp) runs on loopback too, when asked
// for: the same words as on MPI, and a rank that never joins is a deadlock.
BOOST_AUTO_TEST_CASE(the_agreement_check_runs_on_loopback_when_asked_for) {
  lb::options checked;
  checked.check = topocoll::agreement::on;
  auto what = what_of<std::invalid_argument>([&] {
    lb::run(
        4,
        [](lb::Comm& c) {
          std::vector<double> in(c.rank() == 3 ? 3 : 4, 1.0), out(in.size());
          topocoll::all_reduce<topocoll::Ring>(c, std::span<const double>(in),
                                               std::span<double>(out), std::plus<>{});
        },
        checked);
  });
  BOOST_TEST(contains(what,
                      "the ranks disagree on this call (agreement check): "
                      "count: rank 3 has 3, rank 0 has 4"),
             what);
  what = what_of<deadlock_error>([&] {
    lb::run(
        2,
        [](lb::Comm& c) {
          std::vector<double> b(2, 1.0);
          if (c.rank() == 0) topocoll::broadcast<topocoll::Ring>(c, std::span<double>(b), 0);
        },
        checked);
  });
  BOOST_TEST(contains(what, "rank 0 waits in the agreement check, in recv from rank 1"), what);
  lb::run(
      3,
      [](lb::Comm& c) {
        std::vector<int> in{c.rank()}, out(1);
        topocoll::all_reduce<topocoll::Hypercube<>>(c, std::span<const int>(in),
                                                    std::span<int>(out), std::plus<>{});
        if (out[0] != 3) throw std::runtime_error("all_reduce under the check");
      },
      checked);
}
