#pragma once
// broadcast and reduce in p pieces, from "Improving the Speed of Some
// Communication Operations" (Grama et al. ch. 4): a broadcast is a scatter of
// the message in p pieces followed by the all-to-all broadcast of the pieces
// (algorithm::scatter_all_gather), a reduce its dual, the all-to-all reduction
// of p pieces followed by a gather (algorithm::reduce_scatter_gather). On a
// hypercube 2 (t_s log p + t_w m (p - 1) / p) instead of (t_s + t_w m) log p.
//
// Both compose all_reduce's pieces (kernels/all_reduce.hpp): m cut in nearly
// equal pieces (even_pieces: any m, m < p too), the digit-reversed positions
// that keep rank order for every associative operator (reduce_scatter_pieces,
// all_gather_reversed) with their rooted halves (rooted_fold), and the fold of
// a p that fills no hypercube (with_fold). Which rank holds which piece does
// not matter, so nothing is rearranged: every message lands where it belongs.
// Tree<K> on a p that is no r K^j (r <= K) has incomplete digit groups; there the
// pieces travel over the binary digits of Hypercube<> (the binomial tree's).

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
#include "all_reduce.hpp"
#include "one_to_all.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::one_to_all_pieces {

// The parts of the all-to-all broadcast fold and of all_reduce's pieces that
// the splits below compose.
using all_reduce::reduce_scatter_pieces;
using all_to_all_broadcast::all_gather_reversed;
using all_to_all_broadcast::even_pieces;
using all_to_all_broadcast::place;
using all_to_all_broadcast::rooted;
using all_to_all_broadcast::rooted_fold;
using all_to_all_broadcast::with_fold;

// f(std::type_identity<S>{}, layout): the topology the pieces travel over.
template <Topology Topo, class F>
decltype(auto) on_piece_topology(const layout& l, F&& f) {
  if (tree_only<Topo>(l)) return f(std::type_identity<Hypercube<>>{}, Hypercube<>::shape(l.p));
  return f(std::type_identity<Topo>{}, l);
}

// ---- broadcast: scatter, then all-to-all broadcast ---------------------------------

// On a folded p the root, if it is folded away, hands its message to its
// partner, which scatters in its place; every even rank gets the result back.
template <Topology S, Transport C, class T>
void scatter_all_gather_on(C& c, const layout& l, std::span<T> buf, int root) {
  constexpr int tg = detail::tag::broadcast;
  const fold_map f = S::folding(l);
  const int lead = f.folded_away(root) ? root + 1 : root;
  const std::vector<std::size_t> off = even_pieces(buf.size(), f.active());
  with_fold<S>(
      c, l,
      [&](int to) {
        if (c.rank() == root) c.send(to, detail::tag::fold, cspan(buf));
        c.recv(to, detail::tag::fold, buf);
      },
      [&](int from) {
        if (from == root) c.recv(from, detail::tag::fold, buf);
      },
      [&](const layout& vl, int w, const auto& fm) {
        const place<fold_map> at{tg, vl, w, fm};
        rooted_fold<S, rooted::scatter>(c, at, buf, off.data(), f.to_virtual(lead));
        all_gather_reversed<S>(c, at, buf, off.data());
      },
      [&](int to) { c.send(to, detail::tag::fold, cspan(buf)); });
}

template <Topology Topo, Transport C, class T>
void scatter_all_gather(C& c, const layout& l, std::span<T> buf, int root) {
  on_piece_topology<Topo>(l, [&]<class S>(std::type_identity<S>, const layout& sl) {
    scatter_all_gather_on<S>(c, sl, buf, root);
  });
}

// ---- reduce: all-to-all reduction, then gather ---------------------------------

// The pieces are reduced in out at the root and in a work buffer elsewhere.
// On a folded p the even rank of a pair hands its input to the odd one, whose
// own goes on the right; a root folded away gets the result from its partner,
// which gathers in its place.
template <Topology S, Transport C, class T, class Op>
void reduce_scatter_gather_on(C& c, const layout& l, in_out<T> io, const Op& op, int root) {
  const std::span<const T> in = io.in;
  const std::span<T> out = io.out;
  const fold_map f = S::folding(l);
  const int rank = c.rank(), lead = f.folded_away(root) ? root + 1 : root;
  const bool odd_of_pair = rank < 2 * f.e && !f.folded_away(rank);
  const std::vector<std::size_t> off = even_pieces(in.size(), f.active());
  scratch<T> work(rank == root ? 0 : in.size()), held(odd_of_pair ? in.size() : 0);
  const std::span<T> acc = rank == root ? out : work.span();
  std::span<const T> src = in;
  with_fold<S>(
      c, l,
      [&](int to) {
        c.send(to, detail::tag::fold, in);
        if (rank == root) c.recv(to, detail::tag::fold, out);
      },
      [&](int from) {
        c.recv(from, detail::tag::fold, held.span());
        combine_into(acc, cspan(held.span()), in, op);
        src = acc;
      },
      [&](const layout& vl, int w, const auto& fm) {
        const place<fold_map> at{detail::tag::reduce, vl, w, fm};
        reduce_scatter_pieces<S>(c, at, src, acc, off.data(), op);
        rooted_fold<S, rooted::gather>(c, at, acc, off.data(), f.to_virtual(lead));
      },
      [&](int to) {
        if (to == root) c.send(to, detail::tag::fold, cspan(acc));
      });
}

template <Topology Topo, Transport C, class T, class Op>
void reduce_scatter_gather(C& c, const layout& l, in_out<T> io, const Op& op, int root) {
  on_piece_topology<Topo>(l, [&]<class S>(std::type_identity<S>, const layout& sl) {
    reduce_scatter_gather_on<S>(c, sl, io, op, root);
  });
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::one_to_all_pieces
