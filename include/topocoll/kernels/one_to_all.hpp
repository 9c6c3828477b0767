#pragma once
// The tree sweep: Algorithm 4.2 of Grama et al. ch. 4.1 ("one-to-all broadcast
// of a message X initiated by source on a d-dimensional hypothetical
// hypercube"), read as a fold of dimension steps (topology/step.hpp) over the
// dimensions of a topocoll::layout, and its dual, Algorithm 4.3 (all-to-one
// reduction), which walks the same edges in the reverse order and direction.
// broadcast, reduce, scatter and gather are this sweep with different payloads;
// all_gather, all_reduce and reduce_scatter use it for algorithm::tree.
//
// The fold yields a spanning tree of the virtual ranks rooted at 0. Every edge
// splits the range of virtual ranks the sender is responsible for: the child w
// gets [w, hi) and the sender keeps the part below w. Since dims[0] has stride 1
// and a rank only takes part in dimension j when its coordinates below j are 0
// (the mask test of line 7), every such range is CONTIGUOUS in virtual ranks.
// That is what makes scatter and gather move one block per message and what
// tells reduce which partial is the lower one. Virtual ranks >= p (Hypercube<>
// and Tree<K> on a p that fills no whole hypercube/tree) do not exist: edges to
// them are skipped and ranges clipped.

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <type_traits>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/nonblocking.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"
#include "../topology/step.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "pipeline.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::one_to_all {

// Calls f(link) for every edge virtual rank v takes part in, in the order v
// must communicate: dimensions high to low for sweep::down (at most one edge to
// the parent, first, then the children), low to high and reversed for sweep::up
// (the children, then the parent).
template <Topology Topo, sweep S, class F>
constexpr void for_each_link(const layout& l, int v, F&& f) {
  constexpr dim_order order = S == sweep::down ? dim_order::descending : dim_order::ascending;
  for_each_dim<Topo, order>(l,
                            [&](auto j) { dim_step<Topo::kind>::template edges<S>(l, v, j, f); });
}

// End of the range [v, hi) of virtual ranks v is responsible for.
template <Topology Topo>
constexpr int subtree_end(const layout& l, int v) {
  int hi = l.p;  // the root's
  for_each_link<Topo, sweep::down>(l, v, [&](const link& e) {
    if (!e.to_child) hi = e.hi;
  });
  return hi;
}

// The tree of a topology over p ranks with `root` as virtual rank 0. It
// refers to the caller's layout, which outlives it, instead of copying the
// layout's 268 bytes on every call.
template <Topology Topo>
struct rooted_tree {
  const layout& l;
  int root;
  int to_virtual(int rank) const { return Topo::to_virtual(l, rank, root); }
  int to_real(int v) const { return Topo::to_real(l, v, root); }
};

template <Topology Topo>
using tree_topology = typename tree_of<Topo>::type;

// The layout of Topo's tree (tree_topology) over the ranks of l, for a
// rooted_tree: l itself where the topology is its own tree (Tree<K>).
template <Topology Topo>
layout tree_layout(const layout& l) {
  if constexpr (std::is_same_v<tree_topology<Topo>, Topo>)
    return l;
  else
    return tree_topology<Topo>::shape(l.p);
}

// The root's children: the partials the root combines in a tree reduction.
template <Topology Topo>
int root_children(const layout& l) {
  int n = 0;
  for_each_link<Topo, sweep::down>(l, 0, [&](const link& e) { n += e.to_child ? 1 : 0; });
  return n;
}

// Root to leaves: the parent's buffer arrives in buf, then goes to every child
// (concurrently where the transport allows it).
template <Topology Topo, Transport C, class T>
void broadcast_sweep(C& c, const rooted_tree<Topo>& t, std::span<T> buf, int tag) {
  send_batch<C, T> sends(c, sends_follow::back_to_back);
  // Inlined into every dimension's step: GCC's -O2 otherwise leaves it out of
  // line for some dimensions of Hypercube<D>, which then pay a call each.
  auto visit = [&](const link& e) __attribute__((always_inline)) {
    const int peer = t.to_real(e.peer);
    if (e.to_child)
      sends.send(peer, tag, std::span<const T>(buf));
    else
      c.recv(peer, tag, buf);
  };
  for_each_link<Topo, sweep::down>(t.l, t.to_virtual(c.rank()), visit);
  sends.wait();
}

