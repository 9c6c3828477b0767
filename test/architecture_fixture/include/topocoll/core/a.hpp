#pragma once
// Fixture for check_architecture's self-test: core must not include a transport.
#include "../transport/mpi/b.hpp"
namespace topocoll::detail {}  // outside the ABI namespace: the check names it
