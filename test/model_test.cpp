#define BOOST_TEST_MODULE model
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include <topocoll/model/svg.hpp>
#include <topocoll/model/trace.hpp>
#include <topocoll/topocoll.hpp>

namespace tc = topocoll;

namespace {
// Runs f(counting comm) on p loopback ranks and returns every rank's log.
template <class F>
std::vector<std::vector<tc::model::event>> trace(int p, F f) {
  std::vector<std::vector<tc::model::event>> logs(static_cast<std::size_t>(p));
  tc::loopback::run(p, [&](tc::loopback::Comm& c) {
    tc::model::Counting cc(c);
    f(cc);
    logs[static_cast<std::size_t>(c.rank())] = cc.events();  // each rank its own slot
  });
  return logs;
}

// The schedule that example/draw.cpp draws for f on p ranks.
template <class F>
tc::model::schedule drawn(int p, F f) {
  return tc::model::make_schedule(trace(p, f));
}

// The element counts rank src sends, in round order (the figure's labels on
// its line).
std::vector<std::size_t> sent_by(const tc::model::schedule& s, int src) {
  std::vector<std::size_t> v;
  for (const tc::model::message& msg : s.messages)
    if (msg.src == src) v.push_back(msg.count);
  return v;
}

// Every message of round k has size(k) elements.
bool sizes_follow(const tc::model::schedule& s, const std::function<std::size_t(int)>& size) {
  for (const tc::model::message& msg : s.messages)
    if (msg.count != size(msg.round)) return false;
  return !s.messages.empty();
}

constexpr std::size_t m = 4;

template <class Topo>
auto all_to_all_with(tc::algorithm a) {
  return [a](auto& c) {
    const std::size_t p = static_cast<std::size_t>(c.size());
    std::vector<int> in(m * p, c.rank()), out(m * p);
    tc::all_to_all<Topo>(c, std::span<const int>(in), std::span<int>(out), tc::options{.algo = a});
  };
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_hand_written_binomial_broadcast_takes_log_p_rounds) {
  // Algorithm 4.1 written out with raw sends on 8 ranks
  auto logs = trace(8, [](auto& c) {
    std::vector<int> x(5, c.rank() == 0 ? 42 : 0);
    const int v = c.rank();
    int mask = 7;
    for (int i = 2; i >= 0; --i) {
      mask ^= 1 << i;
      if ((v & mask) != 0) continue;
      if ((v & (1 << i)) == 0)
        c.send(v ^ (1 << i), 1, std::span<const int>(x));
      else
        c.recv(v ^ (1 << i), 1, std::span<int>(x));
    }
  });
  auto s = tc::model::make_schedule(logs);
  BOOST_TEST(s.rounds == 3);
  BOOST_TEST(s.messages.size() == 7u);
  BOOST_TEST(s.messages.front().src == 0);
  BOOST_TEST(s.messages.front().dest == 4);
  BOOST_TEST(s.cost(10.0, 1.0) == 3 * (10.0 + 5.0));  // (t_s + t_w m) log p
  auto svg = tc::model::to_svg(s, "binomial broadcast on Hypercube<3> & co");
  BOOST_TEST(svg.find("<svg") == 0u);
  BOOST_TEST(svg.find("step 3") != std::string::npos);
  BOOST_TEST(svg.find("step 4") == std::string::npos);
  BOOST_TEST(svg.find("Hypercube&lt;3&gt; &amp; co") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_ring_shift_with_sendrecv_is_one_round_per_step) {
  auto logs = trace(5, [](auto& c) {
    std::vector<int> out(3), in(3);
    const int p = c.size(), r = c.rank();
    for (int k = 0; k < p - 1; ++k)
      c.sendrecv((r + 1) % p, std::span<const int>(out), (r + p - 1) % p, std::span<int>(in), 2);
  });
  auto s = tc::model::make_schedule(logs);
  BOOST_TEST(s.rounds == 4);
  BOOST_TEST(s.messages.size() == 20u);
}

BOOST_AUTO_TEST_CASE(a_receive_without_a_send_is_reported) {
  std::vector<std::vector<tc::model::event>> logs(2);
  logs[1].push_back({tc::model::event::recv, 0, 0, 0, 1, 4});
  BOOST_CHECK_THROW(tc::model::make_schedule(logs), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// The figures of doc/figures.md: message sizes, not only step counts.

// Figure 4.18: one message to the next rank per step, shrinking by m:
// m(p - 1), m(p - 2), ..., m.
BOOST_AUTO_TEST_CASE(store_and_forward_all_to_all_on_a_ring_shrinks_by_m_each_step) {
  const int p = 8;
  auto s = drawn(p, all_to_all_with<tc::Ring>(tc::algorithm::store_and_forward));
  BOOST_TEST(s.rounds == p - 1);
  BOOST_TEST(sent_by(s, 0) == (std::vector<std::size_t>{28, 24, 20, 16, 12, 8, 4}),
             boost::test_tools::per_element());
  BOOST_TEST(sizes_follow(s, [](int k) { return m * static_cast<std::size_t>(p - k); }));
  for (const tc::model::message& msg : s.messages) BOOST_TEST(msg.dest == (msg.src + 1) % p);
  // the pairwise exchange is another figure: p - 1 messages of m
  auto pw = drawn(p, all_to_all_with<tc::Ring>(tc::algorithm::pairwise));
  BOOST_TEST(sizes_follow(pw, [](int) { return m; }));
}

// Figure 4.19 on 3x3: rows, then columns, each m sqrt(p) (sqrt(p) - k) in
// step k of its dimension; Figure 4.20: log p steps of m p / 2.
BOOST_AUTO_TEST_CASE(store_and_forward_all_to_all_on_mesh_and_hypercube) {
  auto mesh = drawn(9, all_to_all_with<tc::Mesh<2>>(tc::algorithm::store_and_forward));
  BOOST_TEST(mesh.rounds == 4);
  BOOST_TEST(sent_by(mesh, 0) == (std::vector<std::size_t>{24, 12, 24, 12}),
             boost::test_tools::per_element());
  auto cube = drawn(8, all_to_all_with<tc::Hypercube<3>>(tc::algorithm::store_and_forward));
  BOOST_TEST(cube.rounds == 3);
  BOOST_TEST(sizes_follow(cube, [](int) { return 4 * m; }));
}

// Algorithm 4.7: partners rank XOR 1, 2, 4, messages m, 2m, 4m.
BOOST_AUTO_TEST_CASE(hypercube_all_gather_messages_double) {
  auto s = drawn(8, [](auto& c) {
    std::vector<int> in(m, c.rank()), out(8 * m);
    tc::all_gather<tc::Hypercube<3>>(c, std::span<const int>(in), std::span<int>(out));
  });
  BOOST_TEST(s.rounds == 3);
  BOOST_TEST(s.messages.size() == 24u);
  BOOST_TEST(sent_by(s, 5) == (std::vector<std::size_t>{4, 8, 16}),
             boost::test_tools::per_element());
  BOOST_TEST(sizes_follow(s, [](int k) { return m << (k - 1); }));
  for (const tc::model::message& msg : s.messages)
    BOOST_TEST(msg.dest == (msg.src ^ (1 << (msg.round - 1))));
}

// Algorithm 4.1: p - 1 messages, every one of m; scatter's halve: 4m, 2m, m.
BOOST_AUTO_TEST_CASE(hypercube_broadcast_sends_m_and_scatter_halves) {
  auto bc = drawn(8, [](auto& c) {
    std::vector<int> v(m, c.rank() == 0 ? 7 : 0);
    tc::broadcast<tc::Hypercube<3>>(c, std::span<int>(v), 0);
  });
  BOOST_TEST(bc.rounds == 3);
  BOOST_TEST(bc.messages.size() == 7u);
  BOOST_TEST(sizes_follow(bc, [](int) { return m; }));
  auto sc = drawn(8, [](auto& c) {
    std::vector<int> in(c.rank() == 0 ? 8 * m : 0, 1), out(m);
    tc::scatter<tc::Hypercube<3>>(c, std::span<const int>(in), std::span<int>(out), 0);
  });
  BOOST_TEST(sent_by(sc, 0) == (std::vector<std::size_t>{16, 8, 4}),
             boost::test_tools::per_element());
  BOOST_TEST(sizes_follow(sc, [](int k) { return m * (8u >> k); }));
}

// "Improving the Speed of Some Communication Operations": broadcast as scatter
// + all-gather on a 3-cube is 2 log p rounds, the scatter's of shrinking size
// (1, 2, 4 messages of m/2, m/4, m/8), the all-gather's of growing size (8
// messages each of m/8, m/4, m/2); its cost by rounds is the seed's
// 2 (t_s log p + t_w m (p - 1) / p). reduce as reduce-scatter + gather is the
// same rounds backwards.
BOOST_AUTO_TEST_CASE(hypercube_broadcast_and_reduce_in_pieces_take_2_log_p_rounds) {
  const std::size_t n = 8 * m;  // 32 elements, pieces of 4
  const std::vector<std::size_t> sizes{16, 8, 4, 4, 8, 16};
  auto bc = drawn(8, [&](auto& c) {
    std::vector<int> v(n, c.rank() == 0 ? 7 : 0);
    tc::broadcast<tc::Hypercube<3>>(c, std::span<int>(v), 0, {tc::algorithm::scatter_all_gather});
  });
  BOOST_TEST(bc.rounds == 6);
  BOOST_TEST(bc.messages.size() == 7u + 24u);
  BOOST_TEST(sent_by(bc, 0) == sizes, boost::test_tools::per_element());
  BOOST_TEST(sizes_follow(bc, [&](int k) { return sizes[static_cast<std::size_t>(k - 1)]; }));
  BOOST_TEST(bc.cost(10.0, 1.0) == 2 * (3 * 10.0 + n * 7.0 / 8));
  auto rd = drawn(8, [&](auto& c) {
    std::vector<int> in(n, 1), out(c.rank() == 0 ? n : 0);
    tc::reduce<tc::Hypercube<3>>(c, std::span<const int>(in), std::span<int>(out), std::plus<>{}, 0,
                                 {tc::algorithm::reduce_scatter_gather});
  });
  BOOST_TEST(rd.rounds == 6);
  BOOST_TEST(rd.messages.size() == 24u + 7u);
  BOOST_TEST(sizes_follow(rd, [&](int k) { return sizes[static_cast<std::size_t>(6 - k)]; }));
}

// Figure 4.3: the reduction on a linear array of 8 (the Ring's tree, the
// mirror of the farthest-first broadcast): odd to even (1 -> 0, 3 -> 2,
// 5 -> 4, 7 -> 6), then 2 -> 0 and 6 -> 4, then 4 -> 0, one step each, every
// message m.
BOOST_AUTO_TEST_CASE(ring_reduce_follows_figure_4_3) {
  auto s = drawn(8, [](auto& c) {
    std::vector<int> in(m, c.rank()), out(c.rank() == 0 ? m : 0);
    tc::reduce<tc::Ring>(c, std::span<const int>(in), std::span<int>(out), std::plus<>{}, 0,
                         {tc::algorithm::tree});
  });
  using edge = std::pair<int, int>;
  const std::vector<std::vector<edge>> figure{
      {{1, 0}, {3, 2}, {5, 4}, {7, 6}}, {{2, 0}, {6, 4}}, {{4, 0}}};
  BOOST_TEST(s.rounds == 3);
  std::vector<std::vector<edge>> got(3);
  for (const tc::model::message& msg : s.messages)
    got[static_cast<std::size_t>(msg.round - 1)].emplace_back(msg.src, msg.dest);
  BOOST_TEST((got == figure));  // messages are ordered by round, then source
  BOOST_TEST(sizes_follow(s, [](int) { return m; }));
  BOOST_TEST(s.cost(10.0, 1.0) == 3 * (10.0 + m));
}

// Section 4.5.1: both ways round the ring, p = 8: m(4 + 3 + 2 + 1) forward
// and m(3 + 2 + 1) backward, alternating, where Figure 4.18 sends m(7 + ... + 1)
// one way: each direction carries less than half of it.
BOOST_AUTO_TEST_CASE(the_ring_both_ways_sends_half_the_words_each_way) {
  const int p = 8;
  auto s = drawn(p, all_to_all_with<tc::Ring>(tc::algorithm::bidirectional));
  BOOST_TEST(s.rounds == p - 1);
  BOOST_TEST(sent_by(s, 0) == (std::vector<std::size_t>{16, 12, 12, 8, 8, 4, 4}),
             boost::test_tools::per_element());
  std::size_t forward = 0, backward = 0;
  for (const tc::model::message& msg : s.messages)
    if (msg.src == 0) (msg.dest == 1 ? forward : backward) += msg.count;
  BOOST_TEST(forward == 10 * m);
  BOOST_TEST(backward == 6 * m);
  BOOST_TEST(2 * std::max(forward, backward) <= 28 * m);
}
