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

#include "../kernels/prefix.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {
template <Topology Topo, prefix::scan_kind Kind, Transport C, class In, class Out, class Op,
          collective_stage Stage>
[[gnu::always_inline]] inline void checked_scan(C& c, In&& input, Out&& output, const Op& op,
                                                const options& opt, Stage s) {
  const auto [call, in, out] = open_call<Topo>(
      Kind == prefix::scan_kind::inclusive ? "scan" : "exclusive_scan", c, input, output);
  const collective_scope scope(c, call.info(in, opt.algo), s);
  if (scope.checking()) {
    call.cost(opt.cost);
    call.size("out (in.size())", out.size(), in.size());
    check_algorithm<Topo>(call, opt.algo);
    call.in_place(in, out, 0);
  }
  if (!scope.proceed() || in.empty()) return;
  prefix::scan<kernel_topology<Topo>>(c, laid_out<Topo>(s, call.p()), in_out{in, out}, op, Kind,
                                      opt.cost);
}
}  // namespace detail

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op>
void scan(C& c, In&& input, Out&& output, Op op, const options& opt = detail::default_options) {
  detail::checked_scan<Topo, detail::prefix::scan_kind::inclusive>(c, input, output, op, opt,
                                                                   detail::stage::run);
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op>
void exclusive_scan(C& c, In&& input, Out&& output, Op op,
                    const options& opt = detail::default_options) {
  detail::checked_scan<Topo, detail::prefix::scan_kind::exclusive>(c, input, output, op, opt,
                                                                   detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
