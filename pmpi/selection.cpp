#include "selection.hpp"

#include <boost/algorithm/string/split.hpp>
#include <boost/algorithm/string/trim.hpp>

#include <array>
#include <vector>

namespace topocoll::pmpi {
namespace {

std::array<choice, function_count> choices{};

constexpr std::string_view topology_names[] = {"Hypercube", "Ring", "Mesh<2>", "Tree<2>",
                                               "Tree<4>"};

// The algorithms each function accepts (collectives/*.hpp); pipelined and
// bidirectional need a topology of linear dimensions (Ring, Mesh<2>), named
// explicitly.
std::vector<algorithm> algorithms_of(function f) {
  using a = algorithm;
  switch (f) {
    case function::bcast:
      return {a::tree, a::pipelined, a::scatter_all_gather};
    case function::reduce:
      return {a::tree, a::pipelined, a::reduce_scatter_gather};
    case function::allreduce:
      return {a::recursive_doubling, a::reduce_scatter_all_gather, a::reduce_broadcast, a::tree};
    case function::scan:
    case function::exscan:
      return {a::recursive_doubling};
    case function::scatter:
    case function::gather:
      return {a::tree, a::pipelined};
    case function::alltoall:
      return {a::store_and_forward, a::pairwise, a::bidirectional};
    case function::alltoallv:
      return {a::pairwise, a::two_stage};
    default:
      return {a::tree};  // allgather, reduce_scatter(_block)
  }
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

function parse_function(std::string_view entry, std::string_view key) {
  for (std::size_t i = 0; i < function_count; ++i)
    if (key_name(static_cast<function>(i)) == key) return static_cast<function>(i);
  std::vector<function> all;
  for (std::size_t i = 0; i < function_count; ++i) all.push_back(static_cast<function>(i));
  bad(entry, "unknown function '" + std::string(key) + "'; valid: " + listing(all, key_name));
}

topology parse_topology(std::string_view entry, std::string_view name) {
  for (std::size_t i = 0; i < std::size(topology_names); ++i)
    if (topology_names[i] == name) return static_cast<topology>(i);
  bad(entry, "unknown topology '" + std::string(name) +
                 "'; valid: " + listing(topology_names, [](std::string_view n) { return n; }));
}

bool needs_linear(algorithm a) {
  return a == algorithm::pipelined || a == algorithm::bidirectional;
}

// "Hypercube, Ring, ..., automatic with automatic, tree, ...; Ring, Mesh<2> with pipelined"
std::string combinations(function f) {
  auto show = [](algorithm a) { return to_string(a); };
  std::vector<algorithm> any{algorithm::automatic}, linear;
  for (algorithm a : algorithms_of(f)) (needs_linear(a) ? linear : any).push_back(a);
  std::string s = listing(topology_names, [](std::string_view n) { return n; }) +
                  ", automatic with " + listing(any, show);
  if (!linear.empty()) s += "; Ring, Mesh<2> with " + listing(linear, show);
  return s;
}

algorithm parse_algorithm(std::string_view entry, function f, topology t, std::string_view name) {
  const auto valid = algorithms_of(f);
  const std::string key(key_name(f));
  for (algorithm a : valid) {
    if (to_string(a) != name) continue;
    if (needs_linear(a) && t != topology::ring && t != topology::mesh2)
      bad(entry, std::string(name) + " needs a topology of linear dimensions (Ring or Mesh<2>); " +
                     "valid for " + key + ": " + combinations(f));
    return a;
  }
  if (name == "automatic") return algorithm::automatic;
  bad(entry, "unknown algorithm '" + std::string(name) + "' for " + key + "; valid for " + key +
                 ": " + combinations(f));
}

void select_one(std::string_view entry) {
  const auto eq = entry.find('=');
  if (eq == std::string_view::npos) bad(entry, "expected function=Topology[:algorithm]");
  const function f = parse_function(entry, entry.substr(0, eq));
  std::string_view rest = entry.substr(eq + 1);
  const auto colon = rest.find(':');
  const std::string_view topo = rest.substr(0, colon);
  choice c;
  c.topo = topo == "automatic" ? topology::hypercube : parse_topology(entry, topo);
  if (colon != std::string_view::npos)
    c.algo = parse_algorithm(entry, f, c.topo, rest.substr(colon + 1));
  choices[static_cast<std::size_t>(f)] = c;
}

}  // namespace

void select(std::string_view spec) {
  std::vector<std::string> entries;
  const std::string s(spec);
  boost::algorithm::split(entries, s, [](char ch) { return ch == ','; });
  for (std::string& e : entries) {
    boost::algorithm::trim(e);
    if (!e.empty()) select_one(e);
  }
}

const choice& selected(function f) {
  return choices[static_cast<std::size_t>(f)];
}

}  // namespace topocoll::pmpi
