// The differential fuzzer of the C++ API (test/README.md, "Fuzzers"): random
// calls of every collective on loopback, built with ASan + UBSan, against a
// sequential reference. A case draws the collective, topology, p, m (0
// included), root, forced algorithm, operator (std::plus or a
// non-commutative one), cost model (bad ones included), the arrangement of
// in and out in one arena per rank (disjoint, in place, partly overlapping),
// which buffers the non-roots pass, all_to_all_v's counts (mismatched or
// wrapping ones included), and the form of the call:
//  * blocking;
//  * nonblocking: the i-form, then wait();
//  * two: two i-forms of the case on two arenas of the same shape, outstanding
//    together and completed in an order the case draws (in start order, in
//    reverse, by wait_all, or after test() calls);
//  * behind: the i-form on one arena, the blocking call on the other while
//    the request is outstanding, then wait();
//  * persistent: the _init form, started and waited twice, each rank refilling
//    its in between the two runs (all_to_all_v has no _init form);
//  * split: the ranks split in two sub-communicators by colors the case
//    draws, ordered by rank or by rank reversed, and each runs the blocking
//    call as a case of its own size, at the same time as the other.
// Every outcome must be one of:
//  * the reference's result in out, and every other element of the arena
//    (in, the guards around the buffers) unchanged, after every run of every
//    request;
//  * the documented exception: std::invalid_argument or message_error when
//    the case is bad (a root outside [0, p), a bad cost model, a partial
//    overlap, counts that disagree or wrap), and std::invalid_argument
//    naming the algorithm for a forced algorithm that does not apply, thrown
//    by the call itself in every form (the i-call, the init).
// A case is a line of key=value words; a failure prints it, and the corpus
// (corpus/api.txt) holds such lines, replayed first.
//
// Built with TOPOCOLL_FUZZ_MPI (api_fuzz_mpi), the same cases run on
// mpi::Comm under mpiexec: every process draws the same case, with p the
// number of processes, runs its rank's part and checks its own arena against
// the reference, and the processes agree on the outcome before the next case.
// A case that would fail on some ranks only (a partial overlap there, counts
// that disagree) is skipped: without loopback's deadlock detection the other
// ranks would wait (until TOPOCOLL_TIMEOUT). Corpus lines of another p are
// skipped too.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <topocoll/topocoll.hpp>

#ifdef TOPOCOLL_FUZZ_MPI
#include <topocoll/transport/mpi.hpp>

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#endif

#include "driver.hpp"

namespace {

namespace tc = topocoll;
using T = std::uint64_t;
constexpr std::size_t guard = 4;  // elements around each buffer

// A non-commutative, associative operator: x encodes a*y + b (mod 2^32) as
// a << 32 | b, and a op b applies a first.
struct affine {
  T operator()(const T& x, const T& y) const {
    const std::uint32_t xa = x >> 32, xb = x & 0xffffffffu, ya = y >> 32, yb = y & 0xffffffffu;
    return T{static_cast<std::uint32_t>(ya * xa)} << 32 | static_cast<std::uint32_t>(ya * xb + yb);
  }
};

const std::vector<std::string> collectives = {
    "broadcast",      "reduce",  "all_reduce", "all_gather", "reduce_scatter", "scan",
    "exclusive_scan", "scatter", "gather",     "all_to_all", "all_to_all_v"};
const std::vector<std::string> topologies = {"ring", "mesh2", "mesh3", "hypercube", "tree3"};
const std::vector<std::string> costs = {"random", "zero_ts", "nan_ts", "neg_tw", "inf_tc"};
// mixed: one of the first three per rank; partial_off_root: partial on the
// ranks other than the root, disjoint on the root
const std::vector<std::string> arrangements = {"disjoint", "in_place", "partial", "mixed",
                                               "partial_off_root"};
const std::vector<std::string> count_faults = {"own_less", "own_more", "other_more", "wrap_send",
                                               "wrap_recv"};
const std::vector<std::string> forms = {"blocking", "nonblocking", "two",
                                        "behind",   "persistent",  "split"};

// One case: what it draws, as words (a corpus line).
struct params {
  std::string coll = "all_reduce", topo = "ring", algo = "automatic", op = "plus", cost = "default",
              arrange = "disjoint", counts = "match", a2av = "known", unused = "full",
              form = "blocking";
  int p = 2, root = 0;
  std::size_t m = 1;
  std::uint64_t salt = 0;  // the values and the per-rank draws
};

std::map<std::string, std::string*> words_of(params& q) {
  return {{"coll", &q.coll},     {"topo", &q.topo},       {"algo", &q.algo},     {"op", &q.op},
          {"cost", &q.cost},     {"arrange", &q.arrange}, {"counts", &q.counts}, {"a2av", &q.a2av},
          {"unused", &q.unused}, {"form", &q.form}};
}

std::string line_of(params q) {
  std::ostringstream s;
  for (const auto& [k, v] : words_of(q)) s << k << "=" << *v << " ";
  s << "p=" << q.p << " m=" << q.m << " root=" << q.root << " salt=" << q.salt;
  return s.str();
}

params parse_line(const std::string& line) {
  params q;
  auto words = words_of(q);
  std::istringstream in(line);
  for (std::string w; in >> w;) {
    const auto eq = w.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("api_fuzz: no key=value: " + w);
    const std::string k = w.substr(0, eq), v = w.substr(eq + 1);
    if (auto it = words.find(k); it != words.end())
      *it->second = v;
    else if (k == "p")
      q.p = std::stoi(v);
    else if (k == "m")
      q.m = std::stoull(v);
    else if (k == "root")
      q.root = std::stoi(v);
    else if (k == "salt")
      q.salt = std::stoull(v);
    else
      throw std::invalid_argument("api_fuzz: unknown key " + k);
  }
  const auto known = [](const std::string& v, std::vector<std::string> in, const char* key) {
    if (std::find(in.begin(), in.end(), v) == in.end())
      throw std::invalid_argument(std::string("api_fuzz: unknown ") + key + " " + v);
  };
  known(q.coll, collectives, "coll");
  known(q.topo, topologies, "topo");
  known(q.arrange, arrangements, "arrange");
  std::vector<std::string> cs = costs, ks = count_faults;
  cs.push_back("default"), ks.push_back("match");
  known(q.cost, cs, "cost");
  known(q.counts, ks, "counts");
  known(q.op, {"plus", "affine"}, "op");
  known(q.a2av, {"known", "returned"}, "a2av");
  known(q.unused, {"full", "empty"}, "unused");
  known(q.form, forms, "form");
  if (q.coll == "all_to_all_v" && q.form != "blocking" && q.form != "split" &&
      (q.a2av != "known" || q.form == "persistent"))
    throw std::invalid_argument("api_fuzz: all_to_all_v has no " + q.form +
                                " form that returns its data or is persistent");
  return q;
}

template <class E>
const std::string& pick(const std::vector<std::string>& v, E& e) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(e)];
}
int between(std::mt19937_64& e, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(e);
}

// A random case; of fixed_p ranks where fixed_p > 0.
params draw(std::mt19937_64& e, int fixed_p) {
  params q;
  q.coll = pick(collectives, e);
  q.topo = pick(topologies, e);
  q.p = between(e, 0, 9) ? between(e, 1, 9) : between(e, 10, 33);
  if (fixed_p > 0) q.p = fixed_p;
  const int size = between(e, 0, 99);
  q.m = static_cast<std::size_t>(size < 60   ? between(e, 0, 5)
                                 : size < 85 ? between(e, 6, 40)
                                             : between(e, 200, 3000));
  q.root = between(e, 0, 19) ? between(e, 0, q.p - 1) : std::vector<int>{-1, q.p, q.p + 7}[e() % 3];
  if (between(e, 0, 1))
    q.algo = std::string(
        tc::to_string(static_cast<tc::algorithm>(between(e, 1, tc::algorithm_count - 1))));
  q.op = between(e, 0, 1) ? "plus" : "affine";
  if (between(e, 0, 3) == 0) q.cost = pick(costs, e);
  const int a = between(e, 0, 19);
  q.arrange = arrangements[a < 10 ? 0 : a < 15 ? 1 : a < 17 ? 2 : a < 19 ? 3 : 4];
  if (between(e, 0, 9) < 3) q.counts = pick(count_faults, e);
  q.a2av = between(e, 0, 1) ? "known" : "returned";
  q.unused = between(e, 0, 1) ? "full" : "empty";
  const int f = between(e, 0, 6);
  q.form = forms[f < 2 ? 0 : f - 1];
  if (q.coll == "all_to_all_v" && q.form != "blocking" && q.form != "split")
    q.a2av = "known", q.form = q.form == "persistent" ? "nonblocking" : q.form;
  q.salt = e();
  return q;
}

tc::algorithm algorithm_of(const std::string& name) {
  for (int i = 0; i < tc::algorithm_count; ++i)
    if (tc::to_string(static_cast<tc::algorithm>(i)) == name) return static_cast<tc::algorithm>(i);
  throw std::invalid_argument("api_fuzz: unknown algorithm " + name);
}

