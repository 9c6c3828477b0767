// topocoll-model: predicts a collective's time on a network by running the
// library's kernels in the simulator (model/simulate.hpp). See doc/model.md.
//
//   topocoll-model --collective all_gather --topology hypercube --network ring --p 8 --m 16
//   topocoll-model ... --svg steps.svg              the step diagram, congested messages in red
//   topocoll-model ... --sweep p --from 2 --to 4096 --algo
//   recursive_doubling,reduce_scatter_all_gather
//                  --csv sweep.csv --png sweep.png  predicted time per algorithm (matplotlib)

#include <boost/program_options.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <topocoll/core/algorithm_table.hpp>
#include <topocoll/model/simulate.hpp>
#include <topocoll/model/simulate_v.hpp>
#include <topocoll/model/timed_svg.hpp>

namespace po = boost::program_options;
namespace sim = topocoll::model;

namespace {

struct request {
  sim::collective k;
  std::string topology, network;
  int p;
  std::size_t m;
  sim::cost_params cost;
  sim::ports ports;
  sim::receives receives;
  sim::routing routing;
  std::optional<sim::traffic> traffic;  // all_to_all_v's pattern (k is then unused)
  double segment_floor;                 // the pipelines' shortest segment, in start-ups
};

// The collective's name, with all_to_all_v's pattern.
std::string collective_name(const request& q) {
  if (!q.traffic) return std::string(sim::to_string(q.k));
  return "all_to_all_v (" + std::string(sim::to_string(*q.traffic)) + ")";
}

topocoll::algorithm parse_algorithm(const std::string& s) {
  for (int i = 0; i < topocoll::algorithm_count; ++i)
    if (topocoll::to_string(static_cast<topocoll::algorithm>(i)) == s)
      return static_cast<topocoll::algorithm>(i);
  throw std::invalid_argument("unknown algorithm \"" + s + "\"");
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) v.push_back(x);
  return v;
}

// A command line that asks for nothing the tool can do: the message names the
// flag, and the exit code is 2.
struct usage_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

constexpr long long max_p = 1LL << 28;  // the simulator's and the networks' limit
constexpr long long max_m = 1LL << 40;  // p * m, the simulator's limit

