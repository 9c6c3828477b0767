#pragma once
// TOPOCOLL_PMPI: which topology and algorithm serve each function, e.g.
//   TOPOCOLL_PMPI=allreduce=Hypercube,bcast=Ring:pipelined,alltoall=Ring:pairwise
// Parsed once at MPI_Init; an entry it does not know is an error there. A
// function it does not name (or names with topology `automatic`) gets, per
// call, the topology model::simulate predicts cheapest (topology_for).

#include <topocoll/collectives.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "adapter.hpp"

namespace topocoll::pmpi {

// The topologies the adapter compiles in, then `automatic`: one of them,
// chosen per call.
enum class topology { hypercube, ring, mesh2, tree2, tree4, count_, automatic };
inline constexpr std::size_t topology_count = static_cast<std::size_t>(topology::count_);
std::string_view topology_name(topology t);

struct choice {
  topology topo = topology::automatic;
  algorithm algo = algorithm::automatic;
  options forced{};  // options{algo}, what a call passes where algo is forced
};

// Parses a TOPOCOLL_PMPI value; throws std::invalid_argument naming the
// entry and listing the valid names.
void select(std::string_view spec);
const choice& selected(function f);

// The topology that serves a call of f over p ranks moving `bytes` per rank
// (per block for the gather, scatter, all-to-all and reduce_scatter family):
// the selected one, or under automatic the topology whose automatic algorithm
// (or the selected one) model::simulate predicts cheapest, on network
// complete(p) with the default cost_model, at the size 2^ceil(log2 bytes).
// A function of (f, p, bytes) only, so every rank decides alike; memoized per
// (f, p, ceil(log2 bytes)). Hypercube when p > auto_max_p, bytes == 0 or
// for MPI_Alltoallv (whose sizes differ per rank).
inline constexpr int auto_max_p = 64;
topology topology_for(function f, int p, std::size_t bytes);

// With TOPOCOLL_EXPLAIN set (as for the persistent collectives), a call's
// plan on std::cerr, from the communicator's rank 0, once per (f, p, bytes,
// t): the function, then the plan as a persistent collective describes its
// own (persistent.hpp), priced as topology_for prices: the bytes as 8-byte
// elements, the default cost_model, the selected algorithm. MPI_Alltoallv's
// sizes differ per rank, so its plan names the topology only.
void explain(function f, int rank, int p, std::size_t bytes, topology t);

// Runs f.template operator()<Topo>() with the topology policy of t.
template <class F>
decltype(auto) with_topology(topology t, F&& f) {
  switch (t) {
    case topology::ring:
      return f.template operator()<Ring>();
    case topology::mesh2:
      return f.template operator()<Mesh<2>>();
    case topology::tree2:
      return f.template operator()<Tree<2>>();
    case topology::tree4:
      return f.template operator()<Tree<4>>();
    default:
      return f.template operator()<Hypercube<>>();
  }
}

}  // namespace topocoll::pmpi