tc::cost_model cost_of(const params& q) {
  tc::cost_model c;
  std::mt19937_64 e(q.salt ^ 0xc057);
  if (q.cost == "random") {
    c.ts_us = std::uniform_real_distribution<double>(0, 50)(e);
    c.tw_us_per_byte = std::pow(10.0, std::uniform_real_distribution<double>(-6, -2)(e));
    c.segment_bytes = std::vector<std::size_t>{0, 8, 64, 1000}[e() % 4];
  } else if (q.cost == "zero_ts") {
    c.ts_us = 0;
  } else if (q.cost == "nan_ts") {
    c.ts_us = std::numeric_limits<double>::quiet_NaN();
  } else if (q.cost == "neg_tw") {
    c.tw_us_per_byte = -1;
  } else if (q.cost == "inf_tc") {
    c.tc_us_per_byte = std::numeric_limits<double>::infinity();
  }
  return c;
}

bool bad_cost(const params& q) {
  return q.cost == "nan_ts" || q.cost == "neg_tw" || q.cost == "inf_tc";
}
bool rooted(const params& q) {
  return q.coll == "broadcast" || q.coll == "reduce" || q.coll == "scatter" || q.coll == "gather";
}
bool bad_root(const params& q) {
  return rooted(q) && (q.root < 0 || q.root >= q.p);
}

// all_to_all_v's counts: send[r][j] from rank r to rank j, recv[r][j] what
// rank r expects from j, with the case's fault at one rank.
struct counts {
  std::vector<std::vector<std::size_t>> send, recv;
  bool fault = false;  // the call must throw
};

counts counts_of(const params& q) {
  const auto p = static_cast<std::size_t>(q.p);
  std::mt19937_64 e(q.salt ^ 0xc0);
  counts k{std::vector(p, std::vector<std::size_t>(p)),
           std::vector(p, std::vector<std::size_t>(p))};
  for (auto& row : k.send)
    for (auto& n : row) n = e() % 4;
  const std::size_t f = e() % p, next = (f + 1) % p;
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  if (q.counts == "own_less") k.send[f][f] = 2;
  if (q.counts == "own_more") k.send[f][f] = 1;
  for (std::size_t r = 0; r < p; ++r)
    for (std::size_t j = 0; j < p; ++j) k.recv[r][j] = k.send[j][r];
  const bool known = q.a2av == "known";
  if (q.counts == "own_less" && known) k.recv[f][f] = 1, k.fault = true;
  if (q.counts == "own_more" && known) k.recv[f][f] = 2, k.fault = true;
  if (q.counts == "other_more" && known) k.recv[f][next] += 1, k.fault = true;
  // SIZE_MAX and 1 (p > 1): the counts' sum wraps around to the others' sum
  if (q.counts == "wrap_send" && p > 1) k.send[f][0] = huge, k.send[f][1] = 1, k.fault = true;
  if (q.counts == "wrap_recv" && p > 1 && known)
    k.recv[f][0] = huge, k.recv[f][1] = 1, k.fault = true;
  return k;
}

std::size_t sum(const std::vector<std::size_t>& v) {
  std::size_t s = 0;
  for (std::size_t n : v) s += n;  // wraps, as a caller's would
  return s;
}

// One rank's arena and where its buffers lie in it.
struct rank_buf {
  std::vector<T> arena, before;
  std::size_t in_at = 0, in_len = 0, out_at = 0, out_len = 0;
  bool uses_in = true, uses_out = true, partial = false;
  std::vector<std::size_t> send_counts, recv_counts;
  tc::all_to_all_v_result<T> got;
  std::vector<T> round1, before1;  // persistent: the arena after the first run, and before it
};

// Lengths of in and out on rank r, whether it uses each, and the offset of
// the shorter inside the longer in the in-place arrangement.
std::size_t shape(const params& q, const counts& k, int r, rank_buf& b) {
  const std::size_t m = q.m, pm = m * static_cast<std::size_t>(q.p),
                    rs = static_cast<std::size_t>(r);
  const bool root = r == (bad_root(q) ? 0 : q.root), full = q.unused == "full";
  const std::string& c = q.coll;
  b.in_len = m, b.out_len = m;
  if (c == "all_gather" || c == "gather") b.out_len = pm;
  if (c == "reduce_scatter" || c == "scatter") b.in_len = pm;
  if (c == "all_to_all") b.in_len = b.out_len = pm;
  if ((c == "reduce" || c == "gather") && !root) b.uses_out = false, b.out_len *= full;
  if (c == "scatter" && !root) b.uses_in = false, b.in_len *= full;
  if (c == "all_to_all_v") {
    b.send_counts = k.send[rs], b.recv_counts = k.recv[rs];
    b.in_len = sum(b.send_counts), b.out_len = q.a2av == "known" ? sum(b.recv_counts) : 0;
  }
  // scatter and gather check it at the root only, where r is the root; off
  // it, block r is the SPMD pattern, scatter(all, all.subspan(r m, m), root)
  if (c == "all_gather" || c == "gather" || c == "scatter") return rs * m;
  return 0;
}

