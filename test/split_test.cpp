#define BOOST_TEST_MODULE split
#include "support/harness.hpp"

// Sub-communicators: c.split(color, key) on every transport, checked against
// a sequential split; collectives on them while the parent carries traffic
// of its own on the same tags; the rows and columns of a Mesh<K>
// (mesh_lines); bad input; and, on loopback, the deadlocks of splits that do
// not match.

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <topocoll/core/tags.hpp>

namespace {

using namespace topocoll;
using tc_test::Check;
using tc_test::Mat2;

// A way to split p ranks: the color and the key of rank r.
struct scheme {
  const char* name;
  int (*color)(int r, int p);
  int (*key)(int r, int p);
};

int one_color(int, int) {
  return 7;
}
int two_colors(int r, int) {
  return 3 * (r % 2);
}
int p_colors(int r, int p) {
  return p - 1 - r;
}
int halves(int r, int p) {
  return 2 * r / p;
}
int no_key(int, int) {
  return 0;
}  // ties: parent rank order
int reversed(int r, int) {
  return -r;
}
int shuffled(int r, int) {
  return (r * 5) % 7;
}  // ties too

const std::vector<scheme>& schemes() {
  static const std::vector<scheme> s = {
      {"1 color, key 0", one_color, no_key},         {"1 color, key -rank", one_color, reversed},
      {"1 color, shuffled", one_color, shuffled},    {"2 colors, key 0", two_colors, no_key},
      {"2 colors, key -rank", two_colors, reversed}, {"2 halves, shuffled", halves, shuffled},
      {"p colors, key 0", p_colors, no_key},         {"p colors, key -rank", p_colors, reversed}};
  return s;
}

// The sequential split: the parent ranks of r's sub-communicator, in their
// rank order there.
std::vector<int> members(const scheme& s, int p, int r) {
  std::vector<int> m;
  for (int q = 0; q < p; ++q)
    if (s.color(q, p) == s.color(r, p)) m.push_back(q);
  std::stable_sort(m.begin(), m.end(), [&](int a, int b) { return s.key(a, p) < s.key(b, p); });
  return m;
}

int index_of(const std::vector<int>& v, int x) {
  return static_cast<int>(std::find(v.begin(), v.end(), x) - v.begin());
}

// Who is in sub: every member's parent rank, in sub's rank order (all_gather
// on Topo, or on a Ring where Topo cannot hold sub's size).
template <class Topo, class C>
std::vector<int> gathered(C& sub, int parent_rank) {
  std::vector<int> got(static_cast<std::size_t>(sub.size()));
  const std::span<const int> mine(&parent_rank, 1);
  if (Topo::holds(sub.size()))
    all_gather<Topo>(sub, mine, std::span<int>(got));
  else
    all_gather<Ring>(sub, mine, std::span<int>(got));
  return got;
}

constexpr std::size_t small_m = 7;
// Elements of T just past loopback's eager limit (16 KiB): a rendezvous message.
template <class T>
constexpr std::size_t large_m = 16384 / sizeof(T) + 16;

// A non-commutative all_reduce and a broadcast from the last rank on sub,
// whose ranks are the parent ranks `who`, against the sequential results; of
// 7 elements, and with Large of a message past the eager limit too.
template <class Topo, bool Large = false, class C>
void check_collectives(C& sub, const std::vector<int>& who, Check& check, const std::string& ctx) {
  if (!Topo::holds(sub.size())) return;
  const int n = sub.size(), me = who[static_cast<std::size_t>(sub.rank())];
  for (bool large : {false, true}) {
    if (large && !Large) break;
    std::size_t m = large ? large_m<Mat2> : small_m;
    std::vector<Mat2> want = tc_test::input<Mat2>(who[0], m, 5), got(m);
    for (int k = 1; k < n; ++k)
      for (std::size_t i = 0; i < m; ++i)
        want[i] = tc_test::mat_mul{}(want[i], tc_test::gen<Mat2>(who[k], i, 5));
    all_reduce<Topo>(sub, tc_test::input<Mat2>(me, m, 5), got, tc_test::mat_mul{});
    check.equal(got, want, ctx, ": all_reduce<Mat2> m ", m);

    const int root = n - 1;
    m = large ? large_m<int> : small_m;
    const auto sent = tc_test::input<int>(who[static_cast<std::size_t>(root)], m, 6);
    std::vector<int> buf = sub.rank() == root ? sent : std::vector<int>(m, -1);
    broadcast<Topo>(sub, std::span<int>(buf), root);
    check.equal(buf, sent, ctx, ": broadcast from rank ", root, " m ", m);
  }
}

// Messages on every tag the collectives use, outstanding on `on` from this
// rank to `to` while collectives run on another communicator. finish()
// receives them from `from` and checks them: a collective that took one
// would fail (a wrong type or size), and so would this check.
template <class C>
class outstanding {
 public:
  outstanding(C& on, int to, unsigned salt) : on_(on), salt_(salt) {
    for (int t = first; t <= last; ++t) sent_.push_back(message(on.rank(), t));
    for (int t = first; t <= last; ++t)
      reqs_.push_back(
          on.isend(to, t, std::span<const int>(sent_[static_cast<std::size_t>(t - first)])));
  }
  void finish(int from, Check& check, const std::string& ctx) {
    for (int t = first; t <= last; ++t) {
      const auto want = message(from, t);
      std::vector<int> got(want.size());
      on_.recv(from, t, std::span<int>(got));
      check.equal(got, want, ctx, ": the message of tag ", t, " from rank ", from);
    }
    on_.wait_all(std::span<typename C::request>(reqs_));
  }

 private:
  static constexpr int first = detail::tag::base + 1, last = detail::tag::forward;
  std::vector<int> message(int from, int t) const {  // the first: past the eager limit
    return tc_test::input<int>(from, t == first ? large_m<int> : 3,
                               salt_ + static_cast<unsigned>(t));
  }
  C& on_;
  unsigned salt_;
  std::vector<std::vector<int>> sent_;
  std::vector<typename C::request> reqs_;
};

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(split_matches_a_sequential_split, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& c, Check& check) {
      const int r = c.rank();
      for (const scheme& s : schemes()) {
        auto sub = c.split(s.color(r, p), s.key(r, p));
        const auto want = members(s, p, r);
        const std::string ctx = detail::concat(Topo::name(), " ", s.name, ", rank ", r);
        check.expect(sub.size() == static_cast<int>(want.size()) && sub.rank() == index_of(want, r),
                     ctx, ": rank ", sub.rank(), " of ", sub.size(), ", expected ",
                     index_of(want, r), " of ", want.size());
        if (sub.size() != static_cast<int>(want.size())) continue;
        check.equal(gathered<Topo>(sub, r), want, ctx, ": members");
        check_collectives<Topo>(sub, want, check, ctx);
      }
    });
  });
}

// The ranks of the first color run their sub-communicator's collectives, then
// the parent's; the others the parent's first: their threads (loopback) or
// processes (MPI) interleave, and the parent's messages to a rank arrive
// while it runs its sub-communicator's collectives. Across each, messages of
// the other communicator on the same tags, between the same ranks, are
// outstanding.
BOOST_AUTO_TEST_CASE_TEMPLATE(sub_communicators_and_the_parent_never_mix, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    std::vector<int> everyone(static_cast<std::size_t>(p));
    std::iota(everyone.begin(), everyone.end(), 0);
    on_ranks([&](auto& c, Check& check) {
      const int r = c.rank();
      for (const scheme& s : {schemes()[4], schemes()[5]}) {
        auto sub = c.split(s.color(r, p), s.key(r, p));
        const auto who = members(s, p, r);
        const int n = sub.size(), i = sub.rank(), next = (i + 1) % n, prev = (i + n - 1) % n;
        const std::string ctx = detail::concat(Topo::name(), " ", s.name, ", rank ", r);
        auto on_sub = [&] {
          outstanding parent_traffic(c, who[static_cast<std::size_t>(next)], 1);
          check_collectives<Topo, true>(sub, who, check, ctx + " sub");
          parent_traffic.finish(who[static_cast<std::size_t>(prev)], check, ctx + " parent");
        };
        auto on_parent = [&] {
          outstanding sub_traffic(sub, next, 2);
          check_collectives<Topo>(c, everyone, check, ctx + " parent");
          sub_traffic.finish(prev, check, ctx + " sub");
        };
        if (s.color(r, p) == s.color(0, p)) {
          on_sub();
          on_parent();
        } else {
          on_parent();
          on_sub();
        }
      }
    });
  });
}

// A sub-communicator splits in turn; its parts are those of a sequential
// split of the parent ranks it holds.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_sub_communicator_splits_again, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& c, Check& check) {
      const int r = c.rank();
      auto half = c.split(halves(r, p), -r);  // reversed
      auto third = half.split(half.rank() % 3, 0);
      const auto in_half = members({"", halves, reversed}, p, r);
      std::vector<int> want;  // parent ranks of half's ranks i with i % 3 == mine, in order
      for (std::size_t i = 0; i < in_half.size(); ++i)
        if (static_cast<int>(i) % 3 == half.rank() % 3) want.push_back(in_half[i]);
      const std::string ctx = detail::concat(Topo::name(), " nested split, rank ", r);
      check.equal(gathered<Topo>(third, r), want, ctx, ": members");
      check_collectives<Topo>(third, want, check, ctx);
    });
  });
}

