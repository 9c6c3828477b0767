#pragma once
// topocoll::scan and topocoll::exclusive_scan: prefix reductions.
//
//   topocoll::scan<topocoll::Hypercube<>>(comm, std::span<const T>(in), std::span<T>(out), op);
//   topocoll::exclusive_scan<topocoll::Ring>(comm, std::span<const T>(in), std::span<T>(out), op);
//
// in, out: m elements. scan: out on rank r = in_0 op in_1 op ... op in_r.
// exclusive_scan: out on rank r = in_0 op ... op in_{r-1}; rank 0's out is not
// touched. Rank order holds for any associative operator.
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

#include <algorithm>
#include <span>
#include <string_view>
#include <type_traits>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/nonblocking.hpp"
#include "../core/ops.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/all_to_all_bcast.hpp"
#include "../kernels/one_to_all_ring.hpp"
#include "../kernels/prefix.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

namespace detail::prefix {
// Both scans: writes the exclusive prefix into out (not on rank 0) and, when
// inclusive, appends the own input. Returns nothing; checks first.
template <Topology Topo, class C, class T, class Op>
void run_scan(std::string_view name, int tag, bool inclusive, C& c, std::span<const T> in,
              std::span<T> out, const Op& op, const options& opt) {
  const int rank = c.rank();
  const int p = c.size();
  const layout l = shape_or_throw<Topo>(name, rank, p);
  const std::size_t m = in.size();
  check_size(name, rank, p, "out (in.size())", out.size(), m);
  a2a::check_algorithm(name, rank, p, opt.algo, {algorithm::recursive_doubling}, Topo::name());
  if (m == 0) return;
  if constexpr (Topo::kind == dim_kind::linear) {
    if (l.ndims == 1) {
      // One linear dimension (Ring; a Mesh of prime p): the chain of the
      // kernel's last dimension, written straight into out, no copy. Where
      // the transport has non-blocking sends the chain is a pipeline of r
      // segments, (p - 2 + r)(t_s + t_w m / r) instead of (p - 1)(t_s + t_w m):
      // each rank forwards segment i while segment i + 1 arrives.
      scratch<T> tmp_store(rank > 0 && (inclusive ? true : rank < p - 1) ? m : 0);
      const std::span<T> tmp = tmp_store.span();
      std::size_t r = 1;
      if constexpr (send_batch<C, T>::nonblocking && std::is_trivially_copyable_v<T>)
        r = one_to_all::ring_segments<T>(m, p, opt.cost);  // segments >= 50 t_s / t_w bytes
      send_batch<C, T> sends(c, r);
      for (std::size_t i = 0; i < r; ++i) {
        const auto [lo, n] = one_to_all::segment(m, r, i);
        const std::span<const T> x = in.subspan(lo, n);
        const std::span<T> y = out.subspan(lo, n);
        std::span<const T> fwd = x;  // x_0 op ... op x_rank
        if (rank > 0) {
          if (inclusive) {
            c.recv(rank - 1, tag, tmp.subspan(lo, n));
            a2a::combine_into(y, std::span<const T>(tmp.subspan(lo, n)), x, op);
            fwd = y;
          } else {
            c.recv(rank - 1, tag, y);
            if (rank < p - 1) a2a::combine_into(tmp.subspan(lo, n), std::span<const T>(y), x, op);
            fwd = tmp.subspan(lo, n);
          }
        } else if (inclusive) {
          a2a::copy_to(x, y);
        }
        if (rank < p - 1) sends.send(rank + 1, tag, fwd);
      }
      sends.wait();
      return;
    }
  }
  if (p > 1) {
    scratch<T> work_store(5 * m);  // msg + the kernel's 4m
    const std::span<T> work = work_store.span();
    const std::span<T> msg = work.first(m);
    std::copy(in.begin(), in.end(), msg.begin());
    const bool have = prefix_fold<Topo>(c, tag, l, rank, a2a::fold_map{p, 0}, msg, out, true, false,
                                        work.subspan(m), op);
    if (inclusive && have) return combine_right(out, in, op);
  }
  if (inclusive) a2a::copy_to(in, out);
}
}  // namespace detail::prefix

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out, class Op>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    ReductionOp<Op, buffer_value_t<Out>>
void scan(C& c, In&& input, Out&& output, Op op, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  detail::prefix::run_scan<Topo, C, T, Op>("scan", detail::tag::scan, true, c,
                                           detail::in_span(input), detail::out_span(output), op,
                                           opt);
}

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out, class Op>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    ReductionOp<Op, buffer_value_t<Out>>
void exclusive_scan(C& c, In&& input, Out&& output, Op op, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  detail::prefix::run_scan<Topo, C, T, Op>("exclusive_scan", detail::tag::exclusive_scan, false, c,
                                           detail::in_span(input), detail::out_span(output), op,
                                           opt);
}

}  // namespace topocoll
