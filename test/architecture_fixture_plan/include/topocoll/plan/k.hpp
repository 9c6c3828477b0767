#pragma once
// Allowed: a plan includes the kernel it prices.
#include "../kernels/k.hpp"
namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::other {}  // not named after k.hpp
