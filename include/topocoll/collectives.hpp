#pragma once
// The collectives alone, for a program that brings its own transport: every
// collective, the topologies, operators, options and errors, without the
// library's transports (no threads), the counting model or SVG.
//
//   #include <topocoll/collectives.hpp>
//   topocoll::all_reduce<topocoll::Hypercube<>>(my_comm, in, out, std::plus<>{});
//
// A transport is any type with rank(), size(), send, recv and sendrecv
// (topocoll::Transport in core/concepts.hpp); mesh_lines also needs
// split (topocoll::SplittableTransport). <topocoll/topocoll.hpp> is this
// header plus the loopback transport and the model.

#include "core/concepts.hpp"
#include "core/errors.hpp"
#include "core/ops.hpp"
#include "core/options.hpp"
#include "core/workspace.hpp"
#include "topology/layout.hpp"
#include "topology/topology.hpp"

#include "collectives/all_gather.hpp"
#include "collectives/all_reduce.hpp"
#include "collectives/all_to_all.hpp"
#include "collectives/all_to_all_v.hpp"
#include "collectives/broadcast.hpp"
#include "collectives/diagnostics.hpp"
#include "collectives/gather.hpp"
#include "collectives/mesh_lines.hpp"
#include "collectives/nonblocking.hpp"
#include "collectives/reduce.hpp"
#include "collectives/reduce_scatter.hpp"
#include "collectives/scan.hpp"
#include "collectives/scatter.hpp"
