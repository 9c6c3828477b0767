#pragma once
// The MPI transport's agreement check (options::check, TOPOCOLL_CHECK): as
// each collective begins, every rank checks that all called the same one
// with the same root, per-rank count, element size and algorithm, in one
// allreduce, and all throw the same std::invalid_argument, or none
// (doc/transports.md, "When ranks disagree or fail on MPI").

#include <mpi.h>

#include <iterator>
#include <memory>
#include <string>

#include "../../core/collective_info.hpp"
#include "../../core/errors.hpp"
#include "waits.hpp"

namespace topocoll::mpi::detail {

class agreement_check : public waits {
 public:
  // Called by every collective as it begins and ends (core/collective_info.hpp,
  // collectives/arguments.hpp): the collective is named in a timeout, and,
  // with the agreement check on, every rank checks that all agree on it.
  void begin_collective(const collective_info& info) {
    if (timed()) usable();
    collective_ = info.name;
    if (!check_ || size_ == 1) return;
    try {
      agree(info);
    } catch (...) {
      collective_ = {};
      throw;
    }
  }
  void end_collective() { collective_ = {}; }

 private:
  // One allreduce of (value, rank) pairs under MPI_MINLOC: every field
  // once as v and once as -v, so each rank learns the smallest and the
  // largest value of every field and the lowest rank holding each. Every rank
  // sees the same result, so all throw, or none.
  void agree(const collective_info& info) {
    struct value_at {  // MPI_LONG_INT
      long value;
      int rank;
    };
    constexpr int n = 5;
    static constexpr const char* field[n] = {"collective", "root", "count", "element size",
                                             "algorithm"};
    const long mine[n] = {
        static_cast<long>(collective_number(info.name)), info.root,
        info.count == collective_info::count_varies ? -1L : static_cast<long>(info.count),
        static_cast<long>(info.element_size), static_cast<long>(info.algo)};
    // With a timeout the record is on the heap: after a timeout the
    // MPI_Iallreduce stays pending (MPI forbids freeing a collective's
    // request) and may still write there, so it is left to MPI for good.
    value_at local[4 * n];
    std::unique_ptr<value_at[]> heap(timed() ? new value_at[4 * n] : nullptr);
    value_at* const in = heap ? heap.get() : local;
    value_at* const out = in + 2 * n;
    for (int f = 0; f < n; ++f) {
      in[2 * f] = {mine[f], rank_};
      in[2 * f + 1] = {-mine[f], rank_};
    }
    if (timed()) {
      MPI_Request req;
      check(MPI_Iallreduce(in, out, 2 * n, MPI_LONG_INT, MPI_MINLOC, lib_, &req), "MPI_Iallreduce",
            -1, -1);
      const auto start = clock::now();
      int done = 0;
      auto completed = [&] {
        check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test (agreement check)", -1, -1);
        return done != 0;
      };
      if (!poll(completed, start)) {
        (void)heap.release();
        timed_out({waiting::every_rank, -1, -1, 2 * n * sizeof(value_at), 0}, start);
      }
    } else {  // faster than MPI_Iallreduce + MPI_Wait (doc/transports.md)
      check(MPI_Allreduce(in, out, 2 * n, MPI_LONG_INT, MPI_MINLOC, lib_), "MPI_Allreduce", -1, -1);
    }
    std::string differ;
    for (int f = 0; f < n; ++f) {
      const long lo = out[2 * f].value, hi = -out[2 * f + 1].value;
      if (lo != hi)
        differ += topocoll::detail::concat(differ.empty() ? "" : "; ", field[f], ": rank ",
                                           out[2 * f].rank, " has ", shown(f, lo), ", rank ",
                                           out[2 * f + 1].rank, " has ", shown(f, hi));
    }
    if (!differ.empty())
      topocoll::detail::invalid(info.name, rank_, size_,
                                "the ranks disagree on this call (agreement check): ", differ);
  }

  // A field of the agreement record in words.
  static std::string shown(int field, long v) {
    using topocoll::detail::concat;
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

 protected:
  agreement_check(const boost::mpi::communicator& comm, options opt)
      : waits(comm, opt), check_(checking(opt_.check)) {}

  bool check_ = false;  // the agreement check is on
};

}  // namespace topocoll::mpi::detail
