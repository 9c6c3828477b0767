#pragma once
// The prefix kernel: PREFIX_SUMS_HCUBE of the lecture notes ("prefix sums on a
// d-dimensional hypercube": the all-to-all broadcast pattern with a message of
// constant size, plus a result buffer that only takes what comes from lower
// labels) generalised to a fold over the dimensions of any topocoll::layout. It
// is also all_reduce's algorithm::recursive_doubling, which needs only `msg`
// ((t_s + t_w m) log p on a hypercube).
//
// After dimension j, msg holds the fold over the group of ranks that share v's
// coordinates above j, and excl the fold over those of them below v. Per
// dimension, chosen at compile time from Topo::kind:
//   binary   exchange msg with v XOR 2^j: the textbook loop;
//   linear   Algorithm 4.4 moving the msgs around the ring of the dimension;
//            they arrive in descending (cyclic) coordinate order, so each is
//            put on the LEFT of the part below or above v it belongs to; on the
//            last dimension of a scan the total is not needed and the
//            dimension is a linear pipeline instead (each rank sends once);
//   knomial  direct exchange with each of the radix - 1 other coordinates,
//            same arrival order.
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
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"
#include "../topology/topology.hpp"
#include "all_to_all_broadcast.hpp"
#include "one_to_all_ring.hpp"