// Places in and out in the arena as `how` says.
void place(rank_buf& b, std::string how, std::size_t at, std::mt19937_64& e) {
  const std::size_t il = b.in_len, ol = b.out_len, longer = std::max(il, ol);
  const std::size_t shorter = std::min(il, ol);
  if (il == 0 || ol == 0 || at + shorter > longer) how = "disjoint";
  // the offset of out from in (may be negative) in the in-place arrangement
  const long in_place_d = il >= ol ? static_cast<long>(at) : -static_cast<long>(at);
  long d = in_place_d;
  if (how == "partial") {
    d = std::uniform_int_distribution<long>(1 - static_cast<long>(ol),
                                            static_cast<long>(il) - 1)(e);
    if (d == in_place_d) d += d < static_cast<long>(il) - 1 ? 1 : -1;
    if (d <= -static_cast<long>(ol) || d >= static_cast<long>(il)) d = in_place_d;
    b.partial = d != in_place_d;
  }
  if (how == "disjoint") {
    b.in_at = guard, b.out_at = guard + il + guard;
    b.arena.resize(b.out_at + ol + guard);
    return;
  }
  const std::size_t base = d < 0 ? static_cast<std::size_t>(-d) : 0;
  b.in_at = guard + base;
  b.out_at = static_cast<std::size_t>(static_cast<long>(guard + base) + d);
  b.arena.resize(std::max(b.in_at + il, b.out_at + ol) + guard);
}

// Every rank's buffers, filled: in with the rank's values, the rest with a
// pattern.
std::vector<rank_buf> buffers(const params& q, const counts& k) {
  std::vector<rank_buf> bufs(static_cast<std::size_t>(q.p));
  std::mt19937_64 e(q.salt);
  for (int r = 0; r < q.p; ++r) {
    rank_buf& b = bufs[static_cast<std::size_t>(r)];
    const std::size_t at = shape(q, k, r, b);
    std::string how = q.arrange == "mixed" ? arrangements[e() % 3] : q.arrange;
    if (how == "partial_off_root") how = r == q.root ? "disjoint" : "partial";
    if (q.coll == "broadcast") {
      b.out_len = 0;  // one buffer: in
      place(b, "disjoint", 0, e);
      b.out_at = b.in_at, b.out_len = b.in_len;
    } else {
      place(b, how, at, e);
    }
    for (std::size_t i = 0; i < b.arena.size(); ++i)
      b.arena[i] = 0xa5a5a5a5a5a5a5a5u ^ (i * 0x9e3779b97f4a7c15u) ^ static_cast<T>(r);
    for (std::size_t i = 0; i < b.in_len; ++i) b.arena[b.in_at + i] = e();
    b.before = b.arena;
  }
  return bufs;
}

// Whether the case must throw: a bad root or cost model, counts that
// disagree or wrap, or a partial overlap of two buffers the rank uses.
bool must_throw(const params& q, const counts& k, const std::vector<rank_buf>& bufs) {
  if (bad_root(q) || bad_cost(q)) return true;
  if (q.coll == "all_to_all_v" && k.fault) return true;
  for (const rank_buf& b : bufs)
    if (b.partial && b.uses_in && b.uses_out) return true;
  return false;
}

// What rank r's call passes: the options and its buffers.
struct call_args {
  tc::options opt;
  std::span<const T> in;
  std::span<T> out, buf;  // buf: broadcast's one buffer, in place of in
  std::span<const std::size_t> sc, rc;
};

call_args args_of(const params& q, rank_buf& b) {
  const std::span<T> whole(b.arena);
  return {{q.algo == "automatic" ? tc::algorithm::automatic : algorithm_of(q.algo), cost_of(q)},
          whole.subspan(b.in_at, b.in_len),
          whole.subspan(b.out_at, b.out_len),
          whole.subspan(b.in_at, b.in_len),
          b.send_counts,
          b.recv_counts};
}

// Rank r's call, on its buffers.
template <class Topo, class C, class Op>
void call(const params& q, C& c, rank_buf& b, Op op) {
  const call_args a = args_of(q, b);
  const std::string& k = q.coll;
  if (k == "broadcast") tc::broadcast<Topo>(c, a.buf, q.root, a.opt);
  if (k == "reduce") tc::reduce<Topo>(c, a.in, a.out, op, q.root, a.opt);
  if (k == "all_reduce") tc::all_reduce<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "all_gather") tc::all_gather<Topo>(c, a.in, a.out, a.opt);
  if (k == "reduce_scatter") tc::reduce_scatter<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "scan") tc::scan<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "exclusive_scan") tc::exclusive_scan<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "scatter") tc::scatter<Topo>(c, a.in, a.out, q.root, a.opt);
  if (k == "gather") tc::gather<Topo>(c, a.in, a.out, q.root, a.opt);
  if (k == "all_to_all") tc::all_to_all<Topo>(c, a.in, a.out, a.opt);
  if (k == "all_to_all_v" && q.a2av == "known")
    tc::all_to_all_v<Topo>(c, a.in, a.sc, a.out, a.rc, a.opt);
  if (k == "all_to_all_v" && q.a2av != "known")
    b.got = tc::all_to_all_v<Topo>(c, a.in, a.sc, a.opt);
}

