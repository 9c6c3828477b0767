#include "selection.hpp"

#include <boost/algorithm/string/split.hpp>
#include <boost/algorithm/string/trim.hpp>

#include <topocoll/core/algorithm_table.hpp>
#include <topocoll/model/simulate.hpp>
#include <topocoll/persistent.hpp>

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <exception>
#include <iostream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace topocoll::pmpi {
namespace {

std::array<choice, blocking_count> choices{};

constexpr std::string_view topology_names[] = {"Hypercube", "Ring", "Mesh<2>", "Tree<2>",
                                               "Tree<4>"};

// The model's collective for f, in function's order; none for MPI_Alltoallv
// and MPI_Ialltoallv (sizes differ per rank).
std::optional<model::collective> modelled(function f) {
  using k = model::collective;
  constexpr k of[] = {k::broadcast,      k::reduce,         k::all_reduce, k::all_gather,
                      k::reduce_scatter, k::reduce_scatter, k::scan,       k::exclusive_scan,
                      k::scatter,        k::gather,         k::all_to_all};
  static_assert(std::size(of) == static_cast<std::size_t>(function::alltoallv),
                "one model collective per function before alltoallv");
  const auto i = static_cast<std::size_t>(blocking_of(f));
  if (i < std::size(of)) return of[i];
  return std::nullopt;
}

// The algorithm table's row (core/algorithm_table.hpp) of the collective that
// serves f: the algorithms f accepts, and what each needs of the topology.
const algorithm_row& table_row(function f) {
  const std::optional<model::collective> k = modelled(f);
  return algorithms_of(k ? model::to_string(*k) : "all_to_all_v");
}

template <class Names, class Show>
std::string listing(const Names& names, Show show) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + std::string(show(n));
  return s;
}

[[noreturn]] void bad(std::string_view entry, const std::string& what) {
  throw std::invalid_argument("TOPOCOLL_PMPI entry '" + std::string(entry) + "': " + what);
}

// A blocking function's key; its nonblocking function shares it.
function parse_function(std::string_view entry, std::string_view key) {
  for (std::size_t i = 0; i < blocking_count; ++i)
    if (key_name(static_cast<function>(i)) == key) return static_cast<function>(i);
  std::vector<function> all;
  for (std::size_t i = 0; i < blocking_count; ++i) all.push_back(static_cast<function>(i));
  bad(entry, "unknown function '" + std::string(key) + "'; valid: " + listing(all, key_name));
}

topology parse_topology(std::string_view entry, std::string_view name) {
  for (std::size_t i = 0; i < std::size(topology_names); ++i)
    if (topology_names[i] == name) return static_cast<topology>(i);
  bad(entry, "unknown topology '" + std::string(name) +
                 "'; valid: " + listing(topology_names, [](std::string_view n) { return n; }));
}

// "Hypercube, Ring, ..., automatic with automatic, tree, ...; Ring, Mesh<2> with pipelined"
std::string combinations(function f) {
  auto show = [](algorithm a) { return to_string(a); };
  std::vector<algorithm> any{algorithm::automatic}, linear;
  for (const applicable& e : table_row(f).algorithms())
    (e.need == topology_need::linear_dims ? linear : any).push_back(e.algo);
  std::string s = listing(topology_names, [](std::string_view n) { return n; }) +
                  ", automatic with " + listing(any, show);
  if (!linear.empty()) s += "; Ring, Mesh<2> with " + listing(linear, show);
  return s;
}

algorithm parse_algorithm(std::string_view entry, function f, topology t, std::string_view name) {
  const std::string key(key_name(f));
  for (const applicable& e : table_row(f).algorithms()) {
    if (to_string(e.algo) != name) continue;
    if (e.need == topology_need::linear_dims && t != topology::ring && t != topology::mesh2)
      bad(entry, std::string(name) + " needs a topology of linear dimensions (Ring or Mesh<2>); " +
                     "valid for " + key + ": " + combinations(f));
    return e.algo;
  }
  if (name == "automatic") return algorithm::automatic;
  bad(entry, "unknown algorithm '" + std::string(name) + "' for " + key + "; valid for " + key +
                 ": " + combinations(f));
}

// s without the blanks around it ("bcast = Ring : tree" reads as written
// without them, as a shell user spacing it out means).
std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// One entry, function=Topology[:algorithm]; returns the function it sets.
function select_one(std::string_view entry) {
  const auto eq = entry.find('=');
  if (eq == std::string_view::npos) bad(entry, "expected function=Topology[:algorithm]");
  const function f = parse_function(entry, trimmed(entry.substr(0, eq)));
  std::string_view rest = entry.substr(eq + 1);
  const auto colon = rest.find(':');
  const std::string_view topo = trimmed(rest.substr(0, colon));
  choice c;
  c.topo = topo == "automatic" ? topology::automatic : parse_topology(entry, topo);
  if (colon != std::string_view::npos)
    c.algo = parse_algorithm(entry, f, c.topo, trimmed(rest.substr(colon + 1)));
  c.forced.algo = c.algo;
  choices[static_cast<std::size_t>(f)] = c;
  return f;
}

