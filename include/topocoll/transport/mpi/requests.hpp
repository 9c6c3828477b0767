#pragma once
// The MPI transport's started sends (isend, core/nonblocking.hpp) and the
// serialization buffers they reuse. A request destroyed before it completed
// (an exception unwinding a collective) is handed to MPI with
// MPI_Request_free: waiting could hang, and MPI may be unable to cancel a
// send (doc/transports.md, "mpi: Boost.MPI").

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "../../core/workspace.hpp"  // workspace_retain_bytes
#include "../../version.hpp"
#include "wire.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi {

class Comm;

namespace detail {

// mpi::Comm::request: move-only. One abandoned before it completed sends on
// regardless; on that error path only, the caller's buffer must outlive the
// peer's receive or the peer reads what is there by then, and a serialized
// message is moved to `orphans`, kept until the Comm's last copy is
// destroyed.
class send_request {
 public:
  send_request() = default;
  send_request(send_request&& o) noexcept
      : req_(std::exchange(o.req_, MPI_REQUEST_NULL)),
        marker_(std::exchange(o.marker_, MPI_REQUEST_NULL)),
        buf_(std::move(o.buf_)),
        orphans_(std::move(o.orphans_)),
        to_(o.to_) {}
  send_request& operator=(send_request&& o) noexcept {
    if (this != &o) {
      abandon();
      req_ = std::exchange(o.req_, MPI_REQUEST_NULL);
      marker_ = std::exchange(o.marker_, MPI_REQUEST_NULL);
      buf_ = std::move(o.buf_);
      orphans_ = std::move(o.orphans_);
      to_ = o.to_;
    }
    return *this;
  }
  ~send_request() { abandon(); }
  bool pending() const { return req_ != MPI_REQUEST_NULL || marker_ != MPI_REQUEST_NULL; }

 private:
  friend class mpi::Comm;
  void abandon() noexcept {
    if (marker_ != MPI_REQUEST_NULL) MPI_Request_free(&marker_);
    if (req_ == MPI_REQUEST_NULL) return;
    MPI_Request_free(&req_);
    req_ = MPI_REQUEST_NULL;
    if (!buf_.empty() && orphans_) orphans_->push_back(std::move(buf_));
  }
  MPI_Request req_ = MPI_REQUEST_NULL;
  MPI_Request marker_ = MPI_REQUEST_NULL;  // the message's marker, if it has one
  packed_buffer buf_;                      // the serialized message, for a non-trivially-copyable T
  std::shared_ptr<std::vector<packed_buffer>> orphans_;  // the Comm's, for abandon()
  struct {
    int dest = -1, tag = -1;
    std::size_t bytes = 0;
  } to_;  // where it goes, to name in a timeout
};

// Serialization buffers of completed isends, kept for the next ones: a fresh
// buffer per message costs fresh pages at every all_to_all of strings. At
// most max_spare of them, holding at most workspace_retain_bytes
// (core/workspace.hpp) in all.
class spare_buffers {
 public:
  // A kept buffer into buf, if there is one: no allocation.
  void take(packed_buffer& buf) {
    if (spare_.empty()) return;
    buf = std::move(spare_.back());
    spare_.pop_back();
    bytes_ -= buf.capacity();
  }
  // Keeps a completed request's buffer for the next isend.
  void keep(packed_buffer& buf) {
    const std::size_t cap = buf.capacity();
    if (cap != 0 && spare_.size() < max_spare && bytes_ + cap <= workspace_retain_bytes) {
      bytes_ += cap;
      spare_.push_back(std::move(buf));
    }
  }

 private:
  static constexpr std::size_t max_spare = 64;
  std::vector<packed_buffer> spare_;
  std::size_t bytes_ = 0;
};

}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi
