#pragma once
// The Boost.MPI transport: topocoll::mpi::Comm models topocoll::Transport over
// a boost::mpi::communicator.
//
//   boost::mpi::environment env(argc, argv);
//   topocoll::mpi::Comm c{boost::mpi::communicator{}};   // collective: dups
//   topocoll::all_reduce<topocoll::Hypercube<>>(c, in, out, std::plus<>{});
//
// Only code that includes this header needs MPI (CMake: topocoll::mpi).
//
// Isolation. The constructor duplicates the communicator it is given
// (MPI_Comm_dup, a collective call over that communicator) and every library
// message travels on the duplicate. A user's own sends and receives on the
// original communicator, whatever their tags, can never match a library
// message or be matched by one. Copies of a Comm share the duplicate (it is
// freed with the last copy, or left to MPI_Finalize). Like a loopback::Comm,
// a Comm is used by one thread at a time; two threads that need collectives
// at once each build their own Comm (each its own duplicate).
// split(color, key) forms a Comm over part of the ranks (MPI_Comm_split),
// with a duplicate of its own in turn.
//
// Messages. A span of trivially copyable T (a user's struct included, no
// registration) is one MPI message of its raw bytes, sent and received in
// place: no size header, no serialization, no temporary, no allocation. Other
// types are serialized with Boost.Serialization into a Boost.MPI packed
// archive (element count first, then the elements) and sent as one message of
// bytes; the receiver checks the count. std::string (any basic_string of a
// trivially copyable character) skips the archive: count, lengths and
// characters are copied into the buffer directly, 3.5x faster. The
// serialization buffers belong to the Comm and keep their capacity.
//
// Counts are std::size_t end to end: a message of more than
// options::max_int_bytes bytes (default INT_MAX) goes as one message of a
// contiguous derived datatype, so sizes above 2^31 bytes travel intact and a
// receiver still checks them as one unit.
//
// Sizes are checked before anything is written: recv probes every message
// but a small one (below): MPI_Mprobe, which also pins the exact message it
// received (thread-safe), a comparison of its size with the buffer, then
// MPI_Mrecv. A mismatch consumes the message into a scratch buffer (so the
// sender is released) and throws topocoll::message_error naming this rank,
// the source, the tag and both sizes. Receiving into the exact-size buffer
// and relying on MPI_ERR_TRUNCATE is not an option: Open MPI 4.1's
// single-copy path (CMA) writes a longer message past the buffer before
// reporting it. MPI errors throw topocoll::mpi::error: the duplicate's error
// handler is MPI_ERRORS_RETURN.
//
// Small messages (options::small_message_bytes = E, 4000 by default; its
// costs and gains: doc/transports.md). With E > 0, a receive that expects 0
// to E bytes does not probe: MPI_Recv into a bounce buffer of C = 1 MiB
// (bounce_bytes; its pages are touched only as far as messages fill it), a
// check of the size received, a copy out. A receive that expects more probes
// as above. What a receive of C bytes can meet and not hold is a message
// longer than C, so such a message goes after a marker: a message of E + 1
// bytes on the same tag (the message's own first bytes), which a small
// receive takes for a mismatch and a probing receive recognizes and skips. A
// message of exactly E + 1 bytes goes after a marker too, so that no message
// is ever mistaken for one. No receive is ever posted for more than its
// buffer holds, whatever sizes the two ranks expect, and a message of 0 to C
// bytes, other than E + 1, travels alone. With E = 0 every receive probes
// and there are no markers. Every rank of a Comm must use the same E (the
// constructor checks).
//
// sendrecv posts its send first (MPI_Isend), then receives as recv does, then
// completes the send: it never deadlocks, whatever the message sizes. A
// probe costs about 0.05 us per message against MPI_Recv on Open MPI 4.1
// shared memory. sendrecv returns, or throws, only once its send buffer may
// be reused.
//
// Timeouts (off by default). With options::timeout, or TOPOCOLL_TIMEOUT=<s>
// in the environment when the Comm is built (it takes precedence; 0: off),
// every blocking wait is bounded: a receive polls (MPI_Improbe), a send or a
// wait tests (MPI_Isend, MPI_Test), yielding the core between polls and then
// sleeping, 20 us doubling to 1 ms (no busy spin on an oversubscribed
// node). A wait that outlasts the timeout throws topocoll::timeout_error
// naming the collective, this rank and p, the peer, the tag, the bytes
// expected and the seconds waited. The communicator is unusable from then on
// (messages of the collective may be in flight): any later call throws
// timeout_error saying so. Sends still pending are handed to MPI
// (MPI_Request_free) and may read their buffers later: end the job (or at
// least keep those buffers). Without a timeout the calls are the untimed ones
// above, unchanged.
//
// Agreement checks. When options::check is on (TOPOCOLL_CHECK=1 takes
// precedence, =0 turns it off; by default on in builds without NDEBUG), every
// collective first checks that all ranks called the same one with the same
// root, per-rank count, element size and algorithm: one allreduce of a fixed
// record of (value, rank) pairs under MPI_MINLOC (MPI_Allreduce, or
// MPI_Iallreduce polled within the timeout), each field once as v
// and once as -v, so every rank learns the smallest and the largest value of
// each field and the lowest rank holding each. If any field differs, every
// rank throws std::invalid_argument naming the field, both values and a rank
// holding each, before any message of the collective is sent.

