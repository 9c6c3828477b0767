#pragma once
// TOPOCOLL_PMPI: which topology and algorithm serve each function, e.g.
//   TOPOCOLL_PMPI=allreduce=Hypercube,bcast=Tree<4>:pipelined,alltoall=Ring:pairwise
// Parsed once at MPI_Init; an entry it does not know is an error there.

#include <topocoll/collectives.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

#include "adapter.hpp"

namespace topocoll::pmpi {

// The topologies the adapter compiles in.
enum class topology { hypercube, ring, mesh2, tree2, tree4, count_ };

struct choice {
  topology topo = topology::hypercube;
  algorithm algo = algorithm::automatic;
};

// Parses a TOPOCOLL_PMPI value; throws std::invalid_argument naming the
// entry and listing the valid names.
void select(std::string_view spec);
const choice& selected(function f);

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
