#define BOOST_TEST_MODULE aliasing
#include "support/harness.hpp"
#include "support/suite.hpp"

// The aliasing rule every collective keeps (doc/index.md, "In-place use and
// overlapping buffers"):
//  * in and out over the same elements, in the one arrangement each collective
//    names (MPI_IN_PLACE's), give the out-of-place result;
//  * any other overlap of in and out throws std::invalid_argument naming the
//    operation and the rank, before any message (so when every rank passes
//    such buffers, every rank throws).
// On every topology x transport, p = 1..8 on loopback (the world size under
// mpiexec), every root, every algorithm that can be forced, a non-commutative
// operator (2x2 matrix product) and m = 0, 1, 7, 100; results are compared
// with a sequential reference, not with the out-of-place call.

#include <algorithm>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace topocoll;
using tc_test::Check;
using T = tc_test::Mat2;
using Op = tc_test::mat_mul;

const std::vector<int> ps = {1, 2, 3, 4, 5, 6, 7, 8};
const std::size_t sizes[] = {0, 1, 7, 100};  // 7 and 100: not multiples of most p
constexpr std::size_t overlap_m = 4;         // block length of the overlap cases

std::size_t at(int block, std::size_t m) {
  return static_cast<std::size_t>(block) * m;
}

// One call's parameters on this rank.
struct Step {
  int p, r, root;
  std::size_t m;
  options opt;
};

// What this rank holds after the in-place call, and what it must hold.
struct Result {
  std::vector<T> got, want;
};

// ---------------------------------------------------------------------------
// Inputs and sequential references.

std::vector<T> mine(int r, std::size_t n, unsigned salt) {
  return tc_test::input<T>(r, n, salt);
}

// Contents no rank contributes: whatever was in out before the call.
std::vector<T> stale(std::size_t n) {
  return tc_test::input<T>(1000, n, 77);
}

// mine(0, m) ++ mine(1, m) ++ ... ++ mine(p - 1, m)
std::vector<T> every_block(int p, std::size_t m, unsigned salt) {
  std::vector<T> all;
  for (int q = 0; q < p; ++q) {
    const auto b = mine(q, m, salt);
    all.insert(all.end(), b.begin(), b.end());
  }
  return all;
}

// whole with block b (of m elements) replaced by `block`.
std::vector<T> placed(std::vector<T> whole, int b, std::size_t m, const std::vector<T>& block) {
  std::copy(block.begin(), block.end(), whole.begin() + static_cast<std::ptrdiff_t>(at(b, m)));
  return whole;
}

std::vector<T> block_of(const std::vector<T>& whole, int b, std::size_t m) {
  const auto first = whole.begin() + static_cast<std::ptrdiff_t>(at(b, m));
  return {first, first + static_cast<std::ptrdiff_t>(m)};
}

// all_to_all(_v): rank `from` sends count(from, to) elements to rank `to`,
// element e being gen(from, to * 1000 + e). Rank r's input, in order of `to`:
template <class Count>
std::vector<T> personalized_in(int r, int p, Count count, unsigned salt) {
  std::vector<T> v;
  for (int to = 0; to < p; ++to)
    for (std::size_t e = 0; e < count(r, to); ++e)
      v.push_back(tc_test::gen<T>(r, at(to, 1000) + e, salt));
  return v;
}
// ... and what it receives, in order of `from`.
template <class Count>
std::vector<T> personalized_want(int r, int p, Count count, unsigned salt) {
  std::vector<T> v;
  for (int from = 0; from < p; ++from)
    for (std::size_t e = 0; e < count(from, r); ++e)
      v.push_back(tc_test::gen<T>(from, at(r, 1000) + e, salt));
  return v;
}

// ---------------------------------------------------------------------------
// The algorithms each collective can be forced to (automatic first).

