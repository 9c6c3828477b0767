#pragma once
// topocoll: collective communication operations selected at compile time by a
// topology policy, a transport and an associative operator.
//
//   #include <topocoll/topocoll.hpp>
//   topocoll::loopback::run(8, [](topocoll::loopback::Comm& c) {
//     std::vector<double> x(100, c.rank()), sum(100);
//     topocoll::all_reduce<topocoll::Hypercube<>>(c, x, sum, std::plus<>{});
//   });
//
// The Boost.MPI transport has its own header: <topocoll/transport/mpi.hpp>.

#include "core/concepts.hpp"
#include "core/elementwise.hpp"
#include "core/errors.hpp"
#include "core/nonblocking.hpp"
#include "core/ops.hpp"
#include "core/options.hpp"
#include "core/tags.hpp"
#include "core/workspace.hpp"
#include "model/counting.hpp"
#include "model/svg.hpp"
#include "model/trace.hpp"
#include "topology/layout.hpp"
#include "topology/topology.hpp"
#include "transport/loopback.hpp"

// collectives (one header per operation)
#include "collectives/all_gather.hpp"
#include "collectives/all_reduce.hpp"
#include "collectives/all_to_all.hpp"
#include "collectives/all_to_all_v.hpp"
#include "collectives/broadcast.hpp"
#include "collectives/gather.hpp"
#include "collectives/reduce.hpp"
#include "collectives/reduce_scatter.hpp"
#include "collectives/scan.hpp"
#include "collectives/scatter.hpp"
