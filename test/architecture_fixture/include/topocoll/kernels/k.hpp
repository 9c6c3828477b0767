#pragma once
// Allowed: kernels include core/.
#include <topocoll/core/a.hpp>
namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::other {}  // not named after k.hpp
namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::k {
namespace o = other;  // an alias: the check names it
}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::k