// The same call's i-form (all_to_all_v's with its receive counts known).
template <class Topo, class C, class Op>
tc::request start(const params& q, C& c, rank_buf& b, Op op) {
  const call_args a = args_of(q, b);
  const std::string& k = q.coll;
  if (k == "broadcast") return tc::ibroadcast<Topo>(c, a.buf, q.root, a.opt);
  if (k == "reduce") return tc::ireduce<Topo>(c, a.in, a.out, op, q.root, a.opt);
  if (k == "all_reduce") return tc::iall_reduce<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "all_gather") return tc::iall_gather<Topo>(c, a.in, a.out, a.opt);
  if (k == "reduce_scatter") return tc::ireduce_scatter<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "scan") return tc::iscan<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "exclusive_scan") return tc::iexclusive_scan<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "scatter") return tc::iscatter<Topo>(c, a.in, a.out, q.root, a.opt);
  if (k == "gather") return tc::igather<Topo>(c, a.in, a.out, q.root, a.opt);
  if (k == "all_to_all") return tc::iall_to_all<Topo>(c, a.in, a.out, a.opt);
  return tc::iall_to_all_v<Topo>(c, a.in, a.sc, a.out, a.rc, a.opt);
}

// The same call's persistent form (none for all_to_all_v, which parse_line
// and draw leave out).
template <class Topo, class C, class Op>
tc::persistent_request init(const params& q, C& c, rank_buf& b, Op op) {
  const call_args a = args_of(q, b);
  const std::string& k = q.coll;
  if (k == "broadcast") return tc::broadcast_init<Topo>(c, a.buf, q.root, a.opt);
  if (k == "reduce") return tc::reduce_init<Topo>(c, a.in, a.out, op, q.root, a.opt);
  if (k == "all_reduce") return tc::all_reduce_init<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "all_gather") return tc::all_gather_init<Topo>(c, a.in, a.out, a.opt);
  if (k == "reduce_scatter") return tc::reduce_scatter_init<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "scan") return tc::scan_init<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "exclusive_scan") return tc::exclusive_scan_init<Topo>(c, a.in, a.out, op, a.opt);
  if (k == "scatter") return tc::scatter_init<Topo>(c, a.in, a.out, q.root, a.opt);
  if (k == "gather") return tc::gather_init<Topo>(c, a.in, a.out, q.root, a.opt);
  if (k == "all_to_all") return tc::all_to_all_init<Topo>(c, a.in, a.out, a.opt);
  throw std::logic_error("api_fuzz: no persistent " + k);
}

// New values in rank r's in, and the arena as it is now its `before`.
void refill(rank_buf& b, std::uint64_t seed) {
  std::mt19937_64 e(seed);
  for (std::size_t i = 0; i < b.in_len; ++i) b.arena[b.in_at + i] = e();
  b.before = b.arena;
}

// Between a persistent request's two runs: the first run's arena and inputs
// kept, and new inputs in rank r's in.
void second_round(const params& q, rank_buf& b, int r) {
  b.round1 = b.arena, b.before1 = b.before;
  refill(b, q.salt ^ 0x5eed ^ static_cast<std::uint64_t>(r));
}

// After a wait threw: the other requests waited for as well, their errors
// dropped (a request destroyed unwaited would write its error to stderr).
void settle(std::span<tc::request> r) {
  for (tc::request& x : r) {
    try {
      x.wait();
    } catch (...) {
    }
  }
}

// Rank r's part of the case in its form; b2: the second arena (forms two and behind).
template <class Topo, class C, class Op>
void in_form(const params& q, C& c, rank_buf& b, rank_buf& b2, Op op) {
  if (q.form == "blocking") return call<Topo>(q, c, b, op);
  if (q.form == "nonblocking") return start<Topo>(q, c, b, op).wait();
  if (q.form == "two") {
    tc::request r[2] = {start<Topo>(q, c, b, op), start<Topo>(q, c, b2, op)};
    const std::uint64_t order = (q.salt >> 7) % 4;
    try {
      if (order == 0) r[0].wait(), r[1].wait();
      if (order == 1) r[1].wait(), r[0].wait();
      for (int i = 0; order == 3 && i < 4 && !(r[1].test() && r[0].test()); ++i) {
      }
      return tc::wait_all(std::span<tc::request>(r));
    } catch (...) {
      settle(r);
      throw;
    }
  }
  if (q.form == "behind") {
    tc::request r[1] = {start<Topo>(q, c, b, op)};
    try {
      call<Topo>(q, c, b2, op);
      return r[0].wait();
    } catch (...) {
      settle(r);
      throw;
    }
  }
  tc::persistent_request pr = init<Topo>(q, c, b, op);
  pr.start();
  pr.wait();
  second_round(q, b, c.rank());
  pr.start();
  pr.wait();
}

