#pragma once
// The prefix kernel: PREFIX_SUMS_HCUBE of the lecture notes ("prefix sums on a
// d-dimensional hypercube": the all-to-all broadcast pattern with a message of
// constant size, plus a result buffer that only takes what comes from lower
// labels) generalised to a fold over the dimensions of any topocoll::layout. It
// is also all_reduce's algorithm::recursive_doubling, which needs only `msg`
// ((t_s + t_w m) log p on a hypercube).
//
// Per dimension, the exchanges of the dimension step (topology/step.hpp):
// binary, the textbook exchange with v XOR 2^j; linear, Algorithm 4.4 moving
// the messages round the ring of the dimension; knomial, a direct exchange
// with each other digit. On the last dimension of a scan the total is not
// needed, and the step says what runs there (scan_tail).
// Ranks missing from the layout (Hypercube<>, Tree<K> on p < extent) are
// skipped. This is exact for the prefixes: the coordinates below v's along a
// dimension always exist, and a group entirely below p is complete at every
// level, so only totals bound for missing ranks come out short. (all_reduce
// therefore folds Hypercube<> to a power of two first and never runs this on a
// tree.)

#include <algorithm>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/transfer.hpp"
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"
#include "../topology/step.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "all_to_all_broadcast.hpp"
#include "pipeline.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::prefix {

// The work space prefix_fold takes: two receive buffers and the partials from
// below and above, m elements each.
inline std::size_t work_size(std::size_t m) {
  return 4 * m;
}

// What the fold must leave: msg holding the fold over every rank (all_reduce),
// or excl holding the fold over the lower ranks (scan; msg's last value is
// then unspecified). A template argument of the fold: each goal is compiled
// without the other's tests.
enum class goal { total, exclusive };

// src is read by the first dimension's sends and combines, and msg is first
// written after them (it may be src itself): a contribution copied into msg
// first would reach the peer's single-copy read (Open MPI's CMA) as lines this
// core has just written, still in its cache (see all_gather_natural).
template <class T>
struct buffers {
  std::span<const T> src;  // this rank's contribution (m elements)
  std::span<T> msg;        // m elements: the fold so far, from the first dimension on
  std::span<T> excl;       // goal::exclusive: the exclusive prefix (untouched on rank 0)
  std::span<T> work;       // work_size(m) elements
};

using all_to_all_broadcast::place;
using all_to_all_broadcast::side;

// acc = x op acc, or acc = x when acc is still empty
template <class T, class Op>
void put_left(std::span<T> acc, bool& set, std::span<const T> x, const Op& op) {
  if (set)
    combine_left(acc, x, op);
  else
    copy_to(x, acc), set = true;
}

template <class T>
struct partials {
  std::span<const T> own;  // what this rank sends of its own: src or msg
  std::span<T> msg;
  side<T> lo, hi;
  std::span<T> spare[2];  // receive buffers once a side is set
};

// msg = lo op own op hi, of the sides that arrived: one pass over msg where
// one side arrived (every binary dimension), two where both did. Inlined into
// the fold, which calls it once per dimension.
template <class T, class Op>
[[gnu::always_inline]] inline void fold_sides(const partials<T>& part, const Op& op) {
  if (part.lo.set)
    combine_into(part.msg, cspan(part.lo.acc), part.own, op);
  else if (part.hi.set)
    return combine_into(part.msg, part.own, cspan(part.hi.acc), op);
  else
    copy_to(part.own, part.msg);
  if (part.hi.set) combine_right(part.msg, cspan(part.hi.acc), op);
}

