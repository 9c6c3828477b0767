#pragma once
// topocoll::reduce: all-to-one reduction.
//
//   topocoll::reduce<topocoll::Tree<4>>(comm, std::span<const T>(in), std::span<T>(out), op, root);
//
// in: m elements on every rank; out: m elements at the root, where out[i] =
// in_0[i] op in_1[i] op ... op in_{p-1}[i] in rank order (out may be empty, and
// is untouched, elsewhere). Algorithm 4.3: the broadcast tree walked backwards,
// dimensions low to high, t_s + t_w m per step (log p steps on a hypercube).
//
// Operand order. The tree is built over relabelled (virtual) ranks, and every
// partial covers a contiguous range of them. Rank order is kept when
//  * the root is 0 (no relabelling), or
//  * the relabelling is the XOR of the seeds on binary dimensions: a partial
//    then covers an aligned block of real ranks, and the partner's block is the
//    lower one iff the root's bit of that dimension is set;
//  * the operator is commutative (is_commutative<Op, T>), when order is moot.
// Otherwise (a shifted relabelling, or a k-nomial digit) the reduction runs
// towards rank 0 without relabelling and rank 0 forwards the result to the
// root: one extra message, as MPICH does for non-commutative operators.
//
// On a Ring, algorithm::pipelined (chosen by automatic for large m) is the dual
// of the pipelined broadcast: r segments of partials stream towards the root,
// (p - 2 + r)(t_s + t_w m / r) plus the combining; the same rule of order
// applies (a chain towards rank 0 and a forward when it must).

#include <algorithm>
#include <optional>
#include <span>
#include <type_traits>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/one_to_all.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out, class Op>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    ReductionOp<Op, buffer_value_t<Out>>
void reduce(C& c, In&& input, Out&& output, Op op, int root, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  namespace ota = detail::one_to_all;
  constexpr std::string_view name = "reduce";
  const std::span<const T> in = detail::in_span(input);
  const std::span<T> out = detail::out_span(output);
  const int rank = c.rank();
  const int p = c.size();
  const layout l = detail::shape_or_throw<Topo>(name, rank, p);
  detail::check_root(name, rank, p, root);
  const std::size_t m = in.size();
  detail::check_root_buffer(name, rank, p, root, "out", "in.size()", out.size(), m);
  ota::check_algorithm<Topo>(name, rank, p, opt.algo);
  if (m == 0) return;
  auto copy_in_to_out = [&] {
    if (in.data() != out.data()) std::copy(in.begin(), in.end(), out.begin());
  };
  if (p == 1) return copy_in_to_out();

  if constexpr (std::is_same_v<Topo, Ring>) {
    if (opt.algo == algorithm::pipelined ||
        (opt.algo == algorithm::automatic && ota::ring_pipeline_wins<T>(m, p, opt.cost))) {
      // The chain's partials cover distances k..p-1 from its end: rank order
      // only when that end is rank 0.
      const int chain_root = (is_commutative_v<Op, T> || root == 0) ? root : 0;
      std::optional<detail::scratch<T>> result;
      std::span<T> dst = out;
      if (rank == chain_root && chain_root != root) dst = result.emplace(m).span();
      ota::ring_reduce(c, in, dst, op, chain_root, ota::ring_segments<T>(m, p, opt.cost),
                       detail::tag::reduce);
      if (chain_root != root) {
        if (rank == chain_root)
          c.send(root, detail::tag::forward, std::span<const T>(dst));
        else if (rank == root)
          c.recv(chain_root, detail::tag::forward, out);
      }
      return;
    }
  }

  const bool xor_binary = ota::xor_on_binary_dims<Topo>(l);
  const int tree_root = (is_commutative_v<Op, T> || root == 0 || xor_binary) ? root : 0;
  const int v = Topo::to_virtual(l, rank, tree_root);

  std::optional<detail::scratch<T>> acc_store, tmp;
  std::span<T> acc;              // this rank's partial, once a child has sent one
  std::span<const T> mine = in;  // what goes to the parent: a leaf sends its input as it is
  ota::for_each_link<Topo, ota::sweep::up>(l, v, [&](const ota::link& e) {
    const int peer = Topo::to_real(l, e.peer, tree_root);
    if (!e.to_child) return c.send(peer, detail::tag::reduce, mine);
    if (acc.empty()) {
      if (rank == root && tree_root == root) {  // accumulate in place at the root
        copy_in_to_out();
        acc = out;
      } else {
        acc = acc_store.emplace(m).span();
        std::copy(in.begin(), in.end(), acc.begin());
      }
      tmp.emplace(m);
      mine = acc;
    }
    c.recv(peer, detail::tag::reduce, tmp->span());
    // The child's range lies above this rank's in virtual order; in real order
    // too unless the XOR relabelling flipped this dimension's bit.
    const bool child_is_lower =
        xor_binary && tree_root != 0 && (tree_root & l.dims[e.dim].stride) != 0;
    detail::combine(acc, std::span<const T>(tmp->span()), child_is_lower, op);
  });
  if (tree_root != root) {
    if (rank == tree_root)
      c.send(root, detail::tag::forward, mine);
    else if (rank == root)
      c.recv(tree_root, detail::tag::forward, out);
  }
}

}  // namespace topocoll