#ifdef TOPOCOLL_FUZZ_MPI
// The processes, as the collectives' transport and for the agreement on each
// case's outcome.
boost::mpi::communicator& world() {
  static boost::mpi::communicator w;
  return w;
}
tc::mpi::Comm& world_comm() {
  static tc::mpi::Comm c(world());
  return c;
}
#endif

// Runs f(c) on every rank of a case of p ranks: on p loopback ranks, or on
// this process's rank.
template <class F>
void on_ranks(int p, F f) {
#ifdef TOPOCOLL_FUZZ_MPI
  (void)p;
  f(world_comm());
#else
  tc::loopback::run(p, f);
#endif
}

// f(op) with the case's operator.
template <class F>
void with_op(const params& q, F f) {
  if (q.op == "plus")
    f(std::plus<>{});
  else
    f(affine{});
}

// f(std::type_identity<Topo>{}) with the case's topology.
template <class F>
void with_topology(const params& q, F f) {
  if (q.topo == "ring") return f(std::type_identity<tc::Ring>{});
  if (q.topo == "mesh2") return f(std::type_identity<tc::Mesh<2>>{});
  if (q.topo == "mesh3") return f(std::type_identity<tc::Mesh<3>>{});
  if (q.topo == "hypercube") return f(std::type_identity<tc::Hypercube<>>{});
  if (q.topo == "tree3") return f(std::type_identity<tc::Tree<3>>{});
  throw std::invalid_argument("api_fuzz: unknown topology " + q.topo);
}

void run_case(const params& q, std::vector<rank_buf>& bufs, std::vector<rank_buf>& bufs2) {
  with_topology(q, [&]<class Topo>(std::type_identity<Topo>) {
    on_ranks(q.p, [&](auto& c) {
      const auto r = static_cast<std::size_t>(c.rank());
      with_op(q, [&](auto op) { in_form<Topo>(q, c, bufs[r], bufs2[r], op); });
    });
  });
}

// ---- form split ------------------------------------------------------------------

// One sub-communicator of form split: its ranks (in the parent) in its order,
// and the case it runs, of its own size.
struct part {
  std::vector<int> ranks;
  params q;
  counts k;
  std::vector<rank_buf> bufs;
};

int color_of(const params& q, int r) {
  return static_cast<int>((q.salt >> (r % 61)) & 1);
}
bool reversed(const params& q) {
  return (q.salt >> 62) & 1;
}

// The two parts (one may be empty). A bad root stays outside [0, size).
std::vector<part> parts_of(const params& q) {
  std::vector<part> v(2);
  for (int r = 0; r < q.p; ++r) v[static_cast<std::size_t>(color_of(q, r))].ranks.push_back(r);
  for (std::size_t i = 0; i < v.size(); ++i) {
    part& pt = v[i];
    if (reversed(q)) std::reverse(pt.ranks.begin(), pt.ranks.end());
    const int n = static_cast<int>(pt.ranks.size());
    pt.q = q, pt.q.p = n, pt.q.form = "blocking", pt.q.salt = q.salt ^ (0x51u + i);
    if (n == 0) continue;
    pt.q.root = !bad_root(q) ? q.root % n : q.root < 0 ? q.root : n + q.root - q.p;
    pt.k = q.coll == "all_to_all_v" ? counts_of(pt.q) : counts{};
    pt.bufs = buffers(pt.q, pt.k);
  }
  return v;
}

void run_split(const params& q, std::vector<part>& parts) {
  with_topology(q, [&]<class Topo>(std::type_identity<Topo>) {
    on_ranks(q.p, [&](auto& c) {
      const int r = c.rank(), color = color_of(q, r);
      auto sub = c.split(color, reversed(q) ? -r : r);
      part& pt = parts[static_cast<std::size_t>(color)];
      const auto s = static_cast<std::size_t>(sub.rank());
      if (sub.size() != pt.q.p || pt.ranks[s] != r)
        throw std::logic_error(tc::detail::concat("api_fuzz: rank ", r, " is rank ", s, " of ",
                                                  sub.size(), " in its part"));
      rank_buf unused;
      with_op(q, [&](auto op) { in_form<Topo>(pt.q, sub, pt.bufs[s], unused, op); });
    });
  });
}

// The inputs: rank r's in as it was before the call.
std::span<const T> input(const rank_buf& b) {
  return std::span<const T>(b.before).subspan(b.in_at, b.in_len);
}

