#pragma once
// topocoll::reduce: all-to-one reduction.
//
//   topocoll::reduce<topocoll::Tree<4>>(comm, std::span<const T>(in), std::span<T>(out), op, root);
//
// in: m elements on every rank; out: m elements at the root, where out[i] =
// in_0[i] op in_1[i] op ... op in_{p-1}[i] in rank order (out may be empty, and
// is untouched, elsewhere; at the root it may be in itself). Algorithm 4.3:
// the broadcast tree walked backwards, dimensions low to high, t_s + t_w m per
// step (log p steps on a hypercube); rank order as kernels/one_to_all.hpp's
// tree_reduce explains.
//
// On a Ring or a Mesh<K>, algorithm::pipelined (chosen by automatic for large
// m) is the dual of the pipelined broadcast: r segments of partials stream
// towards the root, (p - 2 + r)(t_s + t_w m / r) plus the combining on a ring;
// on a mesh along every row, then up the column. A non-commutative operator
// runs towards rank 0, which forwards the result to another root.

#include <span>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/options.hpp"
#include "../kernels/one_to_all.hpp"
#include "../topology/topology.hpp"
#include "arguments.hpp"

namespace topocoll {

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out, class Op>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    ReductionOp<Op, buffer_value_t<Out>>
void reduce(C& c, In&& input, Out&& output, Op op, int root, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  const auto [in, out] = detail::in_out_of(input, output);
  const auto call = detail::open_call<Topo>("reduce", c);
  call.root(root);
  call.root_buffer(root, "out", "in.size()", out.size(), in.size());
  detail::check_one_to_all_algorithm<Topo>(call, opt.algo);
  call.in_place(in, detail::cspan(out), 0);
  if (in.empty()) return;
  if (call.p() == 1) return detail::copy_to(in, out);
  detail::one_to_all::reduce<Topo>(c, Topo::shape(call.p()), detail::in_out<T>{in, out}, op, root,
                                   opt);
}

}  // namespace topocoll