// mesh_lines<K>: line j holds the ranks that differ from this one only in
// coordinate j of Mesh<K>, ranked by it, and those coordinates are the ones
// of the layout Mesh<K>::shape(p) the collectives run on.
template <int K, class Topo, class C>
void check_mesh_lines(C& c, Check& check) {
  const int p = c.size(), r = c.rank();
  const auto sides = Mesh<K>::sides(p);
  const auto x = Mesh<K>::coords(p, r);
  const layout l = Mesh<K>::shape(p);
  auto lines = mesh_lines<K>(c);
  for (int j = 0; j < K; ++j) {
    const auto J = static_cast<std::size_t>(j);
    const int stride = Mesh<K>::stride(p, j);
    const std::string ctx =
        detail::concat(Topo::name(), " mesh_lines<", K, "> p ", p, " rank ", r, " line ", j);
    for (int d = 0; d < l.ndims && sides[J] > 1; ++d)  // the layout's dimension of this side
      if (l.dims[d].stride == stride)
        check.expect(l.dims[d].radix == sides[J] && l.coord(r, d) == x[J], ctx,
                     ": not the layout's dimension ", d);
    std::vector<int> want;
    for (int k = 0; k < sides[J]; ++k) want.push_back(r + (k - x[J]) * stride);
    check.expect(lines[J].size() == sides[J] && lines[J].rank() == x[J], ctx, ": rank ",
                 lines[J].rank(), " of ", lines[J].size());
    check.equal(gathered<Topo>(lines[J], r), want, ctx, ": members");
    check_collectives<Topo>(lines[J], want, check, ctx);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(mesh_lines_are_the_rows_and_columns_of_the_mesh, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int, auto on_ranks) {
    on_ranks([&](auto& c, Check& check) {
      check_mesh_lines<2, Topo>(c, check);
      check_mesh_lines<3, Topo>(c, check);
    });
  });
}

// A negative color throws on its rank, naming the operation, the rank and the
// value, after taking part: the other ranks get their communicator.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_negative_color_throws_and_the_others_split, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& c, Check& check) {
      const int r = c.rank(), bad = p / 2;
      const std::string ctx = detail::concat(Topo::name(), " negative color, rank ", r);
      if (r == bad) {
        check.throws<std::invalid_argument>(
            [&] { c.split(-3, 0); },
            {"split", detail::concat("rank ", r, " of ", p), "color -3 is negative"}, ctx);
        return;
      }
      auto sub = c.split(0, 0);
      std::vector<int> want;
      for (int q = 0; q < p; ++q)
        if (q != bad) want.push_back(q);
      check.equal(gathered<Topo>(sub, r), want, ctx, ": members");
      check_collectives<Topo>(sub, want, check, ctx);
    });
  });
}

// A color that leaves a rank alone gives it a communicator of one rank, on
// which every collective works.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_rank_alone_gets_a_communicator_of_one, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& c, Check& check) {
      const int r = c.rank(), alone = p - 1;
      auto sub = c.split(r == alone ? 1 : 0, 0);
      if (r != alone) return;
      const std::string ctx = detail::concat(Topo::name(), " alone, rank ", r, " of ", p);
      check.expect(sub.rank() == 0 && sub.size() == 1, ctx, ": rank ", sub.rank(), " of ",
                   sub.size());
      if (!Topo::holds(1)) return;
      check_collectives<Topo>(sub, {r}, check, ctx);
      const auto in = tc_test::input<Mat2>(r, small_m, 7);
      std::vector<Mat2> out(small_m);
      scan<Topo>(sub, in, out, tc_test::mat_mul{});
      check.equal(out, in, ctx, ": scan");
      all_gather<Topo>(sub, in, out);
      check.equal(out, in, ctx, ": all_gather");
      all_to_all<Topo>(sub, in, out);
      check.equal(out, in, ctx, ": all_to_all");
      scatter<Topo>(sub, in, out, 0);
      check.equal(out, in, ctx, ": scatter");
      reduce_scatter<Topo>(sub, in, out, tc_test::mat_mul{});
      check.equal(out, in, ctx, ": reduce_scatter");
    });
  });
}

