#pragma once
// topocoll::gather: all-to-one gather (the dual of scatter).
//
//   topocoll::gather<topocoll::Ring>(comm, std::span<const T>(in), std::span<T>(out), root);
//
// in: m elements on every rank; out: p*m elements at the root, block r from
// rank r (out may be empty, and is untouched, elsewhere; at the root in may be
// out's block `root` itself, MPI_IN_PLACE).
//   algorithm::tree: the reduction tree of Algorithm 4.3 walked with
//     blocks instead of partial sums; each rank forwards its whole subtree as
//     ONE contiguous message, so message sizes double towards the root:
//     t_s log p + t_w m (p - 1) on a hypercube.
//   algorithm::pipelined (Ring, Mesh<K>): every rank sends its block towards
//     the root, nearest first, relaying those beyond it: (p - 1)(t_s + t_w m)
//     on a ring; on a mesh along every row, then up the column, one message
//     per row.
//   algorithm::automatic (default): the tree, or the pipeline as for scatter.
// Strings (std::basic_string of a trivially copyable character) travel the
// tree encoded (kernels/strings.hpp).

#include "../kernels/one_to_all.hpp"
#include "../kernels/strings.hpp"
#include "../plan/one_to_all.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// The algorithm a gather of blocks of m elements of T runs over l: the
// forced one, or automatic's, the tree or the pipeline; chosen at every call,
// or once at init (persistent.hpp). Strings stay automatic: they take a path
// of their own unless the pipeline is forced.
template <Topology Topo, class T>
algorithm gather_choice(const layout& l, std::size_t m, const options& opt) {
  if (opt.algo != algorithm::automatic || is_flat_string_v<T>) return opt.algo;
  return plan::one_to_all::blocks_tree_or_pipeline<Topo, T>(l, m, opt.cost);
}

// gather's checks (stage::check), the whole call (stage::run), or the call
// without its checks (stage::started), at a persistent request's start with the
// layout and the algorithm fixed at init (planned_start).
template <Topology Topo, Transport C, class In, class Out, collective_stage Stage>
[[gnu::always_inline]] inline void checked_gather(C& c, In&& input, Out&& output, int root,
                                                  const options& opt, Stage s) {
  const auto [call, in, out] = open_call<Topo>("gather", c, input, output);
  const collective_scope scope(c, call.info(in, opt.algo, root), s);
  if (scope.checking()) {
    call.cost(opt.cost);
    const std::size_t m = in.size();
    call.root_buffer(root, "out", "p * in.size()", out.size(),
                     static_cast<std::size_t>(call.p()) * m);
    check_algorithm<Topo>(call, opt.algo);
    // Only the root uses out (MPI ignores it elsewhere): on another rank it may
    // be anything, overlapping the other buffer included (every rank passing
    // one whole buffer and its own block of it, the SPMD pattern).
    if (call.rank() == root) call.in_place(in, out, static_cast<std::size_t>(root) * m);
  }
  if (!scope.proceed()) return;
  if (call.nothing_to_do(in, out)) return;
  const layout& l = laid_out<Topo>(s, call.p());
  if constexpr (is_flat_string_v<buffer_value_t<Out>>)
    if (opt.algo != algorithm::pipelined)
      return strings::gather<kernel_topology<Topo>>(c, l, in, out, root, tag::gather);
  using T = buffer_value_t<Out>;
  const algorithm a = call.template chosen<Topo>(
      s, l, in.size(), sizeof(T), opt,
      [](const layout& at, std::size_t m, const options& o)
          __attribute__((always_inline)) { return gather_choice<Topo, T>(at, m, o); },
      root);
  one_to_all::gather<kernel_topology<Topo>>(c, l, in, out, root, a, opt.cost);
}

}  // namespace detail

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out>
void gather(C& c, In&& input, Out&& output, int root,
            const options& opt = detail::default_options) {
  detail::checked_gather<Topo>(c, input, output, root, opt, detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
