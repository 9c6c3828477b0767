#pragma once
// The MPI transport's part of the agreement check (options::check,
// TOPOCOLL_CHECK): whether it is on, and its one allreduce. The collectives
// run the check itself on any transport (core/agreement.hpp).
//
// With a timeout, a rank whose allreduce has not completed in time names the
// ranks that never arrived: it sends every other rank a notice that it is
// here (tag::arrived, carrying the check's number on this communicator),
// listens for the others' notices for a grace period (the timeout, at most
// 1 s), and names the ranks it did not hear from. Nothing of this runs when
// every rank arrives: the check stays one allreduce.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../../core/agreement.hpp"
#include "../../core/tags.hpp"
#include "../../version.hpp"
#include "waits.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail {

class agreement_check : public waits {
 public:
  // Whether the agreement check is on for this communicator.
  bool checks_agreement() const { return check_; }

  // The check's one allreduce: MPI_Iallreduce of the record under
  // MPI_MINLOC, waited for (MPI_Wait), or polled where waits poll (a timeout,
  // started collectives). Always the nonblocking form: ranks differ in
  // whether they poll (one runs the collective in a fiber, another blocking),
  // and MPI never matches a blocking collective with a nonblocking one.
  agreement_record agreement_allreduce(const agreement_record& in) {
    constexpr int n = static_cast<int>(std::tuple_size_v<agreement_record>);
    if (polled()) return polled_allreduce(in);
    ++*checks_;
    agreement_record out;
    MPI_Request req;
    check(MPI_Iallreduce(in.data(), out.data(), n, MPI_LONG_INT, MPI_MINLOC, raw_, &req),
          "MPI_Iallreduce", -1, -1);
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait (agreement check)", -1, -1);
    return out;
  }

 protected:
  agreement_check(const boost::mpi::communicator& comm, options opt)
      : waits(comm, opt), check_(checking(opt_.check)) {}

  bool check_ = false;  // the agreement check is on

 private:
  // The allreduce polled, within the timeout if there is one. The record is
  // on the heap: after a timeout the MPI_Iallreduce stays pending (MPI
  // forbids freeing a collective's request) and may still write there, so it
  // is left to MPI for good.
  agreement_record polled_allreduce(const agreement_record& in) {
    constexpr int n = static_cast<int>(std::tuple_size_v<agreement_record>);
    const long number = ++*checks_;
    std::unique_ptr<agreement_record[]> heap(new agreement_record[2]{in, {}});
    MPI_Request req;
    check(MPI_Iallreduce(heap[0].data(), heap[1].data(), n, MPI_LONG_INT, MPI_MINLOC, raw_, &req),
          "MPI_Iallreduce", -1, -1);
    const auto start = clock::now();
    int done = 0;
    auto completed = [&] {
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test (agreement check)", -1, -1);
      return done != 0;
    };
    if (poll(completed, start)) return heap[1];
    std::vector<int> missing = never_arrived(number, completed);
    if (done) return heap[1];  // the last rank arrived within the grace period
    (void)heap.release();
    const std::string what =
        expire({waiting::every_rank, -1, -1, n * sizeof(agreement_entry), 0}, start) +
        missing_in_words(missing);
    *broken_ = what;
    throw timeout_error(what + "; the communicator is unusable from now on",
                        missing.empty() ? -1 : missing.front(), -1);
  }

  // After this rank's check timed out: tells every other rank that it
  // arrived at check `number`, and listens for the same notice from the
  // others for the grace period, or until every rank was heard from or
  // arrived() turns true. Returns the ranks not heard from.
  template <class Arrived>
  std::vector<int> never_arrived(long number, Arrived&& arrived) {
    const int tg = topocoll::detail::tag::arrived;
    // Left to MPI for good, like the record: the sends are never waited for.
    const long* notice = new long(number);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      MPI_Request q;
      if (MPI_Isend(notice, 1, MPI_LONG, r, tg, raw_, &q) == MPI_SUCCESS) MPI_Request_free(&q);
    }
    std::vector<char> heard(static_cast<std::size_t>(size_), 0);
    heard[static_cast<std::size_t>(rank_)] = 1;
    int left = size_ - 1;
    const auto grace = std::min<clock::duration>(
        std::chrono::duration_cast<clock::duration>(opt_.timeout), std::chrono::seconds(1));
    for (const auto end = clock::now() + grace; left > 0 && clock::now() < end;) {
      if (arrived()) return {};
      int flag = 0;
      MPI_Status st;
      if (MPI_Iprobe(MPI_ANY_SOURCE, tg, raw_, &flag, &st) != MPI_SUCCESS) break;
      if (!flag) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
      long theirs = 0;
      if (MPI_Recv(&theirs, 1, MPI_LONG, st.MPI_SOURCE, tg, raw_, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        break;
      char& h = heard[static_cast<std::size_t>(st.MPI_SOURCE)];
      if (theirs == number && !h) h = 1, --left;
    }
    std::vector<int> missing;
    for (int r = 0; r < size_; ++r)
      if (!heard[static_cast<std::size_t>(r)]) missing.push_back(r);
    return missing;
  }

  // "; rank 3 never arrived at topocoll::broadcast (...)"
  std::string missing_in_words(const std::vector<int>& missing) const {
    using topocoll::detail::concat;
    if (missing.empty()) return "; every rank announced itself after the timeout";
    std::string ranks;
    for (std::size_t i = 0; i < missing.size(); ++i)
      ranks += concat(i == 0 ? "" : ", ", missing[i]);
    return concat("; ", missing.size() == 1 ? "rank " : "ranks ", ranks,
                  " never arrived at topocoll::", collective_,
                  " (not heard from within the grace period after the timeout)");
  }

  // Agreement checks run under a timeout, to number the notices; shared by
  // the copies, like the duplicate.
  std::shared_ptr<long> checks_ = std::make_shared<long>(0);
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail
