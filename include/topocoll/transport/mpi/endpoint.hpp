#pragma once
// The MPI transport's endpoint: the user's communicator, the private
// duplicate every library message travels on, the options in force, and the
// checks every call makes (an MPI return code, a peer's rank). Isolation:
// doc/transports.md, "mpi: Boost.MPI".

#include <mpi.h>

#include <boost/mpi/communicator.hpp>

#include <stdexcept>
#include <string>

#include "../../core/errors.hpp"
#include "../../core/progress.hpp"
#include "../../version.hpp"
#include "errors.hpp"
#include "options.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail {

// The base of mpi::Comm (comm.hpp). Copies share the duplicate: it is freed
// with the last copy, or left to MPI_Finalize.
class endpoint {
 protected:
  // Duplicates `comm` (MPI_Comm_dup, collective over it).
  endpoint(const boost::mpi::communicator& comm, options opt)
      : base_(comm), opt_(from_environment(opt)), lib_(duplicate(comm, opt_)), raw_(lib_) {
    check(MPI_Comm_set_errhandler(raw_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", -1, -1);
    rank_ = lib_.rank();
    size_ = lib_.size();
  }

  bool timed() const { return opt_.timeout.count() > 0; }
  // Waits poll (waits::poll) rather than block in MPI: with a timeout, or
  // where started collectives need progress (core/progress.hpp).
  bool polled() const { return timed() || topocoll::detail::polling_for_progress(); }

  // The error paths are out of line, so that the calls on every message's
  // path cost a compare and a branch.
  void check(int rc, const char* call, int peer, int tag) const {
    if (rc != MPI_SUCCESS) [[unlikely]]
      failed(rc, call, peer, tag);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void failed(int rc, const char* call, int peer,
                                                     int tag) const {
    throw error(topocoll::detail::concat("topocoll::mpi: ", call, " on rank ", rank_, " of ", size_,
                                         " (peer ", peer, ", tag ", tag,
                                         ") failed: ", detail::error_string(rc)),
                rc);
  }

  void check_peer(const char* op, const char* what, int peer) const {
    if (peer < 0 || peer >= size_) [[unlikely]]
      outside(op, what, peer);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void outside(const char* op, const char* what,
                                                      int peer) const {
    topocoll::detail::invalid(std::string("mpi::Comm::") + op, rank_, size_, what, " ", peer,
                              " is outside [0, ", size_, ")");
  }

  boost::mpi::communicator base_;
  options opt_;  // before lib_: the duplicate is made with the options in force
  boost::mpi::communicator lib_;
  // lib_'s handle, for the MPI calls on every message's path: Boost.MPI's
  // conversion is a call into its shared library.
  MPI_Comm raw_;
  int rank_ = 0;
  int size_ = 1;

 private:
  static boost::mpi::communicator duplicate(const boost::mpi::communicator& comm,
                                            const options& opt) {
    if (!comm)
      throw std::invalid_argument("topocoll::mpi::Comm: the communicator is MPI_COMM_NULL");
    validate(opt);
    return boost::mpi::communicator(static_cast<MPI_Comm>(comm), boost::mpi::comm_duplicate);
  }
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail
