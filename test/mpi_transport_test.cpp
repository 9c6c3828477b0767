// The Boost.MPI transport itself, under mpiexec at 1 2 3 4 5 8 ranks (built
// with TOPOCOLL_TEST_MPI: the MPI runner provides main). Most cases exchange
// around a ring: rank r sends to r + 1 and receives from r - 1 (mod p), which
// at p = 1 is a rank talking to itself.
#define BOOST_TEST_MODULE mpi_transport
#include "support/harness.hpp"

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <topocoll/transport/mpi.hpp>

#ifndef TOPOCOLL_TEST_MPI
#error "mpi_transport_test is built with TOPOCOLL_TEST_MPI (see mpi_transport_test.cmake)"
#endif

namespace mpi = topocoll::mpi;
using tc_test::Check;
using topocoll::message_error;

namespace {

static_assert(topocoll::Transport<mpi::Comm>);

// Runs f(comm, check) once on every rank, through the MPI runner.
template <class F>
void on_every_rank(F&& f) {
  tc_test::Mpi::sweep<topocoll::Ring>([&](int, auto on_ranks) { on_ranks(f); });
}

int next(const mpi::Comm& c) {
  return (c.rank() + 1) % c.size();
}
int prev(const mpi::Comm& c) {
  return (c.rank() + c.size() - 1) % c.size();
}

std::vector<std::uint8_t> pattern(std::size_t n, int r) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 131 + i / 4099 + r * 7);
  return v;
}

// First index where v differs from pattern(n, r), or n.
std::size_t first_bad(const std::vector<std::uint8_t>& v, int r) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<std::uint8_t>(i * 131 + i / 4099 + r * 7)) return i;
  return v.size();
}

}  // namespace

BOOST_AUTO_TEST_CASE(rank_and_size_match_the_communicator) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    boost::mpi::communicator world;
    check.expect(c.rank() == world.rank() && c.size() == world.size(), "rank ", c.rank(), " of ",
                 c.size(), " vs world ", world.rank(), " of ", world.size());
    check.expect(c.library_communicator() != world, "the library communicator is not a duplicate");
    mpi::Comm copy = c;  // copies share the duplicate
    check.expect(copy.library_communicator() == c.library_communicator(), "a copy has its own dup");
  });
}

BOOST_AUTO_TEST_CASE(messages_between_a_pair_with_one_tag_arrive_in_order) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    for (int i = 0; i < 50; ++i) {  // small: eager, so sending all first cannot block
      std::vector<int> m(static_cast<std::size_t>(i % 5 + 1), i * 100 + c.rank());
      c.send(next(c), 7, std::span<const int>(m));
    }
    for (int i = 0; i < 50; ++i) {
      std::vector<int> m(static_cast<std::size_t>(i % 5 + 1));
      c.recv(prev(c), 7, std::span<int>(m));
      check.expect(m.front() == i * 100 + prev(c) && m.back() == m.front(), "message ", i,
                   " arrived as ", m.front());
    }
  });
}

BOOST_AUTO_TEST_CASE(tags_select_messages) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    std::vector<int> a{1, 2, 3}, b{4, 5};
    c.send(next(c), 11, std::span<const int>(a));
    c.send(next(c), 12, std::span<int>(b));  // the non-const overload
    std::vector<int> gb(2), ga(3);
    c.recv(prev(c), 12, std::span<int>(gb));  // the later tag first
    c.recv(prev(c), 11, std::span<int>(ga));
    check.equal(ga, a, "tag 11");
    check.equal(gb, b, "tag 12");
  });
}

