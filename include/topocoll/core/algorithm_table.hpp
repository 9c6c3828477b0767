#pragma once
// Which algorithm applies to which collective, and on which topologies: the
// one table that the collectives' checks (collectives/arguments.hpp), the
// automatic choice's candidates (kernels/), TOPOCOLL_PMPI's validation
// (pmpi/selection.cpp) and the documentation's table (doc/algorithms.md,
// printed by `topocoll-model --algorithms` and compared by ctest) all read.
//
// A row lists the algorithms a collective accepts in options::algo, besides
// algorithm::automatic, each with what it needs of the topology. Whether a
// need is met is the topology's to say (topology/needs.hpp, meets).

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "../version.hpp"
#include "options.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

// What an algorithm needs of the topology.
enum class topology_need : unsigned char {
  any,              // every topology, every p
  linear_dims,      // every dimension linear, a chain to stream along: Ring, Mesh<K>
  complete_groups,  // a fold: on Tree<K>, p = r K^j with r <= K (complete digit groups)
};

struct applicable {
  algorithm algo;
  topology_need need;
};

// One collective's row: its name as the collectives call themselves (a
// broadcast from several roots has its own row), and its algorithms.
struct algorithm_row {
  static constexpr std::size_t max_algorithms = 4;

  std::string_view collective;
  std::array<applicable, max_algorithms> entries;
  std::size_t count;

  constexpr std::span<const applicable> algorithms() const { return {entries.data(), count}; }
};

namespace detail::table {

constexpr algorithm_row row(std::string_view collective, std::initializer_list<applicable> list) {
  if (list.size() > algorithm_row::max_algorithms) throw "algorithm_row: raise max_algorithms";
  algorithm_row r{collective, {}, list.size()};
  std::copy(list.begin(), list.end(), r.entries.begin());
  return r;
}

using enum algorithm;
using enum topology_need;
inline constexpr algorithm_row rows[] = {
    row("broadcast",
        {{tree, any}, {pipelined, linear_dims}, {scatter_all_gather, any}, {naive, any}}),
    row("broadcast from several roots", {{fold, any}, {tree, any}}),
    row("reduce",
        {{tree, any}, {pipelined, linear_dims}, {reduce_scatter_gather, any}, {naive, any}}),
    row("all_reduce", {{recursive_doubling, complete_groups},
                       {reduce_scatter_all_gather, complete_groups},
                       {reduce_broadcast, any},
                       {tree, any}}),
    row("all_gather", {{tree, any}, {fold, complete_groups}, {naive, any}}),
    row("reduce_scatter", {{tree, any}, {fold, complete_groups}}),
    row("scan", {{recursive_doubling, any}}),
    row("exclusive_scan", {{recursive_doubling, any}}),
    row("scatter", {{tree, any}, {pipelined, linear_dims}}),
    row("gather", {{tree, any}, {pipelined, linear_dims}}),
    row("all_to_all",
        {{store_and_forward, any}, {pairwise, any}, {bidirectional, linear_dims}, {naive, any}}),
    row("all_to_all_v", {{pairwise, any}, {two_stage, any}}),
};
inline constexpr algorithm_row unknown{"", {}, 0};
}  // namespace detail::table

inline constexpr std::span<const algorithm_row> algorithm_table = detail::table::rows;

// The row of `collective` (a row without algorithms for a name the table does
// not hold).
constexpr const algorithm_row& algorithms_of(std::string_view collective) {
  for (const algorithm_row& r : detail::table::rows)
    if (r.collective == collective) return r;
  return detail::table::unknown;
}

// What algorithm a needs of the topology in `row`; nullopt where the row does
// not list a.
constexpr std::optional<topology_need> need_of(const algorithm_row& row, algorithm a) {
  for (const applicable& e : row.algorithms())
    if (e.algo == a) return e.need;
  return std::nullopt;
}

// What the table says algorithm a needs for `collective`, at compile time: the
// automatic choice asks it before it takes a candidate (kernels/). A name or
// an algorithm the table does not hold does not compile.
consteval topology_need table_need(std::string_view collective, algorithm a) {
  const std::optional<topology_need> n = need_of(algorithms_of(collective), a);
  if (!n) throw "table_need: the algorithm table lists no such collective and algorithm";
  return *n;
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
