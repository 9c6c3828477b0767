#pragma once
// The MPI transport's part of the agreement check (options::check,
// TOPOCOLL_CHECK): whether it is on, and its one allreduce. The collectives
// run the check itself on any transport (core/agreement.hpp).

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <tuple>

#include "../../core/agreement.hpp"
#include "../../version.hpp"
#include "waits.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail {

class agreement_check : public waits {
 public:
  // Whether the agreement check is on for this communicator.
  bool checks_agreement() const { return check_; }

  // The check's one allreduce: MPI_Allreduce of the record under
  // MPI_MINLOC, or with a timeout MPI_Iallreduce, polled.
  agreement_record agreement_allreduce(const agreement_record& in) {
    constexpr int n = static_cast<int>(std::tuple_size_v<agreement_record>);
    agreement_record out;
    if (!timed()) {  // faster than MPI_Iallreduce + MPI_Wait (doc/transports.md)
      check(MPI_Allreduce(in.data(), out.data(), n, MPI_LONG_INT, MPI_MINLOC, lib_),
            "MPI_Allreduce", -1, -1);
      return out;
    }
    // With a timeout the record is on the heap: after a timeout the
    // MPI_Iallreduce stays pending (MPI forbids freeing a collective's
    // request) and may still write there, so it is left to MPI for good.
    std::unique_ptr<agreement_record[]> heap(new agreement_record[2]{in, {}});
    MPI_Request req;
    check(MPI_Iallreduce(heap[0].data(), heap[1].data(), n, MPI_LONG_INT, MPI_MINLOC, lib_, &req),
          "MPI_Iallreduce", -1, -1);
    const auto start = clock::now();
    int done = 0;
    auto completed = [&] {
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test (agreement check)", -1, -1);
      return done != 0;
    };
    if (!poll(completed, start)) {
      (void)heap.release();
      timed_out({waiting::every_rank, -1, -1, n * sizeof(agreement_entry), 0}, start);
    }
    return heap[1];
  }

 protected:
  agreement_check(const boost::mpi::communicator& comm, options opt)
      : waits(comm, opt), check_(checking(opt_.check)) {}

  bool check_ = false;  // the agreement check is on
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail
