// The core helpers the algorithms build on: the work-buffer pool
// (core/workspace.hpp), the batch of concurrent sends (core/nonblocking.hpp)
// and the blocks of started collectives (core/progress.hpp). Built with
// TOPOCOLL_POISON_SCRATCH, like every suite.
#define BOOST_TEST_MODULE core
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <topocoll/topocoll.hpp>

using namespace topocoll;

#ifndef TOPOCOLL_POISON_SCRATCH
#error "core_test checks the poisoning of work buffers: build it with TOPOCOLL_POISON_SCRATCH"
#endif

BOOST_AUTO_TEST_CASE(scratch_is_poisoned_reused_and_never_aliased) {
  std::uint32_t* first = nullptr;
  {
    detail::scratch<std::uint32_t> a(1000);
    BOOST_TEST(a.size() == 1000u);
    for (std::uint32_t x : a.span()) BOOST_TEST_REQUIRE(x == 0xA5A5A5A5u);
    for (std::uint32_t& x : a.span()) x = 7;
    first = a.data();
  }
  {
    detail::scratch<std::uint32_t> b(500);  // the released block, kept, re-poisoned
    BOOST_TEST(b.data() == first);
    BOOST_TEST(b.span()[0] == 0xA5A5A5A5u);
  }
  {  // more than the kept block holds: grown, every element poisoned (ASan checks the bounds)
    detail::scratch<std::uint32_t> big(4000);
    for (std::uint32_t x : big.span()) BOOST_TEST_REQUIRE(x == 0xA5A5A5A5u);
  }
  // Live scratches never share memory, whatever the order they end in.
  auto* a = new detail::scratch<double>(64);
  auto* b = new detail::scratch<double>(64);
  auto* c = new detail::scratch<double>(64);
  BOOST_TEST((a->data() != b->data() && b->data() != c->data() && a->data() != c->data()));
  delete a;  // not the last one made
  detail::scratch<double> d(64);
  BOOST_TEST((d.data() != b->data() && d.data() != c->data()));
  delete c;
  delete b;
  // Alignment for any element type the pool takes.
  struct alignas(32) wide {
    double x[4];
  };
  detail::scratch<wide> w(3);
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(w.data()) % 32 == 0u);
  BOOST_TEST(detail::scratch<char>(0).size() == 0u);
}

// Up to scratch_inline_bytes a scratch holds its elements itself, poisoned
// like a pool block; one element more comes from the pool.
BOOST_AUTO_TEST_CASE(small_scratch_lives_in_the_object) {
  constexpr std::size_t most = detail::scratch_inline_bytes / sizeof(double);
  const auto inside = [](const auto& s) {
    const auto* at = reinterpret_cast<const std::byte*>(s.data());
    const auto* self = reinterpret_cast<const std::byte*>(&s);
    return at >= self && at + s.size() * sizeof(*s.data()) <= self + sizeof(s);
  };
  detail::scratch<double> a(most), b(1), c(most + 1);
  BOOST_TEST(inside(a));
  BOOST_TEST(inside(b));
  BOOST_TEST(!inside(c));
  for (const auto* s : {&a, &c}) {
    for (double x : s->span())
      BOOST_TEST_REQUIRE(std::bit_cast<std::uint64_t>(x) == 0xA5A5A5A5A5A5A5A5u);
    BOOST_TEST(reinterpret_cast<std::uintptr_t>(s->data()) % alignof(double) == 0u);
  }
  for (double& x : a.span()) x = 1;  // ASan checks the bounds
  BOOST_TEST(b.span()[0] != 1.0);
  detail::scratch<std::byte> bytes(detail::scratch_inline_bytes);
  BOOST_TEST(inside(bytes));
}

BOOST_AUTO_TEST_CASE(scratch_of_a_non_trivial_type_constructs_its_elements) {
  static_assert(!detail::pooled_scratch<std::string>);
  detail::scratch<std::string> s(3);
  for (const std::string& x : s.span()) BOOST_TEST(x.empty());
  s.span()[1] = std::string(1000, 'x');  // a real object: assignment allocates and frees
  BOOST_TEST(s.span()[1].size() == 1000u);
}

// A started collective's block goes back to its thread's spares and holds
// the next one; a block freed on another thread stays there, and a thread's
// spares are freed at its exit (the sanitizer build would report a leak).
BOOST_AUTO_TEST_CASE(started_collectives_reuse_their_blocks) {
  struct block {
    std::array<char, 200> bytes{};
  };
  const auto make = [] {
    return std::allocate_shared<block>(detail::recycling_allocator<block>{});
  };
  auto a = make();
  const void* first = a.get();
  a.reset();
  auto b = make();
  BOOST_TEST(b.get() == first);
  bool reused_there = false;
  std::thread([&] {
    b.reset();  // into this thread's spares
    reused_there = make().get() == first;
  }).join();
  BOOST_TEST(reused_there);
}

BOOST_AUTO_TEST_CASE(release_workspace_frees_idle_blocks_only) {
  detail::scratch<int> live(100);
  live.span()[0] = 42;
  { detail::scratch<int> idle(1 << 20); }
  release_workspace();
  BOOST_TEST(live.span()[0] == 42);  // untouched
  detail::scratch<int> again(1 << 20);
  BOOST_TEST(again.data() != live.data());
  BOOST_TEST(again.span()[0] == static_cast<int>(0xA5A5A5A5u));
}

namespace {

// The kernel's transparent huge page mode ("always", "madvise" or "never"),
// empty where there is none.
std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(f, line);
  const auto a = line.find('['), b = line.find(']');
  return a == std::string::npos || b == std::string::npos ? "" : line.substr(a + 1, b - a - 1);
}

// AnonHugePages (kB) of the mapping of this process that holds p.
long huge_kb_at(const void* p) {
  std::ifstream f("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(f, line);) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      return std::stol(line.substr(14));
    }
  }
  return -1;
}

}  // namespace

BOOST_AUTO_TEST_CASE(resize_fresh_keeps_the_elements_and_faults_large_blocks_in_huge_pages) {
  std::vector<double> v{1.0, 2.0, 3.0};
  const std::size_t n = std::size_t{12} << 20 >> 3;  // 12 MiB
  detail::resize_fresh(v, n);
  BOOST_TEST_REQUIRE(v.size() == n);
  BOOST_TEST(v[0] == 1.0);
  BOOST_TEST(v[2] == 3.0);
  BOOST_TEST(v[3] == 0.0);
  BOOST_TEST(v[n - 1] == 0.0);
  const std::string mode = thp_mode();
  BOOST_TEST_MESSAGE("transparent huge pages: " << (mode.empty() ? "none" : mode));
  if (mode == "always" || mode == "madvise") {
    // 12 MiB hold at least five whole 2 MiB pages, all advised and touched.
    BOOST_TEST(huge_kb_at(v.data() + n / 2) >= 2048);
  }
  std::vector<int> small(10, 7);
  detail::resize_fresh(small, 20);
  BOOST_TEST(small[9] == 7);
  BOOST_TEST(small[19] == 0);
}

namespace {

// A transport that records which calls it got; non-blocking when NB.
template <bool NB>
struct recorder {
  struct request {
    int id = -1;
  };
  std::vector<std::string>* log;
  int rank() const { return 0; }
  int size() const { return 4; }
  template <class T>
  void send(int peer, int tag, std::span<const T>) {
    log->push_back("send " + std::to_string(peer) + " " + std::to_string(tag));
  }
  template <class T>
  void recv(int, int, std::span<T>) {}
  template <class T, class U>
  void sendrecv(int, std::span<T>, int, std::span<U>, int) {}
  template <class T>
  request isend(int peer, int tag, std::span<const T>) requires NB {
    log->push_back("isend " + std::to_string(peer) + " " + std::to_string(tag));
    return {static_cast<int>(log->size())};
  }
  void wait_all(std::span<request> r) requires NB {
    log->push_back("wait_all " + std::to_string(r.size()));
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(send_batch_isends_where_it_can_and_sends_in_the_same_order_otherwise) {
  static_assert(NonblockingTransport<recorder<true>, int>);
  static_assert(!NonblockingTransport<recorder<false>, int>);
  static_assert(!NonblockingTransport<model::Counting<loopback::Comm>, int>);
  std::vector<int> data(4);
  for (bool nb : {true, false}) {
    std::vector<std::string> log;
    auto run = [&](auto c) {
      detail::send_batch<decltype(c), int> sb(c);
      for (int i = 0; i < 11; ++i)  // more than the 8 kept inline
        sb.send(i % 4, 100 + i, std::span<const int>(data));
      sb.wait();
      sb.wait();  // nothing left: no call
    };
    if (nb)
      run(recorder<true>{&log});
    else
      run(recorder<false>{&log});
    std::vector<std::string> want;
    for (int i = 0; i < 11; ++i)
      want.push_back((nb ? "isend " : "send ") + std::to_string(i % 4) + " " +
                     std::to_string(100 + i));
    if (nb) {
      want.push_back("wait_all 8");
      want.push_back("wait_all 3");
    }
    BOOST_TEST(log == want, boost::test_tools::per_element());
  }
}

namespace {
// What loopback::run(3, f) throws as std::invalid_argument ("" when nothing).
template <class F>
std::string invalid_argument_of(F f) {
  try {
    loopback::run(3, f);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
bool mentions(const std::string& what, std::initializer_list<const char*> parts) {
  for (const char* s : parts)
    if (what.find(s) == std::string::npos) return false;
  return true;
}
}  // namespace

// A NaN or negative figure reached the pipeline's segment count as an
// undefined conversion; now every collective rejects it, naming the field.
BOOST_AUTO_TEST_CASE(a_bad_cost_model_throws_naming_the_field) {
  cost_model nan_ts;
  nan_ts.ts_us = std::numeric_limits<double>::quiet_NaN();
  std::string what = invalid_argument_of([&](loopback::Comm& c) {
    std::vector<double> buf(100000, 1.0);
    broadcast<Ring>(c, std::span<double>(buf), 0, options{algorithm::automatic, nan_ts});
  });
  BOOST_TEST(mentions(what, {"topocoll::broadcast", "rank", "ts_us", "nan"}), what);
  cost_model negative_tw;
  negative_tw.tw_us_per_byte = -1.0;
  what = invalid_argument_of([&](loopback::Comm& c) {
    std::vector<double> in(8, 1.0), out(8);
    all_reduce<Ring>(c, std::span<const double>(in), std::span<double>(out), std::plus<>{},
                     options{algorithm::automatic, negative_tw});
  });
  BOOST_TEST(mentions(what, {"topocoll::all_reduce", "rank", "tw_us_per_byte", "-1"}), what);
  cost_model inf_busy;
  inf_busy.busy_ts = std::numeric_limits<double>::infinity();
  what = invalid_argument_of([&](loopback::Comm& c) {
    std::vector<int> in(3, 1);
    std::vector<std::size_t> counts(3, 1);
    all_to_all_v<Ring>(c, std::span<const int>(in), std::span<const std::size_t>(counts),
                       options{algorithm::automatic, inf_busy});
  });
  BOOST_TEST(mentions(what, {"topocoll::all_to_all_v", "rank", "busy_ts", "inf"}), what);
  cost_model negative_nan;
  negative_nan.piece_floor = -std::numeric_limits<double>::quiet_NaN();
  what = invalid_argument_of([&](loopback::Comm& c) {
    std::vector<int> in(2, 1), out(2);
    scan<Hypercube<>>(c, std::span<const int>(in), std::span<int>(out), std::plus<>{},
                      options{algorithm::automatic, negative_nan});
  });
  BOOST_TEST(mentions(what, {"topocoll::scan", "rank", "piece_floor", "nan"}), what);
}

// A zero is a zero whatever its sign: -0.0 is >= 0, and the check's fast path
// (which reads the sign bit) leaves it to the cold path, which lets it pass.
BOOST_AUTO_TEST_CASE(a_negative_zero_figure_is_accepted) {
  cost_model zeros;
  zeros.posted_us = -0.0;
  zeros.busy_tc = -0.0;
  std::array<std::array<int, 2>, 4> out{};  // the ranks record, the main thread checks
  loopback::run(4, [&](loopback::Comm& c) {
    std::vector<int> in{c.rank() + 1, 1};
    scan<Hypercube<>>(c, std::span<const int>(in), std::span<int>(out[c.rank()]), std::plus<>{},
                      options{algorithm::automatic, zeros});
  });
  for (int r = 1; r <= 4; ++r) {
    BOOST_TEST(out[r - 1][0] == r * (r + 1) / 2);
    BOOST_TEST(out[r - 1][1] == r);
  }
}

// t_s = 0 made every element its own pipeline segment (800 KB in 100000
// messages); the segments keep the default model's floor instead.
BOOST_AUTO_TEST_CASE(a_zero_start_up_keeps_pipeline_segments_at_a_floor) {
  cost_model free_start;
  free_start.ts_us = 0.0;
  const std::size_t floor = detail::pipeline::min_segment_bytes(cost_model{});
  BOOST_TEST(detail::pipeline::min_segment_bytes(free_start) == floor);
  const std::size_t m = 100000;
  BOOST_TEST(detail::pipeline::ring_segments<double>(m, 8, free_start) <=
             std::max<std::size_t>(1, m * sizeof(double) / floor));
}

// cost_model::segment_floor sets the shortest segment: at 50 start-ups' worth
// (the default) 1 MiB over a chain of 16 travels in 4 segments of 250 KB; at 0
// in ICS 632's r = sqrt(m (p - 2) t_w / t_s) segments (sqrt(2^20 * 14 / 5000)
// = 54 under the default t_s and t_w), and a negative floor is named.
BOOST_AUTO_TEST_CASE(the_segment_floor_caps_the_pipeline_segments) {
  const std::size_t m = (std::size_t{1} << 20) / sizeof(double);
  cost_model seeds;
  BOOST_TEST(detail::pipeline::ring_segments<double>(m, 16, seeds) == 4u);
  seeds.segment_floor = 0;
  BOOST_TEST(detail::pipeline::min_segment_bytes(seeds) == 1u);
  BOOST_TEST(detail::pipeline::ring_segments<double>(m, 16, seeds) == 54u);
  cost_model negative;
  negative.segment_floor = -1;
  const std::string what = invalid_argument_of([&](loopback::Comm& c) {
    std::vector<double> buf(8);
    broadcast<Ring>(c, std::span<double>(buf), 0, options{algorithm::automatic, negative});
  });
  BOOST_TEST(mentions(what, {"topocoll::broadcast", "rank", "segment_floor", "-1"}), what);
}
