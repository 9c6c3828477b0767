#pragma once
// One tag per collective, so that two different collectives can never match
// each other's messages, and a range far from the small tags users pick. The
// MPI transport additionally runs on its own duplicated communicator.

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::tag {
// Plain enumerators (not enum class): they are the ints the transports take.
enum : int {
  base = 0x7c00,
  broadcast,
  reduce,
  scatter,
  gather,
  all_gather,
  reduce_scatter,
  all_reduce,
  scan,
  exclusive_scan,
  all_to_all,
  all_to_all_v,
  all_to_all_v_counts,
  fold,       // non-power-of-two fold / unfold steps
  forward,    // a result forwarded to a root at the end
  calibrate,  // model::calibrate's probes
  arrived,    // the agreement check's notices after a timeout (mpi/agreement.hpp)
};
}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::tag
