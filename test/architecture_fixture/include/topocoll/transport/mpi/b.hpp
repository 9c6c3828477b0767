#pragma once
// Allowed: a transport includes the rest of transport/ and core/.
#include "../../core/a.hpp"
#include "../loopback/c.hpp"
