#pragma once
// One tag per collective, so that two different collectives can never match
// each other's messages, and a range far from the small tags users pick. The
// MPI transport additionally runs on its own duplicated communicator.

namespace topocoll::detail::tag {
inline constexpr int base = 0x7c00;
inline constexpr int broadcast = base + 1;
inline constexpr int reduce = base + 2;
inline constexpr int scatter = base + 3;
inline constexpr int gather = base + 4;
inline constexpr int all_gather = base + 5;
inline constexpr int reduce_scatter = base + 6;
inline constexpr int all_reduce = base + 7;
inline constexpr int scan = base + 8;
inline constexpr int exclusive_scan = base + 9;
inline constexpr int all_to_all = base + 10;
inline constexpr int all_to_all_v = base + 11;
inline constexpr int all_to_all_v_counts = base + 12;
inline constexpr int fold = base + 13;     // non-power-of-two fold / unfold steps
inline constexpr int forward = base + 14;  // a result forwarded to a root at the end
}  // namespace topocoll::detail::tag
