#pragma once
// How the MPI transport reports a failed MPI call: topocoll::mpi::error. The
// library's duplicate communicator has MPI_ERRORS_RETURN as its error
// handler, so every failure comes back as a code and is thrown as one.

#include <mpi.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "../../core/errors.hpp"
#include "../../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi {

// An MPI call failed. what() names the call, the rank, the peer, the tag and
// MPI's own error string; code() is the MPI error code.
class error : public std::runtime_error {
 public:
  error(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {

using topocoll::detail::concat;

inline std::string error_string(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return concat("MPI error ", code);
  return std::string(buf, static_cast<std::size_t>(len));
}

}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi
