#pragma once
// From the ranks' recorded calls (model/recording.hpp) to times: a
// discrete-event pass over the p schedules, in the manner of LogGOPSim.
//
// Each rank runs its calls in order on its own clock. A send starts when its
// rank reaches it; a message costs
//
//   t_s + t_h * hops + t_w * m * c                  (routing::cut_through)
//   hops * (t_s + t_w * m * c) + t_h * hops         (routing::store_and_forward)
//
// where hops is the length of its route on the network and c the largest
// number of messages on one directed link of that route at the moment it
// starts, itself included. All messages that start at the same instant are
// placed on their links before any of them is priced, so each sees the others
// (the seeds' "multiply the t_w term by the number of messages sharing the
// link"); a message's c is fixed when it starts. A message is active on every
// link of its route from its start until it has arrived (under
// store-and-forward too, which makes its c an upper bound).
//
// A rank's own messages leave it one at a time per outgoing link (port): a
// send posted while an earlier one of the rank still occupies the same first
// link starts when that one has arrived. Sends on different first links (the
// dimensions of a hypercube, both directions of a ring, every pair of
// complete(p)) travel at once. Where the network's receives are
// one_at_a_time, a message also starts no earlier than the arrival of the
// message sent to the same rank before it: a rank takes one at a time.
//
// Sends are eager (they do not wait for the receive to be posted): a blocking
// send and the send half of a sendrecv end when the message has arrived; a
// posted send (isend) ends when it has arrived, which wait_all waits for; a
// receive ends when its message has arrived, or at once if it already has.
// Sends and receives match as in MPI: in order per (source, destination, tag).
// A rank's local copies (op::local, where t_r > 0) hold it for t_r per
// element before its next call.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/options.hpp"
#include "../version.hpp"
#include "network.hpp"
#include "recording.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

// The machine's costs: per message (t_s), per element (t_w), per hop (t_h),
// and per element a rank copies in its own memory (t_r: Grama's local
// rearrangement, Eqs. 4.8 and 4.9; 0 leaves local work out of the schedule).
struct cost_params {
  double t_s = 0.0;
  double t_w = 0.0;
  double t_h = 0.0;
  double t_r = 0.0;
};

// The library's two cost types, one a view of the other. The choice (plan/)
// prices by a cost_model (core/options.hpp: per byte, with the
// factors a transport shows); a simulation times by cost_params (per element,
// the seeds' figures). params_of gives a cost_model's t_s and t_w per element
// of elem_bytes; priced_by gives the cost_model `base` with cost's t_s and
// t_w in place of its own, the rest of base kept.
constexpr cost_params params_of(const cost_model& m, std::size_t elem_bytes) {
  return {.t_s = m.ts_us, .t_w = m.tw_us_per_byte * static_cast<double>(elem_bytes)};
}
constexpr cost_model priced_by(cost_model base, const cost_params& cost, std::size_t elem_bytes) {
  base.ts_us = cost.t_s;
  base.tw_us_per_byte = cost.t_w / static_cast<double>(elem_bytes);
  return base;
}

// What a simulation's plan chooses by: opt, whose cost_model takes the
// simulation's t_s and t_w where it has the defaults' (the caller named no
// machine of its own), so that automatic is priced by the costs it is timed
// by. A cost_model with t_s or t_w of its own is kept whole: the choice one
// machine's figures make, timed on another network.
constexpr options choosing_by(options opt, const cost_params& cost, std::size_t elem_bytes) {
  constexpr cost_model defaults{};
  if (opt.cost.ts_us == defaults.ts_us && opt.cost.tw_us_per_byte == defaults.tw_us_per_byte)
    opt.cost = priced_by(opt.cost, cost, elem_bytes);
  return opt;
}

// One message as the simulation timed it (simulate_trace).
struct timed_message {
  int src, dst;
  std::uint64_t count;  // elements
  double start, end;
  int hops;
  int congestion;  // c: messages sharing the busiest link of its route when it started
};

struct result {
  double time = 0;                 // completion time of the slowest rank
  std::uint64_t messages = 0;      // messages sent, all ranks
  int max_congestion = 0;          // the largest c of any message (0: no message)
  std::uint64_t recorded_ops = 0;  // calls recorded, all ranks
};

namespace detail {

// How many active messages use each directed link: an array where the link
// ids are few enough, a hash map otherwise (complete(p) at large p).
class link_load {
 public:
  explicit link_load(std::uint64_t links) {
    if (links <= (std::uint64_t{1} << 27)) dense_.assign(links, 0);
  }
  int add(std::uint64_t link, int d) {
    if (!dense_.empty()) return static_cast<int>(dense_[link] += static_cast<std::uint32_t>(d));
    auto it = sparse_.try_emplace(link, 0).first;
    const int n = static_cast<int>(it->second += static_cast<std::uint32_t>(d));
    if (n == 0) sparse_.erase(it);
    return n;
  }
  int get(std::uint64_t link) const {
    if (!dense_.empty()) return static_cast<int>(dense_[link]);
    auto it = sparse_.find(link);
    return it == sparse_.end() ? 0 : static_cast<int>(it->second);
  }

 private:
  std::vector<std::uint32_t> dense_;
  std::unordered_map<std::uint64_t, std::uint32_t> sparse_;
};

// Events by time: many share one instant (a step of a collective), so each
// instant keeps a list, and the instants are kept in order.
class calendar {
 public:
  void push(double t, std::int32_t x) { at_[t].push_back(x); }
  bool empty() const { return at_.empty(); }
  double first() const { return at_.begin()->first; }
  // The events of the first instant, removed.
  std::vector<std::int32_t> take_first() {
    std::vector<std::int32_t> v = std::move(at_.begin()->second);
    at_.erase(at_.begin());
    return v;
  }

 private:
  std::map<double, std::vector<std::int32_t>> at_;
};

class timeline {
 public:
  timeline(const schedule_log& log, const network& net, const cost_params& cost,
           std::vector<timed_message>* trace)
      : log_(log),
        net_(net),
        cost_(cost),
        trace_(trace),
        load_(net.links()),
        ranks_(static_cast<std::size_t>(log.p())),
        posted_(static_cast<std::size_t>(log.p())),
        recv_tail_(
            net.receive_model() == receives::one_at_a_time ? static_cast<std::size_t>(log.p()) : 0,
            -1) {}

  result run() {
    for (int r = 0; r < log_.p(); ++r) ready_.push(0.0, r);
    constexpr double never = std::numeric_limits<double>::infinity();
    while (!ready_.empty() || !deferred_.empty()) {
      const double t = std::min(ready_.empty() ? never : ready_.first(),
                                deferred_.empty() ? never : deferred_.first());
      retire(t);
      if (!deferred_.empty() && deferred_.first() == t)
        for (std::int32_t id : deferred_.take_first()) batch_.push_back({id, t});
      if (!ready_.empty() && ready_.first() == t) run_ranks(ready_.take_first(), t);
      resolve(t);
    }
    if (finished_ != log_.p()) deadlock();
    res_.recorded_ops = log_.size();
    return res_;
  }

 private:
  static constexpr std::uint64_t no_link = network::no_link;
  enum flag : std::uint8_t { resolved = 1, sender_waits = 2, receiver_waits = 4 };
  struct message {
    double end;
    std::uint64_t count;
    std::int32_t src, dst;
    std::int32_t next;       // the next unmatched message of its channel
    std::int32_t next_port;  // the rank's next message queued behind it on its first link
    std::uint8_t refs, flags;
    std::int32_t next_recv = -1;  // the next message to its destination, queued behind it
    std::uint8_t waits = 0;       // messages ahead of it, in its queues, not yet priced
    double ready_at = 0;          // when those ahead of it that are priced have arrived
  };
  struct rank_state {
    std::size_t pc = 0;
    std::int32_t self = -1;      // the current send / exchange's message
    std::int32_t got = -1;       // the message matched to the current receive
    std::uint32_t req_base = 0;  // the request id of posted_[r][0]
    bool at_recv = false;        // waiting for a message nobody has sent yet
    bool copying = false;        // in the local copies of ops[pc] until it is ready again
    bool done = false;
  };
  struct pending {
    std::int32_t id;
    double start;
  };

