#pragma once
// The MPI transport's small-message protocol (options::small_message_bytes =
// E; 0: off). A receive of 0 to E bytes does not probe: MPI_Recv into a
// bounce buffer of 1 MiB, a check of the size, a copy out. A message longer
// than the bounce buffer, or of exactly E + 1 bytes, goes after a marker: its
// own first E + 1 bytes on the same tag, which a small receive takes for a
// mismatch and a probing receive passes over. So no receive is ever posted
// for more than its buffer holds (doc/transports.md, "Sizes are checked
// before anything is written").

#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>

#include "../../version.hpp"
#include "probing.hpp"
#include "wire.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail {

class small_messages : public probes {
 protected:
  using probes::probes;

  // With small messages on: the size of a marker, E + 1 bytes.
  std::size_t marker_bytes() const { return opt_.small_message_bytes + 1; }

  // Whether a message of n bytes goes after a marker: with small messages on,
  // one longer than the bounce buffer, and one as long as a marker.
  bool marked(std::size_t n) const { return bounce_ && (n > bounce_bytes || n == marker_bytes()); }

  // Starts the marker of message b into req, if it needs one: b's own first
  // marker_bytes() bytes (b is at least that long), whatever they hold.
  void post_marker(int dest, int tag, const bytes& b, MPI_Request& req) {
    if (marked(b.size))
      check(MPI_Isend(b.data, static_cast<int>(marker_bytes()), MPI_BYTE, dest, tag, raw_, &req),
            "MPI_Isend (marker)", dest, tag);
  }

  // A message of n bytes, after its marker if it needs one.
  void send_bytes(int dest, int tag, const void* p, std::size_t n) {
    if (marked(n)) send_one(dest, tag, p, marker_bytes(), n);
    send_one(dest, tag, p, n, n);
  }

  // Sends the first n bytes at p, part of a message of `whole` bytes (the
  // one a timeout names).
  void send_one(int dest, int tag, const void* p, std::size_t n, std::size_t whole) {
    detail::byte_type bt(n, opt_.max_int_bytes);
    if (polled()) {
      usable();
      MPI_Request req;
      check(MPI_Isend(p, bt.count(), bt.type(), dest, tag, raw_, &req),
            "MPI_Send (as MPI_Isend, timed)", dest, tag);
      return complete(req, {waiting::receipt_by, dest, tag, whole, 0}, clock::now());
    }
    check(MPI_Send(p, bt.count(), bt.type(), dest, tag, raw_), "MPI_Send", dest, tag);
  }

  template <class T>
  void receive(int source, int tag, std::span<T> data) {
    const wait_for w = expecting(source, tag, data);
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (bounce_ && data.size_bytes() <= opt_.small_message_bytes)
        return receive_small(source, tag, data, w);
    }
    MPI_Message msg;
    const std::size_t n = probe_past_marker(source, tag, msg, w);
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (n != data.size_bytes()) refuse(msg, n, source, tag, data);
      mrecv(msg, data.data(), n, source, tag);
    } else {  // a serialized message is never empty: it holds its element count
      rbuf_.resize(n);
      mrecv(msg, rbuf_.data(), n, source, tag);
      unpack(lib_, rbuf_, data, rank_, size_, source, tag);
    }
  }

  // The next message from source with tag, probed; a marker before it is
  // received (into the bounce buffer) and passed over.
  std::size_t probe_past_marker(int source, int tag, MPI_Message& msg, const wait_for& w) {
    std::size_t n = probe_any(source, tag, msg, w);
    if (bounce_ && n == marker_bytes()) {
      mrecv(msg, bounce_.get(), n, source, tag);
      n = probe_any(source, tag, msg, w);
    }
    return n;
  }

  // With small messages on, a receive of 0 to E bytes: the first message from
  // source with tag is received into the bounce buffer without a probe. It
  // fits there unless it is a marker, whose message follows it: that message
  // is consumed (its sender is released) and the receive throws, since a
  // marked message is longer than E. Otherwise the size is checked and the
  // message copied out.
  template <class T>
  void receive_small(int source, int tag, std::span<T> data, const wait_for& w) {
    const std::size_t m = polled() ? timed_recv_small(source, tag, w) : recv_small(source, tag);
    if (m == marker_bytes()) [[unlikely]] {
      MPI_Message msg;
      refuse(msg, probe_any(source, tag, msg, w), source, tag, data);
    }
    if (m != data.size_bytes()) [[unlikely]]
      wrong_size(source, tag, m, data);
    if (m != 0) std::memcpy(static_cast<void*>(data.data()), bounce_.get(), m);
  }

  std::size_t recv_small(int source, int tag) {
    MPI_Status st;
    check(MPI_Recv(bounce_.get(), static_cast<int>(bounce_bytes), MPI_BYTE, source, tag, raw_, &st),
          "MPI_Recv", source, tag);
    return message_size(st, source, tag);
  }

  // The same within the timeout: MPI_Irecv, then MPI_Test. A receive that
  // times out is left to MPI with the bounce buffer, which stays alive as
  // long as a copy of this Comm does (MPI may still write there; the Comm is
  // unusable from then on).
  std::size_t timed_recv_small(int source, int tag, const wait_for& w) {
    usable();
    const auto start = clock::now();
    MPI_Request req;
    check(
        MPI_Irecv(bounce_.get(), static_cast<int>(bounce_bytes), MPI_BYTE, source, tag, raw_, &req),
        "MPI_Irecv", source, tag);
    MPI_Status st;
    int done = 0;
    auto arrived = [&] {
      check(MPI_Test(&req, &done, &st), "MPI_Test (receive)", source, tag);
      return done != 0;
    };
    if (!poll(arrived, start)) {
      MPI_Request_free(&req);
      timed_out(w, start);
    }
    return message_size(st, source, tag);
  }

  // Where small receives land (options::small_message_bytes; null: off),
  // shared by the copies. Its capacity is the longest message that travels
  // without a marker.
  static constexpr std::size_t bounce_bytes = std::size_t{1} << 20;
  static_assert(options::max_small_message_bytes < bounce_bytes,
                "a marker (small_message_bytes + 1 bytes) must fit the bounce buffer");
  std::shared_ptr<std::byte[]> bounce_;

  // Serialization buffer of received messages (non-trivially-copyable T
  // only), kept to reuse its capacity.
  packed_buffer rbuf_;
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail
