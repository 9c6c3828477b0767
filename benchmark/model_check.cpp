// model_check: the model's predictions against this machine's times.
//
//   model_check [--p 4] [--max-bytes N] [--csv FILE]               loopback, p threads
//   mpiexec -n 4 model_check --mpi [--max-bytes N] [--csv FILE]    mpi::Comm
//
// model::calibrate first measures t_s and t_w (and the busy factors) on the
// transport. Then, for every collective, every topology and every algorithm
// that applies to it (automatic included), at 8 B, 64 B, ... (x8) up to
// --max-bytes per rank block (block sizes as in collectives_bench):
//   - predicted: model::simulate runs the library's own kernels for the call
//     with the calibrated options, on a complete network with the calibrated
//     t_s and t_w (per 8-byte element, 8 t_w);
//   - measured: the median over repetitions of the slowest rank's time of the
//     same call (model::run_collective) on doubles with std::plus; the
//     algorithms of one collective, topology and size alternate, repetition by
//     repetition, so they see the same machine.
// One CSV row per cell; model_check.py turns them into ratios and rank
// correlations (benchmark/README.md).

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include <topocoll/model/calibrate.hpp>
#include <topocoll/model/simulate.hpp>
#include <topocoll/topocoll.hpp>
#ifdef TOPOCOLL_MODEL_CHECK_MPI
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <topocoll/transport/mpi.hpp>
#endif

namespace {

namespace sim = topocoll::model;
namespace po = boost::program_options;
using clk = std::chrono::steady_clock;

struct settings {
  int p = 4;
  std::size_t max_bytes = std::size_t{2} << 20;
  std::string csv = "model_check.csv";
  bool mpi = false;
};

// One algorithm of one collective, topology and size: what it is and what the
// model predicts; `measured_us` is filled by the run.
struct cell {
  sim::collective k;
  int topology;  // index into topology_names
  topocoll::algorithm algo;
  std::size_t bytes;
  double predicted_us = 0, measured_us = 0;
};

constexpr const char* topology_names[] = {"Hypercube<>", "Ring", "Mesh<2>", "Tree<2>", "Tree<4>"};

template <class F>
decltype(auto) with_topology(int t, F&& f) {
  switch (t) {
    case 1:
      return f.template operator()<topocoll::Ring>();
    case 2:
      return f.template operator()<topocoll::Mesh<2>>();
    case 3:
      return f.template operator()<topocoll::Tree<2>>();
    case 4:
      return f.template operator()<topocoll::Tree<4>>();
    default:
      return f.template operator()<topocoll::Hypercube<>>();
  }
}

std::vector<std::size_t> sizes(const settings& s) {
  std::vector<std::size_t> v;
  for (std::size_t b = 8; b <= s.max_bytes; b *= 8) v.push_back(b);
  return v;
}

// Every cell the model can price: a forced algorithm that does not apply to
// the collective or topology throws, and is left out.
std::vector<cell> plan(const settings& s, const topocoll::cost_model& cost) {
  const sim::network net = sim::network::complete(s.p);
  const sim::cost_params c = sim::params_of(cost, sizeof(double));
  std::vector<cell> cells;
  for (sim::collective k : sim::all_collectives)
    for (int t = 0; t < static_cast<int>(std::size(topology_names)); ++t)
      for (std::size_t bytes : sizes(s))
        for (int a = 0; a < topocoll::algorithm_count; ++a) {
          const topocoll::options opt{static_cast<topocoll::algorithm>(a), cost};
          const std::size_t m = bytes / sizeof(double);
          try {
            const double us = with_topology(
                t, [&]<class Topo>() { return sim::simulate<Topo>(k, s.p, m, net, c, opt).time; });
            cells.push_back({k, t, opt.algo, bytes, us});
          } catch (const std::invalid_argument&) {  // does not apply here
          }
        }
  return cells;
}

// The buffers of one call, taken in order out of one allocation made before
// any timing.
class buffers {
 public:
  explicit buffers(std::size_t elements) : data_(elements, 1.0) {}
  void reset() { used_ = 0; }
  std::span<double> operator()(std::size_t n) {
    const auto s = std::span<double>(data_).subspan(used_, n);
    used_ += n;
    return s;
  }