// One dimension: the fold's exchanges (topology/step.hpp). The other
// coordinates' messages arrive in descending cyclic order, so each goes on the
// LEFT of the side it belongs to; the first of a side arrives in place. A ring
// passes on what arrived last; the other steps send msg itself. Inlined into
// the fold, as chain_dim and fold_sides are: the partials then stay in
// registers from one dimension to the next.
template <Topology Topo, Transport C, class T, class Fold, class Dim, class Op>
[[gnu::always_inline]] inline void exchange_dim(C& c, const place<Fold>& at, Dim dim,
                                                partials<T>& part, scan_tail tail, const Op& op) {
  using step = dim_step<Topo::kind>;
  const int j = dim;
  const int k = step::coord(at.vl, at.w, j);
  auto real = [&](int q) { return step::with_coord(at.vl, at.w, j, q); };
  std::span<const T> last = part.own;
  int s = 0;
  for_each_exchange<Topo::kind>(
      step::radix(at.vl, j), k, [&](const exchange& e) __attribute__((always_inline)) {
        const bool prune = tail == scan_tail::prune;
        const bool snd = rank_exists<Topo>(at.vl, real(e.to)) && (!prune || e.send < e.to);
        const bool rcv = rank_exists<Topo>(at.vl, real(e.from)) && (!prune || e.recv < k);
        // The side is picked by value and marked by a branch: through a
        // reference to one of the two, both flags would live in memory, and
        // fold_sides' tests of them would not fold away.
        const bool lower = e.recv < k, set = lower ? part.lo.set : part.hi.set;
        const std::span<T> acc = lower ? part.lo.acc : part.hi.acc;
        const std::span<T> into = !rcv   ? std::span<T>{}
                                  : !set ? acc
                                  : s    ? part.spare[1]
                                         : part.spare[0];
        transfer(c, snd ? at.fm.to_real(real(e.to)) : none, e.send == k ? part.own : last,
                 rcv ? at.fm.to_real(real(e.from)) : none, into, at.tag);
        if (!rcv) return;
        if (set)
          combine_left(acc, cspan(into), op), s ^= 1;
        else if (lower)
          part.lo.set = true;
        else
          part.hi.set = true;
        last = into;
      });
}

// The last dimension of a scan on a linear array: the prefix of the lower
// coordinates flows up a chain, one message per rank.
template <Topology Topo, Transport C, class T, class Fold, class Op>
[[gnu::always_inline]] inline void chain_dim(C& c, const place<Fold>& at, int j, partials<T>& part,
                                             const Op& op) {
  using step = dim_step<Topo::kind>;
  const int k = step::coord(at.vl, at.w, j), r = step::radix(at.vl, j);
  auto peer = [&](int q) { return at.fm.to_real(step::with_coord(at.vl, at.w, j, q)); };
  std::span<const T> up = part.own;  // the prefix up to this rank
  if (k > 0) {
    c.recv(peer(k - 1), at.tag, part.lo.acc);
    part.lo.set = true;
    if (k < r - 1) combine_into(part.msg, cspan(part.lo.acc), part.own, op), up = part.msg;
  }
  if (k < r - 1) c.send(peer(k + 1), at.tag, up);
}

// The fold over the dimensions. After dimension j, msg holds the fold over the
// group of ranks that share v's coordinates above j, and excl the fold over
// those of them below v. Returns whether excl was written. A function of its
// own, never inlined into the kernel that calls it: inlined into scan's or
// all_reduce's, GCC stored to the stack inside its combine loops.
template <Topology Topo, goal G, Transport C, class T, class Fold, class Op>
[[gnu::noinline]] bool prefix_fold(C& c, const place<Fold>& at, const buffers<T>& b, const Op& op) {
  const std::size_t m = b.msg.size();
  const int nd = ndims<Topo>(at.vl);
  bool have_excl = false;
  partials<T> part{b.src,
                   b.msg,
                   {b.work.subspan(2 * m, m)},
                   {b.work.subspan(3 * m, m)},
                   {b.work.first(m), b.work.subspan(m, m)}};
  for_each_dim<Topo>(at.vl, [&](auto dim) {
    const int j = dim;
    const bool need_total = G == goal::total || j < nd - 1;
    if (j > 0) part.own = b.msg;
    part.lo.set = part.hi.set = false;
    const scan_tail tail =
        need_total ? scan_tail::exchange : dim_step<Topo::kind>::last_scan_dimension;
    if (tail == scan_tail::chain)
      chain_dim<Topo>(c, at, j, part, op);
    else
      exchange_dim<Topo>(c, at, dim, part, tail, op);
    if (G == goal::exclusive && part.lo.set) put_left(b.excl, have_excl, cspan(part.lo.acc), op);
    if (need_total) fold_sides(part, op);
  });
  return have_excl;
}