#ifndef TOPOCOLL_TEST_MPI
// ---------------------------------------------------------------------------
// Loopback: splits that do not match are deadlocks, reported, not hangs.

namespace {
namespace lb = topocoll::loopback;

template <class F>
std::string deadlock_text(int p, F&& f) {
  try {
    lb::run(p, f);
  } catch (const deadlock_error& e) {
    return e.what();
  }
  BOOST_FAIL("no deadlock_error");
  return {};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_rank_that_never_splits_is_a_deadlock_naming_the_ranks) {
  for (int p : {2, 3, 5, 8}) {
    const auto what = deadlock_text(p, [p](lb::Comm& c) {
      if (c.rank() == p - 1) return;
      auto sub = c.split(0, 0);
    });
    BOOST_TEST(contains(what, detail::concat("rank 0 waits in split, in recv from rank ", p - 1,
                                             " (which has returned)")),
               what);
    for (int r = 1; r < p - 1; ++r)
      BOOST_TEST(contains(what, detail::concat("rank ", r, " waits in split, in recv from rank 0")),
                 what);
  }
  // Rank 0 splits twice, the others once.
  const auto what = deadlock_text(3, [](lb::Comm& c) {
    auto a = c.split(0, 0);
    if (c.rank() == 0) auto b = c.split(0, 0);
  });
  BOOST_TEST(contains(what, "rank 0 waits in split, in recv from rank 1 (which has returned)"),
             what);
}

BOOST_AUTO_TEST_CASE(a_split_of_a_sub_communicator_that_does_not_match_names_parent_ranks) {
  const auto what = deadlock_text(6, [](lb::Comm& c) {
    auto odd = c.split(c.rank() % 2, 0);  // odd: run ranks 1 3 5
    if (c.rank() % 2 == 1 && c.rank() != 5) auto again = odd.split(0, 0);
  });
  BOOST_TEST(contains(what, "rank 0 (rank 1 of the parent) waits in split of sub-communicator"),
             what);
  BOOST_TEST(contains(what, "in recv from rank 2 (rank 5 of the parent) (which has returned)"),
             what);
}

BOOST_AUTO_TEST_CASE(a_deadlock_on_sub_communicators_names_their_ranks_and_the_parents) {
  const auto what = deadlock_text(4, [](lb::Comm& c) {
    auto sub = c.split(c.rank() % 2, -c.rank());  // {2, 0} and {3, 1}
    int x;
    sub.recv(1 - sub.rank(), 9, std::span<int>(&x, 1));
  });
  for (const char* line :
       {"rank 1 (rank 0 of the parent) waits in recv from rank 0 (rank 2 of the parent), tag 9, on "
        "sub-communicator",
        "rank 0 (rank 2 of the parent) waits in recv from rank 1 (rank 0 of the parent), tag 9",
        "rank 1 (rank 1 of the parent) waits in recv from rank 0 (rank 3 of the parent), tag 9",
        "rank 0 (rank 3 of the parent) waits in recv from rank 1 (rank 1 of the parent), tag 9"})
    BOOST_TEST(contains(what, line), what);
}

BOOST_AUTO_TEST_CASE(a_message_never_received_on_a_sub_communicator_is_named_there) {
  try {
    lb::run(3, [](lb::Comm& c) {
      auto sub = c.split(c.rank() == 0 ? 0 : 1, 0);  // {0}, {1, 2}
      const int x = 5;
      if (c.rank() == 2) sub.send(0, 4, std::span<const int>(&x, 1));
    });
    BOOST_FAIL("no message_error");
  } catch (const message_error& e) {
    const std::string what = e.what();
    BOOST_TEST(contains(what,
                        "from rank 1 (rank 2 of the parent) to rank 0 (rank 1 of the "
                        "parent) with tag 4, on sub-communicator"),
               what);
  }
}

// Splits and sub-communicators on synchronous sends (eager_limit 0).
BOOST_AUTO_TEST_CASE(splitting_works_with_synchronous_sends) {
  lb::options opt;
  opt.eager_limit = 0;
  for (int p : {1, 2, 7, 16}) {
    Check check;
    lb::run(
        p,
        [&](lb::Comm& c) {
          const scheme& s = schemes()[5];
          auto sub = c.split(s.color(c.rank(), p), s.key(c.rank(), p));
          const auto want = members(s, p, c.rank());
          check.equal(gathered<Tree<2>>(sub, c.rank()), want, "sync, p ", p);
          check_collectives<Mesh<2>, true>(sub, want, check, detail::concat("sync, p ", p));
        },
        opt);
    BOOST_TEST(check.count() == 0, check.report());
  }
}
#endif
