#pragma once
// The tree sweep's prices (kernels/one_to_all.hpp): the root's messages down
// the tree under the model, whole or a subtree's blocks each, the pipeline's
// scatter and gather along chains, and broadcast's, reduce's, scatter's and
// gather's choice between the tree and the pipeline.

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "../core/last_choice.hpp"
#include "../core/options.hpp"
#include "../kernels/one_to_all.hpp"
#include "../topology/layout.hpp"
#include "../topology/needs.hpp"
#include "../topology/step.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "explain.hpp"
#include "pipeline.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::one_to_all {

// The tree's parts the prices walk, named here as well so that a plan that
// prices a tree (plan::all_reduce, plan::all_to_all_broadcast) finds them.
using detail::one_to_all::for_each_link;
using detail::one_to_all::root_children;
using detail::one_to_all::tree_layout;
using detail::one_to_all::tree_topology;

// ---- the prices ----------------------------------------------------------------

// How the model prices a message: by message()'s figures, fitted to
// ping-pongs, or with a message its sender may leave behind costing
// posted_us (cost_model::posted), for the choice of scatter and gather.
enum class pricing { ping_pong, posting };

// The root's messages down the tree under the model, bytes_of(link) each
// (log p on a hypercube, ceil(log2 s_j) per side of a ring or mesh, K - 1 per
// digit of Tree<K>). Its k-th shares the step with the other holders', about
// 2^k active ranks, as in a binomial tree.
template <Topology Topo, class Bytes>
double root_time(const layout& l, const cost_model& cm, Bytes bytes_of,
                 pricing how = pricing::ping_pong) {
  double t = 0;
  int k = 0;
  for_each_link<Topo, sweep::down>(l, 0, [&](const link& e) {
    if (!e.to_child) return;
    const std::size_t bytes = bytes_of(e);
    const int active = 2 << std::min(k++, 29);
    t +=
        how == pricing::posting && cm.posted(bytes) ? cm.posted_us : cm.message(bytes, active, l.p);
  });
  return t;
}

// The tree's time: one whole message of `bytes` per child of the root.
template <Topology Topo>
double tree_time(const layout& l, std::size_t bytes, const cost_model& cm) {
  return root_time<Topo>(l, cm, [&](const link&) { return bytes; });
}

// A gather to (or a scatter from) rank 0 of blocks of block_bytes: each child
// of the root sends (receives) its subtree's blocks.
template <Topology Topo>
double gather_time(const layout& l, std::size_t block_bytes, const cost_model& cm,
                   pricing how = pricing::ping_pong) {
  return root_time<Topo>(
      l, cm, [&](const link& e) { return block_bytes * static_cast<std::size_t>(e.hi - e.lo); },
      how);
}

// The pipeline's scatter (or gather) of blocks of block_bytes: along
// dimension j, s_j - 1 messages of the blocks of stride_j ranks each, every
// rank of a chain sending and receiving at once, and nobody answering.
template <Topology Topo>
double chain_blocks_time(const layout& l, std::size_t block_bytes, const cost_model& cm) {
  using step = dim_step<Topo::kind>;
  double t = 0;
  for (int j = 0; j < l.ndims; ++j) {
    const std::size_t bytes = block_bytes * static_cast<std::size_t>(step::stride(l, j));
    t += (step::radix(l, j) - 1) * (cm.posted(bytes) ? cm.posted_us : cm.busy_message(bytes));
  }
  return t;
}

// ---- the choice ----------------------------------------------------------------

// The tree everywhere; on a topology of linear dimensions (chain_dims: Ring,
// Mesh<K>), the pipeline along each dimension in turn where the t_s + t_w m
// model says it is cheaper (large m).
template <Topology Topo, class T>
algorithm tree_or_pipeline(const layout& l, std::size_t m, const cost_model& cost) {
  return chain_dims<Topo> && pipeline::pipeline_wins<T>(l, m, cost) ? algorithm::pipelined
                                                                    : algorithm::tree;
}

// Scatter and gather: the tree, or on a topology of linear dimensions the
// pipeline where the model, pricing posted messages, says it is cheaper.
// Under t_s + t_w m with factors of at least 1 the tree always is, moving the
// root's bytes in fewer messages; the pipeline's messages of single blocks can
// win only where they are posted and the tree's, which carry whole subtrees'
// blocks, are not. On two ranks both are one message. m: elements per block.
template <Topology Topo, class T>
algorithm blocks_tree_or_pipeline(const layout& l, std::size_t m, const cost_model& cost) {
  if constexpr (chain_dims<Topo>) {
    const std::size_t bytes = m * sizeof(T);
    if (!std::is_trivially_copyable_v<T> || l.p <= 2 ||
        (cost.busy_at_least_alone() && !cost.posted(bytes)))
      return algorithm::tree;
    return remembered(l.p, bytes, cost, [&] {
      const double pipe = chain_blocks_time<Topo>(l, bytes, cost),
                   tree = gather_time<Topo>(l, bytes, cost, pricing::posting);
      explain::note({{"pipelined", pipe}, {"tree", tree}});
      return pipe < tree ? algorithm::pipelined : algorithm::tree;
    });
  } else {
    return algorithm::tree;
  }
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::one_to_all
