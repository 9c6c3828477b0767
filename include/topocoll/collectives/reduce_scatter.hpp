#pragma once
// topocoll::reduce_scatter: all-to-all reduction (every rank the root of one
// all-to-one reduction), the dual of all_gather.
//
//   topocoll::reduce_scatter<topocoll::Ring>(comm, std::span<const T>(in), std::span<T>(out), op);
//
// in: p*m elements on every rank, block j destined for rank j; out: m elements,
// out[i] = in_0[r*m + i] op in_1[r*m + i] op ... op in_{p-1}[r*m + i], rank order.
//   Ring       Algorithm 4.5 (p - 1 steps of t_s + t_w m) for a commutative
//              operator; otherwise the order-keeping linear-array variant (the
//              partial for rank d built from both ends, same words, up to two
//              messages per step).
//   Mesh<K>    the reverse of the mesh all-gather (Problem 4.4): one such ring
//              reduction per dimension, with the consolidated message.
//   Hypercube  Algorithm 4.8: messages p m / 2, p m / 4, ..., m; a p that is no
//              power of two folds into 2^floor(log p) ranks first.
//   Tree<K>    p = K^d: the reverse of all_gather's recursive multiplying;
//              otherwise reduce to rank 0 along the k-nomial tree, scatter.
// Dimensions are walked low to high, so every partial covers a contiguous range
// of ranks and rank order holds for any associative operator; the blocks are
// laid out digit-reversed (bit-reversed on a hypercube) in the one p*m work
// buffer so that what a rank still reduces is always contiguous.
// options::algo: automatic, or algorithm::tree (the k-nomial tree on any
// topology).

#include <algorithm>
#include <span>
#include <string_view>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/all_to_all_bcast.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out, class Op>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    ReductionOp<Op, buffer_value_t<Out>>
void reduce_scatter(C& c, In&& input, Out&& output, Op op, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  namespace a2a = detail::a2a;
  constexpr std::string_view name = "reduce_scatter";
  constexpr int tag = detail::tag::reduce_scatter;
  const std::span<const T> in = detail::in_span(input);
  const std::span<T> out = detail::out_span(output);
  const int rank = c.rank();
  const int p = c.size();
  const layout l = detail::shape_or_throw<Topo>(name, rank, p);
  const std::size_t m = out.size();
  const std::size_t pm = static_cast<std::size_t>(p) * m;
  detail::check_size(name, rank, p, "in (p * out.size())", in.size(), pm);
  a2a::check_algorithm(name, rank, p, opt.algo, {algorithm::tree}, Topo::name());
  if (m == 0) return;
  auto block = [m](std::span<const T> s, int r) {
    return s.subspan(static_cast<std::size_t>(r) * m, m);
  };
  if (p == 1) return a2a::copy_to(in, out);

  auto tree = [&](const layout& tl) {
    detail::scratch<T> acc(pm), tmp(pm);
    std::copy(in.begin(), in.end(), acc.data());
    a2a::tree_reduce(c, tag, tl, acc.span(), tmp.span(), op);
    a2a::tree_scatter(c, tag, tl, acc.span(), m);
    a2a::copy_to(block(acc.span(), rank), out);
  };
  // Tree<K> with absent ranks (p not a power of K) reduces and scatters.
  if (opt.algo == algorithm::tree || l.extent != p && Topo::kind == dim_kind::knomial) {
    tree(a2a::tree_shape<Topo>(p));
  } else {
    const a2a::fold_map fm = a2a::make_fold<Topo>(l);
    if (fm.folded_away(rank)) {  // the partner reduces for both, and sends this block back
      c.send(rank + 1, detail::tag::fold, in);
      c.recv(rank + 1, detail::tag::fold, out);
      return;
    }
    const bool partner = rank < 2 * fm.e;  // reduces for rank - 1 too
    const int P = fm.active();
    const int w = fm.to_virtual(rank);
    const layout vl = fm.e ? Topo::shape(P) : l;
    detail::scratch<T> fold_in(partner ? pm : 0);
    if (partner) c.recv(rank - 1, detail::tag::fold, fold_in.span());
    detail::scratch<T> buf(pm);
    std::vector<std::size_t> off(static_cast<std::size_t>(P) + 1, 0);
    std::span<const T> src = in;  // this rank's contributions at the offsets of buf
    int mine;                     // the position that ends up holding this rank's blocks
    bool wrote;
    if constexpr (is_commutative_v<Op, T>) {
      // Algorithm 4.8 / 4.5 as printed, dimensions high to low, blocks in rank
      // order: the first step reads `in` and the last writes `out`, no copies.
      for (int u = 0; u <= P; ++u) off[u] = static_cast<std::size_t>(fm.lo(u)) * m;
      if (partner) {
        a2a::combine_into(buf.span(), a2a::cspan(fold_in.span()), in, op);
        src = buf.span();
      }
      detail::scratch<T> tmp(a2a::rs_work_size<Topo, false>(vl, off.data()));
      wrote = a2a::reduce_scatter_fold<Topo, false>(c, tag, vl, w, fm, src, buf.span(), off.data(),
                                                    partner ? nullptr : out.data(), tmp.span(), op,
                                                    true);
      mine = w;
    } else {
      // Dimensions low to high, so that every partial covers a contiguous range
      // of ranks; position q holds the blocks of the virtual rank whose digits
      // are q's reversed (owner[q]), filled by the one copy of `in`.
      const a2a::reversed_digits rd(vl);
      std::vector<int> owner(static_cast<std::size_t>(P));
      for (int u = 0; u < P; ++u) owner[rd.position(vl, u)] = u;
      for (int q = 0; q < P; ++q)
        off[q + 1] = off[q] + static_cast<std::size_t>(fm.lo(owner[q] + 1) - fm.lo(owner[q])) * m;
      for (int q = 0; q < P; ++q) {
        const std::size_t a = static_cast<std::size_t>(fm.lo(owner[q])) * m;
        const std::size_t n = off[q + 1] - off[q];
        const std::span<T> dst(buf.data() + off[q], n);
        if (partner)  // the lower rank's contribution goes on the left
          a2a::combine_into(dst, std::span<const T>(fold_in.data() + a, n), in.subspan(a, n), op);
        else
          std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(a), n, dst.begin());
      }
      detail::scratch<T> tmp(a2a::rs_work_size<Topo, true>(vl, off.data()));
      wrote = a2a::reduce_scatter_fold<Topo, true>(
          c, tag, vl, w, fm, a2a::cspan(buf.span()), buf.span(), off.data(),
          partner ? nullptr : out.data(), tmp.span(), op, false);
      mine = rd.position(vl, w);
    }
    if (wrote) return;
    const std::span<const T> blocks(buf.data() + off[mine], partner ? 2 * m : m);
    if (partner) c.send(rank - 1, detail::tag::fold, blocks.first(m));
    a2a::copy_to(blocks.last(m), out);
  }
}

}  // namespace topocoll