BOOST_AUTO_TEST_CASE(a_users_struct_travels_unregistered) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    for (std::size_t m : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{100000}}) {
      auto out = tc_test::input<tc_test::Particle>(c.rank(), m, 3);
      std::vector<tc_test::Particle> in(m);
      c.sendrecv(next(c), std::span<const tc_test::Particle>(out), prev(c),
                 std::span<tc_test::Particle>(in), 21);
      check.equal(in, tc_test::input<tc_test::Particle>(prev(c), m, 3), "Particle m=", m);
      auto mats = tc_test::input<tc_test::Mat2>(c.rank(), m, 4);
      std::vector<tc_test::Mat2> got(m);
      c.sendrecv(next(c), std::span<tc_test::Mat2>(mats), prev(c), std::span<tc_test::Mat2>(got),
                 22);
      check.equal(got, tc_test::input<tc_test::Mat2>(prev(c), m, 4), "Mat2 m=", m);
    }
  });
}

BOOST_AUTO_TEST_CASE(strings_travel_serialized) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    for (std::size_t m : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{20000}}) {
      auto out = tc_test::input<std::string>(c.rank(), m, 5);
      if (m > 1)
        out[1] = std::string(100000, static_cast<char>('a' + c.rank() % 26));  // a long one
      auto want = tc_test::input<std::string>(prev(c), m, 5);
      if (m > 1) want[1] = std::string(100000, static_cast<char>('a' + prev(c) % 26));
      std::vector<std::string> in(m, "stale");
      c.sendrecv(next(c), std::span<const std::string>(out), prev(c), std::span<std::string>(in),
                 31);
      check.equal(in, want, "sendrecv m=", m);
      // send / recv of short strings: eager, so sending first cannot block
      if (m <= 7) {
        auto small = tc_test::input<std::string>(c.rank(), m, 6);
        c.send(next(c), 32, std::span<const std::string>(small));
        std::vector<std::string> in2(m);
        c.recv(prev(c), 32, std::span<std::string>(in2));
        check.equal(in2, tc_test::input<std::string>(prev(c), m, 6), "send/recv m=", m);
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(a_message_of_the_wrong_size_throws_message_error_on_every_rank) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    const std::string me = "rank " + std::to_string(c.rank());
    const std::string from = "rank " + std::to_string(prev(c));
    // small (eager) and large (rendezvous: the sender must still be released)
    for (std::size_t m : {std::size_t{3}, std::size_t{1} << 20}) {
      std::vector<double> out(m, 1.0), too_small(m - 1), too_big(m + 1);
      check.throws<message_error>(
          [&] {
            c.sendrecv(next(c), std::span<const double>(out), prev(c), std::span<double>(too_small),
                       77);
          },
          {me, from, "tag 77", std::to_string(m * 8) + " bytes", std::to_string(m - 1)},
          "too small, m=" + std::to_string(m));
      check.throws<message_error>(
          [&] {
            c.sendrecv(next(c), std::span<const double>(out), prev(c), std::span<double>(too_big),
                       78);
          },
          {me, from, "tag 78", std::to_string(m + 1)}, "too big, m=" + std::to_string(m));
      check.expect(too_small.empty() || too_small[0] == 0.0, "the buffer was written, m=", m);
    }
    // plain recv of a large message: the sender's MPI_Send completes
    if (c.size() >= 2) {
      std::vector<int> big(1 << 20, c.rank()), small(10);
      if (c.rank() == 0) {
        c.send(1, 79, std::span<const int>(big));
      } else if (c.rank() == 1) {
        check.throws<message_error>([&] { c.recv(0, 79, std::span<int>(small)); },
                                    {"rank 1", "rank 0", "tag 79", "4194304 bytes", "10 elements"});
      }
    }
    // serialized: the element count is checked
    auto strs = tc_test::input<std::string>(c.rank(), 5);
    std::vector<std::string> four(4);
    check.throws<message_error>(
        [&] {
          c.sendrecv(next(c), std::span<const std::string>(strs), prev(c),
                     std::span<std::string>(four), 80);
        },
        {me, from, "tag 80", "5 elements", "holds 4"});
    // nothing was left behind: the same pair and tag work again
    std::vector<int> x{c.rank()}, y{-1};
    c.sendrecv(next(c), std::span<const int>(x), prev(c), std::span<int>(y), 77);
    check.expect(y[0] == prev(c), "after the errors, got ", y[0]);
  });
}

