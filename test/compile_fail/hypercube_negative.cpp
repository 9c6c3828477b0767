// Must not compile: Hypercube<-2> is no topology. ctest checks the message.
#include <topocoll/topocoll.hpp>

void f(topocoll::loopback::Comm& c, std::span<int> v) {
  topocoll::broadcast<topocoll::Hypercube<-2>>(c, v, 0);
}