// Whether k's size counts per block, p blocks per rank.
bool per_block(model::collective k) {
  using c = model::collective;
  return k == c::all_gather || k == c::reduce_scatter || k == c::scatter || k == c::gather ||
         k == c::all_to_all;
}

// Sizes are decided per power of two, up to 16 MiB per rank (p blocks of 16
// MiB / p); larger ones as that size. A simulation's cost grows with its
// message count, which the pipelines and segmented reductions raise with
// the size: this bound keeps a decision within a few ms (doc/pmpi.md).
constexpr int max_bucket = 24;
constexpr std::size_t buckets = max_bucket + 1;

int bucket_of(model::collective k, int p, std::size_t bytes) {
  const int cap =
      max_bucket -
      (per_block(k) ? static_cast<int>(std::bit_width(static_cast<unsigned>(p - 1))) : 0);
  return std::min(static_cast<int>(std::bit_width(bytes - 1)), cap);
}

// The topology model::simulate predicts cheapest for k over p ranks, 2^bucket
// bytes (in 8-byte elements) and algorithm algo; ties go to the earlier in
// enum order, and a topology that cannot run it (throws) is skipped.
topology cheapest(model::collective k, int p, int bucket, algorithm algo) {
  const model::cost_params cost = model::params_of(cost_model{}, 8);
  const std::size_t m = std::max<std::size_t>(1, (std::size_t{1} << bucket) / 8);
  const model::network net = model::network::complete(p);
  topology best = topology::hypercube;
  double best_time = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < topology_count; ++i) {
    const auto t = static_cast<topology>(i);
    try {
      const double time = with_topology(t, [&]<class Topo>() {
        return model::simulate<Topo>(k, p, m, net, cost, options{.algo = algo}).time;
      });
      if (time < best_time) best = t, best_time = time;
    } catch (const std::exception&) {
    }
  }
  return best;
}

// Decisions so far, per (function, p <= auto_max_p, bucket): 0 undecided,
// else 1 + the topology. Racing threads compute the same value.
// A nonblocking function shares its blocking function's.
std::array<std::atomic<std::uint8_t>, blocking_count*(auto_max_p + 1) * buckets> decided{};

}  // namespace

void select(std::string_view spec) {
  std::vector<std::string> entries;
  const std::string s(spec);
  boost::algorithm::split(entries, s, [](char ch) { return ch == ','; });
  // A function named twice is most likely a typo in one of the two entries:
  // taking the last silently would hide it.
  std::array<std::string, blocking_count> set_by{};
  for (std::string& e : entries) {
    boost::algorithm::trim(e);
    if (e.empty()) continue;
    std::string& first = set_by[static_cast<std::size_t>(select_one(e))];
    if (!first.empty()) bad(e, "sets the same function as the earlier entry '" + first + "'");
    first = e;
  }
}

const choice& selected(function f) {
  return choices[static_cast<std::size_t>(blocking_of(f))];
}

std::string_view topology_name(topology t) {
  return t == topology::automatic ? "automatic" : topology_names[static_cast<std::size_t>(t)];
}

topology topology_for(function f, int p, std::size_t bytes) {
  const choice& c = selected(f);
  if (c.topo != topology::automatic) return c.topo;
  const std::optional<model::collective> k = modelled(f);
  if (!k || p <= 1 || p > auto_max_p || bytes == 0) return topology::hypercube;
  const int b = bucket_of(*k, p, bytes);
  std::atomic<std::uint8_t>& d =
      decided[(static_cast<std::size_t>(blocking_of(f)) * (auto_max_p + 1) +
               static_cast<std::size_t>(p)) *
                  buckets +
              static_cast<std::size_t>(b)];
  std::uint8_t v = d.load(std::memory_order_relaxed);
  if (v == 0) {
    v = static_cast<std::uint8_t>(1 + static_cast<int>(cheapest(*k, p, b, c.algo)));
    d.store(v, std::memory_order_relaxed);
  }
  return static_cast<topology>(v - 1);
}

void explain(function f, int rank, int p, std::size_t bytes, topology t) {
  if (!detail::plan::explain::on || rank != 0) return;
  static std::mutex mutex;
  static std::set<std::tuple<function, int, std::size_t, topology>> explained;
  {
    const std::lock_guard lock(mutex);
    if (!explained.emplace(f, p, bytes, t).second) return;
  }
  const std::optional<model::collective> k = modelled(f);
  const std::string plan = with_topology(t, [&]<class Topo>() -> std::string {
    if (!k) return "all_to_all_v on " + Topo::name() + ", p = " + std::to_string(p);
    const std::size_t m = (bytes + 7) / 8;
    return detail::plan_of<Topo, sizeof(double)>(*k, p, m, options{.algo = selected(f).algo}).text;
  });
  std::cerr << "topocoll: " << mpi_name(f) << ": " << plan << '\n';
}

}  // namespace topocoll::pmpi
