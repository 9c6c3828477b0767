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
// Sub-communicators: c.split(color, key) on either transport, and
// mesh_lines<K>(c), the rows and columns of a Mesh<K> (collectives/mesh_lines.hpp).
//
// The Boost.MPI transport has its own header: <topocoll/transport/mpi.hpp>.
// <topocoll/collectives.hpp> is the collectives alone, for a transport of
// one's own (no threads, no model).

#include "collectives.hpp"
#include "core/elementwise.hpp"
#include "core/nonblocking.hpp"
#include "core/tags.hpp"
#include "model/counting.hpp"
#include "model/svg.hpp"
#include "model/trace.hpp"
#include "persistent.hpp"
#include "transport/loopback.hpp"
#include "version.hpp"
