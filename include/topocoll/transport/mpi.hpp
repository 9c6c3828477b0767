#pragma once
// The Boost.MPI transport: topocoll::mpi::Comm models topocoll::Transport over
// a boost::mpi::communicator.
//
//   boost::mpi::environment env(argc, argv);
//   topocoll::mpi::Comm c{boost::mpi::communicator{}};   // collective: dups
//   topocoll::all_reduce<topocoll::Hypercube<>>(c, in, out, std::plus<>{});
//
// Only code that includes this header needs MPI (CMake: topocoll::mpi).
// Library messages travel on a private duplicate of the communicator, so
// they never match a user's. Any trivially copyable T travels as its raw
// bytes, in place; other types serialized. Every receive checks the size
// before it writes (message_error); options::timeout bounds every wait
// (timeout_error) and options::check has the ranks agree on each collective
// first. How and why: doc/transports.md, "mpi: Boost.MPI".
//
// The parts, one concern each (mpi/):
//   options.hpp         mpi::options and the environment's overrides
//   errors.hpp          mpi::error, a failed MPI call
//   endpoint.hpp        the duplicate communicator, the checks of each call
//   wire.hpp            raw bytes, flat strings, archives, counts over 2^31
//   waits.hpp           timeouts and polling
//   agreement.hpp       its part of the agreement check (core/agreement.hpp)
//   probing.hpp         probing receives, the size check
//   small_messages.hpp  receives without a probe, and their markers
//   requests.hpp        isend's requests and their buffers
//   comm.hpp            mpi::Comm, the layers above put together

#include <boost/mpi/environment.hpp>  // for users: every MPI program needs one

#include "mpi/comm.hpp"
