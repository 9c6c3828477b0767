#pragma once
// In-process transport: p ranks, each a thread, exchanging messages through
// per-rank mailboxes, with MPI's standard-mode semantics. No dependency
// beyond the standard library.
//
//   topocoll::loopback::run(p, [&](topocoll::loopback::Comm& c) { ... });
//
// It never hangs: when every live rank waits for something that cannot come,
// every waiting rank throws deadlock_error naming all blocked ranks. The
// semantics, the deadlock test and the polling before a wait:
// doc/transports.md, "loopback: p ranks as threads".
//
// The parts, one concern each:
//   loopback/mailbox.hpp   options, the envelope, what a rank waits for
//   loopback/polling.hpp   polling before sleeping
//   loopback/reports.hpp   the words of deadlock and lost-message reports
//   loopback/world.hpp     the mailboxes, the waits, deadlock detection
//   loopback/comm.hpp      loopback::Comm: send, recv, isend, split
//   loopback/run.hpp       loopback::run

#include "loopback/comm.hpp"
#include "loopback/run.hpp"
