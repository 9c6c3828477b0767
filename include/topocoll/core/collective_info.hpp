#pragma once
// What a collective tells its transport as it starts: which collective, the
// root, the per-rank count, the element size and the algorithm asked for.
// A transport that has begin_collective / end_collective (mpi::Comm) hears
// it, and names the collective in a timeout. The agreement check, that every
// rank called the same one with the same arguments, is the collectives' own,
// on any transport that offers its allreduce (core/agreement.hpp).
// Transports without either (a user's) are not asked, and the collective
// costs nothing more.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "../version.hpp"
#include "options.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

struct collective_info {
  static constexpr int no_root = -1;
  // The per-rank count of a collective whose counts differ between ranks by
  // design (all_to_all_v): not compared.
  static constexpr std::size_t count_varies = SIZE_MAX;

  std::string_view name;     // "all_reduce" (a string literal: it outlives the call)
  int root = no_root;        // the caller's root, or no_root
  std::size_t count = 0;     // the elements every rank passes alike (see each collective)
  std::size_t element_size;  // sizeof(T)
  algorithm algo = algorithm::automatic;  // as the caller asked for it
};

// The collectives of this library, numbered, so that a small fixed record can
// carry which one a rank called.
inline constexpr std::string_view collective_names[] = {
    "broadcast",      "reduce",  "all_reduce", "all_gather", "reduce_scatter", "scan",
    "exclusive_scan", "scatter", "gather",     "all_to_all", "all_to_all_v"};

constexpr std::int64_t collective_number(std::string_view name) {
  for (std::size_t i = 0; i < std::size(collective_names); ++i)
    if (collective_names[i] == name) return static_cast<std::int64_t>(i);
  return static_cast<std::int64_t>(std::size(collective_names));
}

template <class C>
concept CollectiveAwareTransport = requires(C& c, const collective_info& info) {
  c.begin_collective(info);
  c.end_collective();
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
