#pragma once
// loopback::Comm, one rank's handle on a loopback world: send, recv,
// sendrecv, isend and wait_all with MPI's standard-mode semantics, and split
// (doc/transports.md, "loopback").

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "../../core/agreement.hpp"
#include "../../core/concepts.hpp"
#include "../../core/errors.hpp"
#include "../../core/nonblocking.hpp"
#include "../../version.hpp"
#include "mailbox.hpp"
#include "world.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback {

// One rank's handle on a loopback world; models topocoll::Transport.
class Comm {
 public:
  Comm(detail::world& w, int rank) : w_(&w), me_(rank), rank_(rank), size_(w.size()) {}
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  Comm(Comm&&) noexcept = default;
  Comm& operator=(Comm&&) noexcept = default;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // The communicator of the ranks here that pass the same color (>= 0),
  // ranked by key, then by their rank here (MPI_Comm_split). Collective: every
  // rank calls it, and a rank that does not leaves the others waiting "in
  // split", which deadlock detection reports. Its messages never match those
  // of this or any other communicator, and a deadlock names its ranks as
  // "rank 1 (rank 3 of the parent)". A negative color throws
  // std::invalid_argument once the rank has taken part, so the others still
  // get theirs. The result must not outlive run(), and a rank uses all its
  // communicators from its own thread, one call at a time.
  Comm split(int color, int key) {
    const std::vector<int> mine{color, key};
    std::vector<int> got(2);  // {context, rank}; context -1: no group
    Comm ctl = control();
    if (rank_ == 0) {
      got = lead_split(ctl, mine);
    } else {
      ctl.send(0, detail::split_tag, std::span<const int>(mine));
      ctl.recv(0, detail::split_tag, std::span<int>(got));
    }
    if (color < 0)
      topocoll::detail::invalid("loopback::Comm::split", rank_, size_, "color ", color,
                                " is negative, need color >= 0");
    return Comm(*w_, me_, got[1], w_->group_of(got[0]));
  }

  template <class T>
  void send(int dest, int tag, std::span<const T> data) {
    auto e = post<T>("send", dest, tag, data);
    if (e->rendezvous()) w_->complete(me_, e);
  }
  template <class T>
  void send(int dest, int tag, std::span<T> data) {
    send(dest, tag, std::span<const T>(data));
  }

  // A started send (core/nonblocking.hpp): move-only, and empty unless it
  // holds a rendezvous message no wait_all has completed yet. One destroyed
  // while pending withdraws its message, or waits for the receiver's copy if it
  // has begun, so no reader outlives the sender's buffer.
  class request {
   public:
    request() = default;
    request(request&& o) noexcept : w_(o.w_), rank_(o.rank_), e_(std::move(o.e_)) {}
    request& operator=(request&& o) noexcept {
      if (this != &o) {
        abandon();
        w_ = o.w_;
        rank_ = o.rank_;
        e_ = std::move(o.e_);
      }
      return *this;
    }
    ~request() { abandon(); }
    bool pending() const { return e_ != nullptr; }

   private:
    friend class Comm;
    void abandon() noexcept {
      if (!e_) return;
      w_->abandon(rank_, e_);
      e_.reset();
    }
    detail::world* w_ = nullptr;
    int rank_ = -1;
    detail::envelope_ptr e_;  // a rendezvous message, until completed
  };

  // Starts a send and returns at once: an eager or
  // non-trivially-copyable message is copied now and its request is empty; a
  // rendezvous one reads `data` when received, so `data` must stay valid and
  // unchanged until wait_all has returned for the request.
  template <class T>
  request isend(int dest, int tag, std::span<const T> data) {
    auto e = post<T>("isend", dest, tag, data);
    request r;
    if (e->rendezvous()) {
      r.w_ = w_;
      r.rank_ = me_;
      r.e_ = std::move(e);
    }
    return r;
  }
  template <class T>
  request isend(int dest, int tag, std::span<T> data) {
    return isend(dest, tag, std::span<const T>(data));
  }

