// Must not compile: a mesh needs at least one dimension.
#include <topocoll/topocoll.hpp>

void f(topocoll::loopback::Comm& c, std::span<int> v) {
  topocoll::broadcast<topocoll::Mesh<0>>(c, v, 0);
}
