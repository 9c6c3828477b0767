#pragma once
// topocoll::gather: all-to-one gather (the dual of scatter).
//
//   topocoll::gather<topocoll::Ring>(comm, std::span<const T>(in), std::span<T>(out), root);
//
// in: m elements on every rank; out: p*m elements at the root, block r from
// rank r (out may be empty, and is untouched, elsewhere).
//   algorithm::tree (default): the reduction tree of Algorithm 4.3 walked with
//     blocks instead of partial sums; each rank forwards its whole subtree as
//     ONE contiguous message, so message sizes double towards the root:
//     t_s log p + t_w m (p - 1) on a hypercube. The root reorders its p blocks
//     once at the end when root != 0.
//   algorithm::pipelined (Ring only): every rank sends its block towards the
//     root, nearest first, relaying those beyond it: (p - 1)(t_s + t_w m).

#include <algorithm>
#include <span>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/one_to_all.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>>
void gather(C& c, In&& input, Out&& output, int root, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  namespace ota = detail::one_to_all;
  constexpr std::string_view op = "gather";
  const std::span<const T> in = detail::in_span(input);
  const std::span<T> out = detail::out_span(output);
  const int rank = c.rank();
  const int p = c.size();
  const layout l = detail::shape_or_throw<Topo>(op, rank, p);
  detail::check_root(op, rank, p, root);
  const std::size_t m = in.size();
  const std::size_t pm = static_cast<std::size_t>(p) * m;
  detail::check_root_buffer(op, rank, p, root, "out", "p * in.size()", out.size(), pm);
  ota::check_algorithm<Topo>(op, rank, p, opt.algo);
  if (m == 0) return;
  if (p == 1) {
    std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  if (opt.algo == algorithm::pipelined)
    return ota::ring_gather(c, in, out, root, detail::tag::gather);

  const int v = Topo::to_virtual(l, rank, root);
  // The blocks of the virtual ranks [v, end) this rank collects, in virtual
  // order. Root 0 relabels nothing, so its out is already that buffer.
  const int end = ota::subtree_end<Topo>(l, v);
  const std::size_t n = static_cast<std::size_t>(end - v) * m;
  const bool direct = rank == root && root == 0;
  detail::scratch<T> store(!direct && end - v > 1 ? n : 0);
  std::span<const T> mine = in;  // a leaf sends its input as it is
  std::span<T> sub;
  if (direct) {
    sub = out;
    std::copy(in.begin(), in.end(), sub.begin());
    mine = sub;
  } else if (end - v > 1) {
    sub = store.span();
    std::copy(in.begin(), in.end(), sub.begin());
    mine = sub;
  }
  ota::for_each_link<Topo, ota::sweep::up>(l, v, [&](const ota::link& e) {
    const int peer = Topo::to_real(l, e.peer, root);
    if (e.to_child) {
      c.recv(peer, detail::tag::gather,
             sub.subspan(static_cast<std::size_t>(e.lo - v) * m,
                         static_cast<std::size_t>(e.hi - e.lo) * m));
    } else {
      c.send(peer, detail::tag::gather, mine);
    }
  });
  if (rank == root && root != 0) {  // virtual order -> rank order, once
    for (int u = 0; u < p; ++u) {
      auto from = store.data() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(u) * m);
      auto to = static_cast<std::size_t>(Topo::to_real(l, u, root)) * m;
      std::move(from, from + static_cast<std::ptrdiff_t>(m),
                out.begin() + static_cast<std::ptrdiff_t>(to));
    }
  }
}

}  // namespace topocoll
