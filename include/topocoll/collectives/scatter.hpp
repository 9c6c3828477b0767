#pragma once
// topocoll::scatter: one-to-all personalized communication.
//
//   topocoll::scatter<topocoll::Mesh<2>>(comm, std::span<const T>(in), std::span<T>(out), root);
//
// in: p*m elements at the root, block r for rank r (may be empty, and is
// untouched, elsewhere); out: m elements on every rank (at the root it may be
// in's block `root` itself, MPI_IN_PLACE).
//   algorithm::tree (default): the broadcast tree of Algorithm 4.2, but every
//     rank passes each child only the blocks of the child's subtree, as ONE
//     contiguous message; sizes halve at each hypercube step:
//     t_s log p + t_w m (p - 1).
//   algorithm::pipelined (Ring, Mesh<K>): the ICS 632 ring scatter, farthest
//     destination first: (p - 1)(t_s + t_w m) on a ring; on a mesh down the
//     root's column, each message the blocks of a whole row, then along every
//     row: sum_j (s_j - 1)(t_s + t_w m stride_j).

#include <span>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/options.hpp"
#include "../kernels/one_to_all.hpp"
#include "../topology/topology.hpp"
#include "arguments.hpp"

namespace topocoll {

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>>
void scatter(C& c, In&& input, Out&& output, int root, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  const auto [in, out] = detail::in_out_of(input, output);
  const auto call = detail::open_call<Topo>("scatter", c);
  call.root(root);
  const std::size_t m = out.size();
  call.root_buffer(root, "in", "p * out.size()", in.size(), static_cast<std::size_t>(call.p()) * m);
  detail::check_one_to_all_algorithm<Topo>(call, opt.algo);
  call.in_place(in, detail::cspan(out), static_cast<std::size_t>(root) * m);
  if (m == 0) return;
  if (call.p() == 1) return detail::copy_to(in, out);
  detail::one_to_all::scatter<Topo>(c, Topo::shape(call.p()), in, out, root, opt);
}

}  // namespace topocoll