// Messages longer and shorter than the receive expects, at every protocol
// size: below Open MPI's eager limit (4040 bytes of payload on shared
// memory), at it, above it (single copy, where a truncated receive writes
// past the buffer), and on both sides of the small-message limit E and of
// the bounce buffer (options::small_message_bytes off, 1024 and 4000; the
// bounce buffer holds 1 MiB, and a message of E + 1 bytes or of more than
// 1 MiB goes after a marker; an empty message meets a probing receive). Each
// buffer sits between guard bytes; a mismatch throws message_error and writes
// nothing, neither in the buffer nor around it, and the pair and tag work
// again afterwards.
BOOST_AUTO_TEST_CASE(wrong_sizes_at_every_protocol_size_write_nothing) {
  on_every_rank([](mpi::Comm& base, Check& check) {
    constexpr std::size_t guard = 64;
    constexpr std::uint8_t fill = 0x5a;
    constexpr std::size_t mib = std::size_t{1} << 20;
    for (std::size_t small : {std::size_t{0}, std::size_t{1024}, std::size_t{4000}}) {
      mpi::options o;
      o.small_message_bytes = small;
      mpi::Comm c(base.base(), o);
      const std::size_t sizes[] = {0,    1,    8,    1023, 1024,  1025, 4000,   4001,
                                   4040, 4041, 4096, 8192, 65536, mib,  mib + 1};
      for (std::size_t want : sizes)
        for (std::size_t sent : {want + 1, want == 0 ? std::size_t{8} : want - 1,
                                 want < 4096 ? std::size_t{65536} : std::size_t{8},
                                 want < 4096 ? mib + 1 : std::size_t{0}}) {
          const std::vector<std::uint8_t> out = pattern(sent, c.rank());
          std::vector<std::uint8_t> in(want + 2 * guard, fill);
          const std::span<std::uint8_t> buf(in.data() + guard, want);
          const std::string at = "small_message_bytes " +
                                 std::to_string(c.opts().small_message_bytes) + ", expecting " +
                                 std::to_string(want) + " bytes, sent " + std::to_string(sent);
          check.throws<message_error>(
              [&] { c.sendrecv(next(c), std::span<const std::uint8_t>(out), prev(c), buf, 90); },
              {"rank " + std::to_string(prev(c)), "tag 90", std::to_string(sent) + " bytes"}, at);
          check.expect(std::all_of(in.begin(), in.end(), [](std::uint8_t b) { return b == fill; }),
                       "bytes were written, ", at);
        }
      // afterwards the same pair and tag deliver messages of every size intact
      for (std::size_t n : sizes) {
        const std::vector<std::uint8_t> out = pattern(n, c.rank());
        std::vector<std::uint8_t> in(n);
        c.sendrecv(next(c), std::span<const std::uint8_t>(out), prev(c), std::span(in), 90);
        check.expect(first_bad(in, prev(c)) == n, "small_message_bytes ",
                     c.opts().small_message_bytes, ", ", n, " bytes: wrong byte at ",
                     first_bad(in, prev(c)));
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(bad_arguments_and_mpi_errors_throw) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    std::vector<int> v(3);
    check.throws<std::invalid_argument>([&] { c.send(c.size(), 1, std::span<const int>(v)); },
                                        {"send", "destination", std::to_string(c.size())});
    check.throws<std::invalid_argument>([&] { c.recv(-1, 1, std::span<int>(v)); },
                                        {"recv", "source", "-1"});
    // a negative tag is an MPI error (MPI_ERR_TAG), returned, not fatal
    check.throws<mpi::error>([&] { c.send(next(c), -5, std::span<const int>(v)); },
                             {"MPI_Send", "tag -5"});
    check.throws<std::invalid_argument>([&] { mpi::Comm bad(c.base(), mpi::options{0}); },
                                        {"max_int_bytes"});
  });
}

BOOST_AUTO_TEST_CASE(large_messages_in_a_ring_do_not_deadlock) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    const std::size_t n = std::size_t{64} << 20;  // 64 MiB per rank, rendezvous
    auto out = pattern(n, c.rank());
    std::vector<std::uint8_t> in(n);
    c.sendrecv(next(c), std::span<const std::uint8_t>(out), prev(c), std::span<std::uint8_t>(in),
               41);
    std::size_t bad = first_bad(in, prev(c));
    check.expect(bad == n, "64 MiB: byte ", bad, " differs");
    // the other direction with doubles, non-const spans
    std::vector<double> d(n / 8, c.rank() + 0.5), e(n / 8);
    c.sendrecv(prev(c), std::span<double>(d), next(c), std::span<double>(e), 42);
    check.expect(e.front() == next(c) + 0.5 && e.back() == next(c) + 0.5, "doubles");
  });
}