template <class V>
std::string shown(V v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

template <class V>
V in_range(const po::variables_map& vm, const char* flag, V lo, V hi) {
  const V v = vm[flag].as<V>();
  if (!(v >= lo && v <= hi))  // NaN too
    throw usage_error("--" + std::string(flag) + " " + shown(v) + " is outside [" + shown(lo) +
                      ", " + shown(hi) + "]");
  return v;
}

// The network of the shape named, for p ranks; "matching": the topology's own.
sim::network make_network(const request& q) {
  std::string spec = q.network;
  if (spec == "matching") {
    const std::string& t = q.topology;
    spec = t == "ring"               ? "ring"
           : t.rfind("mesh", 0) == 0 ? "mesh"
           : t == "hypercube"        ? "hypercube"
                                     : "tree";
  }
  if ((spec == "mesh" || spec == "open_mesh") && q.topology == "mesh2") {
    const auto s = topocoll::Mesh<2>::sides(q.p);
    sim::network n =
        spec == "mesh" ? sim::network::mesh({s[0], s[1]}) : sim::network::open_mesh({s[0], s[1]});
    return n.with(q.ports).with(q.receives).with(q.routing);
  }
  return sim::network::parse(spec, q.p).with(q.ports).with(q.receives).with(q.routing);
}

// Runs f.template operator()<Topo>() for the topology named.
template <class F>
auto with_topology(const std::string& name, F&& f) {
  if (name == "ring") return f.template operator()<topocoll::Ring>();
  if (name == "mesh2") return f.template operator()<topocoll::Mesh<2>>();
  if (name == "mesh3") return f.template operator()<topocoll::Mesh<3>>();
  if (name == "hypercube") return f.template operator()<topocoll::Hypercube<>>();
  if (name == "tree2") return f.template operator()<topocoll::Tree<2>>();
  if (name == "tree4") return f.template operator()<topocoll::Tree<4>>();
  if (name == "tree8") return f.template operator()<topocoll::Tree<8>>();
  throw std::invalid_argument("unknown topology \"" + name +
                              "\" (ring, mesh2, mesh3, hypercube, tree2, tree4, tree8)");
}

// automatic chooses with the request's t_s and t_w (per element of 8 bytes),
// as the simulation would by itself; automatic_takes, which times nothing,
// is told them here.
topocoll::options options_for(const request& q, topocoll::algorithm a) {
  topocoll::options opt{.algo = a};
  opt.cost.segment_floor = q.segment_floor;
  opt.cost = sim::priced_by(opt.cost, q.cost, sizeof(double));
  return opt;
}

sim::traced_result run(const request& q, topocoll::algorithm a, bool traced) {
  const sim::network net = make_network(q);
  const topocoll::options opt = options_for(q, a);
  return with_topology(q.topology, [&]<class Topo>() {
    if (q.traffic) {
      const std::vector<std::size_t> counts = sim::traffic_counts(*q.traffic, q.p, q.m);
      if (traced) return sim::simulate_v_trace<Topo>(counts, q.p, net, q.cost, opt);
      return sim::traced_result{sim::simulate_v<Topo>(counts, q.p, net, q.cost, opt), {}};
    }
    if (traced) return sim::simulate_trace<Topo>(q.k, q.p, q.m, net, q.cost, opt);
    return sim::traced_result{sim::simulate<Topo>(q.k, q.p, q.m, net, q.cost, opt), {}};
  });
}

void predict(const request& q, topocoll::algorithm a, const po::variables_map& vm) {
  const bool traced = vm.count("svg") || vm.count("steps");
  const sim::traced_result t = run(q, a, traced);
  const std::string title = collective_name(q) + " on " + q.topology + " (" +
                            std::string(topocoll::to_string(a)) + "), " + make_network(q).name() +
                            ", p = " + std::to_string(q.p) + ", m = " + std::to_string(q.m);
  std::cout << title << "\n  time " << t.summary.time << "\n  messages " << t.summary.messages
            << "\n  max congestion " << t.summary.max_congestion << "\n";
  if (a == topocoll::algorithm::automatic && vm.count("takes") && !q.traffic) {
    const auto takes = with_topology(q.topology, [&]<class Topo>() {
      return sim::automatic_takes<Topo>(q.k, q.p, q.m, options_for(q, a), q.ports);
    });
    std::cout << "  automatic takes";
    for (topocoll::algorithm x : takes) std::cout << ' ' << topocoll::to_string(x);
    std::cout << (takes.empty() ? " none of the forced algorithms' schedules\n" : "\n");
  }
  if (vm.count("steps")) {
    std::cout << "  start\tend\tsrc\tdst\telements\thops\tc\n";
    for (const sim::timed_message& m : t.messages)
      std::cout << "  " << m.start << '\t' << m.end << '\t' << m.src << '\t' << m.dst << '\t'
                << m.count << '\t' << m.hops << '\t' << m.congestion << '\n';
  }
  if (vm.count("svg")) {
    std::ofstream(vm["svg"].as<std::string>()) << sim::to_svg(t, title);
    std::cout << "  wrote " << vm["svg"].as<std::string>() << "\n";
  }
}

// p or m from `from` to `to`, doubling; every algorithm in algos.
void sweep(request q, const std::vector<topocoll::algorithm>& algos, const po::variables_map& vm) {
  const std::string what = vm["sweep"].as<std::string>();
  if (what != "p" && what != "m") throw usage_error("--sweep takes p or m, got \"" + what + "\"");
  // from >= 1, or doubling never passes `to`; to within the swept quantity's
  // limit, so that doubling cannot overflow either
  const long long from = in_range(vm, "from", 1LL, what == "p" ? max_p : max_m);
  const long long to = in_range(vm, "to", from, what == "p" ? max_p : max_m);
  const std::string csv = vm.count("csv") ? vm["csv"].as<std::string>() : "sweep.csv";
  std::ofstream out(csv);
  out << "collective,topology,network,algorithm,p,m,time,messages,max_congestion\n";
  for (long long x = from; x <= to; x *= 2) {
    if (what == "p")
      q.p = static_cast<int>(x);
    else
      q.m = static_cast<std::size_t>(x);
    for (topocoll::algorithm a : algos) {
      sim::result r;
      try {
        r = run(q, a, false).summary;
      } catch (const std::invalid_argument& e) {  // an algorithm that does not apply here
        std::cerr << "skipped: " << e.what() << "\n";
        continue;
      }
      out << collective_name(q) << ',' << q.topology << ',' << make_network(q).name() << ','
          << topocoll::to_string(a) << ',' << q.p << ',' << q.m << ',' << r.time << ','
          << r.messages << ',' << r.max_congestion << '\n';
    }
  }
  out.close();
  std::cout << "wrote " << csv << "\n";
  if (vm.count("png")) {
    const std::string cmd = "/usr/bin/python3 " TOPOCOLL_PLOT_SWEEP " " + csv + " " +
                            vm["png"].as<std::string>() + " " + what;
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("plotting failed: " + cmd);
    std::cout << "wrote " << vm["png"].as<std::string>() << "\n";
  }
}

// The algorithm table (core/algorithm_table.hpp) as doc/algorithms.md shows
// it: per collective, its algorithms by what they need of the topology.
void print_algorithm_table() {
  using topocoll::topology_need;
  constexpr topology_need columns[] = {topology_need::any, topology_need::linear_dims,
                                       topology_need::complete_groups};
  std::cout << "| collective | on every topology | on Ring and Mesh<K> only | on every topology; "
               "on Tree<K> only where p = r·K^j, r ≤ K |\n| --- | --- | --- | --- |\n";
  for (const topocoll::algorithm_row& row : topocoll::algorithm_table) {
    const std::string_view name = row.collective, first = name.substr(0, name.find(' '));
    std::cout << "| `" << first << "`" << name.substr(first.size()) << " |";
    for (topology_need n : columns) {
      std::string cell;
      for (const topocoll::applicable& e : row.algorithms())
        if (e.need == n)
          cell += (cell.empty() ? " `" : ", `") + std::string(to_string(e.algo)) + "`";
      std::cout << (cell.empty() ? " —" : cell) << " |";
    }
    std::cout << "\n";
  }
}

po::options_description describe_options() {
  po::options_description d("topocoll-model: a collective's predicted time on a network");
  d.add_options()("help,h", "this text")(
      "algorithms", "print which algorithm applies to which collective on which topology")(
      "collective,c", po::value<std::string>()->default_value("all_gather"),
      "broadcast, reduce, all_reduce, all_gather, reduce_scatter, scan, exclusive_scan, scatter, "
      "gather, all_to_all, all_to_all_v (its counts: --traffic)")(
      "traffic", po::value<std::string>()->default_value("uniform"),
      "all_to_all_v's count matrix, blocks around --m: uniform, skewed (one block of m per "
      "rank, to 2i + 1 mod p), to_root, random")(
      "topology,t", po::value<std::string>()->default_value("hypercube"),
      "the algorithm's topology: ring, mesh2, mesh3, hypercube, tree2, tree4, tree8")(
      "network,n", po::value<std::string>()->default_value("matching"),
      "matching (the topology's own), ring, linear, mesh, mesh:AxB..., open_mesh, "
      "open_mesh:AxB..., "
      "hypercube, tree, complete")("p", po::value<long long>()->default_value(8),
                                   "ranks, 1 to 2^28")(
      "m", po::value<long long>()->default_value(16),
      "elements per rank (per block), 0 to 2^40 / p")(
      "ts", po::value<double>()->default_value(100.0), "t_s, per message")(
      "tw", po::value<double>()->default_value(1.0), "t_w, per element")(
      "th", po::value<double>()->default_value(0.0), "t_h, per hop")(
      "tr", po::value<double>()->default_value(0.0),
      "t_r, per element a rank copies locally (Grama's rearrangement)")(
      "segment-floor", po::value<double>()->default_value(topocoll::cost_model{}.segment_floor),
      "the shortest pipeline segment, in start-ups' worth of bytes (0: the seeds' model, ICS "
      "632's r_opt)")(
      "ports", po::value<std::string>()->default_value("multi"),
      "multi (posted sends travel at once) or single (one call at a time, the seeds' model)")(
      "receives", po::value<std::string>()->default_value("multi"),
      "multi (a rank takes every message at once) or single (one at a time)")(
      "routing", po::value<std::string>()->default_value("cut_through"),
      "cut_through (t_s + t_h hops + t_w m) or store_and_forward (hops (t_s + t_w m) + t_h "
      "hops)")("algo,a", po::value<std::string>()->default_value("automatic"),
               "algorithm (options::algo); for --sweep a comma-separated list")(
      "steps", "print every message: start, end, ranks, size, hops, congestion")(
      "takes",
      "with --algo automatic: name the forced algorithms whose schedule automatic's is "
      "(records every algorithm's: a simulation each)")("svg", po::value<std::string>(),
                                                        "write the step diagram to this SVG file")(
      "sweep", po::value<std::string>(), "p or m: predict over a doubling range")(
      "from", po::value<long long>()->default_value(2), "first value of the sweep, >= 1")(
      "to", po::value<long long>()->default_value(1024), "last value of the sweep, >= --from")(
      "csv", po::value<std::string>(), "the sweep's CSV file (default sweep.csv)")(
      "png", po::value<std::string>(), "plot the sweep to this PNG (matplotlib)");
  return d;
}

// The command line, parsed: every argument is a --flag (a stray word is
// more likely a mistyped flag than something to ignore).
po::variables_map parse(int argc, char** argv, const po::options_description& d) {
  po::options_description all;
  all.add(d).add_options()("stray", po::value<std::vector<std::string>>());
  po::positional_options_description stray;
  stray.add("stray", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(stray).run(), vm);
  po::notify(vm);
  if (vm.count("stray"))
    throw usage_error("unexpected argument \"" + vm["stray"].as<std::vector<std::string>>()[0] +
                      "\" (every option is a --flag)");
  return vm;
}

// The request the flags describe, each in its range: a value outside names
// its flag (a negative --m read as a size_t would wrap to 2^64 - 1).
request read_request(const po::variables_map& vm) {
  const std::string ports = vm["ports"].as<std::string>();
  if (ports != "multi" && ports != "single") throw usage_error("--ports takes multi or single");
  const std::string receives = vm["receives"].as<std::string>();
  if (receives != "multi" && receives != "single")
    throw usage_error("--receives takes multi or single");
  const std::string routing = vm["routing"].as<std::string>();
  if (routing != "cut_through" && routing != "store_and_forward")
    throw usage_error("--routing takes cut_through or store_and_forward");
  const auto p = in_range(vm, "p", 1LL, max_p);
  const auto m = in_range(vm, "m", 0LL, max_m / p);
  const double huge = std::numeric_limits<double>::max();
  const std::string collective = vm["collective"].as<std::string>();
  const bool v = collective == "all_to_all_v";
  if (v && p > sim::max_threaded_ranks)
    throw usage_error("--p " + std::to_string(p) + ": all_to_all_v runs a thread per rank, " +
                      std::to_string(sim::max_threaded_ranks) + " at most");
  return {
      v ? sim::collective::all_to_all : sim::parse_collective(collective),
      vm["topology"].as<std::string>(),
      vm["network"].as<std::string>(),
      static_cast<int>(p),
      static_cast<std::size_t>(m),
      {in_range(vm, "ts", 0.0, huge), in_range(vm, "tw", 0.0, huge), in_range(vm, "th", 0.0, huge),
       in_range(vm, "tr", 0.0, huge)},
      ports == "single" ? sim::ports::single : sim::ports::multi,
      receives == "single" ? sim::receives::one_at_a_time : sim::receives::at_once,
      routing == "store_and_forward" ? sim::routing::store_and_forward : sim::routing::cut_through,
      v ? std::optional(sim::parse_traffic(vm["traffic"].as<std::string>())) : std::nullopt,
      in_range(vm, "segment-floor", 0.0, 1e6)};
}

}  // namespace

int main(int argc, char** argv) try {
  const po::options_description d = describe_options();
  const po::variables_map vm = parse(argc, argv, d);
  if (vm.count("help")) {
    std::cout << d << "\n";
    return 0;
  }
  if (vm.count("algorithms")) {
    print_algorithm_table();
    return 0;
  }
  const request q = read_request(vm);
  std::vector<topocoll::algorithm> algos;
  for (const std::string& a : split(vm["algo"].as<std::string>()))
    algos.push_back(parse_algorithm(a));
  if (algos.empty()) throw usage_error("--algo names no algorithm");
  if (vm.count("sweep"))
    sweep(q, algos, vm);
  else
    predict(q, algos.front(), vm);
  return 0;
} catch (const std::invalid_argument& e) {  // usage_error, or input the simulator rejects
  std::cerr << "topocoll-model: " << e.what() << "\n";
  return 2;
} catch (const po::error& e) {  // an unknown flag, a value that is no number
  std::cerr << "topocoll-model: " << e.what() << "\n";
  return 2;
} catch (const std::bad_alloc&) {  // a request larger than this machine's memory
  std::cerr << "topocoll-model: out of memory: simulating this --p and --m needs more memory "
               "than this machine gives; try smaller values\n";
  return 2;
} catch (const std::exception& e) {
  std::cerr << "topocoll-model: " << e.what() << "\n";
  return 1;
}
