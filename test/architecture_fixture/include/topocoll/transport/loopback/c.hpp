#pragma once
// Forbidden: a transport includes only core/ (and transport/).
#include "../../kernels/k.hpp"
