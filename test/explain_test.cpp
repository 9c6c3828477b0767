#define BOOST_TEST_MODULE explain
#include <boost/test/unit_test.hpp>

// TOPOCOLL_EXPLAIN=1 (ctest sets it for this program) on the calls that
// choose as they run: rank 0 writes one line for each new plan, naming the
// algorithm automatic takes and what the plan priced to take it
// (plan/explain.hpp). The lines are held to the choice the collective makes
// (its *_choice) and to the prices they show: the algorithm taken is the
// cheaper side of the last comparison.

#include <topocoll/topocoll.hpp>

#include <cstddef>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace topocoll;

// The lines rank 0 (or any rank) wrote to std::cerr while f ran on p
// loopback ranks.
template <class F>
std::vector<std::string> explained(int p, F f) {
  std::ostringstream captured;
  std::streambuf* const cerr = std::cerr.rdbuf(captured.rdbuf());
  try {
    loopback::run(p, f);
  } catch (...) {
    std::cerr.rdbuf(cerr);
    throw;
  }
  std::cerr.rdbuf(cerr);
  std::vector<std::string> lines;
  std::istringstream in(captured.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// One comparison of a line: "A a us against B b us" -> {{A, a}, {B, b}}.
std::vector<std::pair<std::string, double>> sides(const std::string& comparison) {
  std::vector<std::pair<std::string, double>> v;
  const std::regex side("([a-z_]+) ([-0-9.e+]+) us");
  for (std::sregex_iterator i(comparison.begin(), comparison.end(), side), end; i != end; ++i)
    v.emplace_back((*i)[1], std::stod((*i)[2]));
  return v;
}

// The line's parts: the algorithm taken, and its comparisons in order.
struct parsed {
  std::string taken;
  std::vector<std::vector<std::pair<std::string, double>>> comparisons;
};
parsed parse(const std::string& line) {
  static const std::regex head(
      "^topocoll: [a-z_]+ on [^,]+, p = [0-9]+, m = [0-9]+, [0-9]+-byte "
      "elements(, root [0-9]+)?: automatic takes ([a-z_]+)(.*)$");
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_match(line, m, head), "not an explain line: " << line);
  parsed r{m[2], {}};
  std::string rest = m[3];
  if (rest == ", chosen without pricing") return r;
  BOOST_REQUIRE_MESSAGE(rest.starts_with("; the plan priced "), "no prices: " << line);
  rest = rest.substr(std::string("; the plan priced ").size());
  for (std::size_t at = 0;;) {
    const std::size_t next = rest.find("; then ", at);
    r.comparisons.push_back(sides(rest.substr(at, next - at)));
    if (next == std::string::npos) break;
    at = next + std::string("; then ").size();
  }
  return r;
}

// The cheapest side of a comparison; the first of equals.
std::string cheapest(const std::vector<std::pair<std::string, double>>& c) {
  BOOST_REQUIRE(!c.empty());
  auto best = c.front();
  for (const auto& s : c)
    if (s.second < best.second) best = s;
  return best.first;
}

BOOST_AUTO_TEST_CASE(the_setting_is_read) {
  BOOST_REQUIRE_MESSAGE(detail::plan::explain::on,
                        "run with TOPOCOLL_EXPLAIN=1, as ctest does: the other cases need it");
}

// Two calls of one plan write one line; a new m, a new cost model and a new
// p each write one more; a forced algorithm writes none; only rank 0 writes.
BOOST_AUTO_TEST_CASE(one_line_per_new_plan) {
  const cost_model fast_start{0.01, 2e-4};
  const auto lines = explained(8, [&](loopback::Comm& c) {
    std::vector<double> x(4, 1.0), y(4), big(1000, 1.0), sum(1000);
    all_reduce<Ring>(c, x, y, std::plus<>{});
    all_reduce<Ring>(c, x, y, std::plus<>{});
    all_reduce<Ring>(c, big, sum, std::plus<>{});
    all_reduce<Ring>(c, x, y, std::plus<>{}, options{algorithm::automatic, fast_start});
    all_reduce<Ring>(c, x, y, std::plus<>{}, options{algorithm::recursive_doubling});
  });
  BOOST_REQUIRE_EQUAL(lines.size(), 3u);
  BOOST_TEST(lines[0].starts_with("topocoll: all_reduce on Ring, p = 8, m = 4, 8-byte elements"));
  BOOST_TEST(lines[1].starts_with("topocoll: all_reduce on Ring, p = 8, m = 1000, 8-byte"));
  BOOST_TEST(lines[2].starts_with("topocoll: all_reduce on Ring, p = 8, m = 4, 8-byte elements"));
}

// all_reduce on Ring: the line takes what the collective takes, and that is
// the cheaper side of its last comparison, across sizes.
BOOST_AUTO_TEST_CASE(all_reduce_takes_what_its_line_prices_lowest) {
  for (const std::size_t m : {std::size_t{8}, std::size_t{4096}, std::size_t{1} << 17}) {
    const auto lines = explained(12, [&](loopback::Comm& c) {
      std::vector<double> x(m, 1.0), y(m);
      all_reduce<Ring>(c, x, y, std::plus<>{});
    });
    BOOST_REQUIRE_EQUAL(lines.size(), 1u);
    const parsed p = parse(lines[0]);
    const algorithm a =
        detail::all_reduce_choice<Ring, double, std::plus<>>(Ring::shape(12), m, options{});
    BOOST_TEST(p.taken == std::string(to_string(a)), lines[0]);
    BOOST_REQUIRE(!p.comparisons.empty());
    BOOST_TEST(cheapest(p.comparisons.back()) == p.taken, lines[0]);
  }
}

// A choice made by rule, without pricing: a single element on two ranks
// (recursive doubling, the only fold that fits one element).
BOOST_AUTO_TEST_CASE(a_choice_by_rule_says_so) {
  const auto lines = explained(2, [](loopback::Comm& c) {
    std::vector<double> x(1, 1.0), y(1);
    all_reduce<Hypercube<>>(c, x, y, std::plus<>{});
  });
  BOOST_REQUIRE_EQUAL(lines.size(), 1u);
  BOOST_TEST(lines[0] ==
             "topocoll: all_reduce on Hypercube<>, p = 2, m = 1, 8-byte elements: automatic takes "
             "recursive_doubling, chosen without pricing");
}

// Every collective that chooses writes its line, with its root where it has
// one, and takes what the collective takes.
BOOST_AUTO_TEST_CASE(every_choosing_collective_explains) {
  const int p = 9, root = 4;
  const std::size_t m = 5000;
  const auto lines = explained(p, [&](loopback::Comm& c) {
    std::vector<double> x(m, 1.0), y(m), all(m * p), blocks(m * p, 1.0), piece(m);
    broadcast<Ring>(c, y, root);
    reduce<Ring>(c, x, y, std::plus<>{}, root);
    all_gather<Hypercube<>>(c, x, all);
    reduce_scatter<Mesh<2>>(c, blocks, piece, std::plus<>{});
    scatter<Ring>(c, blocks, piece, root);
    gather<Ring>(c, x, all, root);
    all_to_all<Ring>(c, blocks, all);
    const std::vector<int> roots{1, 7};
    std::vector<double> two(2 * m);
    broadcast<Hypercube<>>(c, two, std::span<const int>(roots));
  });
  const layout ring = Ring::shape(p);
  const std::vector<std::pair<std::string, algorithm>> expected = {
      {"broadcast on Ring, p = 9, m = 5000, 8-byte elements, root 4",
       detail::broadcast_choice<Ring, double>(ring, m, root, options{})},
      {"reduce on Ring, p = 9, m = 5000, 8-byte elements, root 4",
       detail::reduce_choice<Ring, double, std::plus<>>(ring, m, root, options{})},
      {"all_gather on Hypercube<>, p = 9, m = 5000, 8-byte elements",
       detail::all_gather_choice<Hypercube<>, double>(Hypercube<>::shape(p), m, options{})},
      {"reduce_scatter on Mesh<2>, p = 9, m = 5000, 8-byte elements",
       detail::reduce_scatter_choice<Mesh<2>, double, std::plus<>>(Mesh<2>::shape(p), m,
                                                                   options{})},
      {"scatter on Ring, p = 9, m = 5000, 8-byte elements, root 4",
       detail::scatter_choice<Ring, double>(ring, m, options{})},
      {"gather on Ring, p = 9, m = 5000, 8-byte elements, root 4",
       detail::gather_choice<Ring, double>(ring, m, options{})},
      {"all_to_all on Ring, p = 9, m = 5000, 8-byte elements",
       detail::all_to_all_choice<Ring, loopback::Comm, double>(ring, m, options{})},
      {"broadcast on Hypercube<>, p = 9, m = 5000, 8-byte elements",
       detail::plan::all_to_all_broadcast::choose_roots<Hypercube<>>(
           Hypercube<>::shape(p), 2, m * sizeof(double), options{})},
  };
  BOOST_REQUIRE_EQUAL(lines.size(), expected.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string head = "topocoll: " + expected[i].first + ": automatic takes " +
                             std::string(to_string(expected[i].second));
    BOOST_TEST(lines[i].starts_with(head), lines[i] << "\n  expected " << head);
    parse(lines[i]);
  }
}

// all_to_all prices its three schedules side by side on a Ring, and takes
// the cheapest (pairwise on a tie).
BOOST_AUTO_TEST_CASE(all_to_all_prices_its_three_schedules) {
  for (const std::size_t m : {std::size_t{1}, std::size_t{64}, std::size_t{8192}}) {
    const auto lines = explained(8, [&](loopback::Comm& c) {
      std::vector<double> in(m * 8, 1.0), out(m * 8);
      all_to_all<Ring>(c, in, out);
    });
    BOOST_REQUIRE_EQUAL(lines.size(), 1u);
    const parsed p = parse(lines[0]);
    BOOST_REQUIRE_EQUAL(p.comparisons.size(), 1u);
    BOOST_REQUIRE_EQUAL(p.comparisons[0].size(), 3u);
    BOOST_TEST(p.comparisons[0][0].first == "pairwise");
    BOOST_TEST(p.comparisons[0][1].first == "store_and_forward");
    BOOST_TEST(p.comparisons[0][2].first == "bidirectional");
    BOOST_TEST(cheapest(p.comparisons[0]) == p.taken, lines[0]);
  }
}

}  // namespace
