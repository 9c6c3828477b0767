#pragma once
// The persistent collectives (MPI-4's MPI_Bcast_init, ...): the blocking
// call's arguments, bound once; a topocoll::persistent_request back
// (collectives/requests.hpp). Included by <topocoll/topocoll.hpp>; a header
// above the collectives and the model, since a plan is described by the
// model running the collective's own schedule.
//
//   tc::persistent_request pr = tc::all_reduce_init<Topo>(c, in, out, op);
//   for (...) { /* fill in */ pr.start(); /* compute */ pr.wait(); /* use out */ }
//   pr.algorithm();  pr.describe();
//
// Init runs the argument checks, with the blocking call's words, lays the
// topology over the ranks and makes automatic's choice, as the blocking call
// does at every call; start() queues the collective with that layout and
// that algorithm bound, as a nonblocking call does
// (collectives/nonblocking.hpp), to run without the checks, the layout and the
// choice, and a fiber it runs in keeps its stack from one start to the next.
// algorithm() is that choice. describe() comes from the model running this
// collective's own schedule (model::simulate, on a complete network with t_s
// and t_w from options::cost), computed at its first use, as is algorithm()
// where init chose nothing. TOPOCOLL_EXPLAIN=1 has rank 0 write describe() to
// std::cerr at every init.

#include <algorithm>
#include <cstddef>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "collectives/nonblocking.hpp"
#include "core/algorithm_table.hpp"
#include "model/simulate.hpp"
#include "plan/explain.hpp"
#include "topology/needs.hpp"
#include "version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// What a plan's line says: the collective, where it runs, the algorithm
// (automatic: no forced algorithm's schedule is automatic's) and its predicted
// time, and every other applicable algorithm's.
struct plan_prices {
  std::string_view collective;
  std::string topology;
  int p;
  std::size_t m, element_bytes;
  algorithm algo;
  std::optional<double> time;
  std::vector<std::pair<algorithm, double>> alternatives;
};

// The plan's line (describe()) and its algorithm: where automatic's schedule
// is no forced algorithm's, the first applicable one's.
inline plan_summary described(const plan_prices& f) {
  std::ostringstream s;
  s << std::setprecision(4) << f.collective << " on " << f.topology << ", p = " << f.p
    << ", m = " << f.m << ", " << f.element_bytes << "-byte elements: "
    << (f.algo == algorithm::automatic ? "automatic (its own schedule)" : to_string(f.algo)) << ' '
    << f.time.value_or(0) << " us predicted";
  const char* sep = "; alternatives: ";
  for (const auto& [a, t] : f.alternatives)
    if (a != f.algo) {
      s << sep << to_string(a) << ' ' << t << " us";
      sep = ", ";
    }
  algorithm algo = f.algo;
  if (algo == algorithm::automatic && !f.alternatives.empty()) algo = f.alternatives.front().first;
  return {algo, s.str()};
}

// The predicted time of collective k under algorithm opt.algo, on the
// seeds' single-ported node, as automatic's choice prices the algorithms: a
// complete network whose ranks send one message at a time and take one at a
// time, the kernels compiled for its blocking transport alone (simulate_on);
// none where it is too large to simulate.
template <Topology Topo, class E, model::CollectiveKind Kind>
[[gnu::noinline]] std::optional<double> predicted_time(Kind k, int p, std::size_t m,
                                                       const model::cost_params& cost,
                                                       const options& opt) {
  try {
    const model::network node =
        model::network::complete(p).with(model::ports::single).with(model::receives::one_at_a_time);
    return model::simulate_on<model::ports::single, Topo, E>(k, p, m, node, cost, opt).time;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

// Collective k of m elements of Bytes bytes per rank (per block) over p ranks on Topo:
// the algorithm automatic takes there (or the one forced), and the predicted
// time of every algorithm that applies there (core/algorithm_table.hpp), by
// the model (predicted_time). Elements of 8 bytes are the model's own
// (model::phantom), so a plan of doubles shares the simulation the drop-in
// library's choice runs. Only the element's size matters, so element types
// of one size share one plan_of.
template <Topology Topo, std::size_t Bytes, model::CollectiveKind Kind>
plan_summary plan_of(Kind k, int p, std::size_t m, const options& opt) {
  using E = std::conditional_t<Bytes == sizeof(model::phantom), model::phantom,
                               model::sized_phantom<Bytes>>;
  const model::cost_params cost = model::params_of(opt.cost, Bytes);
  auto predicted = [&](algorithm a) {
    options o = opt;
    o.algo = a;
    return predicted_time<Topo, E>(k, p, m, cost, o);
  };
  plan_prices f{model::to_string(k), Topo::name(), p, m, Bytes, opt.algo, {}, {}};
  const layout l = Topo::shape(p);
  for (const applicable& e : algorithms_of(f.collective).algorithms())
    if (meets<Topo>(e.need, l))
      if (const auto t = predicted(e.algo)) f.alternatives.emplace_back(e.algo, *t);
  if (f.algo == algorithm::automatic) try {
      const std::vector<algorithm> takes =
          model::automatic_takes_on<model::ports::single, Topo, E>(k, p, m, opt);
      if (!takes.empty()) f.algo = takes.front();
    } catch (const std::invalid_argument&) {  // too large to simulate
    }
  const auto same = std::find_if(f.alternatives.begin(), f.alternatives.end(),
                                 [&](const auto& e) { return e.first == f.algo; });
  f.time = same != f.alternatives.end() ? same->second : predicted(f.algo);
  return described(f);
}

// The persistent request of `run` (a callable of the options and a stage that
// holds the collective's arguments, buffers as spans, and runs the
// collective's checked_* body): its arguments checked, then the layout laid
// and the algorithm chosen once by `choose` (of the layout, m and the
// options: the collective's own choice, as a blocking call makes it), and
// both bound (planned_start), so that every start runs the collective
// without laying out or choosing. Where nothing is chosen (p = 1, no
// elements, strings, scans) the options stay as given. Rank 0 explains the
// plan when TOPOCOLL_EXPLAIN asks.
template <Topology Topo, class T, Transport C, model::collective K, class Run, class Choose>
persistent_request persist(C& c, std::string_view name, model::collective_tag<K> k, std::size_t m,
                           const options& opt, Run run, Choose choose) {
  run(opt, stage::check);
  const int p = c.size();
  const layout l = Topo::shape(p);
  options bound = opt;
  if (p > 1 && m > 0) bound.algo = choose(l, m, opt);
  persistent_request pr(to_start(c, name, [run, bound, l](stage) { run(bound, planned_start{l}); }),
                        bound.algo,
                        [k, p, m, bound] { return plan_of<Topo, sizeof(T)>(k, p, m, bound); });
  if (c.rank() == 0 && plan::explain::on) std::cerr << "topocoll: " << pr.describe() << '\n';
  return pr;
}

// The choice of a collective with one algorithm (the scans): none.
inline algorithm as_given(const layout&, std::size_t, const options& opt) {
  return opt.algo;
}

}  // namespace detail

template <Topology Topo, Transport C, OutputBuffer Buf>
persistent_request broadcast_init(C& c, Buf&& buffer, int root,
                                  const options& opt = detail::default_options) {
  const auto b = detail::out_span(buffer);
  return detail::persist<Topo, buffer_value_t<Buf>>(
      c, "broadcast_init", model::collective_tag<model::collective::broadcast>{}, b.size(), opt,
      [&c, b, root](const options& o, auto s) {
        detail::checked_broadcast<Topo>(c, b, root, o, s);
      },
      [root](const layout& l, std::size_t m, const options& o) {
        return detail::broadcast_choice<Topo, buffer_value_t<Buf>>(l, m, root, o);
      });
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> persistent_request reduce_init(
    C& c, In&& input, Out&& output, Op op, int root, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  const auto in = detail::in_span(input);
  return detail::persist<Topo, buffer_value_t<Out>>(
      c, "reduce_init", model::collective_tag<model::collective::reduce>{}, in.size(), opt,
      [&c, in, out = detail::out_span(output), op, root](const options& o, auto s) {
        detail::checked_reduce<Topo>(c, in, out, op, root, o, s);
      },
      [root](const layout& l, std::size_t m, const options& o) {
        return detail::reduce_choice<Topo, buffer_value_t<Out>, Op>(l, m, root, o);
      });
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> persistent_request all_reduce_init(
    C& c, In&& input, Out&& output, Op op, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  const auto in = detail::in_span(input);
  return detail::persist<Topo, buffer_value_t<Out>>(
      c, "all_reduce_init", model::collective_tag<model::collective::all_reduce>{}, in.size(), opt,
      [&c, in, out = detail::out_span(output), op](const options& o, auto s) {
        detail::checked_all_reduce<Topo>(c, in, out, op, o, s);
      },
      detail::all_reduce_choice<Topo, buffer_value_t<Out>, Op>);
}

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out> persistent_request
all_gather_init(C& c, In&& input, Out&& output, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  const auto in = detail::in_span(input);
  return detail::persist<Topo, buffer_value_t<Out>>(
      c, "all_gather_init", model::collective_tag<model::collective::all_gather>{}, in.size(), opt,
      [&c, in, out = detail::out_span(output)](const options& o, auto s) {
        detail::checked_all_gather<Topo>(c, in, out, o, s);
      },
      detail::all_gather_choice<Topo, buffer_value_t<Out>>);
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> persistent_request reduce_scatter_init(
    C& c, In&& input, Out&& output, Op op, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  const auto out = detail::out_span(output);
  return detail::persist<Topo, buffer_value_t<Out>>(
      c, "reduce_scatter_init", model::collective_tag<model::collective::reduce_scatter>{},
      out.size(), opt,
      [&c, in = detail::in_span(input), out, op](const options& o, auto s) {
        detail::checked_reduce_scatter<Topo>(c, in, out, op, o, s);
      },
      detail::reduce_scatter_choice<Topo, buffer_value_t<Out>, Op>);
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> persistent_request
scan_init(C& c, In&& input, Out&& output, Op op, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  const auto in = detail::in_span(input);
  return detail::persist<Topo, buffer_value_t<Out>>(
      c, "scan_init", model::collective_tag<model::collective::scan>{}, in.size(), opt,
      [&c, in, out = detail::out_span(output), op](const options& o, auto s) {
        detail::checked_scan<Topo, detail::prefix::scan_kind::inclusive>(c, in, out, op, o, s);
      },
      detail::as_given);
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> persistent_request exclusive_scan_init(
    C& c, In&& input, Out&& output, Op op, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  const auto in = detail::in_span(input);
  return detail::persist<Topo, buffer_value_t<Out>>(
      c, "exclusive_scan_init", model::collective_tag<model::collective::exclusive_scan>{},
      in.size(), opt,
      [&c, in, out = detail::out_span(output), op](const options& o, auto s) {
        detail::checked_scan<Topo, detail::prefix::scan_kind::exclusive>(c, in, out, op, o, s);
      },
      detail::as_given);
}

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out> persistent_request scatter_init(
    C& c, In&& input, Out&& output, int root, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  const auto out = detail::out_span(output);
  return detail::persist<Topo, buffer_value_t<Out>>(
      c, "scatter_init", model::collective_tag<model::collective::scatter>{}, out.size(), opt,
      [&c, in = detail::in_span(input), out, root](const options& o, auto s) {
        detail::checked_scatter<Topo>(c, in, out, root, o, s);
      },
      detail::scatter_choice<Topo, buffer_value_t<Out>>);
}

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out> persistent_request gather_init(
    C& c, In&& input, Out&& output, int root, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  const auto in = detail::in_span(input);
  return detail::persist<Topo, buffer_value_t<Out>>(
      c, "gather_init", model::collective_tag<model::collective::gather>{}, in.size(), opt,
      [&c, in, out = detail::out_span(output), root](const options& o, auto s) {
        detail::checked_gather<Topo>(c, in, out, root, o, s);
      },
      detail::gather_choice<Topo, buffer_value_t<Out>>);
}

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out> persistent_request
all_to_all_init(C& c, In&& input, Out&& output, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  const auto in = detail::in_span(input);
  return detail::persist<Topo, buffer_value_t<Out>>(
      c, "all_to_all_init", model::collective_tag<model::collective::all_to_all>{},
      in.size() / static_cast<std::size_t>(c.size()), opt,
      [&c, in, out = detail::out_span(output)](const options& o, auto s) {
        detail::checked_all_to_all<Topo>(c, in, out, o, s);
      },
      detail::all_to_all_choice<Topo, C, buffer_value_t<Out>>);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