// Scatter's sweep: the rank's subtree [v, end) arrives from its parent in
// `sub`; each child gets its subtree [lo, hi) from blocks(lo, hi), as one
// contiguous message.
template <Topology Topo, Transport C, class T, class Blocks>
void scatter_sweep(C& c, const rooted_tree<Topo>& t, std::span<T> sub, Blocks&& blocks, int tag) {
  send_batch<C, T> sends(c, sends_follow::back_to_back);
  for_each_link<Topo, sweep::down>(t.l, t.to_virtual(c.rank()), [&](const link& e) {
    if (e.to_child)
      sends.send(t.to_real(e.peer), tag, std::span<const T>(blocks(e.lo, e.hi)));
    else
      c.recv(t.to_real(e.peer), tag, sub);
  });
  sends.wait();
}

// Gather's sweep, the reverse: each child's subtree [lo, hi) arrives in
// blocks(lo, hi), then up(end, parent) (the rank's own [v, end)) goes to its
// parent.
template <Topology Topo, Transport C, class Blocks, class Up>
void gather_sweep(C& c, const rooted_tree<Topo>& t, Blocks&& blocks, Up&& up, int tag) {
  const int v = t.to_virtual(c.rank());
  int end = v + 1;
  for_each_link<Topo, sweep::up>(t.l, v, [&](const link& e) {
    if (e.to_child) {
      c.recv(t.to_real(e.peer), tag, blocks(e.lo, e.hi));
      end = e.hi;
    } else {
      const int parent = t.to_real(e.peer);
      c.send(parent, tag, up(end, parent));
    }
  });
}

// A result computed at rank `from` goes to rank `to` (tag::forward).
template <Transport C, class T>
void forward(C& c, int from, int to, std::span<const T> result, std::span<T> out, int tag) {
  if (from == to) return;
  if (c.rank() == from)
    c.send(to, tag, result);
  else if (c.rank() == to)
    c.recv(from, tag, out);
}

// A rank's place in a rooted tree with blocks of m elements: its virtual rank
// v, the end of its subtree [v, end), and where block u starts.
template <Topology Topo>
struct subtree {
  rooted_tree<Topo> t;
  std::size_t m;
  int v, end;
  subtree(const layout& l, int root, int rank, std::size_t block)
      : t{l, root}, m(block), v(t.to_virtual(rank)), end(subtree_end<Topo>(l, v)) {}
  std::size_t at(int u) const { return static_cast<std::size_t>(u) * m; }
  bool inner() const { return end - v > 1; }
};

// Where a tree reduction goes, and the segments its partials travel in.
struct reduce_to {
  int root;
  int tag;
  std::size_t segment_bytes;  // cost_model::segment_bytes
};

// A partial of m elements travels whole below two segments of segment_bytes
// (and for a T without a byte size), else in segments of about that size, so
// that the receiver combines each while it is still in cache.
template <class T>
std::size_t partial_segments(std::size_t m, std::size_t segment_bytes) {
  if (!std::is_trivially_copyable_v<T> || segment_bytes == 0) return 1;
  const std::size_t per = std::max<std::size_t>(1, segment_bytes / sizeof(T));
  return m >= 2 * per ? (m + per - 1) / per : 1;
}

// A partial sent in r segments, every send posted before the first completes.
template <Transport C, class T>
void send_partial(C& c, int peer, int tag, std::span<const T> data, std::size_t r) {
  if (r == 1) return c.send(peer, tag, data);
  send_batch<C, T> sends(c, r);
  for (std::size_t i = 0; i < r; ++i) {
    const auto [lo, n] = pipeline::segment(data.size(), r, i);
    sends.send(peer, tag, data.subspan(lo, n));
  }
  sends.wait();
}

// What a rank combines a child's partial with: src op partial into dst, src
// being the rank's input for its first child (so the input is not copied
// first) and dst itself afterwards; seg receives one segment.
template <class T>
struct combining {
  std::span<const T> src;
  std::span<T> dst;
  std::span<T> seg;
  std::size_t segments;
};
enum class child_side { higher, lower };  // the ranks the child's partial covers

// A child's partial, received segment by segment, each combined as it arrives.
// While src is apart from dst (the first child's partial, src being the input)
// a segment arrives in dst itself and is combined there with src: no work
// buffer, and one buffer fewer for the combine to stream through. Once src is
// dst, a segment arrives in seg.
template <Transport C, class T, class Op>
void recv_combine(C& c, int peer, int tag, const combining<T>& b, child_side side, const Op& op) {
  const bool apart = b.src.data() != b.dst.data();
  for (std::size_t i = 0; i < b.segments; ++i) {
    const auto [lo, n] = pipeline::segment(b.dst.size(), b.segments, i);
    const std::span<T> d = b.dst.subspan(lo, n);
    if (apart) {  // d = src op partial, or partial op src
      c.recv(peer, tag, d);
      combine(d, b.src.subspan(lo, n), side == child_side::higher, op);
    } else {
      const std::span<T> x = b.seg.first(n);
      c.recv(peer, tag, x);
      combine(d, cspan(x), side == child_side::lower, op);
    }
  }
}

