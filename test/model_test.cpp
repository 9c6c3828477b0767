#define BOOST_TEST_MODULE model
#include <boost/test/unit_test.hpp>

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
