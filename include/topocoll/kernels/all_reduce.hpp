#pragma once
// all_reduce's algorithms, composed of the patterns: recursive doubling is
// the prefix fold with a message of constant size (kernels/prefix.hpp);
// reduce-scatter + all-gather the all-to-all broadcast fold and its reverse
// (kernels/all_to_all_broadcast.hpp, "Improving the speed of some
// communication operations"); reduce + broadcast the tree sweep
// (kernels/one_to_all.hpp). Every one keeps rank order.

#include <algorithm>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "all_to_all_broadcast.hpp"
#include "one_to_all.hpp"
#include "prefix.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::all_reduce {

// The all-to-all broadcast fold's parts that the compositions below use.
using all_to_all_broadcast::all_gather_reversed;
using all_to_all_broadcast::even_pieces;
using all_to_all_broadcast::hand_over;
using all_to_all_broadcast::make_fold;
using all_to_all_broadcast::place;
using all_to_all_broadcast::reduce_scatter_fold;
using all_to_all_broadcast::rs_fold_buffers;
using all_to_all_broadcast::rs_order;
using all_to_all_broadcast::rs_work_size;
using all_to_all_broadcast::with_fold;

// The all-to-all reduction of src (m elements) in pieces at offsets off, in
// out, over the digit-reversed positions: on exit out holds the piece at
// position rd.position(vl, w) reduced over every rank in rank order (the rest
// of out is work space). src: out, or in where the first step can read the
// caller's input (a binary step, or a commutative operator).
template <Topology Topo, Transport C, class T, class Op>
void reduce_scatter_pieces(C& c, const place<fold_map>& at, std::span<const T> src,
                           std::span<T> out, const std::size_t* off, const Op& op) {
  scratch<T> work(rs_work_size<rs_order::reversed>(at.vl, off));
  const bool direct = !dim_step<Topo::kind>::fold_reorders || is_commutative_v<Op, T>;
  if (!direct) copy_to(src, out);
  reduce_scatter_fold<Topo, rs_order::reversed>(
      c, at, rs_fold_buffers<T>{direct ? src : cspan(out), out, off, {}, work.span()}, op);
}

// The bandwidth-optimal fold, in place in out: the all-to-all reduction of m
// in p nearly equal pieces, then the all-to-all broadcast of the pieces, both
// over the digit-reversed positions.
template <Topology Topo, Transport C, class T, class Op>
void reduce_scatter_all_gather(C& c, const place<fold_map>& at, std::span<const T> src,
                               std::span<T> out, const Op& op) {
  const std::vector<std::size_t> off = even_pieces(out.size(), at.vl.p);
  reduce_scatter_pieces<Topo>(c, at, src, out, off.data(), op);
  all_gather_reversed<Topo>(c, at, out, off.data());
}

// out = in_0 op ... op in_{p-1} on every rank, by algorithm a
// (plan::all_reduce::choose; tree is reduce_broadcast's trees).
template <Topology Topo, Transport C, class T, class Op>
void all_reduce(C& c, const layout& l, std::span<const T> in, std::span<T> out, const Op& op,
                algorithm a, const cost_model& cost) {
  constexpr int tg = detail::tag::all_reduce;
  if (a == algorithm::tree || a == algorithm::reduce_broadcast) {
    using tree_topo = one_to_all::tree_topology<Topo>;
    const layout tl = one_to_all::tree_layout<Topo>(l);
    one_to_all::tree_reduce<tree_topo>(c, tl, in_out<T>{in, out}, op, {0, tg, cost.segment_bytes});
    return one_to_all::broadcast_sweep(c, one_to_all::rooted_tree<tree_topo>{tl, 0}, out, tg);
  }
  std::span<const T> src = in;  // this rank's (or its pair's) contribution
  scratch<T> held(make_fold<Topo>(l).e ? in.size() : 0);
  with_fold<Topo>(
      c, l, [&](int to) { hand_over(c, to, in, out); },
      [&](int from) {  // the lower rank's contribution goes on the left
        c.recv(from, detail::tag::fold, held.span());
        combine_into(out, cspan(held.span()), in, op);
        src = out;
      },
      [&](const layout& vl, int w, const auto& fm) {
        if (a == algorithm::recursive_doubling) {
          scratch<T> work(prefix::work_size(out.size()));
          prefix::prefix_fold<Topo, prefix::goal::total>(
              c, place<std::remove_cvref_t<decltype(fm)>>{tg, vl, w, fm},
              prefix::buffers<T>{src, out, {}, work.span()}, op);
          return;
        }
        reduce_scatter_all_gather<Topo>(c, place<fold_map>{tg, vl, w, fm}, src, out, op);
      },
      [&](int to) { c.send(to, detail::tag::fold, cspan(out)); });
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::all_reduce
