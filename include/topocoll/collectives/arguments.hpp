#pragma once
// The argument checks every collective opens with, in one place, so that every
// rejection has the same shape:
//   "topocoll::reduce on rank 3 of 8: root 9 is outside [0, 8)"
//
//   const auto [call, in, out] = detail::open_call<Topo>("scan", c, input, output);
//   const detail::collective_scope scope(c, call.info(in, opt.algo), s);
//   if (scope.checking()) {
//     call.cost(opt.cost);
//     call.size("out (in.size())", out.size(), in.size());
//     check_algorithm<Topo>(call, opt.algo);  // by core/algorithm_table.hpp
//     call.in_place(in, out, 0);
//   }
//   if (!scope.proceed() || call.nothing_to_do(in, out)) return;
//
// The aliasing rule is the same for every collective: `in` and `out` are
// either disjoint, or arranged exactly as MPI_IN_PLACE would have them (the
// smaller buffer at one fixed offset inside the larger, e.g. all_gather's in
// at block `rank` of out); any other overlap throws.

#include <algorithm>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/agreement.hpp"
#include "../core/algorithm_table.hpp"
#include "../core/collective_info.hpp"
#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/errors.hpp"
#include "../core/options.hpp"
#include "../core/progress.hpp"
#include "../core/tags.hpp"
#include "../plan/explain.hpp"
#include "../topology/needs.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

// Where a collective's code is run:
//  - stage::run, a blocking call: the argument checks, then the collective;
//  - stage::check, the argument checks alone, as a nonblocking or persistent
//    collective runs them when it is started or set up
//    (collectives/nonblocking.hpp): the same checks, the same words;
//  - stage::started, that started collective running: the collective alone,
//    since its arguments, bound as spans, were checked at the start (a
//    persistent request's start() pays for no check).
// Each collective's detail::checked_* body is always inlined, so that the
// blocking call compiles as the one function it is (checks of options known
// at the call site fold away) and not as a call into a shared body.
enum class stage { check, run, started };

// A persistent request's start (persistent.hpp): stage::started, with what
// init fixed taken as it is: the layout of the p ranks (laid_out), and the
// algorithm init chose, which the options it passes carry (call_args::chosen).
struct planned_start {
  const layout& shape;
};

template <class S>
concept collective_stage = std::same_as<S, stage> || std::same_as<S, planned_start>;

// The layout a collective runs over: Topo's shape of p ranks, or the one a
// persistent request fixed at init.
template <Topology Topo>
[[gnu::always_inline]] inline layout laid_out(stage, int p) {
  return Topo::shape(p);
}
template <Topology Topo>
[[gnu::always_inline]] inline const layout& laid_out(const planned_start& s, int) {
  return s.shape;
}

// The largest of the figures' bit patterns, read as unsigned integers. A
// double is +0.0 or finite and positive exactly when its pattern is at most
// the largest double's: a set sign bit (a negative figure, and -0.0, which
// the cold path lets pass) or an exponent of all ones (an infinity, a NaN)
// makes it larger. Unrolled and always inlined, so that a check costs a
// load, a compare and a move per figure at -O2 as at -O3.
template <std::same_as<double>... D>
[[gnu::always_inline]] constexpr std::uint64_t largest_bits(D... v) {
  std::uint64_t most = 0;
  ((most = std::max(most, std::bit_cast<std::uint64_t>(v))), ...);
  return most;
}

class call_args {
 public:
  call_args(std::string_view name, int rank, int p) : name_(name), rank_(rank), p_(p) {}

  std::string_view name() const { return name_; }
  int rank() const { return rank_; }
  int p() const { return p_; }

  // What this call tells a transport that listens (core/collective_info.hpp):
  // the buffer whose length every rank passes alike, `algo` as asked.
  template <class T>
  collective_info info(std::span<T> per_rank, topocoll::algorithm algo,
                       int root = collective_info::no_root) const {
    return {name_, root, per_rank.size(), sizeof(T), algo};
  }

  // The algorithm this call runs over l: choose(l, m, opt), the collective's
  // choice for m elements (per block) of element_bytes each. With
  // TOPOCOLL_EXPLAIN (plan/explain.hpp), rank 0 first writes the line of a new
  // plan of automatic's, choosing again with a ledger that records what was
  // priced. choose captures no local by reference, every other test is made
  // out of line, and the options go as a copy made inside the branch (a
  // reference would make a caller's options a stored object), so a call that
  // is not explained pays one test of a constant.
  // At a persistent request's start (planned_start), the algorithm init chose
  // is taken as it is.
  template <Topology Topo, collective_stage Stage, class Choose>
  [[gnu::always_inline]] topocoll::algorithm chosen(Stage, const layout& l, std::size_t m,
                                                    std::size_t element_bytes, const options& opt,
                                                    const Choose& choose,
                                                    int root = collective_info::no_root) const {
    if constexpr (std::is_same_v<Stage, planned_start>)
      if (opt.algo != topocoll::algorithm::automatic) return opt.algo;
    if (plan::explain::on) [[unlikely]] {
      const options copy = opt;
      plan::explain::new_plan<Topo>({name_, rank_, p_, m, element_bytes, root}, copy, choose);
    }
    return choose(l, m, opt);
  }

  template <class... Args>
  [[noreturn, gnu::always_inline]] void reject(Args&&... what) const {
    invalid(name_, rank_, p_, std::forward<Args>(what)...);
  }

  // root in [0, p)
  void root(int root) const {
    if (root < 0 || root >= p_) reject("root ", root, " is outside [0, ", p_, ")");
  }

  // The roots of a broadcast from several roots: each in [0, p), none twice,
  // and `elements` (the buffer) roots.size() blocks of equal length.
  void roots(std::span<const int> rs, std::size_t elements) const {
    std::vector<std::size_t> first(static_cast<std::size_t>(p_), rs.size());  // where seen
    for (std::size_t i = 0; i < rs.size(); ++i) {
      root(rs[i]);
      std::size_t& seen = first[static_cast<std::size_t>(rs[i])];
      if (seen != rs.size())
        reject("root ", rs[i], " appears twice in roots (at ", seen, " and ", i, ")");
      seen = i;
    }
    if (rs.empty() ? elements != 0 : elements % rs.size() != 0)
      reject("buf holds ", elements, " elements, not roots.size() = ", rs.size(),
             " blocks of equal length");
  }

  // A buffer of `want` elements.
  void size(std::string_view what, std::size_t got, std::size_t want) const {
    if (got != want) reject(what, " holds ", got, " elements, expected ", want);
  }

  // A root in [0, p), and a buffer only the root uses (in of scatter, out of
  // gather and reduce): exactly `want` elements at the root; empty
  // (untouched) or `want` elsewhere. `want_is` says what `want` is, e.g.
  // "p * in.size()". Inlined: a good call costs three tests; the names are
  // passed only to the cold path that writes the message.
  [[gnu::always_inline]] void root_buffer(int root, std::string_view what, std::string_view want_is,
                                          std::size_t got, std::size_t want) const {
    if (root >= 0 && root < p_ && (got == want || (got == 0 && rank_ != root))) [[likely]]
      return;
    reject_root_buffer(root, what, want_is, got, want);
  }

  // Every figure of the cost model finite and >= 0: the automatic choices and
  // the pipelines' segment counts are computed from them, and a NaN or a
  // negative time would turn into an undefined conversion or a nonsense choice.
  // The default options' model (detail::default_options, the default argument)
  // is valid by construction (checked below, at compile time) and is known by
  // its address, also where the call is compiled apart from its caller. Any
  // other model is checked at every call, one comparison per figure without
  // branches (largest_bits), and only a bad model takes the cold path that
  // names it. Always inlined: for a model known at the call site the check
  // folds away at -O2 as it does at -O3, where GCC would otherwise keep it out
  // of line (benchmark/instructions counts both).
  [[gnu::always_inline]] void cost(const cost_model& m) const {
    if (&m == &default_options.cost || valid(m)) [[likely]]
      return;
    reject_cost(m);
  }
  [[gnu::always_inline]] static constexpr bool valid(const cost_model& m) {
    constexpr auto most = std::bit_cast<std::uint64_t>(std::numeric_limits<double>::max());
    return largest_bits(m.ts_us, m.tw_us_per_byte, m.busy_ts, m.busy_tw, m.tc_us_per_byte,
                        m.duplex_ts, m.duplex_tw, m.duplex_ts_short, m.busy_tc,
                        m.tc_large_us_per_byte, m.busy_tc_large, m.tw_large_us_per_byte,
                        m.busy_tw_large, m.duplex_tw_large, m.posted_us, m.segment_floor,
                        m.piece_floor) <= most;
  }

  // The cold half of cost(): names the first figure that is not finite and >= 0.
  [[gnu::cold, gnu::noinline]] void reject_cost(const cost_model& m) const {
    const std::pair<const char*, double> figures[] = {
        {"ts_us", m.ts_us},
        {"tw_us_per_byte", m.tw_us_per_byte},
        {"busy_ts", m.busy_ts},
        {"busy_tw", m.busy_tw},
        {"tc_us_per_byte", m.tc_us_per_byte},
        {"duplex_ts", m.duplex_ts},
        {"duplex_tw", m.duplex_tw},
        {"duplex_ts_short", m.duplex_ts_short},
        {"busy_tc", m.busy_tc},
        {"tc_large_us_per_byte", m.tc_large_us_per_byte},
        {"busy_tc_large", m.busy_tc_large},
        {"tw_large_us_per_byte", m.tw_large_us_per_byte},
        {"busy_tw_large", m.busy_tw_large},
        {"duplex_tw_large", m.duplex_tw_large},
        {"posted_us", m.posted_us},
        {"segment_floor", m.segment_floor},
        {"piece_floor", m.piece_floor}};
    for (const auto& [field, v] : figures)
      if (!std::isfinite(v) || v < 0)
        reject("options::cost.", field, " = ", v, ", expected a finite figure >= 0");
  }

  // Whether in and out are MPI_IN_PLACE's arrangement: the shorter one starts
  // `at` elements into the longer (both the same length: at == 0). false when
  // they are disjoint; std::invalid_argument for any other overlap.
  template <class T>
  [[gnu::always_inline]] bool in_place(std::span<const T> in, std::span<T> writable_out,
                                       std::size_t at) const {
    const std::span<const T> out = writable_out;
    if (in.empty() || out.empty()) return false;
    const std::less<const T*> lt;
    if (!lt(in.data(), out.data() + out.size()) || !lt(out.data(), in.data() + in.size()))
      return false;
    return placed(in, out, at);
  }

  // The cases every collective settles without a message: no elements
  // (nothing happens), and one rank (out is in, copied unless in place).
  template <class T>
  bool nothing_to_do(std::span<const T> in, std::span<T> out) const {
    if (in.empty()) return true;
    if (p_ == 1) copy_to(in, out);
    return p_ == 1;
  }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] void reject_root_buffer(int root, std::string_view what,
                                                                 std::string_view want_is,
                                                                 std::size_t got,
                                                                 std::size_t want) const {
    this->root(root);
    if (rank_ == root)
      reject(what, " (at the root: ", want_is, ") holds ", got, " elements, expected ", want);
    reject(what, " holds ", got, " elements, expected ", want, " (", want_is,
           ") or 0 on a rank other than the root");
  }

  // in and out overlap: true where in is out's block at `at` (or out in's),
  // the in-place arrangement; any other overlap is rejected. Out of line, as
  // the message is; disjoint buffers never come here.
  template <class T>
  [[gnu::noinline]] bool placed(std::span<const T> in, std::span<const T> out,
                                std::size_t at) const {
    const bool in_shorter = in.size() <= out.size();
    const std::span<const T> whole = in_shorter ? out : in, part = in_shorter ? in : out;
    if (at <= whole.size() && part.size() <= whole.size() - at && part.data() == whole.data() + at)
      return true;
    reject("in and out overlap without being the same elements (in-place use wants ",
           in_shorter ? "in" : "out", " at element ", at, " of ", in_shorter ? "out" : "in",
           "); pass disjoint buffers, or the in-place arrangement");
  }

  std::string_view name_;
  int rank_, p_;
};
static_assert(call_args::valid(default_options.cost),
              "the default cost model must pass the check it skips");

// Tells a transport that listens (CollectiveAwareTransport: mpi::Comm) that a
// collective begins, and that it ended when the scope closes, normally or by
// an exception; then, on a transport that offers it (AgreementTransport), runs
// the agreement check (core/agreement.hpp), which throws on every rank if the
// ranks disagree. Declared first in a collective, before any argument check
// that might reject one rank alone. After the checks, proceed() says whether
// the collective goes on to communicate (stage::run). Before its first
// message (before the agreement check, or else in proceed(), after the
// checks, so that checks of options known at the call site still fold away)
// it completes the collectives this rank started earlier on c and those that
// run whole (core/progress.hpp): every rank runs a communicator's
// collectives in the order it started them. stage::check does none of it.
template <Transport C>
class collective_scope {
 public:
  collective_scope(C& c, const collective_info& info, planned_start)
      : collective_scope(c, info, stage::started) {}
  collective_scope(C& c, const collective_info& info, stage s = stage::run) : c_(c), stage_(s) {
    if (!active()) return;
    if constexpr (AgreementTransport<C>) run_started();
    if constexpr (CollectiveAwareTransport<C>) c.begin_collective(info);
    if constexpr (AgreementTransport<C>) {
      try {
        check_agreement(c, info);
      } catch (...) {  // the destructor does not run: the scope never began
        if constexpr (CollectiveAwareTransport<C>) c.end_collective();
        throw;
      }
    }
  }
  ~collective_scope() {
    if constexpr (CollectiveAwareTransport<C>)
      if (active()) c_.end_collective();
  }
  collective_scope(const collective_scope&) = delete;
  collective_scope& operator=(const collective_scope&) = delete;

  // Whether the argument checks run here (not stage::started).
  bool checking() const { return stage_ != stage::started; }

  // After the argument checks: whether to go on (stage::run, stage::started),
  // with the collectives started earlier completed.
  bool proceed() const {
    if constexpr (!AgreementTransport<C>)
      if (active()) run_started();
    return active();
  }

 private:
  // Whether the collective communicates here (not stage::check).
  bool active() const { return stage_ != stage::check; }

  void run_started() const {
    if (started_collectives_waiting()) [[unlikely]]
      run_started_collectives(&c_);
  }

  C& c_;
  stage stage_;
};

// The same, for a collective whose counts differ between ranks by design.
inline collective_info counts_vary(collective_info info) {
  info.count = collective_info::count_varies;
  return info;
}

// A forced algorithm that does not apply, rejected with the algorithms that
// do apply here.
template <Topology Topo>
[[gnu::noinline]] void forced_algorithm(const call_args& call, algorithm a,
                                        const algorithm_row& row) {
  const layout l = Topo::shape(call.p());
  const std::optional<topology_need> need = need_of(row, a);
  if (need && meets<Topo>(*need, l)) return;
  std::string use = " (use algorithm::automatic";
  for (const applicable& e : row.algorithms())
    if (meets<Topo>(e.need, l)) use += concat(", algorithm::", to_string(e.algo));
  use += ")";
  const std::string_view name = to_string(a);
  if (!need)
    call.reject("algorithm::", name, " does not apply to ", call.name(), " on ", Topo::name(), use);
  if (*need == topology_need::linear_dims)
    call.reject("algorithm::", name,
                " needs the Ring or a Mesh<K> (a topology of linear dimensions), got ",
                Topo::name(), use);
  call.reject("algorithm::", name, " on ", Topo::name(),
              " needs complete digit groups, p = r K^j with r <= K, got p = ", call.p(), use);
}

// `a` is automatic (tested inline: the common case costs one comparison) or
// an algorithm that the table (core/algorithm_table.hpp) lists for this
// collective, in the row named `row` (the collective's own name unless it has
// a row of its own), and whose need Topo meets at p ranks.
template <Topology Topo>
[[gnu::always_inline]] inline void check_algorithm(const call_args& call, algorithm a,
                                                   std::string_view row = {}) {
  if (a != algorithm::automatic)
    forced_algorithm<Topo>(call, a, algorithms_of(row.empty() ? call.name() : row));
}

// An element type the personalized exchanges keep in work buffers, block by block.
template <class T>
concept block_element = std::is_default_constructible_v<T> && std::is_copy_assignable_v<T>;

// The opening of every collective: its name, this rank, p, and the check that
// the topology can be laid over p ranks.
template <Topology Topo, Transport C>
call_args open_call(std::string_view name, const C& c) {
  const call_args call(name, c.rank(), c.size());
  if (!Topo::holds(call.p())) call.reject(Topo::why_not(call.p()));
  return call;
}

// ... and its buffers, as spans.
template <class T>
struct opened_call {
  call_args call;
  std::span<const T> in;
  std::span<T> out;
};
template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out>
opened_call<buffer_value_t<Out>> open_call(std::string_view name, const C& c, In&& input,
                                           Out&& output) {
  return {open_call<Topo>(name, c), in_span(input), out_span(output)};
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