  // Runs the ranks rs at time t. Their next calls lie far apart in the log: a
  // few ranks ahead, the rank's state and then its next call are fetched.
  void run_ranks(const std::vector<std::int32_t>& rs, double t) {
    constexpr std::size_t ahead = 8;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      if (i + 2 * ahead < rs.size())
        __builtin_prefetch(&ranks_[static_cast<std::size_t>(rs[i + 2 * ahead])]);
      if (i + ahead < rs.size()) {
        const int r = rs[i + ahead];
        const std::span<const op> ops = log_.of(r);
        const std::size_t pc = ranks_[static_cast<std::size_t>(r)].pc;
        if (pc < ops.size()) __builtin_prefetch(&ops[pc]);
      }
      step(rs[i], t);
    }
  }

  // Runs rank r from time t until it must wait.
  void step(int r, double t) {
    const std::span<const op> ops = log_.of(r);
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    while (s.pc < ops.size()) {
      const op& o = ops[s.pc];
      if (o.kind == op::post) {
        posted_[static_cast<std::size_t>(r)].push_back(start(r, o, t));
      } else if (o.kind == op::send || o.kind == op::exchange) {
        if (s.self < 0) s.self = start(r, o, t);
        if (o.kind == op::send) {
          if (!await(s.self, r, t, sender_waits)) return;
          release(std::exchange(s.self, -1));
        }
      } else if (o.kind == op::recv) {
        if (!receive(r, o, t)) return;
      } else if (o.kind == op::local) {
        if (!copy(s, r, o, t)) return;
      } else if (!wait(r, o, t)) {
        return;
      }
      ++s.pc;
    }
    if (!s.done) {
      s.done = true;
      ++finished_;
      res_.time = std::max(res_.time, t);
    }
  }

  // Whether rank r's local copies o are done by t; if not, it is busy with
  // them until t + t_r * count.
  bool copy(rank_state& s, int r, const op& o, double t) {
    if (std::exchange(s.copying, false)) return true;
    const double busy = cost_.t_r * static_cast<double>(o.count());
    if (busy <= 0) return true;
    s.copying = true;
    ready_.push(t + busy, r);
    return false;
  }

  bool receive(int r, const op& o, double t) {
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    if (s.got < 0) {
      s.got = match(static_cast<int>(o.peer), r, o.tag);
      if (s.got < 0) return !(s.at_recv = true);
    }
    if (!await(s.got, r, t, receiver_waits)) return false;
    if (s.self >= 0 && !await(s.self, r, t, sender_waits)) return false;
    release(std::exchange(s.got, -1));
    if (s.self >= 0) release(std::exchange(s.self, -1));
    return true;
  }

  bool wait(int r, const op& o, double t) {
    auto& reqs = posted_[static_cast<std::size_t>(r)];
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    const std::size_t first = o.peer - s.req_base, n = o.count();
    for (std::size_t i = first; i < first + n; ++i)
      if (!await(reqs.at(i), r, t, sender_waits)) return false;
    for (std::size_t i = first; i < first + n; ++i) release(std::exchange(reqs[i], -1));
    std::size_t k = 0;
    while (k < reqs.size() && reqs[k] < 0) ++k;
    reqs.erase(reqs.begin(), reqs.begin() + static_cast<std::ptrdiff_t>(k));
    s.req_base += static_cast<std::uint32_t>(k);
    return true;
  }

  // Whether message id has arrived by t; if not, rank r waits for it.
  bool await(std::int32_t id, int r, double t, flag side) {
    message& m = msgs_[static_cast<std::size_t>(id)];
    if (!(m.flags & resolved)) {
      m.flags |= side;
      return false;
    }
    if (m.end > t) {
      ready_.push(m.end, r);
      return false;
    }
    return true;
  }

  std::int32_t start(int r, const op& o, double t) {
    const std::int32_t id = alloc();
    const int dst = static_cast<int>(o.peer);
    msgs_[static_cast<std::size_t>(id)] = {
        std::numeric_limits<double>::infinity(), o.count(), r, dst, -1, -1, 3, 0};
    inject(id, t);
    ++res_.messages;
    rank_state& d = ranks_[static_cast<std::size_t>(dst)];
    const op* want = d.at_recv ? &log_.of(dst)[d.pc] : nullptr;
    if (want && static_cast<int>(want->peer) == r && want->tag == o.tag) {
      d.at_recv = false;
      d.got = id;
      msgs_[static_cast<std::size_t>(id)].flags |= receiver_waits;
    } else {
      auto [it, fresh] = channels_.try_emplace(key(r, dst, o.tag), id, id);
      if (!fresh) msgs_[static_cast<std::size_t>(std::exchange(it->second.second, id))].next = id;
    }
    return id;
  }

  // Message id starts at t, or once the rank's messages ahead of it on the
  // same first link have arrived, and (receives one_at_a_time) those sent to
  // its destination before it.
  void inject(std::int32_t id, double t) {
    message& m = msgs_[static_cast<std::size_t>(id)];
    m.ready_at = t;
    const std::uint64_t port = net_.first_link(m.src, m.dst);
    if (port != no_link) {
      auto [it, fresh] = port_tail_.try_emplace(port, id);
      if (!fresh) queue_behind(std::exchange(it->second, id), id, &message::next_port);
    }
    if (!recv_tail_.empty() && m.src != m.dst) {
      std::int32_t& tail = recv_tail_[static_cast<std::size_t>(m.dst)];
      if (tail >= 0) queue_behind(tail, id, &message::next_recv);
      tail = id;
    }
    if (m.waits == 0) start_at(id, t);
  }

  // Message id queued behind message `ahead` (its link `next` points at id
  // until ahead is priced).
  void queue_behind(std::int32_t ahead, std::int32_t id, std::int32_t message::*next) {
    message& a = msgs_[static_cast<std::size_t>(ahead)];
    message& m = msgs_[static_cast<std::size_t>(id)];
    if (!(a.flags & resolved)) {
      a.*next = id;
      ++m.waits;
    } else {
      m.ready_at = std::max(m.ready_at, a.end);
    }
  }

  // The message queued behind one that has been priced to arrive at `end`.
  void unblock(std::int32_t id, double end) {
    if (id < 0) return;
    message& m = msgs_[static_cast<std::size_t>(id)];
    m.ready_at = std::max(m.ready_at, end);
    if (--m.waits == 0) deferred_.push(m.ready_at, id);
  }

  // Message id, nothing ahead of it unpriced, starts once those have arrived.
  void start_at(std::int32_t id, double t) {
    const double at = msgs_[static_cast<std::size_t>(id)].ready_at;
    if (at > t)
      deferred_.push(at, id);
    else
      batch_.push_back({id, t});
  }

  std::int32_t match(int src, int dst, int tag) {
    auto it = channels_.find(key(src, dst, tag));
    if (it == channels_.end()) return -1;
    const std::int32_t id = it->second.first;
    const std::int32_t next = msgs_[static_cast<std::size_t>(id)].next;
    if (next < 0)
      channels_.erase(it);
    else
      it->second.first = next;
    return id;
  }

  // Prices the messages that started at t, each seeing all the others.
  void resolve(double t) {
    for (const pending& b : batch_) {
      const message& m = msgs_[static_cast<std::size_t>(b.id)];
      net_.route(m.src, m.dst, [&](std::uint64_t l) { load_.add(l, 1); });
    }
    for (const pending& b : batch_) {
      message& m = msgs_[static_cast<std::size_t>(b.id)];
      int c = 1;
      const int hops =
          net_.route(m.src, m.dst, [&](std::uint64_t l) { c = std::max(c, load_.get(l)); });
      m.end = t + duration(hops, m.count, c);
      m.flags |= resolved;
      unblock(m.next_port, m.end);
      unblock(m.next_recv, m.end);
      res_.max_congestion = std::max(res_.max_congestion, c);
      retiring_.push(m.end, b.id);
      if (m.flags & sender_waits) ready_.push(m.end, m.src);
      if (m.flags & receiver_waits) ready_.push(m.end, m.dst);
      if (trace_) trace_->push_back({m.src, m.dst, m.count, b.start, m.end, hops, c});
    }
    batch_.clear();
  }

  // A message's time on the network: cut-through pays the start-up and the
  // words once, store-and-forward once per hop (a message to itself, once).
  double duration(int hops, std::uint64_t count, int c) const {
    const double one_hop = cost_.t_s + cost_.t_w * static_cast<double>(count) * c;
    const int paid = net_.routing_model() == routing::store_and_forward ? std::max(hops, 1) : 1;
    return paid * one_hop + cost_.t_h * hops;
  }

  // Takes the messages that have arrived by t off their links.
  void retire(double t) {
    while (!retiring_.empty() && retiring_.first() <= t)
      for (std::int32_t id : retiring_.take_first()) {
        const message& m = msgs_[static_cast<std::size_t>(id)];
        std::uint64_t port = no_link;
        net_.route(m.src, m.dst, [&](std::uint64_t l) {
          if (port == no_link) port = l;
          load_.add(l, -1);
        });
        if (auto it = port_tail_.find(port); it != port_tail_.end() && it->second == id)
          port_tail_.erase(it);
        if (!recv_tail_.empty() && recv_tail_[static_cast<std::size_t>(m.dst)] == id)
          recv_tail_[static_cast<std::size_t>(m.dst)] = -1;
        release(id);
      }
  }

  std::int32_t alloc() {
    if (!free_.empty()) {
      const std::int32_t id = free_.back();
      free_.pop_back();
      return id;
    }
    if (msgs_.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw std::length_error("topocoll::model::simulate: more than 2^31 messages in flight");
    msgs_.push_back({});
    return static_cast<std::int32_t>(msgs_.size() - 1);
  }
  void release(std::int32_t id) {
    if (--msgs_[static_cast<std::size_t>(id)].refs == 0) free_.push_back(id);
  }

  static std::uint64_t key(int src, int dst, int tag) {
    return (static_cast<std::uint64_t>(src) << 36) | (static_cast<std::uint64_t>(dst) << 8) |
           static_cast<std::uint64_t>(tag);
  }

  [[noreturn]] void deadlock() const {
    for (std::size_t r = 0; r < ranks_.size(); ++r)
      if (!ranks_[r].done) {
        const op& o = log_.of(static_cast<int>(r))[ranks_[r].pc];
        throw std::logic_error("topocoll::model::simulate: the schedule deadlocks: rank " +
                               std::to_string(r) + " waits at call " +
                               std::to_string(ranks_[r].pc) + " (peer " + std::to_string(o.peer) +
                               ")");
      }
    throw std::logic_error("topocoll::model::simulate: the schedule deadlocks");
  }

  const schedule_log& log_;
  const network& net_;
  cost_params cost_;
  std::vector<timed_message>* trace_;
  link_load load_;
  std::vector<rank_state> ranks_;
  std::vector<std::vector<std::int32_t>> posted_;  // per rank: its unwaited requests' messages
  std::unordered_map<std::uint64_t, std::pair<std::int32_t, std::int32_t>> channels_;  // unmatched
  std::vector<message> msgs_;
  std::vector<std::int32_t> free_;
  std::unordered_map<std::uint64_t, std::int32_t>
      port_tail_;  // link -> last message injected on it
  // receives one_at_a_time: rank -> the last message sent to it
  std::vector<std::int32_t> recv_tail_;
  std::vector<pending> batch_;
  calendar ready_, retiring_, deferred_;  // ranks to run; messages to retire; queued injections
  int finished_ = 0;
  result res_;
};

}  // namespace detail
}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model
