#pragma once
// topocoll::scatter: one-to-all personalized communication.
//
//   topocoll::scatter<topocoll::Mesh<2>>(comm, std::span<const T>(in), std::span<T>(out), root);
//
// in: p*m elements at the root, block r for rank r (may be empty, and is
// untouched, elsewhere); out: m elements on every rank.
//   algorithm::tree (default): the broadcast tree of Algorithm 4.2, but every
//     rank passes each child only the blocks of the child's subtree, as ONE
//     contiguous message; sizes halve at each hypercube step:
//     t_s log p + t_w m (p - 1). A root other than 0 first lays its blocks out
//     in relabelled order, once.
//   algorithm::pipelined (Ring only): the ICS 632 ring scatter, farthest
//     destination first: (p - 1)(t_s + t_w m).

#include <algorithm>
#include <span>

#include "../core/concepts.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/one_to_all.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>>
void scatter(C& c, In&& input, Out&& output, int root, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  namespace ota = detail::one_to_all;
  constexpr std::string_view op = "scatter";
  const std::span<const T> in = detail::in_span(input);
  const std::span<T> out = detail::out_span(output);
  const int rank = c.rank();
  const int p = c.size();
  const layout l = detail::shape_or_throw<Topo>(op, rank, p);
  detail::check_root(op, rank, p, root);
  const std::size_t m = out.size();
  const std::size_t pm = static_cast<std::size_t>(p) * m;
  detail::check_root_buffer(op, rank, p, root, "in", "p * out.size()", in.size(), pm);
  ota::check_algorithm<Topo>(op, rank, p, opt.algo);
  if (m == 0) return;
  if (p == 1) {
    std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  if (opt.algo == algorithm::pipelined)
    return ota::ring_scatter(c, in, out, root, detail::tag::scatter);

  auto block = [m](int u) { return static_cast<std::ptrdiff_t>(static_cast<std::size_t>(u) * m); };
  const int v = Topo::to_virtual(l, rank, root);
  const int end = ota::subtree_end<Topo>(l, v);
  // Work space: the root's blocks in virtual order (root != 0), or the blocks
  // of an inner node's subtree [v, end).
  const bool rearrange = rank == root && root != 0;
  const bool inner = rank != root && end - v > 1;
  detail::scratch<T> store(rearrange ? pm : inner ? static_cast<std::size_t>(end - v) * m : 0);
  std::span<const T> src;  // the blocks of virtual ranks [v, end), in virtual order
  std::span<T> sub = out;  // a leaf receives its own block straight into out
  if (rank == root) {
    std::copy_n(in.begin() + block(root), m, out.begin());
    src = in;  // relabelling by 0 is the identity: in is already in virtual order
    if (rearrange) {
      for (int u = 1; u < p; ++u)
        std::copy_n(in.begin() + block(Topo::to_real(l, u, root)), m, store.data() + block(u));
      src = store.span();
    }
  } else {
    if (inner) sub = store.span();
    src = sub;
  }
  // The sends to the children run concurrently where the transport allows it.
  detail::send_batch<C, T> sends(c);
  ota::for_each_link<Topo, ota::sweep::down>(l, v, [&](const ota::link& e) {
    const int peer = Topo::to_real(l, e.peer, root);
    if (e.to_child) {
      sends.send(peer, detail::tag::scatter,
                 src.subspan(static_cast<std::size_t>(e.lo - v) * m,
                             static_cast<std::size_t>(e.hi - e.lo) * m));
    } else {
      c.recv(peer, detail::tag::scatter, sub);
    }
  });
  if (inner) std::move(store.data(), store.data() + m, out.begin());
  sends.wait();
}

}  // namespace topocoll
