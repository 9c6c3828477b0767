// Must not compile: the operator cannot combine two ints into an int.
#include <topocoll/topocoll.hpp>

#include <string>

struct not_an_op {
  std::string operator()(const std::string& a, const std::string& b) const { return a + b; }
};
void f(topocoll::loopback::Comm& c, std::span<const int> in, std::span<int> out) {
  topocoll::all_reduce<topocoll::Ring>(c, in, out, not_an_op{});
}