// Above max_int_bytes a message is one message of a derived datatype (blocks
// plus a remainder). Lowering the limit runs that path, the one messages above
// 2^31 bytes take, with small messages.
BOOST_AUTO_TEST_CASE(messages_above_the_int_limit_use_a_derived_datatype) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    for (std::size_t limit : {std::size_t{1}, std::size_t{1000}, std::size_t{4093}}) {
      mpi::Comm small(c.base(), mpi::options{limit});
      for (std::size_t n : {std::size_t{999}, std::size_t{1000}, std::size_t{1001},
                            std::size_t{12289}, (std::size_t{8} << 20) + 3}) {
        if (limit == 1 && n > 100000) continue;  // 1-byte blocks: slow to build, same path
        auto out = pattern(n, c.rank());
        std::vector<std::uint8_t> in(n);
        small.sendrecv(next(c), std::span<const std::uint8_t>(out), prev(c),
                       std::span<std::uint8_t>(in), 43);
        std::size_t bad = first_bad(in, prev(c));
        check.expect(bad == n, "limit ", limit, ", n = ", n, ": byte ", bad, " differs");
        // the size check still sees the whole message
        std::vector<std::uint8_t> off(n + 1);
        check.throws<message_error>(
            [&] {
              small.sendrecv(next(c), std::span<const std::uint8_t>(out), prev(c),
                             std::span<std::uint8_t>(off), 44);
            },
            {std::to_string(n) + " bytes"}, "limit " + std::to_string(limit));
      }
      // serialized data takes the same byte path
      auto strs = tc_test::input<std::string>(c.rank(), 3000);
      std::vector<std::string> got(3000);
      small.sendrecv(next(c), std::span<const std::string>(strs), prev(c),
                     std::span<std::string>(got), 45);
      check.equal(got, tc_test::input<std::string>(prev(c), 3000), "strings, limit ", limit);
    }
  });
}

// The real thing, once: 2^31 + 12 bytes from rank 0 to rank 1 (only at p = 2,
// to bound memory: about 2 GiB is touched, on the receiver).
BOOST_AUTO_TEST_CASE(a_message_above_2_to_the_31_bytes_travels_intact) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    if (c.size() != 2) return;
    const std::size_t n = (std::size_t{1} << 31) + 12;
    std::unique_ptr<std::uint8_t[]> buf(new std::uint8_t[n]);  // not zeroed: pages untouched
    const std::size_t marks[] = {
        0, 4096, std::size_t{1} << 30, (std::size_t{1} << 31) - 1, std::size_t{1} << 31, n - 1};
    if (c.rank() == 0) {
      for (std::size_t i : marks) buf[i] = static_cast<std::uint8_t>(i % 251 + 1);
      c.send(1, 46, std::span<const std::uint8_t>(buf.get(), n));
    } else {
      for (std::size_t i : marks) buf[i] = 0;
      c.recv(0, 46, std::span<std::uint8_t>(buf.get(), n));
      for (std::size_t i : marks)
        check.expect(buf[i] == static_cast<std::uint8_t>(i % 251 + 1), "byte ", i, " is ",
                     int{buf[i]});
    }
  });
}

