#pragma once
// Fixture for check_architecture's plan rule: a kernel must not include its plan.
#include "../plan/k.hpp"
namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::k {}
