#pragma once
// topocoll::scatter: one-to-all personalized communication.
//
//   topocoll::scatter<topocoll::Mesh<2>>(comm, std::span<const T>(in), std::span<T>(out), root);
//
// in: p*m elements at the root, block r for rank r (may be empty, and is
// untouched, elsewhere); out: m elements on every rank (at the root it may be
// in's block `root` itself, MPI_IN_PLACE).
//   algorithm::tree: the broadcast tree of Algorithm 4.2, but every
//     rank passes each child only the blocks of the child's subtree, as ONE
//     contiguous message; sizes halve at each hypercube step:
//     t_s log p + t_w m (p - 1).
//   algorithm::pipelined (Ring, Mesh<K>): the ICS 632 ring scatter, farthest
//     destination first: (p - 1)(t_s + t_w m) on a ring; on a mesh down the
//     root's column, each message the blocks of a whole row, then along every
//     row: sum_j (s_j - 1)(t_s + t_w m stride_j).
//   algorithm::automatic (default): the tree; on a Ring or Mesh<K> the
//     pipeline where its messages are posted (cost_model::posted) and the
//     tree's are not, and the model prices it cheaper.

#include "../kernels/one_to_all.hpp"
#include "../plan/one_to_all.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// The algorithm a scatter of blocks of m elements of T runs over l: the
// forced one, or automatic's, the tree or the pipeline; chosen at every call,
// or once at init (persistent.hpp).
template <Topology Topo, class T>
algorithm scatter_choice(const layout& l, std::size_t m, const options& opt) {
  if (opt.algo != algorithm::automatic) return opt.algo;
  return plan::one_to_all::blocks_tree_or_pipeline<Topo, T>(l, m, opt.cost);
}

// scatter's checks (stage::check), the whole call (stage::run), or the call
// without its checks (stage::started), at a persistent request's start with the
// layout and the algorithm fixed at init (planned_start).
template <Topology Topo, Transport C, class In, class Out, collective_stage Stage>
[[gnu::always_inline]] inline void checked_scatter(C& c, In&& input, Out&& output, int root,
                                                   const options& opt, Stage s) {
  const auto [call, in, out] = open_call<Topo>("scatter", c, input, output);
  const collective_scope scope(c, call.info(out, opt.algo, root), s);
  const std::size_t m = out.size();
  if (scope.checking()) {
    call.cost(opt.cost);
    call.root_buffer(root, "in", "p * out.size()", in.size(),
                     static_cast<std::size_t>(call.p()) * m);
    check_algorithm<Topo>(call, opt.algo);
    // Only the root uses in (MPI ignores it elsewhere): on another rank it may
    // be anything, overlapping the other buffer included (every rank passing
    // one whole buffer and its own block of it, the SPMD pattern).
    if (call.rank() == root) call.in_place(in, out, static_cast<std::size_t>(root) * m);
  }
  if (!scope.proceed()) return;
  if (m == 0) return;
  if (call.p() == 1) return copy_to(in, out);
  const layout& l = laid_out<Topo>(s, call.p());
  using T = buffer_value_t<Out>;
  const algorithm a = call.template chosen<Topo>(
      s, l, m, sizeof(T), opt,
      [](const layout& at, std::size_t n, const options& o)
          __attribute__((always_inline)) { return scatter_choice<Topo, T>(at, n, o); },
      root);
  one_to_all::scatter<kernel_topology<Topo>>(c, l, in, out, root, a, opt.cost);
}

}  // namespace detail

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out>
void scatter(C& c, In&& input, Out&& output, int root,
             const options& opt = detail::default_options) {
  detail::checked_scatter<Topo>(c, input, output, root, opt, detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