BOOST_AUTO_TEST_CASE(user_traffic_on_the_original_communicator_is_never_confused) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    boost::mpi::communicator world;
    // The user sends first, on the original communicator, with the very tag
    // the library uses for broadcast; the library's message comes second.
    const int tag = topocoll::detail::tag::broadcast;
    std::vector<int> user_msg{-1, c.rank()}, lib_msg{1, c.rank()};
    MPI_Send(user_msg.data(), 2, MPI_INT, next(c), tag, world);
    std::vector<int> got_lib(2), got_user(2);
    c.sendrecv(next(c), std::span<const int>(lib_msg), prev(c), std::span<int>(got_lib), tag);
    MPI_Recv(got_user.data(), 2, MPI_INT, prev(c), tag, world, MPI_STATUS_IGNORE);
    check.expect(got_lib[0] == 1 && got_lib[1] == prev(c), "the library received ", got_lib[0]);
    check.expect(got_user[0] == -1 && got_user[1] == prev(c), "the user received ", got_user[0]);
    // and a user's wildcard receive never sees library traffic
    c.send(next(c), tag, std::span<const int>(lib_msg));
    MPI_Send(user_msg.data(), 2, MPI_INT, next(c), 5, world);
    MPI_Status st;
    MPI_Recv(got_user.data(), 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, world, &st);
    check.expect(got_user[0] == -1 && st.MPI_TAG == 5, "a wildcard receive got tag ", st.MPI_TAG);
    c.recv(prev(c), tag, std::span<int>(got_lib));
    check.expect(got_lib[0] == 1, "the library's message was lost");
  });
}

BOOST_AUTO_TEST_CASE(empty_messages) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    std::vector<double> none;
    c.sendrecv(next(c), std::span<const double>(none), prev(c), std::span<double>(none), 51);
    c.send(next(c), 52, std::span<const double>());
    c.recv(prev(c), 52, std::span<double>());
    std::vector<double> one(1);
    check.throws<message_error>(
        [&] {
          c.sendrecv(next(c), std::span<const double>(none), prev(c), std::span<double>(one), 53);
        },
        {"0 bytes"});
  });
}

static_assert(topocoll::NonblockingTransport<mpi::Comm, tc_test::Particle>);

BOOST_AUTO_TEST_CASE(isend_to_every_rank_then_receive_in_reverse_order) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    // Large enough for the rendezvous protocol: blocking sends to every rank
    // before any receive would deadlock; isends must not. 4001 and 1 MiB + 1
    // bytes go after a marker (small_message_bytes 4000 by default).
    for (std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{4001}, std::size_t{300000},
                          (std::size_t{1} << 20) + 1}) {
      std::vector<std::vector<std::uint8_t>> out;
      for (int d = 0; d < c.size(); ++d) out.push_back(pattern(n, c.rank() * 100 + d));
      std::vector<mpi::Comm::request> reqs;
      for (int d = 0; d < c.size(); ++d)
        reqs.push_back(c.isend(d, 41, std::span<const std::uint8_t>(out[d])));
      for (int s = c.size() - 1; s >= 0; --s) {
        std::vector<std::uint8_t> in(n);
        c.recv(s, 41, std::span<std::uint8_t>(in));
        check.expect(first_bad(in, s * 100 + c.rank()) == n, "n=", n, " from ", s,
                     " differs at byte ", first_bad(in, s * 100 + c.rank()));
      }
      c.wait_all(std::span<mpi::Comm::request>(reqs));
      for (auto& r : reqs) check.expect(!r.pending(), "a request still pending after wait_all");
      c.wait_all(std::span<mpi::Comm::request>(reqs));  // again: a no-op
    }
  });
}