 private:
  std::vector<double> data_;
  std::size_t used_ = 0;
};

template <class C>
double slowest(C& c, double local) {
  double out = 0;
  topocoll::all_reduce<topocoll::Hypercube<>>(c, std::span<const double>(&local, 1),
                                              std::span<double>(&out, 1), topocoll::ops::max{});
  return out;
}

template <class C>
void barrier(C& c) {
  int x = 0, y = 0;
  topocoll::all_reduce<topocoll::Hypercube<>>(c, std::span<const int>(&x, 1), std::span<int>(&y, 1),
                                              std::plus<>{});
}

int repetitions(std::size_t bytes) {
  return bytes <= 4096 ? 100 : bytes <= (64 << 10) ? 40 : bytes <= (1 << 20) ? 15 : 7;
}

// Times one group of cells (one collective, topology and size), their
// repetitions alternating; every rank times, every rank gets the slowest figures.
template <class C>
void measure(C& c, std::span<cell> group, const topocoll::cost_model& cost, buffers& buf) {
  const int reps = repetitions(group.front().bytes);
  std::vector<std::vector<double>> t(group.size());
  for (int i = 0; i < reps + 1; ++i)
    for (std::size_t j = 0; j < group.size(); ++j) {
      const cell& x = group[(j + static_cast<std::size_t>(i)) % group.size()];
      const topocoll::options opt{x.algo, cost};
      buf.reset();
      barrier(c);
      const auto t0 = clk::now();
      with_topology(x.topology, [&]<class Topo>() {
        sim::run_collective<Topo>(c, x.k, x.bytes / sizeof(double), buf, std::plus<>{}, opt);
      });
      const double us = std::chrono::duration<double, std::micro>(clk::now() - t0).count();
      const double worst = slowest(c, us);
      if (i > 0) t[(j + static_cast<std::size_t>(i)) % group.size()].push_back(worst);
    }
  for (std::size_t j = 0; j < group.size(); ++j) {
    std::nth_element(t[j].begin(), t[j].begin() + reps / 2, t[j].end());
    group[j].measured_us = t[j][static_cast<std::size_t>(reps / 2)];
  }
}

// Every group of cells of one collective, topology and size, in plan order.
template <class C>
void measure_all(C& c, std::vector<cell>& cells, const topocoll::cost_model& cost,
                 const settings& s) {
  buffers buf(2 * static_cast<std::size_t>(s.p) * (s.max_bytes / sizeof(double)) + 16);
  for (std::size_t first = 0; first < cells.size();) {
    std::size_t last = first + 1;
    while (last < cells.size() && cells[last].k == cells[first].k &&
           cells[last].topology == cells[first].topology && cells[last].bytes == cells[first].bytes)
      ++last;
    measure(c, std::span<cell>(cells).subspan(first, last - first), cost, buf);
    first = last;
  }
}

void write(const settings& s, const std::vector<cell>& cells, const topocoll::cost_model& cost) {
  std::ofstream f(s.csv);
  f << "transport,p,t_s_us,t_w_us_per_byte,busy_ts,busy_tw,collective,topology,algorithm,bytes,"
       "predicted_us,measured_us\n";
  for (const cell& x : cells)
    f << (s.mpi ? "mpi" : "loopback") << ',' << s.p << ',' << cost.ts_us << ','
      << cost.tw_us_per_byte << ',' << cost.busy_ts << ',' << cost.busy_tw << ','
      << sim::to_string(x.k) << ',' << topology_names[x.topology] << ','
      << topocoll::to_string(x.algo) << ',' << x.bytes << ',' << x.predicted_us << ','
      << x.measured_us << '\n';
  std::printf("model_check: %zu cells on %s at p = %d (t_s %.3g us, t_w %.3g us/B) -> %s\n",
              cells.size(), s.mpi ? "mpi" : "loopback", s.p, cost.ts_us, cost.tw_us_per_byte,
              s.csv.c_str());
}

// Calibrates on c, plans, measures; rank 0 writes the CSV.
template <class C>
void check(C& c, const settings& s) {
  const topocoll::cost_model cost = sim::calibrate(c).cost;
  std::vector<cell> cells = plan(s, cost);
  measure_all(c, cells, cost, s);
  if (c.rank() == 0) write(s, cells, cost);
}

void check_loopback(const settings& s) {
  topocoll::loopback::run(s.p, [&](topocoll::loopback::Comm& c) { check(c, s); });
}

settings parse(int argc, char** argv) {
  settings s;
  po::options_description d("model_check: predicted against measured times");
  d.add_options()("help,h", "this text")("p", po::value(&s.p)->default_value(4),
                                         "ranks (loopback threads; under --mpi, the world's size)")(
      "max-bytes", po::value(&s.max_bytes)->default_value(s.max_bytes),
      "the largest rank block (bytes)")("csv", po::value(&s.csv)->default_value(s.csv),
                                        "the output file")(
      "mpi", po::bool_switch(&s.mpi), "measure on mpi::Comm (run under mpiexec)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, d), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << d;
    std::exit(0);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) try {
  settings s = parse(argc, argv);
  if (!s.mpi) {
    check_loopback(s);
    return 0;
  }
#ifdef TOPOCOLL_MODEL_CHECK_MPI
  boost::mpi::environment env(argc, argv);
  topocoll::mpi::Comm c{boost::mpi::communicator{}};
  s.p = c.size();
  check(c, s);
  return 0;
#else
  throw std::invalid_argument("--mpi: this model_check was built without MPI");
#endif
} catch (const std::exception& e) {
  std::fprintf(stderr, "model_check: %s\n", e.what());
  return 1;
}
