#define BOOST_TEST_MODULE loopback
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <string>
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