// Algorithm 4.3: in reduced to out at the root. The tree is built over virtual
// ranks and every partial covers a contiguous range of them, so rank order is
// kept when the root is 0, when the relabelling is the XOR of the seeds on
// binary dimensions (the partner's block is then the lower one iff the root's
// bit of that dimension is set), or when the operator commutes. Otherwise the
// reduction runs towards rank 0 and rank 0 forwards the result to the root:
// one extra message, as MPICH does for non-commutative operators.
template <Topology Topo, Transport C, class T, class Op>
void tree_reduce(C& c, const layout& l, in_out<T> io, const Op& op, reduce_to to) {
  const std::span<const T> in = io.in;
  const std::span<T> out = io.out;
  const bool xor_binary = xor_on_binary_dims<Topo>(l);
  const int root = to.root;
  const rooted_tree<Topo> t{l, (is_commutative_v<Op, T> || root == 0 || xor_binary) ? root : 0};
  const int rank = c.rank();
  const std::size_t r = partial_segments<T>(in.size(), to.segment_bytes);
  std::optional<scratch<T>> acc_store, seg;
  std::span<T> acc;              // this rank's partial, once a child has sent one
  std::span<const T> mine = in;  // what goes to the parent: a leaf sends its input as it is
  for_each_link<Topo, sweep::up>(l, t.to_virtual(rank), [&](const link& e) {
    const int peer = t.to_real(e.peer);
    if (!e.to_child) return send_partial(c, peer, to.tag, mine, r);
    if (acc.empty())  // the first child; the root accumulates in place
      acc = rank == root && t.root == root ? out : acc_store.emplace(in.size()).span();
    if (mine.data() == acc.data() && !seg)  // a segment can no longer arrive in acc
      seg.emplace(pipeline::segment(in.size(), r, 0).second);
    const bool lower = xor_binary && t.root != 0 && (t.root & l.dims[e.dim].stride) != 0;
    recv_combine(c, peer, to.tag, combining<T>{mine, acc, seg ? seg->span() : std::span<T>{}, r},
                 lower ? child_side::lower : child_side::higher, op);
    mine = acc;
  });
  forward(c, t.root, root, mine, out, detail::tag::forward);
}

// Scatter along the tree: in holds p blocks of out.size() at the root. A root
// other than 0 first lays its blocks out in virtual order, once; an inner node
// receives its subtree into a work buffer, a leaf straight into out.
template <Topology Topo, Transport C, class T>
void tree_scatter(C& c, const layout& l, in_out<T> io, int root, int tag) {
  const std::span<const T> in = io.in;
  const std::span<T> out = io.out;
  const int rank = c.rank();
  const subtree<Topo> s(l, root, rank, out.size());
  const bool rearrange = rank == root && root != 0, inner = rank != root && s.inner();
  scratch<T> store(rearrange ? s.at(l.p) : inner ? s.at(s.end - s.v) : 0);
  std::span<const T> src = in;  // the blocks of virtual ranks [v, end), in virtual order
  const std::span<T> sub = inner ? store.span() : out;
  if (rank == root) {
    copy_to(in.subspan(s.at(root), s.m), out);
    for (int u = 1; rearrange && u < l.p; ++u)
      copy_to(in.subspan(s.at(s.t.to_real(u)), s.m), store.span().subspan(s.at(u), s.m));
    if (rearrange) src = store.span();
  } else {
    src = sub;
  }
  scatter_sweep(
      c, s.t, sub, [&](int lo, int hi) { return src.subspan(s.at(lo - s.v), s.at(hi - lo)); }, tag);
  if (inner) copy_to(std::span<const T>(store.span().first(s.m)), out);
}

// Gather along the tree, the dual: every rank forwards its subtree's blocks as
// one message, so sizes double towards the root; root 0 collects straight
// into out, another root reorders its blocks from virtual order once.
template <Topology Topo, Transport C, class T>
void tree_gather(C& c, const layout& l, in_out<T> io, int root, int tag) {
  const std::span<const T> in = io.in;
  const std::span<T> out = io.out;
  const int rank = c.rank();
  const subtree<Topo> s(l, root, rank, in.size());
  const bool direct = rank == root && root == 0;
  scratch<T> store(!direct && s.inner() ? s.at(s.end - s.v) : 0);
  const std::span<T> sub = direct ? out : store.span();  // blocks [v, end), virtual order
  if (s.inner()) copy_to(in, sub.first(s.m));
  gather_sweep(
      c, s.t, [&](int lo, int hi) { return sub.subspan(s.at(lo - s.v), s.at(hi - lo)); },
      [&](int, int) { return s.inner() ? std::span<const T>(sub) : in; }, tag);
  if (rank != root || root == 0) return;
  for (int u = 0; u < l.p; ++u)  // virtual order -> rank order, once
    move_to(store.span().subspan(s.at(u), s.m), out.subspan(s.at(s.t.to_real(u)), s.m));
}

// ---- the naive baselines (algorithm::naive) ------------------------------------
// Grama et al. 4.1, the naive one-to-all broadcast: "the source ... sends p - 1
// messages to the other p - 1 processes", one after another, a bottleneck at
// the source; the naive all-to-one reduction is its mirror. Both are the tree
// sweeps above over detail::Flat, one k-nomial dimension of radix p, whose
// root has every other rank for a child: (p - 1)(t_s + t_w m) on one port.
template <Transport C, class T>
void naive_broadcast(C& c, std::span<T> buf, int root, int tag) {
  const layout l = Flat::shape(c.size());
  broadcast_sweep(c, rooted_tree<Flat>{l, root}, buf, tag);
}

// Every rank's input straight to the root, which combines them in rank order
// (a non-commutative operator with a root other than 0: at rank 0, which
// forwards the result, as tree_reduce does on every topology).
template <Transport C, class T, class Op>
void naive_reduce(C& c, in_out<T> io, const Op& op, int root, int tag) {
  const layout l = Flat::shape(c.size());
  tree_reduce<Flat>(c, l, io, op, {root, tag, 0});
}

// a: tree, pipelined (chain_dims only) or naive.
template <Topology Topo, Transport C, class T>
void broadcast(C& c, const layout& l, std::span<T> buf, int root, algorithm a,
               const cost_model& cost) {
  if (a == algorithm::naive) return naive_broadcast(c, buf, root, detail::tag::broadcast);
  if constexpr (chain_dims<Topo>)
    if (a == algorithm::pipelined)
      return pipeline::pipelined_broadcast(c, pipeline::chains<Topo>{l, root, cost}, buf,
                                           detail::tag::broadcast);
  broadcast_sweep(c, rooted_tree<Topo>{l, root}, buf, detail::tag::broadcast);
}

// The pipeline's partials are in rank order only when every chain ends at
// real coordinate 0, so a non-commutative reduction to a root other than 0
// runs towards rank 0, which forwards the result. a: as for broadcast.
template <Topology Topo, Transport C, class T, class Op>
void reduce(C& c, const layout& l, in_out<T> io, const Op& op, int root, algorithm a,
            const cost_model& cost) {
  if (a == algorithm::naive) return naive_reduce(c, io, op, root, detail::tag::reduce);
  const std::span<const T> in = io.in;
  const std::span<T> out = io.out;
  const std::size_t m = in.size();
  if constexpr (chain_dims<Topo>) {
    if (a == algorithm::pipelined) {
      const int chain_root = (is_commutative_v<Op, T> || root == 0) ? root : 0;
      std::optional<scratch<T>> result;
      std::span<T> dst = out;
      if (c.rank() == chain_root && chain_root != root) dst = result.emplace(m).span();
      pipeline::pipelined_reduce(c, pipeline::chains<Topo>{l, chain_root, cost}, in_out<T>{in, dst},
                                 op, detail::tag::reduce);
      return forward(c, chain_root, root, std::span<const T>(dst), out, detail::tag::forward);
    }
  }
  tree_reduce<Topo>(c, l, io, op, {root, detail::tag::reduce, cost.segment_bytes});
}

// a: tree, or pipelined (chain_dims only).
template <Topology Topo, Transport C, class T>
void scatter(C& c, const layout& l, std::span<const T> in, std::span<T> out, int root, algorithm a,
             const cost_model& cost) {
  if constexpr (chain_dims<Topo>)
    if (a == algorithm::pipelined)
      return pipeline::pipelined_scatter(c, pipeline::chains<Topo>{l, root, cost}, in, out,
                                         detail::tag::scatter);
  tree_scatter<Topo>(c, l, in_out<T>{in, out}, root, detail::tag::scatter);
}

template <Topology Topo, Transport C, class T>
void gather(C& c, const layout& l, std::span<const T> in, std::span<T> out, int root, algorithm a,
            const cost_model& cost) {
  if constexpr (chain_dims<Topo>)
    if (a == algorithm::pipelined)
      return pipeline::pipelined_gather(c, pipeline::chains<Topo>{l, root, cost}, in, out,
                                        detail::tag::gather);
  tree_gather<Topo>(c, l, in_out<T>{in, out}, root, detail::tag::gather);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::one_to_all