template <class Topo>
std::vector<options> gather_options(int) {  // all_gather, reduce_scatter
  return {options{algorithm::automatic}, options{algorithm::tree}};
}
template <class Topo>
std::vector<options> all_reduce_options(int p) {
  std::vector<options> v{options{algorithm::automatic}, options{algorithm::tree},
                         options{algorithm::reduce_broadcast}};
  // Tree<K> doubles over radix-K digits only where every digit group is complete
  if (Topo::kind != dim_kind::knomial || Topo::shape(p).extent == p)
    for (algorithm a : {algorithm::recursive_doubling, algorithm::reduce_scatter_all_gather})
      v.push_back(options{a});
  return v;
}
// t_w = 100 t_s per byte: the ring's chain runs as a pipeline of segments.
template <class Topo>
std::vector<options> scan_options(int) {
  return {options{algorithm::automatic}, options{algorithm::recursive_doubling},
          options{algorithm::automatic, cost_model{1.0, 100.0}}};
}
// reduce, scatter, gather; on a Ring also the pipeline, cut into many segments.
template <class Topo>
std::vector<options> one_to_all_options(int) {
  std::vector<options> v{options{algorithm::automatic}, options{algorithm::tree}};
  if constexpr (std::is_same_v<Topo, Ring>)
    v.push_back(options{algorithm::pipelined, cost_model{1.0, 0.01}});
  return v;
}
template <class Topo>
std::vector<options> all_to_all_options(int) {
  return {options{algorithm::automatic}, options{algorithm::store_and_forward},
          options{algorithm::pairwise}};
}
template <class Topo>
std::vector<options> all_to_all_v_options(int) {
  return {options{algorithm::automatic}, options{algorithm::pairwise},
          options{algorithm::two_stage}};
}

std::string describe(const options& o) {
  std::string s(to_string(o.algo));
  if (o.cost.tw_us_per_byte != cost_model{}.tw_us_per_byte)
    s += detail::concat(", t_s ", o.cost.ts_us, " t_w ", o.cost.tw_us_per_byte);
  return s;
}

// ---------------------------------------------------------------------------
// The two sweeps.

// For p = 1..8, every option of opts(p), every root (rooted) and size: `one`
// makes the in-place call on this rank and returns {got, want}.
template <class Cfg, class One>
void sweep_in_place(const char* op, bool rooted, std::vector<options> (*opts)(int), One one) {
  using Topo = typename Cfg::topology;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const int r = comm.rank();
          const std::vector<int> roots = rooted ? tc_test::roots_for(p) : std::vector<int>{0};
          for (const options& opt : opts(p))
            for (int root : roots)
              for (std::size_t m : sizes) {
                const Result res = one(comm, Step{p, r, root, m, opt});
                check.equal(res.got, res.want, Topo::name(), " ", op, " in place (", describe(opt),
                            ") rank ", r, " of ", p,
                            rooted ? " root " + std::to_string(root) : std::string(), " m ", m);
              }
        });
      },
      ps);
}

// in and out inside one buffer, at these offsets.
struct Layout {
  std::string what;
  std::size_t in_off, in_len, out_off, out_len;
};

// in and out of n elements each, overlapping but not the same span.
std::vector<Layout> same_size(std::size_t n) {
  return {{"out one element after in", 0, n, 1, n},
          {"out half-way into in", 0, n, n / 2, n},
          {"in one element after out", 1, n, 0, n}};
}

// A block of m elements inside p*m (small_is_in: in is the block, out the
// whole; else the other way round) anywhere but at block `own`: one element
// past it, and (p > 1) at the next block.
std::vector<Layout> block_in_whole(int p, int own, std::size_t m, bool small_is_in) {
  std::vector<std::pair<std::string, std::size_t>> where{{"one element past", at(own, m) + 1}};
  if (p > 1) where.push_back({"at the next block after", at((own + 1) % p, m)});
  std::vector<Layout> v;
  const std::size_t pm = at(p, m);
  for (const auto& [what, off] : where) {
    const std::string name =
        (small_is_in ? "in " : "out ") + what + " block " + std::to_string(own);
    v.push_back(small_is_in ? Layout{name, off, m, 0, pm} : Layout{name, 0, pm, off, m});
  }
  return v;
}