enum class scan_kind { inclusive, exclusive };

// A chain along one linear dimension (Ring; a Mesh of prime p): the prefix of
// the lower ranks flows right, written straight into out. Where the transport
// has non-blocking sends the chain is a pipeline of r segments, (p - 2 + r)
// (t_s + t_w m / r) instead of (p - 1)(t_s + t_w m): each rank forwards
// segment i while segment i + 1 arrives.
template <Transport C, class T, class Op>
void scan_chain(C& c, in_out<T> io, const Op& op, scan_kind kind, const cost_model& cost) {
  const std::span<const T> in = io.in;
  const std::span<T> out = io.out;
  const int rank = c.rank(), p = c.size();
  const int tg = kind == scan_kind::inclusive ? tag::scan : tag::exclusive_scan;
  const bool inclusive = kind == scan_kind::inclusive;
  const std::size_t m = in.size();
  scratch<T> tmp_store(rank > 0 && (inclusive || rank < p - 1) ? m : 0);
  const std::span<T> tmp = tmp_store.span();
  std::size_t r = 1;
  if constexpr (send_batch<C, T>::nonblocking && std::is_trivially_copyable_v<T>)
    r = pipeline::ring_segments<T>(m, p, cost);  // segments >= min_segment_bytes
  send_batch<C, T> sends(c, r);
  for (std::size_t i = 0; i < r; ++i) {
    const auto [lo, n] = pipeline::segment(m, r, i);
    const std::span<const T> x = in.subspan(lo, n);
    const std::span<T> y = out.subspan(lo, n), t = tmp.empty() ? tmp : tmp.subspan(lo, n);
    std::span<const T> fwd = x;  // x_0 op ... op x_rank
    if (rank > 0 && inclusive) {
      c.recv(rank - 1, tg, t);
      combine_into(y, cspan(t), x, op);
      fwd = y;
    } else if (rank > 0) {
      c.recv(rank - 1, tg, y);
      if (rank < p - 1) combine_into(t, cspan(y), x, op);
      fwd = t;
    } else if (inclusive) {
      copy_to(x, y);
    }
    if (rank < p - 1) sends.send(rank + 1, tg, fwd);
  }
  sends.wait();
}

// scan (inclusive) and exclusive_scan: out on rank r = in_0 op ... op in_r (or
// in_{r-1}; rank 0's out untouched). in may be out itself (MPI_IN_PLACE): it is
// read from a private copy then, since out fills while in is still needed.
template <Topology Topo, Transport C, class T, class Op>
void scan(C& c, const layout& l, in_out<T> io, const Op& op, scan_kind kind,
          const cost_model& cost) {
  auto [in, out] = io;
  const bool inclusive = kind == scan_kind::inclusive;
  scratch<T> own(in.data() == out.data() ? in.size() : 0);
  if (!own.span().empty()) {
    copy_to(in, own.span());
    in = own.span();
  }
  if (dim_step<Topo::kind>::last_scan_dimension == scan_tail::chain && ndims<Topo>(l) == 1)
    return scan_chain(c, in_out<T>{in, out}, op, kind, cost);
  const std::size_t m = in.size();
  if (l.p > 1) {
    scratch<T> work_store(m + work_size(m));
    const bool have = prefix_fold<Topo, goal::exclusive>(
        c, place<no_fold>{inclusive ? tag::scan : tag::exclusive_scan, l, c.rank(), {l.p}},
        buffers<T>{in, work_store.span().first(m), out, work_store.span().subspan(m)}, op);
    if (inclusive && have) return combine_right(out, in, op);
  }
  if (inclusive) copy_to(in, out);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::prefix