// Element i of the reduction of block `block` over ranks [0, upto).
T folded(const params& q, const std::vector<rank_buf>& bufs, int upto, std::size_t at) {
  T x = input(bufs[0])[at];
  for (int r = 1; r < upto; ++r) {
    const T y = input(bufs[static_cast<std::size_t>(r)])[at];
    x = q.op == "plus" ? x + y : affine{}(x, y);
  }
  return x;
}

// Rank r's expected out (its elements before the call where none is due).
std::vector<T> expected(const params& q, const counts& k, const std::vector<rank_buf>& bufs,
                        int r) {
  const rank_buf& b = bufs[static_cast<std::size_t>(r)];
  std::vector<T> want(b.before.begin() + static_cast<long>(b.out_at),
                      b.before.begin() + static_cast<long>(b.out_at + b.out_len));
  const std::size_t m = q.m, rs = static_cast<std::size_t>(r);
  const std::string& c = q.coll;
  auto of = [&](int j) { return input(bufs[static_cast<std::size_t>(j)]); };
  for (std::size_t i = 0; i < m; ++i) {
    if (c == "broadcast") want[i] = of(q.root)[i];
    if ((c == "reduce" && r == q.root) || c == "all_reduce") want[i] = folded(q, bufs, q.p, i);
    if (c == "reduce_scatter") want[i] = folded(q, bufs, q.p, rs * m + i);
    if (c == "scan") want[i] = folded(q, bufs, r + 1, i);
    if (c == "exclusive_scan" && r > 0) want[i] = folded(q, bufs, r, i);
    if (c == "scatter") want[i] = of(q.root)[rs * m + i];
    for (int j = 0; j < q.p; ++j) {
      const std::size_t js = static_cast<std::size_t>(j);
      if (c == "all_gather" || (c == "gather" && r == q.root)) want[js * m + i] = of(j)[i];
      if (c == "all_to_all") want[js * m + i] = of(j)[rs * m + i];
    }
  }
  if (c == "all_to_all_v") {
    want.clear();
    for (int j = 0; j < q.p; ++j) {
      const auto& from = k.send[static_cast<std::size_t>(j)];
      std::size_t off = 0;
      for (std::size_t t = 0; t < rs; ++t) off += from[t];
      for (std::size_t i = 0; i < from[rs]; ++i) want.push_back(of(j)[off + i]);
    }
  }
  return want;
}

// Why rank r's arena is wrong after a call that returned, or "".
std::string verify(const params& q, const counts& k, const std::vector<rank_buf>& bufs, int r) {
  using tc::detail::concat;
  const rank_buf& b = bufs[static_cast<std::size_t>(r)];
  const std::vector<T> want = expected(q, k, bufs, r);
  const bool returned = q.coll == "all_to_all_v" && q.a2av != "known";
  if (returned) {
    if (b.got.data != want) return concat("rank ", r, ": all_to_all_v returned the wrong data");
    for (int j = 0; j < q.p; ++j)
      if (b.got.counts.size() != static_cast<std::size_t>(q.p) ||
          b.got.counts[static_cast<std::size_t>(j)] !=
              k.send[static_cast<std::size_t>(j)][static_cast<std::size_t>(r)])
        return concat("rank ", r, ": all_to_all_v returned the wrong count from rank ", j);
  }
  for (std::size_t i = 0; i < b.arena.size(); ++i) {
    const bool in_out = !returned && i >= b.out_at && i < b.out_at + b.out_len;
    const T w = in_out && b.uses_out ? want[i - b.out_at] : b.before[i];
    if (b.arena[i] != w)
      return concat("rank ", r, ": arena element ", i, " (in at ", b.in_at, "+", b.in_len,
                    ", out at ", b.out_at, "+", b.out_len, ") is ", b.arena[i], ", expected ", w,
                    in_out ? " (out)" : " (outside out: in or a guard)");
  }
  return "";
}

// The ranks whose arenas this process checks: all of them on loopback, its
// own on MPI.
std::pair<int, int> checked_ranks(const params& q) {
#ifdef TOPOCOLL_FUZZ_MPI
  return {world().rank(), world().rank() + 1};
#else
  return {0, q.p};
#endif
}

// Whether a case that must throw throws on every rank: a bad root or cost
// model, rather than a fault of some ranks' buffers or counts.
bool throws_everywhere(const params& q) {
  return bad_root(q) || bad_cost(q);
}

// Whether this process skips the case: on MPI, one of another p, or one
// whose call must throw on some ranks only (local: must, and not everywhere).
bool skipped(const params& q, bool local) {
#ifdef TOPOCOLL_FUZZ_MPI
  return q.p != world().size() || local;
#else
  return (void)q, (void)local, false;
#endif
}

// How a case's run ended: returned, or threw what it may; why not, or "".
struct outcome {
  bool returned;
  std::string why;
};
template <class Run>
outcome run_checked(const params& q, bool must, Run run) {
  const std::string line = line_of(q) + ": ";
  const bool forced = q.algo != "automatic";
  try {
    run();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (must || (forced && what.find("algorithm::" + q.algo) != std::string::npos))
      return {false, ""};
    return {false, line + "unexpected std::invalid_argument: " + what};
  } catch (const tc::message_error& e) {
    return {false, must ? "" : line + "unexpected message_error: " + e.what()};
  } catch (const std::exception& e) {
    return {false, line + "unexpected exception: " + e.what()};
  }
  return {true, must ? line + "returned normally, but the case is bad and must throw" : ""};
}

// Form split's outcome: each part's arenas against its own case.
std::string split_result(const params& q) {
  std::vector<part> parts = parts_of(q);
  bool must = false, local = false;
  for (const part& pt : parts)
    if (pt.q.p > 0 && must_throw(pt.q, pt.k, pt.bufs))
      must = true, local = local || !throws_everywhere(pt.q);
  if (skipped(q, local)) return "";
  const outcome o = run_checked(q, must, [&] { run_split(q, parts); });
  if (!o.returned || !o.why.empty()) return o.why;
  const auto [lo, hi] = checked_ranks(q);
  for (const part& pt : parts)
    for (int s = 0; s < pt.q.p; ++s)
      if (const int r = pt.ranks[static_cast<std::size_t>(s)]; r >= lo && r < hi)
        if (const std::string why = verify(pt.q, pt.k, pt.bufs, s); !why.empty())
          return tc::detail::concat(line_of(q), ": the part of rank ", r, " (", line_of(pt.q),
                                    "): ", why);
  return "";
}

// Why the case fails, or "".
std::string case_result(const params& q) {
  if (q.form == "split") return split_result(q);
  const counts k = q.coll == "all_to_all_v" ? counts_of(q) : counts{};
  std::vector<rank_buf> bufs = buffers(q, k), bufs2 = bufs;
  for (std::size_t r = 0; r < bufs2.size(); ++r) refill(bufs2[r], q.salt ^ 0x2 ^ r);
  const bool must = must_throw(q, k, bufs);
  if (skipped(q, must && !throws_everywhere(q))) return "";
  const outcome o = run_checked(q, must, [&] { run_case(q, bufs, bufs2); });
  if (!o.returned || !o.why.empty()) return o.why;
  const std::string line = line_of(q) + ": ";
  const auto [lo, hi] = checked_ranks(q);
  std::vector<rank_buf> first;
  std::vector<std::pair<std::string, std::vector<rank_buf>*>> runs = {{"", &bufs}};
  if (q.form == "two" || q.form == "behind")
    runs = {{"the first call: ", &bufs}, {"the second call: ", &bufs2}};
  if (q.form == "persistent") {
    // the ranks of the other processes (MPI) refilled their inputs there
    for (int r = 0; r < q.p; ++r)
      if (r < lo || r >= hi) second_round(q, bufs[static_cast<std::size_t>(r)], r);
    first = bufs;
    for (rank_buf& b : first) b.arena = b.round1, b.before = b.before1;
    runs = {{"the first start: ", &first}, {"the second start: ", &bufs}};
  }
  for (const auto& [which, run] : runs)
    for (int r = lo; r < hi; ++r)
      if (const std::string why = verify(q, k, *run, r); !why.empty()) return line + which + why;
  return "";
}

// The case's outcome, which on MPI every process learns: a process that
// passed stops too where another failed (that one prints why).
std::string one_case(const params& q) {
  std::string why = case_result(q);
#ifdef TOPOCOLL_FUZZ_MPI
  if (boost::mpi::all_reduce(world(), !why.empty(), std::logical_or<>()) && why.empty())
    why = "rank " + std::to_string(world().rank()) + " passed; another rank failed";
#endif
  return why;
}

// The p of the random cases: the number of processes on MPI, drawn on loopback.
int fixed_p() {
#ifdef TOPOCOLL_FUZZ_MPI
  return world().size();
#else
  return 0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
#ifdef TOPOCOLL_FUZZ_MPI
  const boost::mpi::environment env(argc, argv);
  const char* name = "api_fuzz_mpi";
#else
  const char* name = "api_fuzz";
#endif
  return fuzz::guarded(name, [&] {
    fuzz::settings s;
    fuzz::po::options_description d(name);
    if (!fuzz::parse(argc, argv, name, d, s)) return 0;
    if (fixed_p() > 0 && s.seconds > 0)
      throw std::invalid_argument(
          "--seconds: the processes would stop at different cases; "
          "give --iterations");
    return fuzz::run(
        name, s, "", [](const std::string& line) { return one_case(parse_line(line)); },
        [](std::mt19937_64& e) { return one_case(draw(e, fixed_p())); });
  });
}
