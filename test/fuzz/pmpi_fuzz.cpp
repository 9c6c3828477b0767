// The differential fuzzer of the drop-in (test/README.md, "Fuzzers"): random
// MPI collective calls through the C API, run once natively and once with
// libtopocoll_pmpi.so preloaded (pmpi_fuzz.cmake runs both and compares).
// Every rank prints, per case, a hash of its whole receive buffer (gaps of
// the datatype included, filled with a pattern before the call) and the
// call's error class; the two runs must print the same lines.
//
// A case draws the call (MPI_Bcast, Scatter, Gather, Allgather, Alltoall,
// Reduce, Allreduce) and its form (blocking, or the nonblocking MPI_I* with
// the datatypes freed before MPI_Wait, which MPI allows), the communicator
// (world, a dup, a split), the root,
// the count (0 included), the send and receive datatypes (derived ones from
// contiguous, vector, indexed with permuted or gapped typemaps, struct and
// resized constructors, or MPI_INT with the same signature), and
// MPI_IN_PLACE where the call allows it. Every rank draws the same case.
// A case is a line of key=value words (the corpus, corpus/pmpi.txt).

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "driver.hpp"

namespace {

const std::vector<std::string> calls = {"bcast",    "scatter", "gather",   "allgather",
                                        "alltoall", "reduce",  "allreduce"};
const std::vector<std::string> types = {"int",         "contig3", "vector", "indexed_swap",
                                        "indexed_gap", "struct",  "resized"};
const std::vector<std::string> comms = {"world", "dup", "split"};
const std::vector<std::string> forms = {"blocking", "nonblocking"};

struct params {
  std::string call = "bcast", form = "blocking", comm = "world", send = "int", recv = "int",
              place = "no";
  int root = 0, count = 1;
  std::uint64_t salt = 0;
};

std::map<std::string, std::string*> words_of(params& q) {
  return {{"call", &q.call}, {"form", &q.form}, {"comm", &q.comm},
          {"send", &q.send}, {"recv", &q.recv}, {"in_place", &q.place}};
}

std::string line_of(params q) {
  std::ostringstream s;
  for (const auto& [k, v] : words_of(q)) s << k << "=" << *v << " ";
  s << "root=" << q.root << " count=" << q.count << " salt=" << q.salt;
  return s.str();
}

params parse_line(const std::string& line) {
  params q;
  auto words = words_of(q);
  std::istringstream in(line);
  for (std::string w; in >> w;) {
    const auto eq = w.find('=');
    const std::string k = w.substr(0, eq), v = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (auto it = words.find(k); it != words.end())
      *it->second = v;
    else if (k == "root")
      q.root = std::stoi(v);
    else if (k == "count")
      q.count = std::stoi(v);
    else if (k == "salt")
      q.salt = std::stoull(v);
    else
      throw std::invalid_argument("pmpi_fuzz: unknown key in \"" + w + "\"");
  }
  return q;
}

template <class E>
const std::string& pick(const std::vector<std::string>& v, E& e) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(e)];
}

params draw(std::mt19937_64& e) {
  params q;
  q.call = pick(calls, e);
  q.form = pick(forms, e);
  q.comm = pick(comms, e);
  q.root = static_cast<int>(e() % 8);  // taken modulo the communicator's size
  q.count = e() % 5 == 0 ? 0 : static_cast<int>(1 + e() % 6);
  const bool reduction = q.call == "reduce" || q.call == "allreduce";
  q.send = reduction ? "int" : pick(types, e);
  // the receive side: the same type, or MPI_INT with the same signature
  q.recv = reduction || e() % 2 ? q.send : "int";
  const bool place_ok = q.call != "bcast" && q.call != "alltoall";
  q.place = place_ok && e() % 4 == 0 ? "yes" : "no";
  q.salt = e();
  return q;
}

// A derived datatype of ints by name, committed; `ints` is how many ints it
// holds. MPI_INT for "int".
MPI_Datatype make_type(const std::string& name, int& ints) {
  MPI_Datatype t = MPI_INT;
  ints = 1;
  if (name == "contig3") MPI_Type_contiguous(3, MPI_INT, &t), ints = 3;
  if (name == "vector") MPI_Type_vector(2, 2, 3, MPI_INT, &t), ints = 4;  // a gap of one int
  if (name == "indexed_swap") {  // ints at offsets 4 and 0: not in memory order
    const int len[2] = {1, 1}, disp[2] = {1, 0};
    MPI_Type_indexed(2, len, disp, MPI_INT, &t), ints = 2;
  }
  if (name == "indexed_gap") {  // offsets 8, 0, 12: permuted, with a gap
    const int len[3] = {1, 1, 1}, disp[3] = {2, 0, 3};
    MPI_Type_indexed(3, len, disp, MPI_INT, &t), ints = 3;
  }
  if (name == "struct") {
    const int len[2] = {2, 1};
    const MPI_Aint disp[2] = {8, 0};
    const MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, len, disp, ty, &t), ints = 3;
  }
  if (name == "resized") {  // one int, extent of two: every other int
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &t), ints = 1;
  }
  if (t != MPI_INT) MPI_Type_commit(&t);
  return t;
}

std::uint64_t fnv(const std::vector<unsigned char>& b) {
  std::uint64_t h = 1469598103934665603u;
  for (unsigned char c : b) h = (h ^ c) * 1099511628211u;
  return h;
}

MPI_Comm comm_of(const params& q) {
  MPI_Comm c = MPI_COMM_WORLD;
  int r = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (q.comm == "dup") MPI_Comm_dup(MPI_COMM_WORLD, &c);
  if (q.comm == "split") MPI_Comm_split(MPI_COMM_WORLD, r % 2, p - r, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return c;
}

struct buffers {
  std::vector<unsigned char> send, recv;
};

// Bytes of n elements of t (its extent, from offset 0), and the ints inside.
std::size_t span_of(MPI_Datatype t, int n) {
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(t, &lb, &extent);
  return static_cast<std::size_t>(lb + extent * n) + 16;
}

// The call of case q on comm c; returns the error code. The nonblocking
// form starts it (its request in *req).
int call(const params& q, MPI_Comm c, MPI_Datatype st, int sn, MPI_Datatype rt, int rn, buffers& b,
         int root, MPI_Request* req) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  void* s = b.send.data();
  void* d = b.recv.data();
  const bool place = q.place == "yes", now = q.form == "blocking";
  const void* in = place ? MPI_IN_PLACE : s;
  const void* root_in = place && r == root ? MPI_IN_PLACE : s;
  if (q.call == "bcast") {
    void* buf = r == root ? s : d;
    const int n = r == root ? sn : rn;
    const MPI_Datatype t = r == root ? st : rt;
    return now ? MPI_Bcast(buf, n, t, root, c) : MPI_Ibcast(buf, n, t, root, c, req);
  }
  if (q.call == "scatter") {
    void* out = place && r == root ? MPI_IN_PLACE : d;
    return now ? MPI_Scatter(s, sn, st, out, rn, rt, root, c)
               : MPI_Iscatter(s, sn, st, out, rn, rt, root, c, req);
  }
  if (q.call == "gather")
    return now ? MPI_Gather(root_in, sn, st, d, rn, rt, root, c)
               : MPI_Igather(root_in, sn, st, d, rn, rt, root, c, req);
  if (q.call == "allgather")
    return now ? MPI_Allgather(in, sn, st, d, rn, rt, c)
               : MPI_Iallgather(in, sn, st, d, rn, rt, c, req);
  if (q.call == "alltoall")
    return now ? MPI_Alltoall(s, sn, st, d, rn, rt, c)
               : MPI_Ialltoall(s, sn, st, d, rn, rt, c, req);
  if (q.call == "reduce")
    return now ? MPI_Reduce(root_in, d, q.count, MPI_INT, MPI_SUM, root, c)
               : MPI_Ireduce(root_in, d, q.count, MPI_INT, MPI_SUM, root, c, req);
  return now ? MPI_Allreduce(in, d, q.count, MPI_INT, MPI_SUM, c)
             : MPI_Iallreduce(in, d, q.count, MPI_INT, MPI_SUM, c, req);
}

// Runs case q; writes this rank's line to out.
void one_case(std::FILE* out, const std::string& id, const params& q) {
  const MPI_Comm c = comm_of(q);
  int r = 0, p = 1, world = 0;
  MPI_Comm_rank(c, &r);
  MPI_Comm_size(c, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  const int root = q.root % p;
  int s_ints = 1, r_ints = 1;
  MPI_Datatype st = make_type(q.send, s_ints), rt = make_type(q.recv, r_ints);
  // count elements of the send type per block; the receive side the same ints
  const int sn = q.count, rn = q.count * s_ints / r_ints;
  const bool many = q.call != "bcast" && q.call != "reduce" && q.call != "allreduce";
  buffers b;
  b.send.resize(span_of(st, sn * (q.call == "scatter" || q.call == "alltoall" ? p : 1)));
  b.recv.resize(span_of(rt, rn * (many && q.call != "scatter" ? p : 1)));
  std::mt19937_64 e(q.salt ^ static_cast<std::uint64_t>(world));
  for (auto& x : b.send) x = static_cast<unsigned char>(e() % 8);  // small: sums stay small
  for (std::size_t i = 0; i < b.recv.size(); ++i)
    b.recv[i] = static_cast<unsigned char>(0xe0 + i % 16);
  if (q.place == "yes")  // in place: the input is in the receive buffer
    for (std::size_t i = 0; i < b.recv.size() && i < b.send.size(); ++i) b.recv[i] = b.send[i];
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = call(q, c, st, sn, rt, rn, b, root, &req);
  if (st != MPI_INT) MPI_Type_free(&st);
  if (rt != MPI_INT) MPI_Type_free(&rt);
  if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  int cls = 0;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  std::fprintf(out, "case %s: %016llx class %d\n", id.c_str(),
               static_cast<unsigned long long>(fnv(b.recv)), cls);
  if (c != MPI_COMM_WORLD) MPI_Comm_free(const_cast<MPI_Comm*>(&c));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = fuzz::guarded("pmpi_fuzz", [&] {
    fuzz::settings s;
    std::string prefix;
    fuzz::po::options_description d("pmpi_fuzz");
    d.add_options()("out", fuzz::po::value(&prefix)->required(),
                    "write rank r's lines to <out>.<r>");
    if (!fuzz::parse(argc, argv, "pmpi_fuzz", d, s)) return 0;
    int world = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    std::FILE* out = std::fopen((prefix + "." + std::to_string(world)).c_str(), "w");
    if (!out) throw std::runtime_error("cannot write " + prefix);
    if (s.only < 0)
      for (const std::string& line : fuzz::corpus_lines(s.corpus))
        one_case(out, "corpus " + line, parse_line(line));
    const long long first = s.only >= 0 ? s.only : 0;
    const long long last = s.only >= 0 ? s.only + 1 : s.iterations;
    for (long long n = first; n < last; ++n) {
      std::mt19937_64 e = fuzz::engine(s.seed, n);
      const params q = draw(e);
      one_case(out, std::to_string(n) + " (" + line_of(q) + ")", q);
    }
    std::fclose(out);
    return 0;
  });
  MPI_Finalize();
  return rc;
}
