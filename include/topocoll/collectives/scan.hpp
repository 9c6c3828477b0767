#pragma once
// topocoll::scan and topocoll::exclusive_scan: prefix reductions.
//
//   topocoll::scan<topocoll::Hypercube<>>(comm, std::span<const T>(in), std::span<T>(out), op);
//   topocoll::exclusive_scan<topocoll::Ring>(comm, std::span<const T>(in), std::span<T>(out), op);
//
// in, out: m elements (out may be in itself, MPI_IN_PLACE). scan: out on rank
// r = in_0 op in_1 op ... op in_r. exclusive_scan: out on rank r = in_0 op ...
// op in_{r-1}; rank 0's out is not touched. Rank order holds for any
// associative operator.
//
// Algorithm (options::algo: automatic or recursive_doubling): PREFIX_SUMS_HCUBE
// of the lecture notes generalised to every topology (kernels/prefix.hpp):
//   Hypercube  the textbook loop, (t_s + t_w m) ceil(log p); partners >= p skipped
//   Ring       a chain: (p - 1)(t_s + t_w m), one message per rank; on a
//              non-blocking transport a pipeline of r segments (r as for the
//              pipelined broadcast), (p - 2 + r)(t_s + t_w m / r)
//   Mesh<K>    per dimension but the last, Algorithm 4.4 on the totals
//              ((s_j - 1)(t_s + t_w m)); the last dimension a pipeline
//   Tree<K>    per k-nomial digit, a direct exchange with the other K - 1 digits,
//              (K - 1)(t_s + t_w m) per level

#include <span>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/options.hpp"
#include "../kernels/prefix.hpp"
#include "../topology/topology.hpp"
#include "arguments.hpp"

namespace topocoll {

namespace detail {
template <Topology Topo, Transport C, class T, class Op>
void checked_scan(C& c, in_out<T> io, const Op& op, const options& opt, prefix::scan_kind kind) {
  const auto call =
      open_call<Topo>(kind == prefix::scan_kind::inclusive ? "scan" : "exclusive_scan", c);
  call.size("out (in.size())", io.out.size(), io.in.size());
  call.algorithm(opt.algo, {algorithm::recursive_doubling});
  call.in_place(io.in, cspan(io.out), 0);
  if (io.in.empty()) return;
  prefix::scan<Topo>(c, Topo::shape(call.p()), io, op, kind, opt.cost);
}
}  // namespace detail

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out, class Op>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    ReductionOp<Op, buffer_value_t<Out>>
void scan(C& c, In&& input, Out&& output, Op op, const options& opt = {}) {
  detail::checked_scan<Topo>(c, detail::in_out_of(input, output), op, opt,
                             detail::prefix::scan_kind::inclusive);
}

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out, class Op>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    ReductionOp<Op, buffer_value_t<Out>>
void exclusive_scan(C& c, In&& input, Out&& output, Op op, const options& opt = {}) {
  detail::checked_scan<Topo>(c, detail::in_out_of(input, output), op, opt,
                             detail::prefix::scan_kind::exclusive);
}

}  // namespace topocoll