namespace topocoll::detail::prefix {

using all_to_all_broadcast::fold_map;

// The work space prefix_fold takes: two receive buffers and the partials from
// below and above, m elements each.
inline std::size_t work_size(std::size_t m) {
  return 4 * m;
}

// acc = x op acc, or acc = x when acc is still empty
template <class T, class Op>
void put_left(std::span<T> acc, bool& set, std::span<const T> x, const Op& op) {
  if (set) {
    combine_left(acc, x, op);
  } else {
    std::copy(x.begin(), x.end(), acc.begin());
    set = true;
  }
}

// msg: this rank's contribution on entry (m elements). excl: where the
// exclusive prefix goes when want_excl (untouched where there is none, i.e. on
// rank 0). total: whether msg must hold the fold over all ranks on exit
// (all_reduce); otherwise its last value is unspecified. work: 4m elements.
// Returns whether excl was written.
template <Topology Topo, class C, class T, class Op>
bool prefix_fold(C& c, int tag, const layout& vl, int w, const fold_map& fm, std::span<T> msg,
                 std::span<T> excl, bool want_excl, bool total, std::span<T> work, const Op& op) {
  const std::size_t m = msg.size();
  bool have_excl = false;
  std::span<T> b0 = work.subspan(0, m), b1 = work.subspan(m, m), low = work.subspan(2 * m, m),
               high = work.subspan(3 * m, m);
  for (int j = 0; j < vl.ndims; ++j) {
    const bool need_total = total || j < vl.ndims - 1;
    const int r = vl.dims[j].radix;
    const int k = vl.coord(w, j);
    auto peer = [&](int q) { return fm.to_real(vl.with_coord(w, j, q)); };
    auto exists = [&](int q) { return vl.exists(vl.with_coord(w, j, q)); };
    bool low_set = false, high_set = false;
    if constexpr (Topo::kind == dim_kind::binary) {
      if (!exists(1 - k)) continue;
      const int partner = peer(1 - k);
      c.sendrecv(partner, cspan(msg), partner, b0, tag);
      if (k == 1) {  // the partner's group is the lower one
        if (want_excl) put_left(excl, have_excl, cspan(b0), op);
        if (need_total) combine_left(msg, cspan(b0), op);
      } else if (need_total) {
        combine_right(msg, cspan(b0), op);
      }
      continue;
    } else if constexpr (Topo::kind == dim_kind::linear) {
      if (!need_total) {
        // Last dimension of a scan: the prefix of the lower coordinates flows
        // right, one message per rank.
        if (k > 0) {
          c.recv(peer(k - 1), tag, low);
          low_set = true;
          if (k < r - 1) combine_left(msg, cspan(low), op);
        }
        if (k < r - 1) c.send(peer(k + 1), tag, cspan(msg));
      } else {
        const int right = peer((k + 1) % r), left = peer((k + r - 1) % r);
        std::span<T> fwd = msg, in = b0, spare = b1;
        for (int i = 1; i < r; ++i) {
          c.sendrecv(right, cspan(fwd), left, in, tag);
          if (k - i >= 0)
            put_left(low, low_set, cspan(in), op);  // from coordinate k - i
          else
            put_left(high, high_set, cspan(in), op);
          fwd = in;
          std::swap(in, spare);
        }
      }
    } else {
      static_assert(Topo::kind == dim_kind::knomial, "unknown dim_kind");
      for (int t = 1; t < r; ++t) {
        const int to = (k + t) % r, from = (k + r - t) % r;
        const bool snd = exists(to) && (need_total || k + t < r);
        const bool rcv = exists(from) && (need_total || k - t >= 0);
        if (snd && rcv)
          c.sendrecv(peer(to), cspan(msg), peer(from), b0, tag);
        else if (snd)
          c.send(peer(to), tag, cspan(msg));
        else if (rcv)
          c.recv(peer(from), tag, b0);
        if (!rcv) continue;
        if (from < k)
          put_left(low, low_set, cspan(b0), op);
        else
          put_left(high, high_set, cspan(b0), op);
      }
    }
    if (low_set) {
      if (want_excl) put_left(excl, have_excl, cspan(low), op);
      if (need_total) combine_left(msg, cspan(low), op);
    }
    if (high_set && need_total) combine_right(msg, cspan(high), op);
  }
  return have_excl;
}

enum class scan_kind { inclusive, exclusive };

// A chain along one linear dimension (Ring; a Mesh of prime p): the prefix of
// the lower ranks flows right, written straight into out. Where the transport
// has non-blocking sends the chain is a pipeline of r segments, (p - 2 + r)
// (t_s + t_w m / r) instead of (p - 1)(t_s + t_w m): each rank forwards
// segment i while segment i + 1 arrives.
template <Transport C, class T, class Op>
void scan_chain(C& c, std::span<const T> in, std::span<T> out, const Op& op, scan_kind kind,
                const cost_model& cost) {
  const int rank = c.rank(), p = c.size();
  const int tg = kind == scan_kind::inclusive ? tag::scan : tag::exclusive_scan;
  const bool inclusive = kind == scan_kind::inclusive;
  const std::size_t m = in.size();
  scratch<T> tmp_store(rank > 0 && (inclusive || rank < p - 1) ? m : 0);
  const std::span<T> tmp = tmp_store.span();
  std::size_t r = 1;
  if constexpr (send_batch<C, T>::nonblocking && std::is_trivially_copyable_v<T>)
    r = one_to_all::ring_segments<T>(m, p, cost);  // segments >= 50 t_s / t_w bytes
  send_batch<C, T> sends(c, r);
  for (std::size_t i = 0; i < r; ++i) {
    const auto [lo, n] = one_to_all::segment(m, r, i);
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
void scan(C& c, const layout& l, std::span<const T> in, std::span<T> out, const Op& op,
          scan_kind kind, const cost_model& cost) {
  const bool inclusive = kind == scan_kind::inclusive;
  scratch<T> own(in.data() == out.data() ? in.size() : 0);
  if (!own.span().empty()) {
    copy_to(in, own.span());
    in = own.span();
  }
  if (Topo::kind == dim_kind::linear && l.ndims == 1) return scan_chain(c, in, out, op, kind, cost);
  const std::size_t m = in.size();
  if (l.p > 1) {
    scratch<T> work_store(m + work_size(m));
    const std::span<T> msg = work_store.span().first(m);
    copy_to(in, msg);
    const bool have = prefix_fold<Topo>(c, inclusive ? tag::scan : tag::exclusive_scan, l, c.rank(),
                                        fold_map{l.p, 0}, msg, out, true, false,
                                        work_store.span().subspan(m), op);
    if (inclusive && have) return combine_right(out, in, op);
  }
  if (inclusive) copy_to(in, out);
}

}  // namespace topocoll::detail::prefix
