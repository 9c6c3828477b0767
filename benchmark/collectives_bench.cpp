// collectives_bench: every topocoll collective on every topology (and each
// forced algorithm variant), against the native MPI collective and against
// Boost.MPI's value API, in one run under mpiexec.
//
//   mpiexec -n 4 collectives_bench [--csv FILE] [--max-bytes N] [--min-bytes N]
//                                  [--only NAME[,NAME...]] [--sizes N[,N...]] [--reps-scale X]
//                                  [--no-strings]
//                                  [--calibrate] [--loop] [--checked] [--persistent]
//
// --persistent adds, for broadcast, reduce, all_reduce, all_gather, scan,
// exclusive_scan, scatter and gather, each topology's automatic call as a
// persistent request (topocoll/persistent.hpp), set up once per size and then
// started and waited for: "topocoll <Topo> persistent".
//
// --checked adds broadcast and all_reduce on Hypercube<> through a Comm with
// the agreement check on (mpi::options::check), "topocoll Hypercube checked",
// beside the same calls unchecked: the check's cost per call.
//
// Method. For one collective and one message size, every contender (topocoll
// Topo/algorithm, native MPI, Boost.MPI) is called once to warm up and to
// check its result against the native one; then the repetitions alternate the
// contenders in a fresh random order each time (the same on every rank), with
// MPI_Barrier before each repetition. A fixed cyclic order gives every
// contender the same predecessor, and that biased medians by up to 25 %: two
// identical all_reduce contenders measured 55 and 70 us at 64 KiB. A repetition is one call, or for
// messages up to 16 KiB a batch of 4 to 16 back-to-back calls (time / batch: on an oversubscribed
// node the ranks leave a barrier a few microseconds apart, which a single small call cannot hide),
// and its time is the slowest rank's (t_max, as in the Intel MPI Benchmarks). The table shows the
// median and the min over the repetitions, and each median's ratio to native MPI's (and to
// Boost.MPI's, where it has the collective).
//
// With --loop every repetition is a loop of back-to-back calls at every size
// (100 up to 1 KiB, 32 up to 64 KiB, 8 up to 1 MiB, 3 above), timed as a
// whole, as the OSU micro-benchmarks do: the barrier-separated mode shows one
// call from a common start, the loop mode a call in an application's loop.
//
// With --calibrate, model::calibrate measures the cost model first (t_s, t_w
// and what they become when every rank communicates at once) and every
// topocoll contender runs with it: automatic's choices and the pipelines'
// segments follow this machine instead of the default model.
//
// Sizes are bytes per rank block: the buffer of broadcast/reduce/all_reduce/
// scan, the block each rank contributes (all_gather, gather, scatter), the
// block per destination (reduce_scatter's result, all_to_all's blocks).

#include <mpi.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/program_options.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <topocoll/model/calibrate.hpp>
#include <topocoll/model/simulate.hpp>
#include <topocoll/topocoll.hpp>
#include <topocoll/transport/mpi.hpp>

namespace bmpi = boost::mpi;
using topocoll::algorithm;