#include <mpi.h>

#include <boost/core/demangle.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>  // for users: every MPI program needs one
#include <boost/mpi/packed_iarchive.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/string.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "../core/collective_info.hpp"
#include "../core/concepts.hpp"
#include "../core/errors.hpp"
#include "../core/flat_string.hpp"
#include "../core/nonblocking.hpp"
#include "../core/workspace.hpp"  // workspace_retain_bytes

namespace topocoll::mpi {

// An MPI call failed. what() names the call, the rank, the peer, the tag and
// MPI's own error string; code() is the MPI error code.
class error : public std::runtime_error {
 public:
  error(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

struct options {
  // The largest byte count handed to MPI as one int. A larger message is sent
  // as a single message of a derived datatype (blocks of this many bytes plus
  // a remainder). Tests lower it to exercise that path with small messages.
  std::size_t max_int_bytes = static_cast<std::size_t>(INT_MAX);
  // How long one blocking receive or wait may take before it throws
  // topocoll::timeout_error. Zero: no limit (the untimed calls).
  // TOPOCOLL_TIMEOUT=<seconds> takes precedence.
  std::chrono::duration<double> timeout{0};
  // Whether every collective first checks that all ranks agree on it.
  // TOPOCOLL_CHECK=0 or 1 takes precedence.
  enum class agreement { by_build, off, on };
  agreement check = agreement::by_build;  // on without NDEBUG
  // A receive of 0 to this many bytes does not probe (see "Small messages"
  // above); 0: every receive probes. Every rank must give the same value.
  // The default keeps a marker (this many bytes + 1) within Open MPI 4.1's
  // eager limit on shared memory (4040 bytes of payload), and a copy out of
  // the bounce buffer costs no more than the probe it saves.
  // TOPOCOLL_SMALL_MESSAGE_BYTES=<bytes> takes precedence.
  std::size_t small_message_bytes = 4000;
  static constexpr std::size_t max_small_message_bytes = 65536;
};

namespace detail {

using topocoll::detail::concat;

inline std::string error_string(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return concat("MPI error ", code);
  return std::string(buf, static_cast<std::size_t>(len));
}

// A committed datatype covering n contiguous bytes, freed on scope exit (MPI
// lets pending operations that use it complete normally).
class byte_type {
 public:
  // For n <= max: MPI_BYTE, count n. Otherwise one element of a derived type.
  byte_type(std::size_t n, std::size_t max) {
    if (n <= max) [[likely]]
      count_ = static_cast<int>(n);
    else
      derive(n, max);
  }
  byte_type(const byte_type&) = delete;
  byte_type& operator=(const byte_type&) = delete;
  ~byte_type() {
    if (owned_) MPI_Type_free(&type_);
  }
  MPI_Datatype type() const { return type_; }
  int count() const { return count_; }

 private:
  // One element of a derived type of n bytes, built from blocks of at most max.
  [[gnu::noinline]] void derive(std::size_t n, std::size_t max) {
    // block * q + rem = n with q <= INT_MAX
    std::size_t block = max;
    const auto int_max = static_cast<std::size_t>(INT_MAX);
    if (n / block > int_max) block = n / int_max + 1;
    const std::size_t q = n / block, rem = n % block;
    MPI_Datatype blk, body;
    check(MPI_Type_contiguous(static_cast<int>(block), MPI_BYTE, &blk), "MPI_Type_contiguous");
    check(MPI_Type_contiguous(static_cast<int>(q), blk, &body), "MPI_Type_contiguous");
    MPI_Type_free(&blk);
    if (rem == 0) {
      type_ = body;
    } else {
      int lens[2] = {1, static_cast<int>(rem)};
      MPI_Aint disp[2] = {0, static_cast<MPI_Aint>(q * block)};
      MPI_Datatype types[2] = {body, MPI_BYTE};
      const int rc = MPI_Type_create_struct(2, lens, disp, types, &type_);
      MPI_Type_free(&body);
      check(rc, "MPI_Type_create_struct");
    }
    owned_ = true;
    count_ = 1;
    check(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    if (owned_) MPI_Type_free(&type_);
    throw error(concat("topocoll::mpi: ", call, " failed: ", error_string(rc)), rc);
  }
  MPI_Datatype type_ = MPI_BYTE;
  int count_ = 0;
  bool owned_ = false;
};

using packed_buffer = boost::mpi::packed_oarchive::buffer_type;

// opt as the environment amends it: TOPOCOLL_TIMEOUT=<seconds> (0: no
// timeout) and TOPOCOLL_CHECK=0|1, when set, take precedence.
inline options from_environment(options opt) {
  if (const char* v = std::getenv("TOPOCOLL_TIMEOUT"); v && *v) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (*end != '\0' || !std::isfinite(s) || s < 0)
      throw std::invalid_argument(concat("topocoll::mpi::Comm: TOPOCOLL_TIMEOUT=", v,
                                         " is not a number of seconds >= 0 (0: no timeout)"));
    opt.timeout = std::chrono::duration<double>(s);
  }
  if (const char* v = std::getenv("TOPOCOLL_CHECK"); v && *v) {
    const std::string_view c(v);
    if (c != "0" && c != "1")
      throw std::invalid_argument(
          concat("topocoll::mpi::Comm: TOPOCOLL_CHECK=", v, " is neither 0 (off) nor 1 (on)"));
    opt.check = c == "1" ? options::agreement::on : options::agreement::off;
  }
  if (const char* v = std::getenv("TOPOCOLL_SMALL_MESSAGE_BYTES"); v && *v) {
    char* end = nullptr;
    const unsigned long long b = std::strtoull(v, &end, 10);
    if (*end != '\0' || *v == '-' || b > options::max_small_message_bytes)
      throw std::invalid_argument(concat("topocoll::mpi::Comm: TOPOCOLL_SMALL_MESSAGE_BYTES=", v,
                                         " is not a byte count in [0, ",
                                         options::max_small_message_bytes, "] (0: off)"));
    opt.small_message_bytes = static_cast<std::size_t>(b);
  }
  return opt;
}

inline bool checking(options::agreement a) {
#ifdef NDEBUG
  return a == options::agreement::on;
#else
  return a != options::agreement::off;
#endif
}

// std::basic_string of a trivially copyable character type: serialized by
// hand (core/flat_string.hpp), 3.5x faster than the archive's
// element-by-element path (64 KiB of 32-character strings: 14 us to pack and
// unpack, against 52 + 10 us through packed_oarchive / packed_iarchive).
using topocoll::detail::is_flat_string;

}  // namespace detail

// One process's handle on a communicator; models topocoll::Transport.
class Comm {
 public:
  // Duplicates `comm` (collective over it) and works on the duplicate. The
  // ranks must agree on whether the agreement check is on, and on whether
  // there is a timeout (its length may differ): the check is a blocking
  // MPI_Allreduce without one and an MPI_Iallreduce with one, and MPI does not
  // match the two.
  explicit Comm(const boost::mpi::communicator& comm, options opt = {})
      : base_(comm), opt_(detail::from_environment(opt)), lib_(duplicate(comm, opt_)) {
    check(MPI_Comm_set_errhandler(lib_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", -1, -1);
    rank_ = lib_.rank();
    size_ = lib_.size();
    check_ = detail::checking(opt_.check);
    const int small = static_cast<int>(opt_.small_message_bytes);
    int mine[6] = {check_, -int{check_}, timed(), -int{timed()}, small, -small}, all[6];
    check(MPI_Allreduce(mine, all, 6, MPI_INT, MPI_MIN, lib_), "MPI_Allreduce", -1, -1);
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
  // The options in force (the environment's TOPOCOLL_TIMEOUT and
  // TOPOCOLL_CHECK applied).
  const options& opts() const { return opt_; }

  // Called by every collective as it begins and ends (core/collective_info.hpp,
  // collectives/arguments.hpp): the collective is named in a timeout, and,
  // with the agreement check on, every rank checks that all agree on it.
  void begin_collective(const collective_info& info) {
    if (timed()) usable();
    collective_ = info.name;
    if (!check_ || size_ == 1) return;
    try {
      agree(info);
    } catch (...) {
      collective_ = {};
      throw;
    }
  }
  void end_collective() { collective_ = {}; }

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
    check(MPI_Comm_split(lib_, color < 0 ? MPI_UNDEFINED : color, key, &sub), "MPI_Comm_split", -1,
          -1);
    if (color < 0)
      topocoll::detail::invalid("mpi::Comm::split", rank_, size_, "color ", color,
                                " is negative, need color >= 0");
    return Comm(boost::mpi::communicator(sub, boost::mpi::comm_take_ownership), opt_);
  }

  template <class T>
  void send(int dest, int tag, std::span<const T> data) {
    check_peer("send", "destination", dest);
    const bytes b = wire(data, sbuf_);
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

  // A started send (core/nonblocking.hpp): move-only. One destroyed before it
  // completed (an exception unwinding a collective) is handed to MPI with
  // MPI_Request_free: the send still completes when its peer receives it, and
  // nothing waits for that. Waiting could hang (the peer may never receive
  // after an error), and cancelling is no option: Open MPI 4.1 cannot cancel
  // a send (MPI_Cancel succeeds, the MPI_Wait after it never returns). So on
  // that error path only, the caller's buffer must outlive the peer's receive
  // or the peer reads what is there by then; a serialized message is moved to
  // a buffer kept until the Comm's last copy is destroyed.
  class request {
   public:
    request() = default;
    request(request&& o) noexcept
        : req_(std::exchange(o.req_, MPI_REQUEST_NULL)),
          marker_(std::exchange(o.marker_, MPI_REQUEST_NULL)),
          buf_(std::move(o.buf_)),
          orphans_(std::move(o.orphans_)),
          to_(o.to_) {}
    request& operator=(request&& o) noexcept {
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
    ~request() { abandon(); }
    bool pending() const { return req_ != MPI_REQUEST_NULL || marker_ != MPI_REQUEST_NULL; }

   private:
    friend class Comm;
    void abandon() noexcept {
      if (marker_ != MPI_REQUEST_NULL) MPI_Request_free(&marker_);
      if (req_ == MPI_REQUEST_NULL) return;
      MPI_Request_free(&req_);
      req_ = MPI_REQUEST_NULL;
      if (!buf_.empty() && orphans_) orphans_->push_back(std::move(buf_));
    }
    MPI_Request req_ = MPI_REQUEST_NULL;
    MPI_Request marker_ = MPI_REQUEST_NULL;  // the message's marker, if it has one
    detail::packed_buffer buf_;  // the serialized message, for a non-trivially-copyable T
    std::shared_ptr<std::vector<detail::packed_buffer>> orphans_;  // the Comm's, for abandon()
    struct {
      int dest = -1, tag = -1;
      std::size_t bytes = 0;
    } to_;  // where it goes, to name in a timeout
  };

  // Starts a send (MPI_Isend) and returns at once. A trivially copyable span
  // goes in place: it must stay valid and unchanged until wait_all; other
  // types are serialized into the request now.
  template <class T>
  request isend(int dest, int tag, std::span<const T> data) {
    check_peer("isend", "destination", dest);
    if (timed()) usable();
    request r;
    if constexpr (!std::is_trivially_copyable_v<T>) {
      if (!spare_.empty()) {  // a buffer a completed isend gave back: no allocation
        r.buf_ = std::move(spare_.back());
        spare_.pop_back();
        spare_bytes_ -= r.buf_.capacity();
      }
      r.orphans_ = orphans_;
    }
    const bytes b = wire(data, r.buf_);
    r.to_ = {dest, tag, b.size};
    post_marker(dest, tag, b, r.marker_);
    detail::byte_type bt(b.size, opt_.max_int_bytes);  // MPI keeps the type alive while in use
    check(MPI_Isend(b.data, bt.count(), bt.type(), dest, tag, lib_, &r.req_), "MPI_Isend", dest,
          tag);
    return r;
  }
  template <class T>
  request isend(int dest, int tag, std::span<T> data) {
    return isend(dest, tag, std::span<const T>(data));
  }

  // Completes every request (MPI_Waitall); each is empty afterwards.
  void wait_all(std::span<request> reqs) {
    if (timed()) return wait_all_timed(reqs);
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
      keep_buffer(r);
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
    const bytes b = wire(std::span<const V>(out), sbuf_);
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};  // the marker, the message
    post_marker(dest, tag, b, req[0]);
    {
      detail::byte_type bt(b.size, opt_.max_int_bytes);
      check(MPI_Isend(b.data, bt.count(), bt.type(), dest, tag, lib_, &req[1]), "MPI_Isend", dest,
            tag);
    }
    const wait_for sent{waiting::receipt_by, dest, tag, b.size, 0};
    try {
      receive(source, tag, in);
    } catch (...) {
      // The caller may reuse or free `out` once we leave: complete the send
      // first. Its partner runs the matching sendrecv, so it will arrive
      // (with a timeout: unless the receive timed out, or within the limit).
      if (timed()) {
        if (req[0] == MPI_REQUEST_NULL || settle(req[0], sent))
          settle(req[1], sent);
        else
          MPI_Request_free(&req[1]);
      } else
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
      throw;
    }
    if (timed()) {
      const auto start = clock::now();
      complete(req[0], sent, start);
      return complete(req[1], sent, start);
    }
    check(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), "MPI_Waitall (send)", dest, tag);
  }

 private:
  static boost::mpi::communicator duplicate(const boost::mpi::communicator& comm,
                                            const options& opt) {
    if (!comm)
      throw std::invalid_argument("topocoll::mpi::Comm: the communicator is MPI_COMM_NULL");
    if (opt.max_int_bytes == 0 || opt.max_int_bytes > static_cast<std::size_t>(INT_MAX))
      throw std::invalid_argument(topocoll::detail::concat(
          "topocoll::mpi::Comm: options::max_int_bytes = ", opt.max_int_bytes,
          ", need 1 <= max_int_bytes <= INT_MAX"));
    if (opt.small_message_bytes > options::max_small_message_bytes)
      throw std::invalid_argument(topocoll::detail::concat(
          "topocoll::mpi::Comm: options::small_message_bytes = ", opt.small_message_bytes,
          ", need <= ", options::max_small_message_bytes, " (0: off)"));
    if (!(opt.timeout.count() >= 0))
      throw std::invalid_argument(
          topocoll::detail::concat("topocoll::mpi::Comm: options::timeout = ", opt.timeout.count(),
                                   " s, need >= 0 (0: no timeout)"));
    return boost::mpi::communicator(static_cast<MPI_Comm>(comm), boost::mpi::comm_duplicate);
  }

  // ---- timeouts
  using clock = std::chrono::steady_clock;

  bool timed() const { return opt_.timeout.count() > 0; }

  // Throws if an earlier wait timed out.
  void usable() const {
    if (!broken_->empty())
      throw timeout_error(
          topocoll::detail::concat("topocoll::mpi::Comm on rank ", rank_, " of ", size_,
                                   " is unusable: an earlier wait timed out (", *broken_, ")"),
          -1, -1);
  }

  // What a timed wait waits for, to name it in a timeout_error.
  enum class waiting { message_from, receipt_by, every_rank };
  struct wait_for {
    waiting kind;
    int peer;                // -1: every rank
    int tag;                 // -1: none (a collective of MPI)
    std::size_t bytes;       // expected
    std::size_t serialized;  // > 0: a serialized message of this many elements (bytes unknown)
  };

  template <class T>
  wait_for expecting(int source, int tag, std::span<T> data) const {
    if constexpr (std::is_trivially_copyable_v<T>)
      return {waiting::message_from, source, tag, data.size_bytes(), 0};
    else
      return {waiting::message_from, source, tag, 0, data.size()};
  }

  // Calls done() until it returns true (then true) or the timeout has passed
  // since start (then false). It yields the core at first, then sleeps, 20 us
  // doubling to 1 ms: the ranks it waits for may need the core.
  template <class Done>
  bool poll(Done&& done, clock::time_point start) const {
    const auto deadline = start + std::chrono::duration_cast<clock::duration>(opt_.timeout);
    auto nap = std::chrono::microseconds(20);
    for (int i = 0;; ++i) {
      if (done()) return true;
      if (clock::now() >= deadline) return false;
      if (i < 100) {
        std::this_thread::yield();
        continue;
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(1000));
    }
  }

  // What a wait waited for, in words.
  std::string waited_for(const wait_for& w) const {
    using topocoll::detail::concat;
    switch (w.kind) {
      case waiting::every_rank:
        return concat("every rank to join the agreement check (an MPI_Iallreduce of ", w.bytes,
                      " bytes): a rank has not reached ", collective_);
      case waiting::receipt_by:
        return concat("rank ", w.peer, " to receive a message (tag ", w.tag, ", ", w.bytes,
                      " bytes)");
      default:
        if (w.serialized)
          return concat("a message from rank ", w.peer, " (tag ", w.tag, ", ", w.serialized,
                        " serialized elements expected)");
        return concat("a message from rank ", w.peer, " (tag ", w.tag, ", ", w.bytes,
                      " bytes expected)");
    }
  }

  // Marks the communicator unusable and returns the timeout's text.
  std::string expire(const wait_for& w, clock::time_point start) {
    const double waited =
        std::round(std::chrono::duration<double>(clock::now() - start).count() * 100) / 100;
    *broken_ = topocoll::detail::concat(
        "topocoll::", collective_.empty() ? "mpi::Comm" : collective_, " on rank ", rank_, " of ",
        size_, ": timed out after ", waited, " s waiting for ", waited_for(w));
    return *broken_;
  }

  [[noreturn]] void timed_out(const wait_for& w, clock::time_point start) {
    const std::string what = expire(w, start);
    throw timeout_error(what + "; the communicator is unusable from now on", w.peer, w.tag);
  }

  // Whether req completed within the timeout; if not, it is handed to MPI
  // (MPI_Request_free) and the communicator marked unusable.
  bool settle(MPI_Request& req, const wait_for& w, clock::time_point start = clock::now()) {
    int done = 0;
    auto completed = [&] {
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test", w.peer, w.tag);
      return done != 0;
    };
    if (broken_->empty() && poll(completed, start)) return true;
    MPI_Request_free(&req);
    if (broken_->empty()) expire(w, start);
    return false;
  }

  // Completes req within the timeout, or throws timeout_error.
  void complete(MPI_Request& req, const wait_for& w, clock::time_point start) {
    if (!settle(req, w, start))
      throw timeout_error(*broken_ + "; the communicator is unusable from now on", w.peer, w.tag);
  }

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
    for (request& r : reqs) keep_buffer(r);
  }

  // Keeps a completed request's serialization buffer for the next isend.
  void keep_buffer(request& r) {
    const std::size_t cap = r.buf_.capacity();
    if (cap != 0 && spare_.size() < max_spare && spare_bytes_ + cap <= workspace_retain_bytes) {
      spare_bytes_ += cap;
      spare_.push_back(std::move(r.buf_));
    }
  }

  // ---- the agreement check
  // One allreduce of (value, rank) pairs under MPI_MINLOC: every field
  // once as v and once as -v, so each rank learns the smallest and the
  // largest value of every field and the lowest rank holding each. Every rank
  // sees the same result, so all throw, or none.
  void agree(const collective_info& info) {
    struct value_at {  // MPI_LONG_INT
      long value;
      int rank;
    };
    constexpr int n = 5;
    static constexpr const char* field[n] = {"collective", "root", "count", "element size",
                                             "algorithm"};
    const long mine[n] = {
        static_cast<long>(collective_number(info.name)), info.root,
        info.count == collective_info::count_varies ? -1L : static_cast<long>(info.count),
        static_cast<long>(info.element_size), static_cast<long>(info.algo)};
    // With a timeout the record is on the heap: after a timeout the
    // MPI_Iallreduce stays pending (MPI forbids freeing a collective's
    // request) and may still write there, so it is left to MPI for good.
    value_at local[4 * n];
    std::unique_ptr<value_at[]> heap(timed() ? new value_at[4 * n] : nullptr);
    value_at* const in = heap ? heap.get() : local;
    value_at* const out = in + 2 * n;
    for (int f = 0; f < n; ++f) {
      in[2 * f] = {mine[f], rank_};
      in[2 * f + 1] = {-mine[f], rank_};
    }
    if (timed()) {
      MPI_Request req;
      check(MPI_Iallreduce(in, out, 2 * n, MPI_LONG_INT, MPI_MINLOC, lib_, &req), "MPI_Iallreduce",
            -1, -1);
      const auto start = clock::now();
      int done = 0;
      auto completed = [&] {
        check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test (agreement check)", -1, -1);
        return done != 0;
      };
      if (!poll(completed, start)) {
        (void)heap.release();
        timed_out({waiting::every_rank, -1, -1, 2 * n * sizeof(value_at), 0}, start);
      }
    } else {  // twice as fast as MPI_Iallreduce + MPI_Wait (Open MPI 4.1, np 4)
      check(MPI_Allreduce(in, out, 2 * n, MPI_LONG_INT, MPI_MINLOC, lib_), "MPI_Allreduce", -1, -1);
    }
    std::string differ;
    for (int f = 0; f < n; ++f) {
      const long lo = out[2 * f].value, hi = -out[2 * f + 1].value;
      if (lo != hi)
        differ += topocoll::detail::concat(differ.empty() ? "" : "; ", field[f], ": rank ",
                                           out[2 * f].rank, " has ", shown(f, lo), ", rank ",
                                           out[2 * f + 1].rank, " has ", shown(f, hi));
    }
    if (!differ.empty())
      topocoll::detail::invalid(info.name, rank_, size_,
                                "the ranks disagree on this call (agreement check): ", differ);
  }

  // A field of the agreement record in words.
  static std::string shown(int field, long v) {
    using topocoll::detail::concat;
    switch (field) {
      case 0:
        return v >= 0 && v < static_cast<long>(std::size(collective_names))
                   ? std::string(collective_names[v])
                   : std::string("a collective unknown to the check");
      case 1:
        return v == collective_info::no_root ? std::string("no root") : concat(v);
      case 2:
        return v < 0 ? std::string("counts that vary by rank") : concat(v);
      case 3:
        return concat(v, " bytes");
      default:
        return std::string(to_string(static_cast<algorithm>(v)));
    }
  }

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

  // A message's bytes on the wire (see wire()).
  struct bytes {
    const void* data;
    std::size_t size;
  };

  // With small messages on: the size of a marker, E + 1 bytes.
  std::size_t marker_bytes() const { return opt_.small_message_bytes + 1; }

  // Whether a message of n bytes goes after a marker: with small messages on,
  // one longer than the bounce buffer, and one as long as a marker.
  bool marked(std::size_t n) const { return bounce_ && (n > bounce_bytes || n == marker_bytes()); }

  // Starts the marker of message b into req, if it needs one: b's own first
  // marker_bytes() bytes (b is at least that long), whatever they hold.
  void post_marker(int dest, int tag, const bytes& b, MPI_Request& req) {
    if (marked(b.size))
      check(MPI_Isend(b.data, static_cast<int>(marker_bytes()), MPI_BYTE, dest, tag, lib_, &req),
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
    if (timed()) {
      usable();
      MPI_Request req;
      check(MPI_Isend(p, bt.count(), bt.type(), dest, tag, lib_, &req),
            "MPI_Send (as MPI_Isend, timed)", dest, tag);
      return complete(req, {waiting::receipt_by, dest, tag, whole, 0}, clock::now());
    }
    check(MPI_Send(p, bt.count(), bt.type(), dest, tag, lib_), "MPI_Send", dest, tag);
  }

  // Waits for the next message from source with tag; returns its handle and
  // its size in bytes.
  std::size_t probe(int source, int tag, MPI_Message& msg) {
    MPI_Status st;
    check(MPI_Mprobe(source, tag, lib_, &msg, &st), "MPI_Mprobe", source, tag);
    return message_size(st, source, tag);
  }

  // The same within the timeout: polls with MPI_Improbe.
  std::size_t timed_probe(int source, int tag, MPI_Message& msg, const wait_for& w) {
    usable();
    const auto start = clock::now();
    MPI_Status st;
    int found = 0;
    auto arrived = [&] {
      check(MPI_Improbe(source, tag, lib_, &found, &msg, &st), "MPI_Improbe", source, tag);
      return found != 0;
    };
    if (!poll(arrived, start)) timed_out(w, start);
    return message_size(st, source, tag);
  }

  // MPI_Get_count is the cheap call; it gives MPI_UNDEFINED beyond INT_MAX bytes.
  std::size_t message_size(const MPI_Status& st, int source, int tag) {
    int count = MPI_UNDEFINED;
    check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count", source, tag);
    if (count != MPI_UNDEFINED) return static_cast<std::size_t>(count);
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
  // own size: a truncated receive is not safe, Open MPI's single-copy path
  // (CMA) writes the whole message past a too-small buffer. Error path only.
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
      unpack(data, source, tag);
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
    const std::size_t m = timed() ? timed_recv_small(source, tag, w) : recv_small(source, tag);
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
    check(MPI_Recv(bounce_.get(), static_cast<int>(bounce_bytes), MPI_BYTE, source, tag, lib_, &st),
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
        MPI_Irecv(bounce_.get(), static_cast<int>(bounce_bytes), MPI_BYTE, source, tag, lib_, &req),
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

  std::size_t probe_any(int source, int tag, MPI_Message& msg, const wait_for& w) {
    return timed() ? timed_probe(source, tag, msg, w) : probe(source, tag, msg);
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

  // What a message of `data` puts on the wire: data's own bytes when T is
  // trivially copyable (no copy), otherwise data serialized into buf.
  template <class T>
  bytes wire(std::span<const T> data, detail::packed_buffer& buf) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      return {data.data(), data.size_bytes()};
    } else {
      const std::size_t n = pack(data, buf);  // may reallocate: take buf.data() after
      return {buf.data(), n};
    }
  }

  // Serializes data into buf; returns the message's size in bytes.
  template <class T>
  std::size_t pack(std::span<const T> data, detail::packed_buffer& buf) {
    const std::uint64_t n = data.size();
    if constexpr (detail::is_flat_string<T>::value) {
      const std::size_t total = topocoll::detail::flat_size(data);
      if (buf.size() < total) buf.resize(total);  // grows only: no clearing per message
      topocoll::detail::flat_encode(data, buf.data());
      return total;
    } else {
      buf.clear();
      boost::mpi::packed_oarchive oa(lib_, buf);
      oa << n;
      for (const T& x : data) oa << x;
      return buf.size();
    }
  }

  // Deserializes the rbuf_.size() bytes of a message into data.
  template <class T>
  void unpack(std::span<T> data, int source, int tag) {
    auto fail = [&](const std::string& what) {
      throw message_error(topocoll::detail::concat("topocoll::mpi recv on rank ", rank_, " of ",
                                                   size_, ": the message from rank ", source,
                                                   " with tag ", tag, " ", what));
    };
    auto count_differs = [&](std::uint64_t n) {
      fail(topocoll::detail::concat("has ", n, " elements of ",
                                    boost::core::demangle(typeid(T).name()),
                                    ", the receive buffer holds ", data.size()));
    };
    std::uint64_t n = 0;
    if (rbuf_.size() < sizeof n) fail("is too short to hold an element count");
    if constexpr (detail::is_flat_string<T>::value) {
      n = topocoll::detail::flat_count(rbuf_.data(), rbuf_.size());
      if (n != data.size()) count_differs(n);
      if (!topocoll::detail::flat_decode(rbuf_.data(), rbuf_.size(), data))
        fail(topocoll::detail::concat("is not ", n, " serialized strings (", rbuf_.size(),
                                      " bytes)"));
    } else {
      try {
        boost::mpi::packed_iarchive ia(lib_, rbuf_);
        ia >> n;
        if (n != data.size()) count_differs(n);
        for (T& x : data) ia >> x;
      } catch (const message_error&) {
        throw;
      } catch (const std::exception& e) {
        fail(topocoll::detail::concat("could not be deserialized as ", data.size(), " elements of ",
                                      boost::core::demangle(typeid(T).name()), ": ", e.what()));
      }
    }
  }

  boost::mpi::communicator base_;
  options opt_;  // before lib_: the duplicate is made with the options in force
  boost::mpi::communicator lib_;
  int rank_ = 0;
  int size_ = 1;
  bool check_ = false;           // the agreement check is on
  std::string_view collective_;  // the collective running, for a timeout's text
  // The first timeout's text once one occurred; shared by the copies (they
  // share the duplicate, and what is in flight on it).
  std::shared_ptr<std::string> broken_ = std::make_shared<std::string>();
  // Serialization buffers (non-trivially-copyable T only), kept to reuse
  // their capacity.
  detail::packed_buffer sbuf_;
  detail::packed_buffer rbuf_;
  // Where small receives land (options::small_message_bytes; null: off),
  // shared by the copies. Its capacity is the longest message that travels
  // without a marker.
  static constexpr std::size_t bounce_bytes = std::size_t{1} << 20;
  static_assert(options::max_small_message_bytes < bounce_bytes,
                "a marker (small_message_bytes + 1 bytes) must fit the bounce buffer");
  std::shared_ptr<std::byte[]> bounce_;
  // Serialization buffers of completed isends, kept for the next ones: a
  // fresh buffer per message costs fresh pages at every all_to_all of strings. At most max_spare of
  // them, holding at most workspace_retain_bytes (core/workspace.hpp) in all.
  static constexpr std::size_t max_spare = 64;
  std::vector<detail::packed_buffer> spare_;
  std::size_t spare_bytes_ = 0;
  // Serialized messages of abandoned isends (error path only), kept alive for
  // MPI until the last copy of this Comm goes.
  std::shared_ptr<std::vector<detail::packed_buffer>> orphans_ =
      std::make_shared<std::vector<detail::packed_buffer>>();
};

static_assert(Transport<Comm>);
static_assert(SplittableTransport<Comm>);
static_assert(NonblockingTransport<Comm, double>);
static_assert(NonblockingTransport<Comm, std::string>);

}  // namespace topocoll::mpi
