#pragma once
// The MPI transport's probing receives: a receive learns a message's size
// (MPI_Mprobe, which pins that exact message) before anything is written,
// and a message its buffer cannot hold is consumed into scratch and thrown
// as a message_error (doc/transports.md, "Sizes are checked before anything
// is written").

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <string>

#include "../../core/errors.hpp"
#include "../../version.hpp"
#include "agreement.hpp"
#include "wire.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail {

class probes : public agreement_check {
 protected:
  using agreement_check::agreement_check;

  // Waits for the next message from source with tag; returns its handle and
  // its size in bytes.
  std::size_t probe(int source, int tag, MPI_Message& msg) {
    MPI_Status st;
    check(MPI_Mprobe(source, tag, raw_, &msg, &st), "MPI_Mprobe", source, tag);
    return message_size(st, source, tag);
  }

  // The same within the timeout: polls with MPI_Improbe.
  std::size_t timed_probe(int source, int tag, MPI_Message& msg, const wait_for& w) {
    usable();
    const auto start = clock::now();
    MPI_Status st;
    int found = 0;
    auto arrived = [&] {
      check(MPI_Improbe(source, tag, raw_, &found, &msg, &st), "MPI_Improbe", source, tag);
      return found != 0;
    };
    if (!poll(arrived, start)) timed_out(w, start);
    return message_size(st, source, tag);
  }

  // MPI_Get_count is the cheap call; it gives MPI_UNDEFINED beyond INT_MAX
  // bytes. Inlined into every receive: out of line, saving and restoring the
  // registers its rare branches use cost more than the call itself.
  [[gnu::always_inline]] std::size_t message_size(const MPI_Status& st, int source, int tag) {
    int count = MPI_UNDEFINED;
    check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count", source, tag);
    if (count != MPI_UNDEFINED) [[likely]]
      return static_cast<std::size_t>(count);
    return large_message_size(st, source, tag);
  }
  [[gnu::noinline]] std::size_t large_message_size(const MPI_Status& st, int source, int tag) {
    MPI_Count n = 0;
    check(MPI_Get_elements_x(&st, MPI_BYTE, &n), "MPI_Get_elements_x", source, tag);
    return static_cast<std::size_t>(n);
  }

  void mrecv(MPI_Message& msg, void* p, std::size_t n, int source, int tag) {
    detail::byte_type bt(n, opt_.max_int_bytes);
    check(MPI_Mrecv(p, bt.count(), bt.type(), &msg, MPI_STATUS_IGNORE), "MPI_Mrecv", source, tag);
  }

  // Consumes a message that does not fit, so that its sender is released,
  // without writing to the user's buffer. It goes to a scratch buffer of its
  // own size: a truncated receive is not safe, since an MPI's single-copy
  // path may write the whole message past a too-small buffer before it
  // reports the truncation (doc/transports.md). Error path only.
  void discard(MPI_Message& msg, std::size_t n, int source, int tag) {
    std::unique_ptr<std::byte[]> scratch(new (std::nothrow) std::byte[n ? n : 1]);
    if (scratch) mrecv(msg, scratch.get(), n, source, tag);
  }

  // A probed message of n bytes that data cannot hold: consumed, then thrown.
  template <class T>
  [[noreturn]] void refuse(MPI_Message& msg, std::size_t n, int source, int tag,
                           std::span<T> data) {
    discard(msg, n, source, tag);
    wrong_size(source, tag, n, data);
  }

  std::size_t probe_any(int source, int tag, MPI_Message& msg, const wait_for& w) {
    return polled() ? timed_probe(source, tag, msg, w) : probe(source, tag, msg);
  }

  template <class T>
  [[noreturn]] void wrong_size(int source, int tag, std::size_t n, std::span<T> data) const {
    throw message_error(topocoll::detail::concat(
        "topocoll::mpi recv on rank ", rank_, " of ", size_, ": the message from rank ", source,
        " with tag ", tag, " has ", n, " bytes (",
        n % sizeof(T) == 0 ? std::to_string(n / sizeof(T)) : std::string("not a whole number of"),
        " elements of ", sizeof(T), " bytes), the receive buffer holds ", data.size(),
        " elements (", data.size_bytes(), " bytes)"));
  }
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail
