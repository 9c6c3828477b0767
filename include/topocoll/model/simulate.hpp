#pragma once
// model::simulate: the time one collective takes on a physical network,
// predicted by running the library's own kernels for every rank.
//
//   namespace sim = topocoll::model;
//   sim::network net = sim::network::ring(8);
//   sim::cost_params c{.t_s = 100.0, .t_w = 1.0};  // per message, per element; .t_h per hop
//   sim::result r = sim::simulate<topocoll::Hypercube<>>(sim::collective::all_gather, 8, 16,
//                                                         net, c, topocoll::options{});
//   r.time; r.messages; r.max_congestion;
//
// How: each rank's collective call (root 0 where there is one) runs to
// completion, one rank after the other on this thread, on a transport that
// records its calls (model/recording.hpp), with m elements of model::phantom
// whose buffers are untouched address space: no element is read, written or
// copied, and a change in a kernel changes the prediction. Then a
// discrete-event pass times the p schedules on the network, with routing and
// congestion (model/timeline.hpp). Virtual rank i sits on processor i.
//
// The kernels see 8-byte elements and a transport with non-blocking sends
// (network ports::multi; ports::single: a blocking one, the seeds' model).
// automatic prices its candidates by the simulation's own t_s and t_w where
// opt.cost has the default ones (choosing_by, model/timeline.hpp), as it would
// for doubles on a transport of those costs; an opt.cost with t_s or t_w of
// its own chooses as it says.
// Reductions use a commutative operator.
//
// simulate_roots does the same for the broadcasts from several roots.
//
// automatic_takes names the forced algorithms whose schedule automatic's is:
// what automatic takes at this p, size and cost model.
//
// A network's port model is known at run time, so simulate and
// automatic_takes compile each collective for both transports;
// simulate_on<P> and automatic_takes_on<P> compile it for port model P's
// alone.
//
// Bad input throws std::invalid_argument: p < 1, a network with fewer
// processors than p, a negative or non-finite cost, p * m too large to address.
// A topology that cannot hold p, or a forced algorithm that does not apply,
// throws as the collective itself does.

#include <cmath>
#include <concepts>
#include <cstddef>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../collectives/all_gather.hpp"
#include "../collectives/all_reduce.hpp"
#include "../collectives/all_to_all.hpp"
#include "../collectives/broadcast.hpp"
#include "../collectives/gather.hpp"
#include "../collectives/reduce.hpp"
#include "../collectives/reduce_scatter.hpp"
#include "../collectives/scan.hpp"
#include "../collectives/scatter.hpp"
#include "../version.hpp"
#include "network.hpp"
#include "recording.hpp"
#include "timeline.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

enum class collective {
  broadcast,
  reduce,
  all_reduce,
  all_gather,
  reduce_scatter,
  scan,
  exclusive_scan,
  scatter,
  gather,
  all_to_all
};

inline constexpr collective all_collectives[] = {
    collective::broadcast,      collective::reduce,         collective::all_reduce,
    collective::all_gather,     collective::reduce_scatter, collective::scan,
    collective::exclusive_scan, collective::scatter,        collective::gather,
    collective::all_to_all};

constexpr std::string_view to_string(collective k) {
  constexpr std::string_view names[] = {
      "broadcast", "reduce",         "all_reduce", "all_gather", "reduce_scatter",
      "scan",      "exclusive_scan", "scatter",    "gather",     "all_to_all"};
  return names[static_cast<std::size_t>(k)];
}

inline collective parse_collective(std::string_view name) {
  for (collective k : all_collectives)
    if (to_string(k) == name) return k;
  throw std::invalid_argument("topocoll::model: unknown collective \"" + std::string(name) + "\"");
}

// A collective named at compile time: simulate and automatic_takes take it
// in place of a model::collective, and then instantiate that collective only
// (persistent.hpp's plans do, for every *_init a program calls).
template <collective K>
struct collective_tag : std::integral_constant<collective, K> {};

template <class K>
concept CollectiveKind = std::same_as<K, collective> || std::same_as<K, collective_tag<K::value>>;

// f(collective_tag<k>{}): a collective chosen at run time, as a tag.
template <class F>
decltype(auto) visit(collective k, F&& f) {
  using enum collective;
  switch (k) {
    case broadcast:
      return f(collective_tag<broadcast>{});
    case reduce:
      return f(collective_tag<reduce>{});
    case all_reduce:
      return f(collective_tag<all_reduce>{});
    case all_gather:
      return f(collective_tag<all_gather>{});
    case reduce_scatter:
      return f(collective_tag<reduce_scatter>{});
    case scan:
      return f(collective_tag<scan>{});
    case exclusive_scan:
      return f(collective_tag<exclusive_scan>{});
    case scatter:
      return f(collective_tag<scatter>{});
    case gather:
      return f(collective_tag<gather>{});
    case all_to_all:
      return f(collective_tag<all_to_all>{});
  }
  throw std::invalid_argument("topocoll::model: unknown collective");
}

// Collective K of m elements per rank (per block) on c, root 0 where there is
// one, with buffers from buf(n) (a span of n elements each) and operator op:
// the call simulate records for every rank, and what a measurement of the
// same prediction times (benchmark/model_check).
template <Topology Topo, Transport C, collective K, class Buffers, class Op>
void run_collective(C& c, collective_tag<K>, std::size_t m, Buffers&& buf, const Op& op,
                    const options& opt = {}) {
  const std::size_t pm = static_cast<std::size_t>(c.size()) * m;
  const bool root = c.rank() == 0;
  using enum collective;
  if constexpr (K == broadcast)
    topocoll::broadcast<Topo>(c, buf(m), 0, opt);
  else if constexpr (K == reduce)
    topocoll::reduce<Topo>(c, buf(m), buf(root ? m : 0), op, 0, opt);
  else if constexpr (K == all_reduce)
    topocoll::all_reduce<Topo>(c, buf(m), buf(m), op, opt);
  else if constexpr (K == all_gather)
    topocoll::all_gather<Topo>(c, buf(m), buf(pm), opt);
  else if constexpr (K == reduce_scatter)
    topocoll::reduce_scatter<Topo>(c, buf(pm), buf(m), op, opt);
  else if constexpr (K == scan)
    topocoll::scan<Topo>(c, buf(m), buf(m), op, opt);
  else if constexpr (K == exclusive_scan)
    topocoll::exclusive_scan<Topo>(c, buf(m), buf(m), op, opt);
  else if constexpr (K == scatter)
    topocoll::scatter<Topo>(c, buf(root ? pm : 0), buf(m), 0, opt);
  else if constexpr (K == gather)
    topocoll::gather<Topo>(c, buf(m), buf(root ? pm : 0), 0, opt);
  else
    topocoll::all_to_all<Topo>(c, buf(pm), buf(pm), opt);
}

template <Topology Topo, Transport C, class Buffers, class Op>
void run_collective(C& c, collective k, std::size_t m, Buffers&& buf, const Op& op,
                    const options& opt = {}) {
  visit(k, [&](auto tag) { run_collective<Topo>(c, tag, m, buf, op, opt); });
}

namespace detail {

// One rank's call, over untouched address space.
template <Topology Topo, class Elem, Transport C, CollectiveKind Kind>
void run_rank(C& c, Kind k, std::size_t m, const options& opt, address_arena& a) {
  auto buf = [&](std::size_t n) {
    auto* first = reinterpret_cast<Elem*>(a.take_distinct(n * sizeof(Elem)));
    return std::span<Elem>(first, n);
  };
  run_collective<Topo>(c, k, m, buf, phantom_op{}, opt);
}

// A figure as written (-1, 1e+308), not std::to_string's fixed "-1.000000".
inline std::string shown(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

[[noreturn]] inline void bad_input(const std::string& what) {
  throw std::invalid_argument("topocoll::model::simulate: " + what);
}

inline void check_size(int p, std::size_t m) {
  if (p < 1) bad_input("p = " + std::to_string(p) + ", needs p >= 1");
  if (p > (1 << 28)) bad_input("p = " + std::to_string(p) + " exceeds 2^28");
  if (m > (std::size_t{1} << 40) / static_cast<std::size_t>(p))
    bad_input("p * m = " + std::to_string(p) + " * " + std::to_string(m) +
              " elements is too large to simulate");
}

inline void check_inputs(int p, std::size_t m, const network& net, const cost_params& cost) {
  check_size(p, m);
  if (net.processors() < p)
    bad_input("the network " + net.name() + " has " + std::to_string(net.processors()) +
              " processors, fewer than p = " + std::to_string(p));
  const std::pair<const char*, double> costs[] = {
      {"t_s", cost.t_s}, {"t_w", cost.t_w}, {"t_h", cost.t_h}, {"t_r", cost.t_r}};
  for (auto [name, v] : costs)
    if (!(v >= 0) || !std::isfinite(v))
      bad_input(std::string(name) + " = " + shown(v) + ", needs a finite cost >= 0");
}

// A time past the largest double (costs near it) is no prediction.
inline result finite_time(const result& r, const cost_params& cost) {
  if (!std::isfinite(r.time))
    bad_input("the predicted time overflows a double (t_s = " + shown(cost.t_s) + ", t_w = " +
              shown(cost.t_w) + ", t_h = " + shown(cost.t_h) + ", t_r = " + shown(cost.t_r) + ")");
  return r;
}

// Points a thread's current arena (phantom::topocoll_reserve's) or copy
// counter at `now`, for one scope.
template <class T>
class current_scope {
 public:
  current_scope(T*& current, T* now) : current_(current), old_(std::exchange(current, now)) {}
  current_scope(const current_scope&) = delete;
  current_scope& operator=(const current_scope&) = delete;
  ~current_scope() { current_ = old_; }

 private:
  T*& current_;
  T* old_;
};

// Whether a schedule holds the ranks' local copies (op::local): only where
// they are timed (t_r > 0), so that a schedule is otherwise its calls alone.
enum class local_copies { left_out, recorded };
inline local_copies copies_for(const cost_params& cost) {
  return cost.t_r > 0 ? local_copies::recorded : local_copies::left_out;
}

// The transport a rank's kernels see under port model P (network.hpp).
template <ports P>
using recorder_for = std::conditional_t<P == ports::single, recorder, posting_recorder>;

// Every rank's calls, rank after rank, on port model P: run(c, arena) makes
// one rank's. Instantiates the collective for P's transport alone.
template <ports P, class Run>
schedule_log record_calls_on(int p, local_copies copies, Run&& run) {
  address_arena arena;
  const current_scope<address_arena> in_arena(address_arena::current(), &arena);
  std::uint64_t copied = 0;
  const current_scope<std::uint64_t> counted(copy_counter::on_this_thread(),
                                             copies == local_copies::recorded ? &copied : nullptr);
  schedule_log log(p);
  for (int r = 0; r < p; ++r) {
    arena.reset();
    recorder_for<P> c(r, log);
    run(c, arena);
    c.record_copies();
    log.end_rank();
  }
  return log;
}

// f(std::integral_constant<ports, P>{}) for the run-time port model
// `port`: f compiled for both.
template <class F>
decltype(auto) with_port(ports port, F&& f) {
  if (port == ports::single) return f(std::integral_constant<ports, ports::single>{});
  return f(std::integral_constant<ports, ports::multi>{});
}

template <class Run>
schedule_log record_calls(int p, ports port, local_copies copies, Run&& run) {
  return with_port(port, [&](auto P) { return record_calls_on<P()>(p, copies, run); });
}

template <Topology Topo, class Elem, ports P, CollectiveKind Kind>
schedule_log record_on(Kind k, int p, std::size_t m, const options& opt,
                       local_copies copies = local_copies::left_out) {
  return record_calls_on<P>(
      p, copies, [&](auto& c, address_arena& a) { run_rank<Topo, Elem>(c, k, m, opt, a); });
}

template <Topology Topo, class Elem = phantom, CollectiveKind Kind>
schedule_log record(Kind k, int p, std::size_t m, ports port, const options& opt,
                    local_copies copies = local_copies::left_out) {
  return with_port(port, [&](auto P) { return record_on<Topo, Elem, P()>(k, p, m, opt, copies); });
}

}  // namespace detail

// The predicted time, message count and worst congestion of collective k of m
// elements per rank (per block for all_gather, reduce_scatter, scatter,
// gather and all_to_all) over p ranks on Topo, on the network net.
// Elem: the element (model::sized_phantom<N> for N bytes), 8 bytes unless said.
// k: a model::collective, or a collective_tag to instantiate that one only.
// simulate_on<P> is simulate on a network of port model P
// (net.port_model()), with the kernels instantiated for that port's
// transport alone (persistent.hpp's plans).
template <ports P, Topology Topo, class Elem = phantom, CollectiveKind Kind>
result simulate_on(Kind k, int p, std::size_t m, const network& net, const cost_params& cost,
                   const options& opt = {}) {
  detail::check_inputs(p, m, net, cost);
  if (net.port_model() != P) {
    auto name = [](ports q) { return q == ports::single ? "ports::single" : "ports::multi"; };
    detail::bad_input(std::string("simulate_on<") + name(P) + "> was given a network of " +
                      name(net.port_model()) + " (network::with sets it)");
  }
  const detail::schedule_log log = detail::record_on<Topo, Elem, P>(
      k, p, m, choosing_by(opt, cost, sizeof(Elem)), detail::copies_for(cost));
  return detail::finite_time(detail::timeline(log, net, cost, nullptr).run(), cost);
}
template <Topology Topo, class Elem = phantom, CollectiveKind Kind>
result simulate(Kind k, int p, std::size_t m, const network& net, const cost_params& cost,
                const options& opt = {}) {
  return detail::with_port(net.port_model(), [&](auto P) {
    return simulate_on<P(), Topo, Elem>(k, p, m, net, cost, opt);
  });
}

// The broadcasts from several roots (Section 4.2.4): block i of m elements
// from roots[i], as topocoll::broadcast<Topo>(c, buf, roots, opt) takes them.
template <Topology Topo>
result simulate_roots(int p, std::size_t m, std::span<const int> roots, const network& net,
                      const cost_params& cost, const options& opt = {}) {
  detail::check_inputs(p, m * roots.size(), net, cost);
  const detail::schedule_log log = detail::record_calls(
      p, net.port_model(), detail::copies_for(cost), [&](auto& c, detail::address_arena& a) {
        auto* first =
            reinterpret_cast<phantom*>(a.take_distinct(m * roots.size() * sizeof(phantom)));
        topocoll::broadcast<Topo>(c, std::span<phantom>(first, m * roots.size()), roots,
                                  choosing_by(opt, cost, sizeof(phantom)));
      });
  return detail::finite_time(detail::timeline(log, net, cost, nullptr).run(), cost);
}

// ... with every message's timing as well (for drawing; memory grows with the
// number of messages).
struct traced_result {
  result summary;
  std::vector<timed_message> messages;  // in the order they were priced (start time)
};
template <Topology Topo>
traced_result simulate_trace(collective k, int p, std::size_t m, const network& net,
                             const cost_params& cost, const options& opt = {}) {
  detail::check_inputs(p, m, net, cost);
  const detail::schedule_log log = detail::record<Topo>(
      k, p, m, net.port_model(), choosing_by(opt, cost, sizeof(phantom)), detail::copies_for(cost));
  traced_result t;
  t.summary = detail::finite_time(detail::timeline(log, net, cost, &t.messages).run(), cost);
  return t;
}

// The forced algorithms whose schedule (every rank's calls: kind, peer, size
// and tag, in order) is automatic's for collective k of m elements per rank
// over p ranks on Topo under opt.cost: what automatic takes there, found by
// running it, so it is right whatever the choice's code looks like. Empty
// where automatic's schedule is none of theirs; several where schedules
// coincide (p = 1, m = 0, or two algorithms that are the same at this p).
// port: the transport the kernels see, as network::with(ports) says.
// automatic_takes_on<P>: the same on port model P alone.
template <ports P, Topology Topo, class Elem = phantom, CollectiveKind Kind>
std::vector<algorithm> automatic_takes_on(Kind k, int p, std::size_t m, const options& opt) {
  detail::check_size(p, m);
  options o = opt;
  o.algo = algorithm::automatic;
  const detail::schedule_log chosen = detail::record_on<Topo, Elem, P>(k, p, m, o);
  std::vector<algorithm> same;
  for (int a = 1; a < algorithm_count; ++a) {
    o.algo = static_cast<algorithm>(a);
    try {
      if (detail::record_on<Topo, Elem, P>(k, p, m, o) == chosen) same.push_back(o.algo);
    } catch (const std::invalid_argument&) {
      // a forced algorithm that does not apply to k, Topo or p
    }
  }
  return same;
}
template <Topology Topo, class Elem = phantom, CollectiveKind Kind>
std::vector<algorithm> automatic_takes(Kind k, int p, std::size_t m, const options& opt,
                                       ports port = ports::multi) {
  return detail::with_port(
      port, [&](auto P) { return automatic_takes_on<P(), Topo, Elem>(k, p, m, opt); });
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model
