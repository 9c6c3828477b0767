// <topocoll/collectives.hpp> is the collectives alone: it compiles and runs
// with a user's transport, and pulls in neither threads nor the model.
#include <topocoll/collectives.hpp>

#if defined(_GLIBCXX_THREAD) || defined(_GLIBCXX_CONDITION_VARIABLE) || defined(_GLIBCXX_MUTEX)
#error "<topocoll/collectives.hpp> must not include <thread>, <mutex> or <condition_variable>"
#endif

#include <cstdio>
#include <functional>
#include <span>
#include <vector>

#include "support/silent_transport.hpp"

static_assert(topocoll::Transport<tc_test::silent_transport>);

int main() {
  tc_test::silent_transport c;  // one rank on its own
  std::vector<int> in{1, 2, 3}, out(3);
  topocoll::all_reduce<topocoll::Hypercube<>>(c, in, out, std::plus<>{});
  topocoll::scan<topocoll::Ring>(c, in, out, std::plus<>{});
  topocoll::broadcast<topocoll::Tree<4>>(c, out, 0);
  if (out != in) {
    std::puts("light_header: wrong result");
    return 1;
  }
  std::puts("light_header: ok");
  return 0;
}
