// Must not compile: a tree needs at least two children per level.
#include <topocoll/topocoll.hpp>

void f(topocoll::loopback::Comm& c, std::span<int> v) {
  topocoll::broadcast<topocoll::Tree<1>>(c, v, 0);
}
