#pragma once
// One sub-step of an exchange in which either side may be absent: a
// sendrecv, a send, a receive, or nothing. `none` marks the absent side.

#include <span>

#include "../version.hpp"
#include "concepts.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

inline constexpr int none = -1;

// Always inlined: it is a choice of one call, made once per exchange of a
// fold, and out of line it costs more than the choice.
template <Transport C, class T>
[[gnu::always_inline]] inline void transfer(C& c, int to, std::span<const T> out, int from,
                                            std::span<T> in, int tag) {
  if (to != none && from != none)
    c.sendrecv(to, out, from, in, tag);
  else if (to != none)
    c.send(to, tag, out);
  else if (from != none)
    c.recv(from, tag, in);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