// For p = 1..8 and every root (rooted): each layout of layouts(step) makes
// `call` throw std::invalid_argument naming the operation and this rank, on
// every rank, before any message; a collective still works afterwards.
template <class Cfg, class Layouts, class Call>
void sweep_rejects(const char* op, bool rooted, Layouts layouts, Call call) {
  using Topo = typename Cfg::topology;
  Cfg::sweep(
      [&](int p, auto on_ranks) {
        on_ranks([&](auto& comm, Check& check) {
          const int r = comm.rank();
          const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(p);
          model::Counting cc(comm);
          for (int root : rooted ? tc_test::roots_for(p) : std::vector<int>{0}) {
            const Step s{p, r, root, overlap_m, {}};
            for (const Layout& l : layouts(s)) {
              std::vector<T> buf(std::max(l.in_off + l.in_len, l.out_off + l.out_len));
              const std::span<T> all(buf);
              const std::span<const T> in = all.subspan(l.in_off, l.in_len);
              check.throws<std::invalid_argument>(
                  [&] { call(cc, in, all.subspan(l.out_off, l.out_len), s); },
                  {std::string("topocoll::") + op, who},
                  detail::concat(Topo::name(), " ", op, ", ", l.what, ", ", who,
                                 rooted ? ", root " + std::to_string(root) : std::string()));
            }
          }
          check.expect(cc.steps() == 0, Topo::name(), " ", op, ": ", who, " made ", cc.steps(),
                       " transport calls before throwing (or did not throw)");
          std::vector<int> one{1}, sum(1);
          all_reduce<Topo>(comm, one, sum, std::plus<>{});
          check.expect(sum[0] == p, Topo::name(), " all_reduce after the ", op, " cases, ", who);
        });
      },
      ps);
}

std::vector<Layout> same_size_m(const Step& s) {
  return same_size(s.m);
}
std::vector<Layout> same_size_pm(const Step& s) {
  return same_size(at(s.p, s.m));
}

}  // namespace

// ---------------------------------------------------------------------------
// In place: in and out the same span.

TOPOCOLL_TEST_SUITE(all_reduce)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_reduce_in_place, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("all_reduce", false, all_reduce_options<Topo>, [](auto& c, const Step& s) {
    std::vector<T> buf = mine(s.r, s.m, 1);
    all_reduce<Topo>(c, std::span<const T>(buf), std::span<T>(buf), Op{}, s.opt);
    return Result{buf, tc_test::fold<T>(0, s.p - 1, s.m, Op{}, 1)};
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(scan)
BOOST_AUTO_TEST_CASE_TEMPLATE(scan_in_place, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("scan", false, scan_options<Topo>, [](auto& c, const Step& s) {
    std::vector<T> buf = mine(s.r, s.m, 2);
    scan<Topo>(c, std::span<const T>(buf), std::span<T>(buf), Op{}, s.opt);
    return Result{buf, tc_test::fold<T>(0, s.r, s.m, Op{}, 2)};
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(exclusive_scan)
// Rank 0's out is untouched: it keeps its input.
BOOST_AUTO_TEST_CASE_TEMPLATE(exclusive_scan_in_place, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("exclusive_scan", false, scan_options<Topo>, [](auto& c, const Step& s) {
    std::vector<T> buf = mine(s.r, s.m, 3);
    exclusive_scan<Topo>(c, std::span<const T>(buf), std::span<T>(buf), Op{}, s.opt);
    return Result{buf, s.r == 0 ? mine(0, s.m, 3) : tc_test::fold<T>(0, s.r - 1, s.m, Op{}, 3)};
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(reduce)
// At the root; the other ranks pass an empty out.
BOOST_AUTO_TEST_CASE_TEMPLATE(reduce_in_place_at_the_root, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("reduce", true, one_to_all_options<Topo>, [](auto& c, const Step& s) {
    std::vector<T> buf = mine(s.r, s.m, 4);
    if (s.r != s.root) {
      reduce<Topo>(c, std::span<const T>(buf), std::span<T>(), Op{}, s.root, s.opt);
      return Result{};
    }
    reduce<Topo>(c, std::span<const T>(buf), std::span<T>(buf), Op{}, s.root, s.opt);
    return Result{buf, tc_test::fold<T>(0, s.p - 1, s.m, Op{}, 4)};
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(all_to_all)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_in_place, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("all_to_all", false, all_to_all_options<Topo>, [](auto& c, const Step& s) {
    auto count = [m = s.m](int, int) { return m; };
    std::vector<T> buf = personalized_in(s.r, s.p, count, 5);
    all_to_all<Topo>(c, std::span<const T>(buf), std::span<T>(buf), s.opt);
    return Result{buf, personalized_want(s.r, s.p, count, 5)};
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(all_to_all_v)
// Blocks of different lengths, m + (i + j) % 3 between ranks i and j: the
// counts are symmetric, so every rank sends as many elements as it receives.
BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_v_in_place, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>(
      "all_to_all_v", false, all_to_all_v_options<Topo>, [](auto& c, const Step& s) {
        auto count = [m = s.m](int i, int j) { return m + static_cast<std::size_t>(i + j) % 3; };
        std::vector<std::size_t> counts;
        for (int q = 0; q < s.p; ++q) counts.push_back(count(s.r, q));
        std::vector<T> buf = personalized_in(s.r, s.p, count, 6);
        all_to_all_v<Topo>(c, std::span<const T>(buf), counts, std::span<T>(buf), counts, s.opt);
        return Result{buf, personalized_want(s.r, s.p, count, 6)};
      });
}
BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// In place: one block inside the other buffer.

TOPOCOLL_TEST_SUITE(all_gather)
// in is out's block r: this rank's block already sits in place.
BOOST_AUTO_TEST_CASE_TEMPLATE(all_gather_in_place, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("all_gather", false, gather_options<Topo>, [](auto& c, const Step& s) {
    std::vector<T> buf = placed(stale(at(s.p, s.m)), s.r, s.m, mine(s.r, s.m, 7));
    const std::span<T> out(buf);
    all_gather<Topo>(c, std::span<const T>(out.subspan(at(s.r, s.m), s.m)), out, s.opt);
    return Result{buf, every_block(s.p, s.m, 7)};
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(reduce_scatter)
// out is in's first block: the input is taken from the receive buffer and
// block r of the reduction lands at its start (MPI_Reduce_scatter_block).
BOOST_AUTO_TEST_CASE_TEMPLATE(reduce_scatter_in_place, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("reduce_scatter", false, gather_options<Topo>, [](auto& c, const Step& s) {
    const std::size_t pm = at(s.p, s.m);
    std::vector<T> buf = mine(s.r, pm, 8);
    reduce_scatter<Topo>(c, std::span<const T>(buf), std::span<T>(buf).first(s.m), Op{}, s.opt);
    return Result{block_of(buf, 0, s.m),
                  block_of(tc_test::fold<T>(0, s.p - 1, pm, Op{}, 8), s.r, s.m)};
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(scatter)
// At the root out is in's block root, which stays where it is and so do the
// other blocks; the other ranks receive into buffers of their own.
BOOST_AUTO_TEST_CASE_TEMPLATE(scatter_in_place_at_the_root, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("scatter", true, one_to_all_options<Topo>, [](auto& c, const Step& s) {
    if (s.r != s.root) {
      std::vector<T> out = stale(s.m);
      scatter<Topo>(c, std::span<const T>(), std::span<T>(out), s.root, s.opt);
      return Result{out, mine(s.r, s.m, 9)};
    }
    std::vector<T> buf = every_block(s.p, s.m, 9);
    const std::span<T> whole(buf);
    scatter<Topo>(c, std::span<const T>(whole), whole.subspan(at(s.root, s.m), s.m), s.root, s.opt);
    return Result{buf, every_block(s.p, s.m, 9)};
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(gather)
// At the root in is out's block root; the other ranks pass an empty out.
BOOST_AUTO_TEST_CASE_TEMPLATE(gather_in_place_at_the_root, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("gather", true, one_to_all_options<Topo>, [](auto& c, const Step& s) {
    if (s.r != s.root) {
      const std::vector<T> in = mine(s.r, s.m, 10);
      gather<Topo>(c, std::span<const T>(in), std::span<T>(), s.root, s.opt);
      return Result{};
    }
    std::vector<T> buf = placed(stale(at(s.p, s.m)), s.root, s.m, mine(s.root, s.m, 10));
    const std::span<T> out(buf);
    gather<Topo>(c, std::span<const T>(out.subspan(at(s.root, s.m), s.m)), out, s.root, s.opt);
    return Result{buf, every_block(s.p, s.m, 10)};
  });
}
BOOST_AUTO_TEST_SUITE_END()

// The SPMD pattern MPI allows: every rank passes one whole buffer and its own
// block of it. Only the root's in (scatter) or out (gather) is used, so on the
// other ranks that buffer overlapping the other is no overlap at all.
BOOST_AUTO_TEST_CASE_TEMPLATE(scatter_ignores_in_off_the_root, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("scatter", true, one_to_all_options<Topo>, [](auto& c, const Step& s) {
    std::vector<T> buf = s.r == s.root ? every_block(s.p, s.m, 11) : stale(at(s.p, s.m));
    const std::vector<T> want = placed(buf, s.r, s.m, mine(s.r, s.m, 11));
    const std::span<T> whole(buf);
    scatter<Topo>(c, std::span<const T>(whole), whole.subspan(at(s.r, s.m), s.m), s.root, s.opt);
    return Result{buf, want};
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(gather_ignores_out_off_the_root, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("gather", true, one_to_all_options<Topo>, [](auto& c, const Step& s) {
    std::vector<T> buf = placed(stale(at(s.p, s.m)), s.r, s.m, mine(s.r, s.m, 12));
    const std::vector<T> want = s.r == s.root ? every_block(s.p, s.m, 12) : buf;
    const std::span<T> whole(buf);
    gather<Topo>(c, std::span<const T>(whole.subspan(at(s.r, s.m), s.m)), whole, s.root, s.opt);
    return Result{buf, want};
  });
}

// reduce's out is used at the root only: elsewhere it may overlap in in any
// way, and is not touched.
BOOST_AUTO_TEST_CASE_TEMPLATE(reduce_ignores_out_off_the_root, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_in_place<Cfg>("reduce", true, one_to_all_options<Topo>, [](auto& c, const Step& s) {
    std::vector<T> buf = placed(stale(s.m + 1), 0, s.m, mine(s.r, s.m, 13));
    const std::span<T> whole(buf);
    const std::span<const T> in = whole.first(s.m);
    if (s.r != s.root) {  // out one element past in: a partial overlap
      const std::vector<T> before = buf;
      reduce<Topo>(c, in, whole.subspan(1, s.m), Op{}, s.root, s.opt);
      return Result{buf, before};
    }
    std::vector<T> out(s.m);
    reduce<Topo>(c, in, std::span<T>(out), Op{}, s.root, s.opt);
    return Result{out, tc_test::fold<T>(0, s.p - 1, s.m, Op{}, 13)};
  });
}

// ---------------------------------------------------------------------------
// Any other overlap throws std::invalid_argument on every rank (on the root
// only, for the buffer only the root uses).

TOPOCOLL_TEST_SUITE(all_reduce)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_reduce_rejects_partial_overlap, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>("all_reduce", false, same_size_m,
                     [](auto& c, std::span<const T> in, std::span<T> out, const Step&) {
                       all_reduce<Topo>(c, in, out, Op{});
                     });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(scan)
BOOST_AUTO_TEST_CASE_TEMPLATE(scan_rejects_partial_overlap, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>("scan", false, same_size_m,
                     [](auto& c, std::span<const T> in, std::span<T> out, const Step&) {
                       scan<Topo>(c, in, out, Op{});
                     });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(exclusive_scan)
BOOST_AUTO_TEST_CASE_TEMPLATE(exclusive_scan_rejects_partial_overlap, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>("exclusive_scan", false, same_size_m,
                     [](auto& c, std::span<const T> in, std::span<T> out, const Step&) {
                       exclusive_scan<Topo>(c, in, out, Op{});
                     });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(reduce)
// The root passes overlapping in and out. (The other ranks' out is not used,
// so there the same buffers are valid: reduce_ignores_out_off_the_root.)
BOOST_AUTO_TEST_CASE_TEMPLATE(reduce_rejects_partial_overlap, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>(
      "reduce", true,
      [](const Step& s) { return s.r == s.root ? same_size_m(s) : std::vector<Layout>{}; },
      [](auto& c, std::span<const T> in, std::span<T> out, const Step& s) {
        reduce<Topo>(c, in, out, Op{}, s.root);
      });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(all_to_all)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_rejects_partial_overlap, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>("all_to_all", false, same_size_pm,
                     [](auto& c, std::span<const T> in, std::span<T> out, const Step&) {
                       all_to_all<Topo>(c, in, out);
                     });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(all_to_all_v)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_to_all_v_rejects_partial_overlap, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>("all_to_all_v", false, same_size_pm,
                     [](auto& c, std::span<const T> in, std::span<T> out, const Step& s) {
                       const std::vector<std::size_t> counts(static_cast<std::size_t>(s.p), s.m);
                       all_to_all_v<Topo>(c, in, counts, out, counts);
                     });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(all_gather)
BOOST_AUTO_TEST_CASE_TEMPLATE(all_gather_rejects_in_off_its_block, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>(
      "all_gather", false, [](const Step& s) { return block_in_whole(s.p, s.r, s.m, true); },
      [](auto& c, std::span<const T> in, std::span<T> out, const Step&) {
        all_gather<Topo>(c, in, out);
      });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(reduce_scatter)
BOOST_AUTO_TEST_CASE_TEMPLATE(reduce_scatter_rejects_out_off_the_first_block, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>(
      "reduce_scatter", false, [](const Step& s) { return block_in_whole(s.p, 0, s.m, false); },
      [](auto& c, std::span<const T> in, std::span<T> out, const Step&) {
        reduce_scatter<Topo>(c, in, out, Op{});
      });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(scatter)
// The root passes out inside in, off block root. (The other ranks' in is
// not used, so there the same buffers are valid: scatter_ignores_in_off_the_root.)
BOOST_AUTO_TEST_CASE_TEMPLATE(scatter_rejects_out_off_the_roots_block, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>(
      "scatter", true,
      [](const Step& s) {
        return s.r == s.root ? block_in_whole(s.p, s.root, s.m, false) : std::vector<Layout>{};
      },
      [](auto& c, std::span<const T> in, std::span<T> out, const Step& s) {
        scatter<Topo>(c, in, out, s.root);
      });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(gather)
// The root passes in inside out, off block root. (The other ranks' out is
// not used, so there the same buffers are valid: gather_ignores_out_off_the_root.)
BOOST_AUTO_TEST_CASE_TEMPLATE(gather_rejects_in_off_the_roots_block, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  sweep_rejects<Cfg>(
      "gather", true,
      [](const Step& s) {
        return s.r == s.root ? block_in_whole(s.p, s.root, s.m, true) : std::vector<Layout>{};
      },
      [](auto& c, std::span<const T> in, std::span<T> out, const Step& s) {
        gather<Topo>(c, in, out, s.root);
      });
}
BOOST_AUTO_TEST_SUITE_END()
