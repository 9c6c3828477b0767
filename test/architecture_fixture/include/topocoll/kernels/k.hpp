#pragma once
// Allowed: kernels include core/.
#include <topocoll/core/a.hpp>