  // Blocks until every request's message has been copied by its receiver, in
  // the order given (the rank waits "in send" for the first one not yet
  // copied, for deadlock detection); every request is empty afterwards. On
  // abort or deadlock the requests not yet complete are withdrawn and the
  // error is thrown.
  void wait_all(std::span<request> reqs) {
    std::size_t i = 0;
    try {
      for (; i < reqs.size(); ++i) {
        request& r = reqs[i];
        if (!r.e_) continue;
        r.w_->complete(r.rank_, r.e_);
        r.e_.reset();
      }
    } catch (...) {
      for (; i < reqs.size(); ++i) reqs[i].abandon();
      throw;
    }
  }

  template <class T>
  void recv(int source, int tag, std::span<T> data) {
    static_assert(!std::is_const_v<T>, "loopback::Comm::recv needs a writable buffer");
    check_peer("recv", "source", source);
    w_->receive(me_, {detail::wait_kind::recv, run_rank(source), tag, ctx_},
                [&](detail::envelope& e) { deliver(e, source, data); });
  }

  // Sends and receives at once: the send is posted first, so two ranks that
  // sendrecv with each other never deadlock, whatever the message sizes.
  template <class T, class U>
  void sendrecv(int dest, std::span<T> out, int source, std::span<U> in, int tag) {
    using V = std::remove_const_t<T>;
    static_assert(std::is_same_v<V, U>,
                  "loopback::Comm::sendrecv: send and receive element types differ");
    auto e = post<V>("sendrecv", dest, tag, std::span<const V>(out));
    try {
      recv(source, tag, in);
    } catch (...) {
      if (e->rendezvous()) w_->cancel(me_, e);
      throw;
    }
    if (e->rendezvous()) w_->complete(me_, e);
  }

  // The agreement check (core/agreement.hpp; options::check): whether it is
  // on, and its one allreduce, on this communicator's control context: rank
  // 0 gathers the records, reduces them under MINLOC and sends each rank the
  // result. A rank that never joins is a deadlock like any other, reported
  // as "waits in the agreement check".
  bool checks_agreement() const { return checking(w_->opts().check); }
  agreement_record agreement_allreduce(const agreement_record& in) {
    Comm ctl = control();
    agreement_record out = in;
    if (rank_ != 0) {
      ctl.send(0, detail::agreement_tag, std::span<const agreement_entry>(in));
      ctl.recv(0, detail::agreement_tag, std::span<agreement_entry>(out));
      return out;
    }
    agreement_record got;
    for (int r = 1; r < size_; ++r) {
      ctl.recv(r, detail::agreement_tag, std::span<agreement_entry>(got));
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = min_location(out[i], got[i]);
    }
    for (int r = 1; r < size_; ++r)
      ctl.send(r, detail::agreement_tag, std::span<const agreement_entry>(out));
    return out;
  }

 private:
  Comm(detail::world& w, int me, int rank, detail::group_ptr g)
      : w_(&w),
        me_(me),
        rank_(rank),
        size_(static_cast<int>(g->run.size())),
        ctx_(g->context),
        g_(std::move(g)) {}

  int run_rank(int r) const { return g_ ? g_->run[static_cast<std::size_t>(r)] : r; }

  // This communicator on the context of its splits (ctx_ + 1).
  Comm control() const {
    Comm c = g_ ? Comm(*w_, me_, rank_, g_) : Comm(*w_, me_);
    c.ctx_ += 1;
    return c;
  }

  // Rank 0's part of split: gathers every rank's {color, key}, forms the
  // groups, and sends each rank its {context, rank}; returns its own.
  std::vector<int> lead_split(Comm& ctl, const std::vector<int>& mine) {
    const auto p = static_cast<std::size_t>(size_);
    std::vector<int> asked(2 * p), told(2 * p, -1);
    std::copy(mine.begin(), mine.end(), asked.begin());
    for (int r = 1; r < size_; ++r)
      ctl.recv(r, detail::split_tag,
               std::span<int>(asked).subspan(2 * static_cast<std::size_t>(r), 2));
    std::vector<int> order(p);
    std::iota(order.begin(), order.end(), 0);
    auto color = [&](int r) { return asked[2 * static_cast<std::size_t>(r)]; };
    auto key = [&](int r) { return asked[2 * static_cast<std::size_t>(r) + 1]; };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return std::pair(color(a), key(a)) < std::pair(color(b), key(b));
    });
    for (std::size_t i = 0, j = 0; i < p; i = j) {  // [i, j): one color
      while (j < p && color(order[j]) == color(order[i])) ++j;
      if (color(order[i]) < 0) continue;
      std::vector<int> run, parent(order.begin() + i, order.begin() + j);
      for (int r : parent) run.push_back(run_rank(r));
      const int context = w_->add_group(std::move(run), parent)->context;
      for (std::size_t k = i; k < j; ++k) {
        told[2 * static_cast<std::size_t>(order[k])] = context;
        told[2 * static_cast<std::size_t>(order[k]) + 1] = static_cast<int>(k - i);
      }
    }
    for (int r = 1; r < size_; ++r)
      ctl.send(r, detail::split_tag,
               std::span<const int>(told).subspan(2 * static_cast<std::size_t>(r), 2));
    return {told[0], told[1]};
  }

  void check_peer(const char* op, const char* what, int peer) const {
    if (peer < 0 || peer >= size())
      topocoll::detail::invalid(std::string("loopback::Comm::") + op, rank_, size(), what, " ",
                                peer, " is outside [0, ", size(), ")");
  }

  template <class T>
  detail::envelope_ptr post(const char* op, int dest, int tag, std::span<const T> data) {
    check_peer(op, "destination", dest);
    auto e = std::make_shared<detail::envelope>();
    e->src = me_;
    e->dest = run_rank(dest);
    e->context = ctx_;
    e->tag = tag;
    e->count = data.size();
    e->type = &typeid(T);
    if constexpr (std::is_trivially_copyable_v<T>) {
      const std::size_t n = data.size_bytes();
      if (n > w_->opts().eager_limit) {
        e->borrowed = data.data();
      } else if (n > 0) {
        e->bytes.reset(new std::byte[n]);
        std::memcpy(e->bytes.get(), data.data(), n);
      }
    } else {
      e->objects = std::make_shared<std::vector<T>>(data.begin(), data.end());
    }
    return w_->post(std::move(e));
  }

  template <class T>
  void deliver(detail::envelope& e, int source, std::span<T> data) const {
    if (*e.type != typeid(T))
      throw message_error(topocoll::detail::concat(
          "loopback recv on rank ", rank_, ": the message from rank ", source, " with tag ", e.tag,
          " holds ", e.type->name(), ", the receive buffer ", typeid(T).name()));
    if (e.count != data.size())
      throw message_error(topocoll::detail::concat(
          "loopback recv on rank ", rank_, ": the message from rank ", source, " with tag ", e.tag,
          " has ", e.count, " elements, the receive buffer holds ", data.size()));
    if constexpr (std::is_trivially_copyable_v<T>) {
      const void* from = e.rendezvous() ? e.borrowed : e.bytes.get();
      if (!data.empty()) std::memcpy(data.data(), from, data.size_bytes());
    } else {
      auto& v = *static_cast<std::vector<T>*>(e.objects.get());
      std::move(v.begin(), v.end(), data.begin());
    }
  }

  detail::world* w_;
  int me_;    // the rank in the run: the world's mailboxes are the run's
  int rank_;  // the rank in this communicator
  int size_;
  int ctx_ = 0;          // the context this communicator's messages carry
  detail::group_ptr g_;  // null for the run's own communicator
};

static_assert(topocoll::Transport<Comm>);
static_assert(topocoll::SplittableTransport<Comm>);
static_assert(topocoll::NonblockingTransport<Comm, double>);
static_assert(topocoll::NonblockingTransport<Comm, std::string>);
static_assert(topocoll::AgreementTransport<Comm>);

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback
