#pragma once
// The agreement check (doc/transports.md, "When ranks disagree or fail on
// MPI"): as a collective begins, every rank checks that all called the same
// one with the same root, per-rank count, element size and algorithm, with
// one allreduce of a fixed record of (value, rank) pairs under MINLOC. Each
// field goes once as v and once as -v, so every rank learns the smallest and
// the largest value of each field and the lowest rank holding each; every
// rank sees the same result, so all throw the same std::invalid_argument, or
// none, before any message of the collective is sent.
//
// The collectives run it (collectives/arguments.hpp, collective_scope) on
// any transport that offers the allreduce (AgreementTransport): mpi::Comm
// (MPI_Allreduce of MPI_LONG_INT under MPI_MINLOC) and loopback::Comm.

#include <array>
#include <concepts>
#include <cstddef>
#include <iterator>
#include <span>
#include <string>

#include "../version.hpp"
#include "collective_info.hpp"
#include "errors.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

// Whether the check runs: by_build is on in builds without NDEBUG.
enum class agreement { by_build, off, on };

inline bool checking(agreement a) {
#ifdef NDEBUG
  return a == agreement::on;
#else
  return a != agreement::off;
#endif
}

// One field of the record with the rank holding it: the layout of MPI's
// MPI_LONG_INT, so that MPI reduces the record in place.
struct agreement_entry {
  long value;
  int rank;
};

// The record: each field once as v, once as -v.
inline constexpr std::size_t agreement_fields = 5;
using agreement_record = std::array<agreement_entry, 2 * agreement_fields>;

// MINLOC of one entry: the smaller value, and of equal ones the lower rank.
constexpr agreement_entry min_location(agreement_entry a, agreement_entry b) {
  if (a.value != b.value) return a.value < b.value ? a : b;
  return a.rank < b.rank ? a : b;
}

// A transport that can run the check: whether it is on for this
// communicator, and the one allreduce of the record under MINLOC (every rank
// of the communicator calls it, and all get the same result).
template <class C>
concept AgreementTransport = requires(C& c, const C& cc, const agreement_record& r) {
  { cc.checks_agreement() } -> std::convertible_to<bool>;
  { c.agreement_allreduce(r) } -> std::same_as<agreement_record>;
};

namespace detail {

// This rank's record of info.
inline agreement_record agreement_of(const collective_info& info, int rank) {
  const long mine[agreement_fields] = {
      static_cast<long>(collective_number(info.name)), info.root,
      info.count == collective_info::count_varies ? -1L : static_cast<long>(info.count),
      static_cast<long>(info.element_size), static_cast<long>(info.algo)};
  agreement_record in;
  for (std::size_t f = 0; f < agreement_fields; ++f) {
    in[2 * f] = {mine[f], rank};
    in[2 * f + 1] = {-mine[f], rank};
  }
  return in;
}

// A field of the record in words.
inline std::string agreement_shown(std::size_t field, long v) {
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

// Throws std::invalid_argument naming every field the ranks disagree on,
// given the record every rank reduced.
inline void judge_agreement(const collective_info& info, const agreement_record& out, int rank,
                            int size) {
  static constexpr const char* field[agreement_fields] = {"collective", "root", "count",
                                                          "element size", "algorithm"};
  std::string differ;
  for (std::size_t f = 0; f < agreement_fields; ++f) {
    const long lo = out[2 * f].value, hi = -out[2 * f + 1].value;
    if (lo != hi)
      differ += concat(differ.empty() ? "" : "; ", field[f], ": rank ", out[2 * f].rank, " has ",
                       agreement_shown(f, lo), ", rank ", out[2 * f + 1].rank, " has ",
                       agreement_shown(f, hi));
  }
  if (!differ.empty())
    invalid(info.name, rank, size, "the ranks disagree on this call (agreement check): ", differ);
}

// The check on transport c, if it is on there.
template <AgreementTransport C>
void check_agreement(C& c, const collective_info& info) {
  if (!c.checks_agreement() || c.size() == 1) return;
  judge_agreement(info, c.agreement_allreduce(agreement_of(info, c.rank())), c.rank(), c.size());
}

}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