BOOST_AUTO_TEST_CASE(isend_keeps_order_with_blocking_sends_and_serializes_strings) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    std::vector<int> a{1, c.rank()}, b{2, c.rank()};
    auto s = tc_test::input<std::string>(c.rank(), 5, 7);
    auto r1 = c.isend(next(c), 42, std::span<const int>(a));
    c.send(next(c), 42, std::span<const int>(b));
    auto r2 = c.isend(next(c), 43, std::span<const std::string>(s));
    s.assign(5, "changed after isend");  // strings are serialized by isend itself
    std::vector<int> ga(2), gb(2);
    c.recv(prev(c), 42, std::span<int>(ga));
    c.recv(prev(c), 42, std::span<int>(gb));
    std::vector<std::string> gs(5);
    c.recv(prev(c), 43, std::span<std::string>(gs));
    mpi::Comm::request rs[2] = {std::move(r1), std::move(r2)};
    c.wait_all(std::span<mpi::Comm::request>(rs));
    check.equal(ga, std::vector<int>{1, prev(c)}, "first message");
    check.equal(gb, std::vector<int>{2, prev(c)}, "second message");
    check.equal(gs, tc_test::input<std::string>(prev(c), 5, 7), "strings");
  });
}

// A completed isend's serialization buffer is reused by the next one: a
// long message, then shorter and longer ones, several in flight at once; each
// must arrive as exactly what was sent (not the rest of a longer buffer).
BOOST_AUTO_TEST_CASE(string_isends_reuse_buffers_and_send_exactly_their_message) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    for (std::size_t n : {std::size_t{3000}, std::size_t{1}, std::size_t{0}, std::size_t{40},
                          std::size_t{5000}, std::size_t{2}}) {
      std::vector<std::vector<std::string>> out;
      for (unsigned k = 0; k < 3; ++k)
        out.push_back(tc_test::input<std::string>(c.rank(), n + k, static_cast<unsigned>(n) + k));
      std::vector<mpi::Comm::request> reqs;
      for (unsigned k = 0; k < 3; ++k)
        reqs.push_back(c.isend(next(c), 46, std::span<const std::string>(out[k])));
      for (unsigned k = 0; k < 3; ++k) {
        std::vector<std::string> in(n + k, "stale");
        c.recv(prev(c), 46, std::span<std::string>(in));
        check.equal(in, tc_test::input<std::string>(prev(c), n + k, static_cast<unsigned>(n) + k),
                    "strings, n = ", n + k);
      }
      c.wait_all(std::span<mpi::Comm::request>(reqs));
    }
  });
}

BOOST_AUTO_TEST_CASE(a_request_destroyed_before_it_completed_is_left_to_mpi_without_waiting) {
  on_every_rank([](mpi::Comm& c, Check& check) {
    std::vector<int> v(100000, c.rank());  // rendezvous size: completes only when received
    auto s = tc_test::input<std::string>(c.rank(), 3, 8);
    {
      auto r = c.isend(next(c), 44, std::span<const int>(v));
      auto rs = c.isend(next(c), 45, std::span<const std::string>(s));
      check.expect(r.pending() && rs.pending(), "a fresh request is not pending");
    }  // destroyed unfinished: must return at once, not wait for the receive
    boost::mpi::communicator world;
    world.barrier();
    std::vector<int> in(100000, -1);
    c.recv(prev(c), 44, std::span<int>(in));
    check.expect(in.front() == prev(c) && in.back() == prev(c), "the abandoned send arrived as ",
                 in.front());
    std::vector<std::string> ins(3);
    c.recv(prev(c), 45, std::span<std::string>(ins));
    check.equal(ins, tc_test::input<std::string>(prev(c), 3, 8), "abandoned serialized send");
    world.barrier();  // v outlives the peer's receive
  });
}