namespace {

// ---------------------------------------------------------------- settings --
struct settings {
  std::size_t min_bytes = 8;
  std::size_t max_bytes = std::size_t{16} << 20;
  double reps_scale = 1.0;
  bool strings = true;
  bool loop = false;        // --loop: every size timed as a loop of back-to-back calls
  bool checked = false;     // also the Hypercube calls with the agreement check on
  bool persistent = false;  // also every topology's persistent request
  std::vector<std::string> only;
  std::vector<std::size_t> exact_sizes;  // --sizes: these sizes instead of the ladder
  std::string csv;
  topocoll::cost_model cost;  // every topocoll contender's; --calibrate measures it
};

std::vector<std::size_t> sizes(const settings& s) {
  if (!s.exact_sizes.empty()) return s.exact_sizes;
  std::vector<std::size_t> v;
  for (std::size_t b :
       {std::size_t{8}, std::size_t{64}, std::size_t{256}, std::size_t{1} << 10,
        std::size_t{4} << 10, std::size_t{16} << 10, std::size_t{64} << 10, std::size_t{256} << 10,
        std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{16} << 20})
    if (b >= s.min_bytes && b <= s.max_bytes) v.push_back(b);
  return v;
}

// Fewer repetitions for big messages: a full run at p = 4 stays within minutes.
int reps_for(std::size_t bytes, const settings& s) {
  int r = bytes <= 1024 ? 40 : bytes <= (64 << 10) ? 30 : bytes <= (1 << 20) ? 15 : 5;
  return std::max(3, static_cast<int>(r * s.reps_scale));
}

// Small messages: a repetition is a batch of back-to-back calls (time per
// call = batch time / batch), which averages out the scheduler's noise on an
// oversubscribed node. --loop times every size that way, with longer loops
// (OSU's method: back-to-back calls timed as a whole, where one call's skew
// and the next call's start overlap as they do in an application's loop).
int batch_for(std::size_t bytes, const settings& s) {
  if (s.loop) return bytes <= 1024 ? 100 : bytes <= (64 << 10) ? 32 : bytes <= (1 << 20) ? 8 : 3;
  return bytes <= 1024 ? 16 : bytes <= (16 << 10) ? 4 : 1;
}

// A monotonic clock (each rank times its own calls).
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string human(std::size_t b) {
  if (b >= (1u << 20)) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

// ------------------------------------------------------------- contenders --
// floor: a reference, not an implementation (strings only): the native MPI
// collective on the encoded bytes, then the receiving ranks' string writes
// (copy-assigned from a local copy of the right result: no encoding, no
// decoding, no validation). Not a strict lower bound: decoding from one
// contiguous buffer can beat copy-assigning from scattered strings, and a
// topocoll byte movement can beat Open MPI's; it shows what is left to win
// once the bytes move at native speed and the strings must be built anyway.
enum class kind { topocoll, native, boost, floor };

struct contender {
  contender(kind k_, std::string impl_, std::string topo_, std::string algo_,
            std::function<void()> run_, std::function<bool()> verify_)
      : k(k_),
        impl(std::move(impl_)),
        topo(std::move(topo_)),
        algo(std::move(algo_)),
        run(std::move(run_)),
        verify(std::move(verify_)) {}
  kind k;
  std::string impl;   // "topocoll Ring", "MPI", "Boost.MPI"
  std::string topo;   // "Ring", ... ("" for the baselines)
  std::string algo;   // "auto", "pipelined", ...
  std::string takes;  // auto on doubles: the forced algorithms it runs as (automatic_takes)
  std::function<void()> run;
  std::function<bool()> verify;    // after a call: this rank's result is right
  std::vector<double> start, end;  // per repetition, this rank's clock
  bool ok = true;                  // verified (all ranks)
  bool dropped = false;            // threw (a forced algorithm that does not apply)
  std::string why;
};

struct result_row {
  std::string collective, type, impl, topo, algo;
  std::size_t bytes;
  int p, reps;
  double median_us, min_us;
  double native_us, boost_us;  // NaN if none
  bool ok;
  std::string takes;
};

// ------------------------------------------------------------ the topologies --
template <class F>
void for_each_topology(F&& f) {
  f.template operator()<topocoll::Ring>();
  f.template operator()<topocoll::Mesh<2>>();
  f.template operator()<topocoll::Hypercube<>>();
  f.template operator()<topocoll::Tree<2>>();
  f.template operator()<topocoll::Tree<4>>();
}

std::string algo_name(algorithm a) {
  return a == algorithm::automatic ? "auto" : std::string(topocoll::to_string(a));
}

// What automatic takes in a cell of doubles under `cost`: the forced
// algorithms whose schedule is automatic's (model::automatic_takes), joined by
// '+'; empty where the simulator has no such collective (all_to_all_v) or
// topology.
std::string automatic_takes(const std::string& coll, const std::string& topo, int p, std::size_t m,
                            const topocoll::cost_model& cost) {
  namespace sim = topocoll::model;
  std::string names;
  for (sim::collective k : sim::all_collectives) {
    if (sim::to_string(k) != coll) continue;
    for_each_topology([&]<class Topo>() {
      if (Topo::name() != topo) return;
      for (algorithm a : sim::automatic_takes<Topo>(k, p, m, {algorithm::automatic, cost}))
        names += (names.empty() ? "" : "+") + algo_name(a);
    });
  }
  return names;
}

struct bench {
  bmpi::communicator world;
  topocoll::mpi::Comm comm{world};
  std::optional<topocoll::mpi::Comm> checked;  // --checked: a Comm with the agreement check on
  settings set;
  std::vector<result_row> rows;
  int rank = world.rank(), p = world.size();
  std::mt19937 shuffler{20261122};  // every rank draws the same orders

  // Runs the contenders of one (collective, type, size) and records rows.
  void measure(const std::string& coll, const std::string& type, std::size_t bytes,
               std::vector<contender>& cs) {
    // warm up + verify; a contender that throws is dropped (on every rank: the
    // argument checks that reject a forced algorithm run on every rank).
    for (auto& c : cs) {
      int threw = 0, bad = 0;
      try {
        MPI_Barrier(world);
        c.run();
        if (c.verify && !c.verify()) bad = 1;
      } catch (const std::exception& e) {
        threw = 1;
        c.why = e.what();
      }
      int any[2] = {threw, bad}, all[2];
      MPI_Allreduce(any, all, 2, MPI_INT, MPI_MAX, world);
      c.dropped = all[0] != 0;
      c.ok = all[1] == 0;
    }
    const int reps = reps_for(bytes, set);
    const int batch = batch_for(bytes, set);
    const std::size_t n = cs.size();
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (int r = 0; r < reps; ++r) {
      std::shuffle(order.begin(), order.end(), shuffler);  // the same on every rank
      for (std::size_t j = 0; j < n; ++j) {
        contender& c = cs[order[j]];
        if (c.dropped) continue;
        MPI_Barrier(world);
        const double t0 = now();
        for (int b = 0; b < batch; ++b) c.run();
        c.start.push_back(t0);
        c.end.push_back(now());
      }
    }
    // A repetition's time is the slowest rank's (Intel MPI Benchmarks' t_max).
    double native = NAN, boost = NAN;
    std::vector<std::pair<double, double>> stats(n, {NAN, NAN});
    for (std::size_t j = 0; j < n; ++j) {
      contender& c = cs[j];
      if (c.dropped) continue;
      const int k = static_cast<int>(c.start.size());
      std::vector<double> mine(c.start.size()), d(c.start.size());
      for (int i = 0; i < k; ++i)
        mine[static_cast<std::size_t>(i)] = (c.end[i] - c.start[i]) / batch;
      MPI_Allreduce(mine.data(), d.data(), k, MPI_DOUBLE, MPI_MAX, world);
      std::sort(d.begin(), d.end());
      stats[j] = {d[d.size() / 2] * 1e6, d.front() * 1e6};
      if (c.k == kind::native) native = stats[j].first;
      if (c.k == kind::boost) boost = stats[j].first;
    }
    for (std::size_t j = 0; j < n; ++j) {
      contender& c = cs[j];
      if (c.dropped) {
        if (rank == 0 && bytes == sizes(set).front())
          std::fprintf(stderr, "  (%s %s %s/%s dropped: %s)\n", coll.c_str(), type.c_str(),
                       c.topo.c_str(), c.algo.c_str(), c.why.c_str());
        continue;
      }
      if (c.k == kind::topocoll && c.algo == "auto" && type == "double")
        c.takes = automatic_takes(coll, c.topo, p, std::max<std::size_t>(1, bytes / sizeof(double)),
                                  set.cost);
      rows.push_back({coll, type, c.impl, c.topo, c.algo, bytes, p, reps, stats[j].first,
                      stats[j].second, native, boost, c.ok, c.takes});
    }
    if (rank == 0) print(coll, type, bytes);
  }

  void print(const std::string& coll, const std::string& type, std::size_t bytes) {
    std::printf("\n%s <%s>, %s per rank, p = %d\n", coll.c_str(), type.c_str(),
                human(bytes).c_str(), p);
    std::printf("  %-44s %12s %12s %9s %9s\n", "implementation", "median us", "min us", "/native",
                "/boost");
    for (const auto& r : rows) {
      if (r.collective != coll || r.type != type || r.bytes != bytes) continue;
      std::string name = r.impl + (r.algo.empty() ? "" : " " + r.algo);
      auto ratio = [](double a, double b) {
        char buf[32];
        if (std::isnan(b)) return std::string("-");
        std::snprintf(buf, sizeof buf, "%.2f", a / b);
        return std::string(buf);
      };
      std::printf("  %-44s %12.1f %12.1f %9s %9s%s%s%s\n", name.c_str(), r.median_us, r.min_us,
                  ratio(r.median_us, r.native_us).c_str(), ratio(r.median_us, r.boost_us).c_str(),
                  r.ok ? "" : "  WRONG RESULT", r.takes.empty() ? "" : "  takes ", r.takes.c_str());
    }
    std::fflush(stdout);
  }

  void write_csv() {
    if (rank != 0 || set.csv.empty()) return;
    std::ofstream f(set.csv);
    f << "collective,type,bytes_per_rank,p,impl,topology,algorithm,reps,median_us,min_us,"
         "native_median_us,boost_median_us,ratio_native,ratio_boost,verified,auto_takes\n";
    for (const auto& r : rows) {
      auto num = [](double x) {
        std::ostringstream os;
        if (!std::isnan(x)) os << x;
        return os.str();
      };
      f << r.collective << ',' << r.type << ',' << r.bytes << ',' << r.p << ',' << r.impl << ','
        << r.topo << ',' << r.algo << ',' << r.reps << ',' << num(r.median_us) << ','
        << num(r.min_us) << ',' << num(r.native_us) << ',' << num(r.boost_us) << ','
        << num(r.median_us / r.native_us) << ',' << num(r.median_us / r.boost_us) << ','
        << (r.ok ? 1 : 0) << ',' << r.takes << '\n';
    }
  }

  bool wanted(const std::string& coll) const {
    if (set.only.empty()) return true;
    return std::find(set.only.begin(), set.only.end(), coll) != set.only.end();
  }
};

// Adds topocoll contenders: every topology with `automatic`, and the forced
// variants listed for linear (Ring/Mesh/Hypercube) or k-nomial topologies.
// make(Topo tag, options) returns the call.
template <class Make>
void add_topocoll(const topocoll::cost_model& cost, std::vector<contender>& cs,
                  std::initializer_list<algorithm> ring_only,
                  std::initializer_list<algorithm> non_tree, std::function<bool()> verify,
                  Make&& make) {
  for_each_topology([&]<class Topo>() {
    std::vector<algorithm> algos{algorithm::automatic};
    const bool is_tree = Topo::kind == topocoll::dim_kind::knomial;
    if (std::is_same_v<Topo, topocoll::Ring>) algos.insert(algos.end(), ring_only);
    if (!is_tree) algos.insert(algos.end(), non_tree);
    for (algorithm a : algos) {
      const topocoll::options o{a, cost};
      cs.push_back({kind::topocoll, "topocoll " + Topo::name(), Topo::name(), algo_name(a),
                    make.template operator()<Topo>(o), verify});
    }
  });
}

// --checked: Hypercube<>'s automatic call on a Comm with the agreement check
// on ("topocoll Hypercube checked"), beside the same call unchecked.
template <class Make>
void add_checked(bench& B, std::vector<contender>& cs, std::function<bool()> verify, Make&& make) {
  if (!B.checked) return;
  cs.push_back({kind::topocoll, "topocoll Hypercube checked", "Hypercube", "auto", make(*B.checked),
                std::move(verify)});
}

// --persistent: every topology's automatic call as a persistent request,
// set up here (init<Topo>(options) returns it) and then started and waited
// for in each repetition.
template <class Init>
void add_persistent(bench& B, std::vector<contender>& cs, std::function<bool()> verify,
                    Init&& init) {
  if (!B.set.persistent) return;
  for_each_topology([&]<class Topo>() {
    auto pr = std::make_shared<topocoll::persistent_request>(
        init.template operator()<Topo>(topocoll::options{algorithm::automatic, B.set.cost}));
    cs.push_back({kind::topocoll, "topocoll " + Topo::name() + " persistent", Topo::name(),
                  "persistent",
                  [pr] {
                    pr->start();
                    pr->wait();
                  },
                  verify});
  });
}

// Exact inputs (small integers): every algorithm's sums are exact.
std::vector<double> input(int r, std::size_t m, int salt = 0) {
  std::vector<double> v(m);
  for (std::size_t i = 0; i < m; ++i) v[i] = static_cast<double>((r * 7 + i * 3 + salt) % 17);
  return v;
}

struct vplus {  // Boost.MPI's value reduction on whole vectors
  std::vector<double> operator()(const std::vector<double>& a, const std::vector<double>& b) const {
    std::vector<double> c(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
    return c;
  }
};

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  return a == b;
}

// ------------------------------------------------------------ the benchmarks --
void run_double(bench& B, std::size_t bytes) {
  const int p = B.p, rank = B.rank;
  const std::size_t m = std::max<std::size_t>(1, bytes / sizeof(double));
  const std::size_t P = static_cast<std::size_t>(p);
  const int M = static_cast<int>(m);
  MPI_Comm w = B.world;
  auto sp = [](std::vector<double>& v) { return std::span<double>(v); };
  auto csp = [](const std::vector<double>& v) { return std::span<const double>(v); };
  const std::vector<double> in = input(rank, m);
  const std::vector<double> in_pm = input(rank, P * m);
  std::vector<double> out(m), out_pm(P * m), want, want_pm;
  std::vector<double> bv;  // Boost.MPI value buffers
  std::vector<std::vector<double>> bvv, bvv2;

  using namespace std::placeholders;
  auto verify_out = [&] { return same(out, want); };
  auto verify_out_root = [&] { return rank != 0 || same(out, want); };
  auto verify_pm = [&] { return same(out_pm, want_pm); };

  // The transport alone: what mpi::Comm adds to MPI per message.
  if (B.wanted("sendrecv_ring")) {
    const int to = (rank + 1) % p, from = (rank + p - 1) % p;
    want = input(from, m);
    std::vector<contender> cs;
    cs.push_back({kind::native, "MPI", "", "MPI_Sendrecv",
                  [&] {
                    MPI_Sendrecv(in.data(), M, MPI_DOUBLE, to, 1, out.data(), M, MPI_DOUBLE, from,
                                 1, w, MPI_STATUS_IGNORE);
                  },
                  verify_out});
    cs.push_back({kind::boost, "Boost.MPI", "", "sendrecv(vector)",
                  [&] { B.world.sendrecv(to, 1, in, from, 1, bv); },
                  [&] { return same(bv, want); }});
    cs.push_back({kind::topocoll, "topocoll mpi::Comm", "", "sendrecv",
                  [&] { B.comm.sendrecv(to, csp(in), from, sp(out), 1); }, verify_out});
    B.measure("sendrecv_ring", "double", bytes, cs);
  }
  if (B.wanted("pingpong") && p >= 2) {
    // half a round trip between ranks 0 and 1; the others idle
    want = input(0, m);
    std::vector<contender> cs;
    auto ok = [&] { return rank != 1 || same(out, want); };
    auto ok_b = [&] { return rank != 1 || same(bv, want); };
    cs.push_back({kind::native, "MPI", "", "MPI_Send/MPI_Recv",
                  [&] {
                    if (rank == 0) {
                      MPI_Send(in.data(), M, MPI_DOUBLE, 1, 2, w);
                      MPI_Recv(out.data(), M, MPI_DOUBLE, 1, 2, w, MPI_STATUS_IGNORE);
                    } else if (rank == 1) {
                      MPI_Recv(out.data(), M, MPI_DOUBLE, 0, 2, w, MPI_STATUS_IGNORE);
                      MPI_Send(out.data(), M, MPI_DOUBLE, 0, 2, w);
                    }
                  },
                  ok});
    cs.push_back({kind::boost, "Boost.MPI", "", "send/recv(vector)",
                  [&] {
                    if (rank == 0) {
                      B.world.send(1, 2, in);
                      B.world.recv(1, 2, bv);
                    } else if (rank == 1) {
                      B.world.recv(0, 2, bv);
                      B.world.send(0, 2, bv);
                    }
                  },
                  ok_b});
    cs.push_back({kind::topocoll, "topocoll mpi::Comm", "", "send/recv",
                  [&] {
                    if (rank == 0) {
                      B.comm.send(1, 2, csp(in));
                      B.comm.recv(1, 2, sp(out));
                    } else if (rank == 1) {
                      B.comm.recv(0, 2, sp(out));
                      B.comm.send(0, 2, csp(out));
                    }
                  },
                  ok});
    B.measure("pingpong", "double", bytes, cs);
  }
  if (B.wanted("broadcast")) {
    std::vector<double> buf = in;
    want = input(0, m);
    bv = rank == 0 ? in : std::vector<double>{};  // the root's value; the others receive
    std::vector<contender> cs;
    auto reset_verify = [&] {
      bool ok = same(buf, want);
      buf = in;
      return ok;
    };
    cs.push_back({kind::native, "MPI", "", "MPI_Bcast",
                  [&] { MPI_Bcast(buf.data(), M, MPI_DOUBLE, 0, w); }, reset_verify});
    cs.push_back({kind::boost, "Boost.MPI", "", "broadcast(vector)",
                  [&] { bmpi::broadcast(B.world, bv, 0); }, [&] { return same(bv, want); }});
    add_topocoll(B.set.cost, cs, {algorithm::pipelined},
                 {algorithm::tree, algorithm::scatter_all_gather}, reset_verify,
                 [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return [&, o] { topocoll::broadcast<Topo>(B.comm, sp(buf), 0, o); };
                 });
    add_checked(B, cs, reset_verify, [&](topocoll::mpi::Comm& c) -> std::function<void()> {
      return [&] { topocoll::broadcast<topocoll::Hypercube<>>(c, sp(buf), 0); };
    });
    add_persistent(B, cs, reset_verify, [&]<class Topo>(topocoll::options o) {
      return topocoll::broadcast_init<Topo>(B.comm, sp(buf), 0, o);
    });
    B.measure("broadcast", "double", bytes, cs);
  }
  if (B.wanted("reduce")) {
    want.assign(m, 0);
    MPI_Allreduce(in.data(), want.data(), M, MPI_DOUBLE, MPI_SUM, w);
    std::vector<contender> cs;
    cs.push_back({kind::native, "MPI", "", "MPI_Reduce",
                  [&] { MPI_Reduce(in.data(), out.data(), M, MPI_DOUBLE, MPI_SUM, 0, w); },
                  verify_out_root});
    cs.push_back({kind::boost, "Boost.MPI", "", "reduce(vector)",
                  [&] { bmpi::reduce(B.world, in, bv, std::plus<double>(), 0); },
                  [&] { return rank != 0 || same(bv, want); }});
    add_topocoll(
        B.set.cost, cs, {algorithm::pipelined}, {algorithm::tree, algorithm::reduce_scatter_gather},
        verify_out_root, [&]<class Topo>(topocoll::options o) -> std::function<void()> {
          return [&, o] { topocoll::reduce<Topo>(B.comm, csp(in), sp(out), std::plus<>{}, 0, o); };
        });
    add_persistent(B, cs, verify_out_root, [&]<class Topo>(topocoll::options o) {
      return topocoll::reduce_init<Topo>(B.comm, csp(in), sp(out), std::plus<>{}, 0, o);
    });
    B.measure("reduce", "double", bytes, cs);
  }
  if (B.wanted("all_reduce")) {
    want.assign(m, 0);
    MPI_Allreduce(in.data(), want.data(), M, MPI_DOUBLE, MPI_SUM, w);
    std::vector<contender> cs;
    cs.push_back({kind::native, "MPI", "", "MPI_Allreduce",
                  [&] { MPI_Allreduce(in.data(), out.data(), M, MPI_DOUBLE, MPI_SUM, w); },
                  verify_out});
    cs.push_back({kind::boost, "Boost.MPI", "", "all_reduce(vector)",
                  [&] { bmpi::all_reduce(B.world, in, bv, vplus{}); },
                  [&] { return same(bv, want); }});
    add_topocoll(B.set.cost, cs, {},
                 {algorithm::recursive_doubling, algorithm::reduce_scatter_all_gather,
                  algorithm::reduce_broadcast},
                 verify_out, [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return [&, o] {
                     topocoll::all_reduce<Topo>(B.comm, csp(in), sp(out), std::plus<>{}, o);
                   };
                 });
    add_checked(B, cs, verify_out, [&](topocoll::mpi::Comm& c) -> std::function<void()> {
      return
          [&] { topocoll::all_reduce<topocoll::Hypercube<>>(c, csp(in), sp(out), std::plus<>{}); };
    });
    add_persistent(B, cs, verify_out, [&]<class Topo>(topocoll::options o) {
      return topocoll::all_reduce_init<Topo>(B.comm, csp(in), sp(out), std::plus<>{}, o);
    });
    B.measure("all_reduce", "double", bytes, cs);
  }
  if (B.wanted("reduce_scatter")) {
    want.assign(m, 0);
    MPI_Reduce_scatter_block(in_pm.data(), want.data(), M, MPI_DOUBLE, MPI_SUM, w);
    std::vector<contender> cs;
    cs.push_back(
        {kind::native, "MPI", "", "MPI_Reduce_scatter_block",
         [&] { MPI_Reduce_scatter_block(in_pm.data(), out.data(), M, MPI_DOUBLE, MPI_SUM, w); },
         verify_out});
    add_topocoll(B.set.cost, cs, {}, {algorithm::fold, algorithm::tree}, verify_out,
                 [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return [&, o] {
                     topocoll::reduce_scatter<Topo>(B.comm, csp(in_pm), sp(out), std::plus<>{}, o);
                   };
                 });
    B.measure("reduce_scatter", "double", bytes, cs);
  }
  if (B.wanted("all_gather")) {
    want_pm.assign(P * m, 0);
    MPI_Allgather(in.data(), M, MPI_DOUBLE, want_pm.data(), M, MPI_DOUBLE, w);
    std::vector<contender> cs;
    cs.push_back({kind::native, "MPI", "", "MPI_Allgather",
                  [&] { MPI_Allgather(in.data(), M, MPI_DOUBLE, out_pm.data(), M, MPI_DOUBLE, w); },
                  verify_pm});
    cs.push_back({kind::boost, "Boost.MPI", "", "all_gather(vector)",
                  [&] { bmpi::all_gather(B.world, in, bvv); },
                  [&] {
                    std::vector<double> flat;
                    for (auto& v : bvv) flat.insert(flat.end(), v.begin(), v.end());
                    return same(flat, want_pm);
                  }});
    add_topocoll(B.set.cost, cs, {}, {algorithm::fold, algorithm::tree}, verify_pm,
                 [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return [&, o] { topocoll::all_gather<Topo>(B.comm, csp(in), sp(out_pm), o); };
                 });
    add_persistent(B, cs, verify_pm, [&]<class Topo>(topocoll::options o) {
      return topocoll::all_gather_init<Topo>(B.comm, csp(in), sp(out_pm), o);
    });
    B.measure("all_gather", "double", bytes, cs);
  }
  if (B.wanted("scan")) {
    want.assign(m, 0);
    MPI_Scan(in.data(), want.data(), M, MPI_DOUBLE, MPI_SUM, w);
    std::vector<contender> cs;
    cs.push_back({kind::native, "MPI", "", "MPI_Scan",
                  [&] { MPI_Scan(in.data(), out.data(), M, MPI_DOUBLE, MPI_SUM, w); }, verify_out});
    cs.push_back({kind::boost, "Boost.MPI", "", "scan(vector)",
                  [&] { bmpi::scan(B.world, in, bv, vplus{}); }, [&] { return same(bv, want); }});
    add_topocoll(B.set.cost, cs, {}, {}, verify_out,
                 [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return
                       [&, o] { topocoll::scan<Topo>(B.comm, csp(in), sp(out), std::plus<>{}, o); };
                 });
    add_persistent(B, cs, verify_out, [&]<class Topo>(topocoll::options o) {
      return topocoll::scan_init<Topo>(B.comm, csp(in), sp(out), std::plus<>{}, o);
    });
    B.measure("scan", "double", bytes, cs);
  }
  if (B.wanted("exclusive_scan")) {
    want.assign(m, -1);
    MPI_Exscan(in.data(), want.data(), M, MPI_DOUBLE, MPI_SUM, w);
    std::vector<contender> cs;
    auto verify_ex = [&] { return rank == 0 || same(out, want); };
    cs.push_back({kind::native, "MPI", "", "MPI_Exscan",
                  [&] { MPI_Exscan(in.data(), out.data(), M, MPI_DOUBLE, MPI_SUM, w); },
                  verify_ex});
    add_topocoll(B.set.cost, cs, {}, {}, verify_ex,
                 [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return [&, o] {
                     topocoll::exclusive_scan<Topo>(B.comm, csp(in), sp(out), std::plus<>{}, o);
                   };
                 });
    add_persistent(B, cs, verify_ex, [&]<class Topo>(topocoll::options o) {
      return topocoll::exclusive_scan_init<Topo>(B.comm, csp(in), sp(out), std::plus<>{}, o);
    });
    B.measure("exclusive_scan", "double", bytes, cs);
  }
  if (B.wanted("scatter")) {
    want = input(0, P * m, 5);
    want = std::vector<double>(want.begin() + static_cast<std::ptrdiff_t>(rank * m),
                               want.begin() + static_cast<std::ptrdiff_t>((rank + 1) * m));
    const std::vector<double> root_in = rank == 0 ? input(0, P * m, 5) : std::vector<double>{};
    std::vector<std::vector<double>> root_vals;
    if (rank == 0)
      for (std::size_t j = 0; j < P; ++j)
        root_vals.emplace_back(root_in.begin() + static_cast<std::ptrdiff_t>(j * m),
                               root_in.begin() + static_cast<std::ptrdiff_t>((j + 1) * m));
    std::vector<contender> cs;
    cs.push_back(
        {kind::native, "MPI", "", "MPI_Scatter",
         [&] { MPI_Scatter(root_in.data(), M, MPI_DOUBLE, out.data(), M, MPI_DOUBLE, 0, w); },
         verify_out});
    cs.push_back({kind::boost, "Boost.MPI", "", "scatter(vector)",
                  [&] {
                    if (rank == 0)
                      bmpi::scatter(B.world, root_vals, bv, 0);
                    else
                      bmpi::scatter(B.world, bv, 0);
                  },
                  [&] { return same(bv, want); }});
    add_topocoll(B.set.cost, cs, {algorithm::pipelined}, {}, verify_out,
                 [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return [&, o] { topocoll::scatter<Topo>(B.comm, csp(root_in), sp(out), 0, o); };
                 });
    add_persistent(B, cs, verify_out, [&]<class Topo>(topocoll::options o) {
      return topocoll::scatter_init<Topo>(B.comm, csp(root_in), sp(out), 0, o);
    });
    B.measure("scatter", "double", bytes, cs);
  }
  if (B.wanted("gather")) {
    want_pm.assign(P * m, 0);
    MPI_Allgather(in.data(), M, MPI_DOUBLE, want_pm.data(), M, MPI_DOUBLE, w);
    std::vector<double> root_out(rank == 0 ? P * m : 0);
    auto verify_g = [&] { return rank != 0 || same(root_out, want_pm); };
    std::vector<contender> cs;
    cs.push_back(
        {kind::native, "MPI", "", "MPI_Gather",
         [&] { MPI_Gather(in.data(), M, MPI_DOUBLE, root_out.data(), M, MPI_DOUBLE, 0, w); },
         verify_g});
    cs.push_back({kind::boost, "Boost.MPI", "", "gather(vector)",
                  [&] {
                    if (rank == 0)
                      bmpi::gather(B.world, in, bvv, 0);
                    else
                      bmpi::gather(B.world, in, 0);
                  },
                  [&] {
                    if (rank != 0) return true;
                    std::vector<double> flat;
                    for (auto& v : bvv) flat.insert(flat.end(), v.begin(), v.end());
                    return same(flat, want_pm);
                  }});
    add_topocoll(B.set.cost, cs, {algorithm::pipelined}, {}, verify_g,
                 [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return [&, o] { topocoll::gather<Topo>(B.comm, csp(in), sp(root_out), 0, o); };
                 });
    add_persistent(B, cs, verify_g, [&]<class Topo>(topocoll::options o) {
      return topocoll::gather_init<Topo>(B.comm, csp(in), sp(root_out), 0, o);
    });
    B.measure("gather", "double", bytes, cs);
  }
  if (B.wanted("all_to_all")) {
    want_pm.assign(P * m, 0);
    MPI_Alltoall(in_pm.data(), M, MPI_DOUBLE, want_pm.data(), M, MPI_DOUBLE, w);
    for (std::size_t j = 0; j < P; ++j)
      bvv2.emplace_back(in_pm.begin() + static_cast<std::ptrdiff_t>(j * m),
                        in_pm.begin() + static_cast<std::ptrdiff_t>((j + 1) * m));
    std::vector<contender> cs;
    cs.push_back(
        {kind::native, "MPI", "", "MPI_Alltoall",
         [&] { MPI_Alltoall(in_pm.data(), M, MPI_DOUBLE, out_pm.data(), M, MPI_DOUBLE, w); },
         verify_pm});
    cs.push_back({kind::boost, "Boost.MPI", "", "all_to_all(vector)",
                  [&] { bmpi::all_to_all(B.world, bvv2, bvv); },
                  [&] {
                    std::vector<double> flat;
                    for (auto& v : bvv) flat.insert(flat.end(), v.begin(), v.end());
                    return same(flat, want_pm);
                  }});
    add_topocoll(B.set.cost, cs, {algorithm::bidirectional},
                 {algorithm::store_and_forward, algorithm::pairwise}, verify_pm,
                 [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return [&, o] { topocoll::all_to_all<Topo>(B.comm, csp(in_pm), sp(out_pm), o); };
                 });
    B.measure("all_to_all", "double", bytes, cs);
    bvv2.clear();
  }
  if (B.wanted("all_to_all_v")) {
    // uneven blocks: rank r sends (1 + (r + j) % 3) * m / 2 elements to rank j
    std::vector<std::size_t> cnt(P);
    std::vector<int> sc(P), sd(P), rc(P), rd(P);
    for (std::size_t j = 0; j < P; ++j)
      cnt[j] = std::max<std::size_t>(1, (1 + (rank + j) % 3) * m / 2);
    for (std::size_t j = 0; j < P; ++j) {
      sc[j] = static_cast<int>(cnt[j]);
      rc[j] = static_cast<int>(std::max<std::size_t>(1, (1 + (j + rank) % 3) * m / 2));
    }
    for (std::size_t j = 1; j < P; ++j)
      sd[j] = sd[j - 1] + sc[j - 1], rd[j] = rd[j - 1] + rc[j - 1];
    const std::size_t stot = std::accumulate(cnt.begin(), cnt.end(), std::size_t{0});
    const std::size_t rtot = static_cast<std::size_t>(rd[P - 1] + rc[P - 1]);
    const std::vector<double> vin = input(rank, stot, 9);
    std::vector<double> vout(rtot);
    want.assign(rtot, 0);
    MPI_Alltoallv(vin.data(), sc.data(), sd.data(), MPI_DOUBLE, want.data(), rc.data(), rd.data(),
                  MPI_DOUBLE, w);
    std::vector<double> got;
    std::vector<contender> cs;
    cs.push_back({kind::native, "MPI", "", "MPI_Alltoallv",
                  [&] {
                    MPI_Alltoallv(vin.data(), sc.data(), sd.data(), MPI_DOUBLE, vout.data(),
                                  rc.data(), rd.data(), MPI_DOUBLE, w);
                  },
                  [&] { return same(vout, want); }});
    add_topocoll(
        B.set.cost, cs, {}, {algorithm::pairwise, algorithm::two_stage},
        [&] { return same(got, want); },
        [&]<class Topo>(topocoll::options o) -> std::function<void()> {
          return [&, o] {
            got =
                topocoll::all_to_all_v<Topo>(B.comm, csp(vin), std::span<const std::size_t>(cnt), o)
                    .data;
          };
        });
    // The overload with the receive counts known (MPI_Alltoallv's contract):
    // no count exchange, result in a caller's buffer. The direct exchange is
    // the same on every topology, so one contender.
    std::vector<std::size_t> rcnt(rc.begin(), rc.end());
    std::vector<double> cb_out(rtot);
    cs.push_back({kind::topocoll, "topocoll Hypercube<>", "Hypercube<>", "caller-buffer auto",
                  [&] {
                    topocoll::all_to_all_v<topocoll::Hypercube<>>(
                        B.comm, csp(vin), std::span<const std::size_t>(cnt), sp(cb_out),
                        std::span<const std::size_t>(rcnt));
                  },
                  [&] { return same(cb_out, want); }});
    B.measure("all_to_all_v", "double", bytes, cs);
  }
}

// std::string: topocoll serializes per message (Boost.Serialization); Boost.MPI
// serializes std::vector<std::string> values. Strings of 32 characters; bytes =
// characters per rank block.
std::vector<std::string> strings(int r, std::size_t k, int salt = 0) {
  std::vector<std::string> v(k);
  for (std::size_t i = 0; i < k; ++i) {
    v[i] = std::to_string(r) + ":" + std::to_string(i + static_cast<std::size_t>(salt));
    v[i].resize(32, static_cast<char>('a' + (i + static_cast<std::size_t>(r)) % 26));
  }
  return v;
}

void run_string(bench& B, std::size_t bytes) {
  const int p = B.p, rank = B.rank;
  const std::size_t P = static_cast<std::size_t>(p);
  const std::size_t k = std::max<std::size_t>(1, bytes / 32);
  using S = std::string;
  auto sp = [](std::vector<S>& v) { return std::span<S>(v); };
  auto csp = [](const std::vector<S>& v) { return std::span<const S>(v); };
  const std::vector<S> in = strings(rank, k);
  std::vector<S> bv;
  std::vector<std::vector<S>> bvv;
  auto flat = [](const std::vector<std::vector<S>>& vv) {
    std::vector<S> f;
    for (auto& v : vv) f.insert(f.end(), v.begin(), v.end());
    return f;
  };
  std::vector<S> all_in;
  for (int r = 0; r < p; ++r) {
    auto s = strings(r, k);
    all_in.insert(all_in.end(), s.begin(), s.end());
  }
  // The floor's bytes: one rank block encoded (every rank's has the same size).
  const std::size_t enc = topocoll::detail::flat_size(std::span<const S>(in));
  std::vector<char> fsend(enc * P), frecv(enc * P);
  topocoll::detail::flat_encode(std::span<const S>(in), fsend.data());
  auto assign_all = [](std::vector<S>& to, const std::vector<S>& from) {
    for (std::size_t i = 0; i < from.size(); ++i) to[i] = from[i];  // keeps to[i]'s capacity
  };
  auto floor_name = [](const char* mpi) {
    return std::string(mpi) + " of the encoded bytes + string writes";
  };
  if (B.wanted("broadcast")) {
    std::vector<S> buf = in;
    const std::vector<S> want = strings(0, k);
    bv = rank == 0 ? in : std::vector<S>{};
    auto reset_verify = [&] {
      bool ok = buf == want;
      buf = in;
      return ok;
    };
    std::vector<contender> cs;
    cs.push_back({kind::boost, "Boost.MPI", "", "broadcast(vector<string>)",
                  [&] { bmpi::broadcast(B.world, bv, 0); }, [&] { return bv == want; }});
    std::vector<S> fb(k);
    cs.push_back({kind::floor, "floor", "", floor_name("MPI_Bcast"),
                  [&] {
                    MPI_Bcast(fsend.data(), static_cast<int>(enc), MPI_BYTE, 0, B.world);
                    if (rank != 0) assign_all(fb, want);
                  },
                  [&] { return rank == 0 || fb == want; }});
    add_topocoll(B.set.cost, cs, {algorithm::tree, algorithm::pipelined}, {}, reset_verify,
                 [&]<class Topo>(topocoll::options o) -> std::function<void()> {
                   return [&, o] { topocoll::broadcast<Topo>(B.comm, sp(buf), 0, o); };
                 });
    B.measure("broadcast", "string", bytes, cs);
  }
  if (B.wanted("broadcast") && bytes >= 4096) {
    // One string of `bytes` characters (a file, a JSON document): topocoll
    // sends its length, then the characters straight into the receivers'
    // string. The floor is MPI_Bcast of the characters into a string that
    // already has the right length (no length message at all).
    const std::string want(bytes, 'q');
    std::string buf = rank == 0 ? want : std::string(), bs = buf, fs(bytes, ' ');
    if (rank == 0) fs = want;
    std::vector<contender> cs;
    cs.push_back({kind::boost, "Boost.MPI", "", "broadcast(string)",
                  [&] { bmpi::broadcast(B.world, bs, 0); }, [&] { return bs == want; }});
    cs.push_back({kind::floor, "floor", "", "MPI_Bcast of the characters",
                  [&] { MPI_Bcast(fs.data(), static_cast<int>(bytes), MPI_CHAR, 0, B.world); },
                  [&] { return fs == want; }});
    add_topocoll(
        B.set.cost, cs, {algorithm::tree, algorithm::pipelined}, {}, [&] { return buf == want; },
        [&]<class Topo>(topocoll::options o) -> std::function<void()> {
          return [&, o] { topocoll::broadcast<Topo>(B.comm, std::span<S>(&buf, 1), 0, o); };
        });
    B.measure("broadcast", "one long string", bytes, cs);
  }
  if (B.wanted("gather")) {
    std::vector<S> root_out(rank == 0 ? P * k : 0);
    std::vector<contender> cs;
    cs.push_back({kind::boost, "Boost.MPI", "", "gather(vector<string>)",
                  [&] {
                    if (rank == 0)
                      bmpi::gather(B.world, in, bvv, 0);
                    else
                      bmpi::gather(B.world, in, 0);
                  },
                  [&] { return rank != 0 || flat(bvv) == all_in; }});
    std::vector<S> fg(rank == 0 ? P * k : 0);
    cs.push_back({kind::floor, "floor", "", floor_name("MPI_Gather"),
                  [&] {
                    MPI_Gather(fsend.data(), static_cast<int>(enc), MPI_BYTE, frecv.data(),
                               static_cast<int>(enc), MPI_BYTE, 0, B.world);
                    if (rank == 0) assign_all(fg, all_in);
                  },
                  [&] { return rank != 0 || fg == all_in; }});
    add_topocoll(
        B.set.cost, cs, {algorithm::pipelined}, {}, [&] { return rank != 0 || root_out == all_in; },
        [&]<class Topo>(topocoll::options o) -> std::function<void()> {
          return [&, o] { topocoll::gather<Topo>(B.comm, csp(in), sp(root_out), 0, o); };
        });
    B.measure("gather", "string", bytes, cs);
  }
  if (B.wanted("all_gather")) {
    std::vector<S> out(P * k);
    std::vector<contender> cs;
    cs.push_back({kind::boost, "Boost.MPI", "", "all_gather(vector<string>)",
                  [&] { bmpi::all_gather(B.world, in, bvv); },
                  [&] { return flat(bvv) == all_in; }});
    std::vector<S> fa(P * k);
    cs.push_back({kind::floor, "floor", "", floor_name("MPI_Allgather"),
                  [&] {
                    MPI_Allgather(fsend.data(), static_cast<int>(enc), MPI_BYTE, frecv.data(),
                                  static_cast<int>(enc), MPI_BYTE, B.world);
                    assign_all(fa, all_in);
                  },
                  [&] { return fa == all_in; }});
    add_topocoll(
        B.set.cost, cs, {}, {algorithm::tree}, [&] { return out == all_in; },
        [&]<class Topo>(topocoll::options o) -> std::function<void()> {
          return [&, o] { topocoll::all_gather<Topo>(B.comm, csp(in), sp(out), o); };
        });
    B.measure("all_gather", "string", bytes, cs);
  }
  if (B.wanted("all_to_all")) {
    const std::vector<S> in_pk = strings(rank, P * k, 3);
    std::vector<std::vector<S>> vals;
    for (std::size_t j = 0; j < P; ++j)
      vals.emplace_back(in_pk.begin() + static_cast<std::ptrdiff_t>(j * k),
                        in_pk.begin() + static_cast<std::ptrdiff_t>((j + 1) * k));
    std::vector<S> want;
    for (int r = 0; r < p; ++r) {
      auto s = strings(r, P * k, 3);
      want.insert(want.end(), s.begin() + static_cast<std::ptrdiff_t>(rank * k),
                  s.begin() + static_cast<std::ptrdiff_t>((rank + 1) * k));
    }
    std::vector<S> out(P * k);
    std::vector<contender> cs;
    cs.push_back({kind::boost, "Boost.MPI", "", "all_to_all(vector<string>)",
                  [&] { bmpi::all_to_all(B.world, vals, bvv); },
                  [&] { return flat(bvv) == want; }});
    std::vector<S> ft(P * k);
    cs.push_back({kind::floor, "floor", "", floor_name("MPI_Alltoall"),
                  [&] {
                    MPI_Alltoall(fsend.data(), static_cast<int>(enc), MPI_BYTE, frecv.data(),
                                 static_cast<int>(enc), MPI_BYTE, B.world);
                    assign_all(ft, want);
                  },
                  [&] { return ft == want; }});
    add_topocoll(
        B.set.cost, cs, {}, {algorithm::store_and_forward, algorithm::pairwise},
        [&] { return out == want; },
        [&]<class Topo>(topocoll::options o) -> std::function<void()> {
          return [&, o] { topocoll::all_to_all<Topo>(B.comm, csp(in_pk), sp(out), o); };
        });
    B.measure("all_to_all", "string", bytes, cs);
  }
}

// The flags, parsed by Boost.Program_options one at a time in their order, so
// that a flag given twice takes its last value (benchmark/regenerate appends
// BENCH_ARGS, e.g. an --only, to its own flags). After --help (0) or a wrong
// flag (2), whose message rank 0 prints, the exit code; else none.
std::optional<int> parse_flags(int argc, char** argv, settings& s, bool& calibrate, int rank) {
  namespace po = boost::program_options;
  const auto on = [](auto set) {
    return po::bool_switch()->notifier([set](bool v) {
      if (v) set();
    });
  };
  po::options_description d("usage: collectives_bench [flags]");
  d.add_options()("help,h", "this text")("csv", po::value(&s.csv)->value_name("FILE"),
                                         "also write every cell to FILE as CSV")(
      "min-bytes", po::value(&s.min_bytes)->value_name("N"), "the smallest size per rank (8)")(
      "max-bytes", po::value(&s.max_bytes)->value_name("N"), "the largest size per rank (16 MiB)")(
      "only", po::value<std::string>()->value_name("a,b")->notifier([&](const std::string& v) {
        s.only.clear();
        std::stringstream ss(v);
        for (std::string c; std::getline(ss, c, ',');) s.only.push_back(c);
      }),
      "only these collectives (and sendrecv_ring, pingpong)")(
      "sizes", po::value<std::string>()->value_name("a,b")->notifier([&](const std::string& v) {
        s.exact_sizes.clear();
        std::stringstream ss(v);
        for (std::string b; std::getline(ss, b, ',');) {
          std::size_t n = 0;
          const auto [end, ec] = std::from_chars(b.data(), b.data() + b.size(), n);
          if (ec != std::errc{} || end != b.data() + b.size() || n == 0)
            throw po::invalid_option_value("--sizes " + v);
          s.exact_sizes.push_back(n);
        }
      }),
      "exactly these sizes per rank, in bytes (instead of --min-bytes .. --max-bytes)")(
      "reps-scale", po::value(&s.reps_scale)->value_name("X"), "repetitions times X")(
      "no-strings", on([&] { s.strings = false; }), "no string cells")(
      "calibrate", on([&] { calibrate = true; }), "the cost model of model::calibrate")(
      "loop", on([&] { s.loop = true; }), "time loops of back-to-back calls")(
      "checked", on([&] { s.checked = true; }), "also Hypercube<> with the agreement check on")(
      "persistent", on([&] { s.persistent = true; }), "also every topology's persistent request");
  std::ostringstream usage;
  usage << d;
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(d).run();
    for (const po::option& o : parsed.options) {
      if (o.string_key == "help") {
        if (rank == 0) std::printf("%s", usage.str().c_str());
        return 0;
      }
      po::parsed_options one(&d);
      one.options.push_back(o);
      po::variables_map vm;
      po::store(one, vm);
      po::notify(vm);
    }
    return std::nullopt;
  } catch (const po::error& e) {
    if (rank == 0) std::fprintf(stderr, "collectives_bench: %s\n%s", e.what(), usage.str().c_str());
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bmpi::environment env(argc, argv);
  bench B;
  bool calibrate = false;
  if (const std::optional<int> exit = parse_flags(argc, argv, B.set, calibrate, B.rank))
    return *exit;
  if (B.set.checked) {
    topocoll::mpi::options o;
    o.check = topocoll::mpi::options::agreement::on;
    B.checked.emplace(B.world, o);
  }
  const double t0 = MPI_Wtime();
  if (calibrate) B.set.cost = topocoll::model::calibrate(B.comm).cost;
  if (B.rank == 0) {
    const topocoll::cost_model& c = B.set.cost;
    char shorts[64] = "no short messages";
    if (c.short_bytes > 0)
      std::snprintf(shorts, sizeof shorts, "%.3g up to %zu B", c.duplex_ts_short, c.short_bytes);
    char posted[64] = "none";
    if (c.posted_bytes > 0)
      std::snprintf(posted, sizeof posted, "%.3g us up to %zu B", c.posted_us, c.posted_bytes);
    std::printf(
        "cost model%s: t_s %.3g us, t_w %.3g us/B, busy_ts %.3g, busy_tw %.3g, duplex_ts %.3g "
        "(%s), duplex_tw %.3g, posted %s, t_c %.3g us/B and busy_tc %.3g (%zu B), %.3g us/B "
        "and %.3g (%zu B); at %zu B t_w %.3g us/B, busy_tw %.3g, duplex_tw %.3g; reduce "
        "segments %zu B; segment floor %.3g t_s/t_w, piece floor %.3g\n",
        calibrate ? " (calibrated)" : "", c.ts_us, c.tw_us_per_byte, c.busy_ts, c.busy_tw,
        c.duplex_ts, shorts, c.duplex_tw, posted, c.tc_us_per_byte, c.busy_tc, c.combine_bytes,
        c.tc_large_us_per_byte, c.busy_tc_large, c.combine_large_bytes, c.combine_large_bytes,
        c.tw_at(c.combine_large_bytes), c.busy_tw_at(c.combine_large_bytes),
        c.duplex_tw_at(c.combine_large_bytes), c.segment_bytes, c.segment_floor, c.piece_floor);
  }
  if (B.rank == 0)
    std::printf("collectives_bench: p = %d, sizes %s .. %s per rank\n", B.p,
                human(sizes(B.set).front()).c_str(), human(sizes(B.set).back()).c_str());
  for (std::size_t b : sizes(B.set)) run_double(B, b);
  if (B.set.strings)
    for (std::size_t b : sizes(B.set))
      if (b >= 32 && b <= (std::size_t{1} << 20)) run_string(B, b);
  B.write_csv();
  if (B.rank == 0) std::printf("\ntotal %.1f s\n", MPI_Wtime() - t0);
  return 0;
}
