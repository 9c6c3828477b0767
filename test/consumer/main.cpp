// A downstream program: includes the umbrella header, runs collectives on the
// loopback transport and checks the answers; exit code 0 means it worked.
#include <topocoll/topocoll.hpp>

#include <cstdio>
#include <functional>
#include <vector>

int main() {
  int bad = 0;
  topocoll::loopback::run(6, [&](topocoll::loopback::Comm& c) {
    const int p = c.size();
    std::vector<long> mine(3, c.rank() + 1), got(3);
    if (c.rank() == 0) {
      for (int r = 1; r < p; ++r) {
        c.recv(r, 0, std::span<long>(got));
        bad += got[0] != r + 1;
      }
    } else {
      c.send(0, 0, std::span<const long>(mine));
    }
    std::vector<long> sum(3);
    topocoll::all_reduce<topocoll::Hypercube<>>(c, std::span<const long>(mine),
                                                std::span<long>(sum), std::plus<>{});
    if (c.rank() == 0) bad += sum[0] != p * (p + 1) / 2;
  });
  std::printf("consumer: %s\n", bad ? "FAILED" : "ok");
  return bad != 0;
}
