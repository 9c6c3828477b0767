#pragma once
// topocoll::mpi::Comm: one process's handle on a communicator; models
// topocoll::Transport. Each concern is a layer below it: endpoint.hpp (the
// duplicate, its errors), waits.hpp (timeouts), agreement.hpp (its part of
// the agreement check), probing.hpp and small_messages.hpp (receives),
// wire.hpp (the wire format), requests.hpp (isend). doc/transports.md,
// "mpi: Boost.MPI".

#include <mpi.h>

#include <boost/mpi/communicator.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/agreement.hpp"
#include "../../core/collective_info.hpp"
#include "../../core/concepts.hpp"
#include "../../core/errors.hpp"
#include "../../core/nonblocking.hpp"
#include "../../version.hpp"
#include "options.hpp"
#include "requests.hpp"
#include "small_messages.hpp"
#include "wire.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi {

// One process's handle on a communicator; models topocoll::Transport.
class Comm : private detail::small_messages {
 public:
  // Duplicates `comm` (collective over it) and works on the duplicate. The
  // ranks must agree on whether the agreement check is on, and on whether
  // there is a timeout (its length may differ): the check is a blocking
  // MPI_Allreduce without one and an MPI_Iallreduce with one, and MPI does not
  // match the two.
  explicit Comm(const boost::mpi::communicator& comm, options opt = {})
      : small_messages(comm, opt) {
    const int small = static_cast<int>(opt_.small_message_bytes);
    int mine[6] = {check_, -int{check_}, timed(), -int{timed()}, small, -small}, all[6];
    check(MPI_Allreduce(mine, all, 6, MPI_INT, MPI_MIN, raw_), "MPI_Allreduce", -1, -1);
    if (all[0] != -all[1])
      topocoll::detail::invalid("mpi::Comm", rank_, size_, "the agreement check is ",
                                check_ ? "on" : "off", " here but not on every rank (",
                                "TOPOCOLL_CHECK, mpi::options::check, NDEBUG)");
    if (all[2] != -all[3])
      topocoll::detail::invalid("mpi::Comm", rank_, size_, "there is ", timed() ? "a" : "no",
                                " timeout here but not on every rank (TOPOCOLL_TIMEOUT, "
                                "mpi::options::timeout): give every rank one, or none");
    if (all[4] != -all[5])
      topocoll::detail::invalid("mpi::Comm", rank_, size_, "small_message_bytes is ", small,
                                " here, but ranks have values from ", all[4], " to ", -all[5],
                                " (TOPOCOLL_SMALL_MESSAGE_BYTES, mpi::options::"
                                "small_message_bytes): every rank needs the same");
    if (small != 0) bounce_.reset(new std::byte[bounce_bytes]);  // not zeroed: no page touched
  }

  int rank() const { return rank_; }
  int size() const { return size_; }

  // The communicator this Comm was built from (the user's), and the private
  // duplicate every library message travels on.
  const boost::mpi::communicator& base() const { return base_; }
  const boost::mpi::communicator& library_communicator() const { return lib_; }
  // The options in force (the environment's TOPOCOLL_TIMEOUT,
  // TOPOCOLL_CHECK and TOPOCOLL_SMALL_MESSAGE_BYTES applied).
  const options& opts() const { return opt_; }

  // Called by every collective as it begins and ends (waits.hpp), and the
  // agreement check's part here (agreement.hpp; the check itself:
  // core/agreement.hpp).
  using detail::agreement_check::agreement_allreduce;
  using detail::agreement_check::checks_agreement;
  using detail::waits::begin_collective;
  using detail::waits::end_collective;

  // The communicator of the ranks here that pass the same color (>= 0),
  // ranked by key, then by their rank here: MPI_Comm_split of the library's
  // duplicate, collective over this communicator. The new Comm duplicates
  // the result in turn (its base() is the split, its library traffic goes on
  // the duplicate), so its messages never match this Comm's, another
  // split's, or a user's. A negative color throws std::invalid_argument
  // after taking part in the split as MPI_UNDEFINED, so the other ranks are
  // not left waiting and still get theirs.
  Comm split(int color, int key) {
    if (timed()) usable();
    MPI_Comm sub = MPI_COMM_NULL;
    check(MPI_Comm_split(raw_, color < 0 ? MPI_UNDEFINED : color, key, &sub), "MPI_Comm_split", -1,
          -1);
    if (color < 0)
      topocoll::detail::invalid("mpi::Comm::split", rank_, size_, "color ", color,
                                " is negative, need color >= 0");
    return Comm(boost::mpi::communicator(sub, boost::mpi::comm_take_ownership), opt_);
  }

  template <class T>
  void send(int dest, int tag, std::span<const T> data) {
    check_peer("send", "destination", dest);
    const detail::bytes b = detail::wire(lib_, data, sbuf_);
    send_bytes(dest, tag, b.data, b.size);
  }
  template <class T>
  void send(int dest, int tag, std::span<T> data) {
    send(dest, tag, std::span<const T>(data));
  }

  template <class T>
  void recv(int source, int tag, std::span<T> data) {
    static_assert(!std::is_const_v<T>, "topocoll::mpi::Comm::recv needs a writable buffer");
    check_peer("recv", "source", source);
    receive(source, tag, data);
  }

  // A started send (core/nonblocking.hpp; requests.hpp).
  // Its waits poll and suspend a started collective's fiber (core/progress.hpp).
  static constexpr bool topocoll_resumable = true;

  using request = detail::send_request;

  // Starts a send (MPI_Isend) and returns at once. A trivially copyable span
  // goes in place: it must stay valid and unchanged until wait_all; other
  // types are serialized into the request now.
  template <class T>
  request isend(int dest, int tag, std::span<const T> data) {
    check_peer("isend", "destination", dest);
    if (timed()) usable();
    request r;
    if constexpr (!std::is_trivially_copyable_v<T>) {
      spare_.take(r.buf_);  // a buffer a completed isend gave back: no allocation
      r.orphans_ = orphans_;
    }
    const detail::bytes b = detail::wire(lib_, data, r.buf_);
    r.to_ = {dest, tag, b.size};
    post_marker(dest, tag, b, r.marker_);
    detail::byte_type bt(b.size, opt_.max_int_bytes);  // MPI keeps the type alive while in use
    check(MPI_Isend(b.data, bt.count(), bt.type(), dest, tag, raw_, &r.req_), "MPI_Isend", dest,
          tag);
    return r;
  }
  template <class T>
  request isend(int dest, int tag, std::span<T> data) {
    return isend(dest, tag, std::span<const T>(data));
  }

  // Completes every request (MPI_Waitall); each is empty afterwards.
  void wait_all(std::span<request> reqs) {
    if (polled()) return wait_all_timed(reqs);
    constexpr std::size_t small = 32;  // requests; each has a message and maybe a marker
    MPI_Request local[2 * small];
    std::vector<MPI_Request> heap;
    MPI_Request* h = local;
    if (reqs.size() > small) {
      heap.resize(2 * reqs.size());
      h = heap.data();
    }
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      h[2 * i] = reqs[i].req_;
      h[2 * i + 1] = reqs[i].marker_;
    }
    const int rc = MPI_Waitall(static_cast<int>(2 * reqs.size()), h, MPI_STATUSES_IGNORE);
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      reqs[i].req_ = h[2 * i];
      reqs[i].marker_ = h[2 * i + 1];
    }
    check(rc, "MPI_Waitall (isend)", -1, -1);
    for (request& r : reqs) {
      r.req_ = r.marker_ = MPI_REQUEST_NULL;
      spare_.keep(r.buf_);
    }
  }

  // Sends and receives at once; never deadlocks, whatever the sizes.
  template <class T, class U>
  void sendrecv(int dest, std::span<T> out, int source, std::span<U> in, int tag) {
    using V = std::remove_const_t<T>;
    static_assert(std::is_same_v<V, U>,
                  "topocoll::mpi::Comm::sendrecv: send and receive element types differ");
    check_peer("sendrecv", "destination", dest);
    check_peer("sendrecv", "source", source);
    const detail::bytes b = detail::wire(lib_, std::span<const V>(out), sbuf_);
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};  // the marker, the message
    post_marker(dest, tag, b, req[0]);
    {
      detail::byte_type bt(b.size, opt_.max_int_bytes);
      check(MPI_Isend(b.data, bt.count(), bt.type(), dest, tag, raw_, &req[1]), "MPI_Isend", dest,
            tag);
    }
    const wait_for sent{waiting::receipt_by, dest, tag, b.size, 0};
    try {
      receive(source, tag, in);
    } catch (...) {
      // The caller may reuse or free `out` once we leave: complete the send
      // first. Its partner runs the matching sendrecv, so it will arrive
      // (with a timeout: unless the receive timed out, or within the limit).
      if (polled()) {
        if (req[0] == MPI_REQUEST_NULL || settle(req[0], sent))
          settle(req[1], sent);
        else
          MPI_Request_free(&req[1]);
      } else
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
      throw;
    }
    if (polled()) {
      const auto start = clock::now();
      complete(req[0], sent, start);
      return complete(req[1], sent, start);
    }
    check(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), "MPI_Waitall (send)", dest, tag);
  }

 private:
  // wait_all within the timeout (one deadline for all); a request that does
  // not complete stays in its `request`, which hands it to MPI when destroyed.
  void wait_all_timed(std::span<request> reqs) {
    usable();
    const auto start = clock::now();
    for (request& r : reqs)
      for (MPI_Request* q : {&r.marker_, &r.req_}) {
        int done = 0;
        auto completed = [&] {
          check(MPI_Test(q, &done, MPI_STATUS_IGNORE), "MPI_Test (isend)", r.to_.dest, r.to_.tag);
          return done != 0;
        };
        if (*q != MPI_REQUEST_NULL && !poll(completed, start))
          timed_out({waiting::receipt_by, r.to_.dest, r.to_.tag, r.to_.bytes, 0}, start);
      }
    for (request& r : reqs) spare_.keep(r.buf_);
  }

  // Serialization buffer of sent messages (non-trivially-copyable T only),
  // kept to reuse its capacity.
  detail::packed_buffer sbuf_;
  detail::spare_buffers spare_;
  // Serialized messages of abandoned isends (error path only), kept alive for
  // MPI until the last copy of this Comm goes.
  std::shared_ptr<std::vector<detail::packed_buffer>> orphans_ =
      std::make_shared<std::vector<detail::packed_buffer>>();
};

static_assert(Transport<Comm>);
static_assert(SplittableTransport<Comm>);
static_assert(NonblockingTransport<Comm, double>);
static_assert(NonblockingTransport<Comm, std::string>);
static_assert(AgreementTransport<Comm>);
static_assert(ResumableTransport<Comm>);

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi
