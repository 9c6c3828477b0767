// The README's first example: all_reduce and all_gather on 8 loopback ranks.
#include <topocoll/topocoll.hpp>

#include <functional>
#include <vector>

namespace tc = topocoll;

int main() {
  tc::loopback::run(8, [](tc::loopback::Comm& c) {
    std::vector<double> x(1000, c.rank()), sum(1000);
    tc::all_reduce<tc::Hypercube<>>(c, x, sum, std::plus<>{});
    std::vector<double> all(8 * 1000);
    tc::all_gather<tc::Ring>(c, x, all);
  });
}
