// Draws what the textbook figures draw — who sends what to whom at each step —
// from real runs: each collective runs on loopback ranks through a
// model::Counting decorator, the logs become a schedule of rounds, and the
// schedule an SVG (rank lines, one arrow per message, labelled with its size
// in elements).
//
//   draw [dir]     writes the figures into dir (default: .), prints a summary
//
// doc/img/ holds the figures this program drew; the guide pages show them.
// Each figure is checked against its seed: the number of steps and the size
// of every message.

#include <topocoll/model/svg.hpp>
#include <topocoll/model/trace.hpp>
#include <topocoll/topocoll.hpp>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace tc = topocoll;

namespace {

std::string out_dir = ".";
int failures = 0;

// Runs f(counting comm) on p ranks; writes <file>.svg; returns the schedule.
template <class F>
tc::model::schedule draw(const std::string& file, const std::string& title, int p, F f) {
  std::vector<std::vector<tc::model::event>> logs(static_cast<std::size_t>(p));
  tc::loopback::run(p, [&](tc::loopback::Comm& c) {
    tc::model::Counting cc(c);
    f(cc);
    logs[static_cast<std::size_t>(c.rank())] = cc.events();
  });
  auto s = tc::model::make_schedule(logs);
  std::ofstream(out_dir + "/" + file + ".svg") << tc::model::to_svg(s, title);
  std::printf(
      "%-28s p = %2d  %2d steps  %3zu messages  t = %5.0f (t_s = 100, t_w = 1 per element)\n",
      (file + ".svg").c_str(), p, s.rounds, s.messages.size(), s.cost(100, 1));
  return s;
}

// The drawing is the seed's: `steps` rounds, and every message of round k
// carries size(k) elements (the label the figure shows).
void expect(const tc::model::schedule& s, const char* what, int steps,
            const std::function<std::size_t(int round)>& size) {
  if (s.rounds != steps) {
    std::printf("  %s: %d steps, the seed has %d\n", what, s.rounds, steps);
    ++failures;
  }
  for (const tc::model::message& msg : s.messages)
    if (msg.count != size(msg.round)) {
      std::printf("  %s: rank %d sends %zu elements to rank %d in step %d, the seed sends %zu\n",
                  what, msg.src, msg.count, msg.dest, msg.round, size(msg.round));
      ++failures;
      return;
    }
}

using tc::algorithm;
constexpr std::size_t m = 4;  // elements per block: small labels, same shapes
std::size_t each_m(int) {
  return m;
}

// Every figure forces the algorithm its caption names (doc/figures.md), so that
// a change of the cost model cannot redraw it as another one.

void one_to_all_figures() {
  auto bc = []<class Topo>(int root) {
    return [=](auto& c) {
      std::vector<int> v(m, c.rank() == root ? 7 : 0);
      tc::broadcast<Topo>(c, std::span<int>(v), root, tc::options{.algo = algorithm::tree});
    };
  };
  expect(draw("broadcast_hypercube", "broadcast, Hypercube<3>, root 0 (Algorithm 4.1)", 8,
              bc.template operator()<tc::Hypercube<3>>(0)),
         "hypercube broadcast", 3, each_m);
  expect(draw("broadcast_ring", "broadcast, Ring, root 0: farthest node first (Figure 4.2)", 8,
              bc.template operator()<tc::Ring>(0)),
         "linear-array broadcast", 3, each_m);
  expect(draw("broadcast_mesh", "broadcast, Mesh<2> 3x3, root 4", 9,
              bc.template operator()<tc::Mesh<2>>(4)),
         "mesh broadcast", 4, each_m);
  expect(draw("broadcast_tree3", "broadcast, Tree<3>, root 0", 9,
              bc.template operator()<tc::Tree<3>>(0)),
         "Tree<3> broadcast", 4, each_m);

  expect(draw("reduce_hypercube6", "reduce, Hypercube<> on 6 ranks, root 0 (Algorithm 4.3)", 6,
              [](auto& c) {
                std::vector<int> in(m, 1), out(c.rank() == 0 ? m : 0);
                tc::reduce<tc::Hypercube<>>(c, std::span<const int>(in), std::span<int>(out),
                                            std::plus<>{}, 0, tc::options{.algo = algorithm::tree});
              }),
         "hypercube reduce on 6 ranks", 3, each_m);

  auto sc = []<class Topo>(algorithm a) {
    return [=](auto& c) {
      const std::size_t p = static_cast<std::size_t>(c.size());
      std::vector<int> in(c.rank() == 0 ? m * p : 0, 1), out(m);
      tc::scatter<Topo>(c, std::span<const int>(in), std::span<int>(out), 0,
                        tc::options{.algo = a});
    };
  };
  expect(draw("scatter_hypercube", "scatter, Hypercube<3>: messages halve", 8,
              sc.template operator()<tc::Hypercube<3>>(algorithm::tree)),
         "hypercube scatter", 3, [](int k) { return m * (8u >> k); });  // 16, 8, 4
  expect(draw("scatter_ring", "scatter, Ring, pipelined: farthest destination first", 6,
              sc.template operator()<tc::Ring>(algorithm::pipelined)),
         "pipelined ring scatter", 5, each_m);
}

void all_to_all_broadcast_figures() {
  // all_gather's fold: one algorithm per topology besides the tree (gather +
  // broadcast), which automatic takes for these short blocks on the ring.
  auto ag = []<class Topo>() {
    return [=](auto& c) {
      std::vector<int> in(m, c.rank()), out(m * static_cast<std::size_t>(c.size()));
      tc::all_gather<Topo>(c, std::span<const int>(in), std::span<int>(out),
                           tc::options{.algo = algorithm::fold});
    };
  };
  expect(draw("all_gather_ring", "all_gather, Ring (Algorithm 4.4)", 8,
              ag.template operator()<tc::Ring>()),
         "ring all_gather", 7, each_m);
  expect(draw("all_gather_mesh", "all_gather, Mesh<2> 3x3 (Algorithm 4.6)", 9,
              ag.template operator()<tc::Mesh<2>>()),
         "mesh all_gather", 4, [](int k) { return k <= 2 ? m : 3 * m; });  // rows, then columns
  expect(draw("all_gather_hypercube", "all_gather, Hypercube<3>: messages double (Algorithm 4.7)",
              8, ag.template operator()<tc::Hypercube<3>>()),
         "hypercube all_gather", 3, [](int k) { return m << (k - 1); });  // 4, 8, 16

  expect(draw("all_reduce_hypercube6", "all_reduce, Hypercube<> on 6 ranks, recursive doubling", 6,
              [](auto& c) {
                std::vector<int> in(m, 1), out(m);
                tc::all_reduce<tc::Hypercube<>>(c, std::span<const int>(in), std::span<int>(out),
                                                std::plus<>{},
                                                tc::options{.algo = algorithm::recursive_doubling});
              }),
         "recursive doubling all_reduce on 6 ranks", 4, each_m);
  expect(draw("scan_hypercube", "scan, Hypercube<3> (PREFIX_SUMS_HCUBE, last step one way)", 8,
              [](auto& c) {
                std::vector<int> in(m, 1), out(m);
                tc::scan<tc::Hypercube<3>>(c, std::span<const int>(in), std::span<int>(out),
                                           std::plus<>{},
                                           tc::options{.algo = algorithm::recursive_doubling});
              }),
         "hypercube scan", 3, each_m);
}

void all_to_all_figures() {
  auto exchange = []<class Topo>(algorithm a) {
    return [=](auto& c) {
      const std::size_t p = static_cast<std::size_t>(c.size());
      std::vector<int> in(m * p, c.rank()), out(m * p);
      tc::all_to_all<Topo>(c, std::span<const int>(in), std::span<int>(out),
                           tc::options{.algo = a});
    };
  };
  expect(draw("all_to_all_ring", "all_to_all, Ring: one shrinking message (Figure 4.18)", 6,
              exchange.template operator()<tc::Ring>(algorithm::store_and_forward)),
         "ring store-and-forward all_to_all", 5,
         [](int k) { return m * static_cast<std::size_t>(6 - k); });  // m(p-1), ..., m
  expect(draw("all_to_all_mesh", "all_to_all, Mesh<2> 3x3: rows, then columns (Figure 4.19)", 9,
              exchange.template operator()<tc::Mesh<2>>(algorithm::store_and_forward)),
         "mesh store-and-forward all_to_all", 4,
         [](int k) { return 3 * m * (k % 2 == 1 ? 2 : 1); });  // m sqrt(p) (sqrt(p) - k)
  expect(
      draw("all_to_all_hypercube_sf", "all_to_all, Hypercube<3>, store-and-forward (Figure 4.20)",
           8, exchange.template operator()<tc::Hypercube<3>>(algorithm::store_and_forward)),
      "hypercube store-and-forward all_to_all", 3, [](int) { return 4 * m; });  // m p / 2
  expect(draw("all_to_all_hypercube_pairwise",
              "all_to_all, Hypercube<3>, pairwise XOR (Algorithm 4.10)", 8,
              exchange.template operator()<tc::Hypercube<3>>(algorithm::pairwise)),
         "pairwise all_to_all", 7, each_m);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) out_dir = argv[1];
  one_to_all_figures();
  all_to_all_broadcast_figures();
  all_to_all_figures();
  std::printf("%s\n", failures ? "some drawings differ from the seeds" : "all drawn");
  return failures != 0;
}
