// instructions_bench: instructions per call of topocoll's broadcast,
// all_gather, all_reduce and scan on Hypercube<D> against the textbook loops
// (Grama et al. ch. 4, Algorithm 4.2, Algorithm 4.7, Algorithm 4.7 with the
// combine of Section 4.3.1, and the lecture notes' PREFIX_SUMS_HCUBE) written
// by hand, over the same do-nothing
// transport. No MPI, no threads: one process plays every rank in turn, and no
// data moves. What is left is each call's own work: the loop, the address
// arithmetic, and whatever else the library does per call.
//
//   benchmark/instructions build/release/benchmark/instructions_bench
//
// The counts come from callgrind (the script above runs the program under
// `valgrind --tool=callgrind` and prints a Markdown table). Each measured
// variant is bracketed by callgrind client requests: CALLGRIND_ZERO_STATS,
// a warm-up round excluded, then `reps` rounds of p calls (rank 0 .. p-1), then
// CALLGRIND_DUMP_STATS_AT("<variant> calls=N"): one dump per variant holding
// only its instructions, so start-up and the first call's pool allocation
// are not in it. Run without valgrind, the program makes the same calls,
// checks that the library and the hand loops issue the same transport calls,
// and says that the counts need callgrind.
//
//   instructions_bench [--only broadcast|all_gather|all_reduce|scan] [--calls N]
//
// --calls: calls per measured variant, about (default 8192; rounded to whole
// rounds of p calls).
//
// Each collective is measured five ways: the blocking call ("topocoll"), the
// same call compiled apart from its caller ("apart"), the same call with
// options passed at run time ("options"), the persistent request set up once
// per rank and then start() + wait() ("persistent"; topocoll/persistent.hpp),
// and the hand loop ("hand").

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <topocoll/collectives/all_gather.hpp>
#include <topocoll/collectives/all_reduce.hpp>
#include <topocoll/collectives/broadcast.hpp>
#include <topocoll/collectives/scan.hpp>
#include <topocoll/core/concepts.hpp>
#include <topocoll/core/nonblocking.hpp>
#include <topocoll/persistent.hpp>
#include <topocoll/topology/topology.hpp>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define INSTR_HAVE_CALLGRIND 1
#else
#define INSTR_HAVE_CALLGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#define RUNNING_ON_VALGRIND 0
#endif

namespace {

// ---- the do-nothing transport ----------------------------------------------
// A user transport as the public contract allows: rank(), size(), send, recv,
// sendrecv; no isend / wait_all, so the library takes its blocking path. Every
// call is a real out-of-line call (noipa: the compiler may neither inline it
// nor drop it as side-effect free) that lets the buffer escape; the library
// and the hand loops pay exactly the same per call.
//
// Record = true appends every call to a log instead, for the check that the
// library and the hand loop make the same calls (peers, buffers, sizes; tags
// are ignored: the library uses its own).
struct call {
  char kind;  // 's' send, 'r' recv, 'x' sendrecv
  int dest, src;
  const void* out;
  std::size_t out_n;
  const void* in;
  std::size_t in_n;
  bool operator==(const call&) const = default;
};

template <bool Record>
class NullComm {
 public:
  NullComm(int rank, int size, std::vector<call>* log = nullptr)
      : rank_(rank), size_(size), log_(log) {}
  int rank() const { return rank_; }
  int size() const { return size_; }

  template <class T>
  [[gnu::noipa]] void send(int dest, int tag, std::span<const T> data) {
    if constexpr (Record) log_->push_back({'s', dest, -1, data.data(), data.size(), nullptr, 0});
    escape(data.data(), tag);
  }
  template <class T>
  [[gnu::noipa]] void recv(int src, int tag, std::span<T> data) {
    if constexpr (Record) log_->push_back({'r', -1, src, nullptr, 0, data.data(), data.size()});
    escape(data.data(), tag);
  }
  template <class T, class U>
  [[gnu::noipa]] void sendrecv(int dest, std::span<T> out, int src, std::span<U> in, int tag) {
    if constexpr (Record)
      log_->push_back({'x', dest, src, out.data(), out.size(), in.data(), in.size()});
    escape(out.data(), tag);
    escape(in.data(), tag);
  }

 private:
  static void escape(const void* p, int tag) { asm volatile("" : : "r"(p), "r"(tag) : "memory"); }
  int rank_, size_;
  std::vector<call>* log_;
};

static_assert(topocoll::Transport<NullComm<false>>);
static_assert(!topocoll::NonblockingTransport<NullComm<false>, int>);

constexpr int hand_tag = 1;

// ---- Algorithm 4.2: GENERAL_ONE_TO_ALL_BC(d, my_id, source, X) -------------
template <int D, class C, class T>
void hand_broadcast(C& c, std::span<T> x, int source) {
  const int my_virtual_id = c.rank() ^ source;
  int mask = (1 << D) - 1;
  for (int i = D - 1; i >= 0; --i) {
    mask ^= 1 << i;  // set bit i of mask to 0
    if ((my_virtual_id & mask) == 0) {
      const int partner = (my_virtual_id ^ (1 << i)) ^ source;
      if ((my_virtual_id & (1 << i)) == 0)
        c.send(partner, hand_tag, std::span<const T>(x));
      else
        c.recv(partner, hand_tag, x);
    }
  }
}

// ---- Algorithm 4.7: ALL_TO_ALL_BC_HCUBE(my_id, my_msg, d, result) ----------
// result is out (p * m). Before step i a rank holds the 2^i blocks of the
// ranks that agree with it above bit i - 1: n = 2^i m elements from `mine`,
// contiguous in out. It exchanges them with partner = my_id XOR 2^i, whose
// range is the neighbouring one (below if bit i of my_id is set, else above),
// and receives straight into place: "result := result . msg" without a copy.
template <int D, class C, class T>
void hand_all_gather(C& c, std::span<const T> my_msg, std::span<T> result) {
  const int my_id = c.rank();
  const std::size_t m = my_msg.size();
  T* const out = result.data();
  std::size_t mine = static_cast<std::size_t>(my_id) * m;
  std::size_t n = m;
  for (int i = 0; i < D; ++i) {
    const int bit = 1 << i;
    const bool upper = (my_id & bit) != 0;
    const std::size_t theirs = upper ? mine - n : mine + n;
    // the first message is my_msg itself, copied into place after it is sent
    const std::span<const T> msg = i == 0 ? my_msg : std::span<const T>(out + mine, n);
    c.sendrecv(my_id ^ bit, msg, my_id ^ bit, std::span<T>(out + theirs, n), hand_tag);
    if (i == 0) std::copy(my_msg.begin(), my_msg.end(), out + mine);
    if (upper) mine = theirs;
    n *= 2;
  }
}

// ---- Section 4.3.1: all-reduce, Algorithm 4.7 with "result := result + msg" ---
// Every rank sends its partial to partner = my_id XOR 2^i and combines what it
// receives, the lower rank's partial on the left (rank order), in place in
// result. The partial of the first step is my_msg itself.
template <int D, class C, class T, class Op>
void hand_all_reduce(C& c, std::span<const T> my_msg, std::span<T> result, std::span<T> tmp,
                     Op op) {
  const int my_id = c.rank();
  for (int i = 0; i < D; ++i) {
    const int partner = my_id ^ (1 << i);
    const std::span<const T> msg = i == 0 ? my_msg : std::span<const T>(result);
    c.sendrecv(partner, msg, partner, tmp, hand_tag);
    for (std::size_t k = 0; k < result.size(); ++k)
      result[k] = partner < my_id ? op(tmp[k], msg[k]) : op(msg[k], tmp[k]);
  }
}

// ---- PREFIX_SUMS_HCUBE (the lecture notes' prefix sums on a hypercube) --------
// msg starts as my_number itself (line 4 without its copy) and then lives in
// msg_buf; number arrives in its own buffer; the lower rank's values go on the
// left (rank order). The last exchange only completes msg, which the
// procedure does not return: there the upper rank of each pair receives and
// the lower one only sends, as topocoll's scan does.
template <int D, class C, class T, class Op>
void hand_scan(C& c, std::span<const T> my_number, std::span<T> result, std::span<T> msg_buf,
               std::span<T> number, Op op) {
  const int my_id = c.rank();
  std::copy(my_number.begin(), my_number.end(), result.begin());
  std::span<const T> msg = my_number;
  for (int i = 0; i < D; ++i) {
    const int partner = my_id ^ (1 << i);
    const bool lower = partner < my_id;
    if (i == D - 1) {
      if (!lower) return c.send(partner, hand_tag, msg);
      c.recv(partner, hand_tag, number);
    } else {
      c.sendrecv(partner, msg, partner, number, hand_tag);
      for (std::size_t k = 0; k < msg_buf.size(); ++k)
        msg_buf[k] = lower ? op(number[k], msg[k]) : op(msg[k], number[k]);
      msg = msg_buf;
    }
    if (lower)
      for (std::size_t k = 0; k < result.size(); ++k) result[k] = op(number[k], result[k]);
  }
}

// ---- the variants ------------------------------------------------------------
// topocoll: the call with the default options, known at compile time, as a
// call without options has them, where GCC may inline it into its caller;
// apart: the same call through a function pointer the compiler cannot see, so
// that the collective is a function of its own, as an application's call to
// it usually is (GCC inlines it only into callers it judges small enough);
// options: the same call with options the compiler cannot see (a calibrated
// cost model, an algorithm read from a file), so its checks of them run, as
// they do for such a caller.
enum class impl { topocoll, apart, options, hand };

// Each variant but the hand loop runs on a transport type of its own, the
// same calls: its collectives are instantiations of their own, so that GCC's
// choice of inlining for one variant's calls does not depend on a second
// caller of the same functions.
struct ApartComm : NullComm<false> {
  using NullComm<false>::NullComm;
};
struct OptionsComm : NullComm<false> {
  using NullComm<false>::NullComm;
};
struct PersistentComm : NullComm<false> {
  using NullComm<false>::NullComm;
};
template <impl I>
using comm_of =
    std::conditional_t<I == impl::options, OptionsComm,
                       std::conditional_t<I == impl::apart, ApartComm, NullComm<false>>>;

// f, which the compiler cannot follow: a call through it is a call of the
// function itself, never inlined.
template <class F>
[[gnu::noipa]] F opaque(F f) {
  return f;
}
// What a call without options passes for them (the default argument).
const topocoll::options& no_options() {
  return topocoll::detail::default_options;
}

topocoll::options options_at_run_time_storage;
[[gnu::noipa]] const topocoll::options& options_at_run_time() {
  return options_at_run_time_storage;
}

template <int D, impl I, class C>
void broadcast_call(C& c, std::span<int> buf, int root) {
  if constexpr (I == impl::topocoll)
    topocoll::broadcast<topocoll::Hypercube<D>>(c, std::span<int>(buf), root);
  else if constexpr (I == impl::apart)
    opaque<void (*)(C&, std::span<int>&&, int, const topocoll::options&)> (
        &topocoll::broadcast<topocoll::Hypercube<D>, C, std::span<int>>)(c, std::span<int>(buf),
                                                                         root, no_options());
  else if constexpr (I == impl::options)
    topocoll::broadcast<topocoll::Hypercube<D>>(c, std::span<int>(buf), root,
                                                options_at_run_time());
  else
    hand_broadcast<D>(c, buf, root);
}

template <int D, impl I, class C>
void all_gather_call(C& c, std::span<const int> in, std::span<int> out) {
  if constexpr (I == impl::topocoll)
    topocoll::all_gather<topocoll::Hypercube<D>>(c, std::span<const int>(in), std::span<int>(out));
  else if constexpr (I == impl::apart)
    opaque<void (*)(C&, std::span<const int>&&, std::span<int>&&, const topocoll::options&)> (
        &topocoll::all_gather<topocoll::Hypercube<D>, C, std::span<const int>, std::span<int>>)(
        c, std::span<const int>(in), std::span<int>(out), no_options());
  else if constexpr (I == impl::options)
    topocoll::all_gather<topocoll::Hypercube<D>>(c, std::span<const int>(in), std::span<int>(out),
                                                 options_at_run_time());
  else
    hand_all_gather<D>(c, in, out);
}

template <int D, impl I, class C>
void all_reduce_call(C& c, std::span<const int> in, std::span<int> out, std::span<int> tmp) {
  if constexpr (I == impl::topocoll)
    topocoll::all_reduce<topocoll::Hypercube<D>>(c, in, out, std::plus<>{});
  else if constexpr (I == impl::apart)
    opaque<void (*)(C&, std::span<const int>&&, std::span<int>&&, std::plus<>,
                    const topocoll::options&)> (
        &topocoll::all_reduce<topocoll::Hypercube<D>, C, std::span<const int>, std::span<int>,
                              std::plus<>>)(c, std::span<const int>(in), std::span<int>(out),
                                            std::plus<>{}, no_options());
  else if constexpr (I == impl::options)
    topocoll::all_reduce<topocoll::Hypercube<D>>(c, in, out, std::plus<>{}, options_at_run_time());
  else
    hand_all_reduce<D>(c, in, out, tmp, std::plus<>{});
}

template <int D, impl I, class C>
void scan_call(C& c, std::span<const int> in, std::span<int> out, std::span<int> msg,
               std::span<int> number) {
  if constexpr (I == impl::topocoll)
    topocoll::scan<topocoll::Hypercube<D>>(c, in, out, std::plus<>{});
  else if constexpr (I == impl::apart)
    opaque<void (*)(C&, std::span<const int>&&, std::span<int>&&, std::plus<>,
                    const topocoll::options&)> (
        &topocoll::scan<topocoll::Hypercube<D>, C, std::span<const int>, std::span<int>,
                        std::plus<>>)(c, std::span<const int>(in), std::span<int>(out),
                                      std::plus<>{}, no_options());
  else if constexpr (I == impl::options)
    topocoll::scan<topocoll::Hypercube<D>>(c, in, out, std::plus<>{}, options_at_run_time());
  else
    hand_scan<D>(c, in, out, msg, number, std::plus<>{});
}

// One round: every rank once. noinline so that each variant is its own
// function in callgrind's output (the collective is inlined into it).
template <int D, impl I>
[[gnu::noinline]] void broadcast_round(std::span<int> buf, int root) {
  for (int r = 0; r < (1 << D); ++r) {
    comm_of<I> c(r, 1 << D);
    broadcast_call<D, I>(c, buf, root);
  }
}

template <int D, impl I>
[[gnu::noinline]] void all_gather_round(std::span<const int> in, std::span<int> out) {
  for (int r = 0; r < (1 << D); ++r) {
    comm_of<I> c(r, 1 << D);
    all_gather_call<D, I>(c, in, out);
  }
}

template <int D, impl I>
[[gnu::noinline]] void all_reduce_round(std::span<const int> in, std::span<int> out,
                                        std::span<int> tmp) {
  for (int r = 0; r < (1 << D); ++r) {
    comm_of<I> c(r, 1 << D);
    all_reduce_call<D, I>(c, in, out, tmp);
  }
}

template <int D, impl I>
[[gnu::noinline]] void scan_round(std::span<const int> in, std::span<int> out, std::span<int> msg,
                                  std::span<int> number) {
  for (int r = 0; r < (1 << D); ++r) {
    comm_of<I> c(r, 1 << D);
    scan_call<D, I>(c, in, out, msg, number);
  }
}

// The harness alone: the same loop around an empty out-of-line call with the
// same arguments, to show what the loop itself costs per call.
[[gnu::noipa]] void empty_call(NullComm<false>& c, std::span<int> buf, int root) {
  asm volatile("" : : "r"(&c), "r"(buf.data()), "r"(root) : "memory");
}
template <int D>
[[gnu::noinline]] void empty_round(std::span<int> buf, int root) {
  for (int r = 0; r < (1 << D); ++r) {
    NullComm<false> c(r, 1 << D);
    empty_call(c, buf, root);
  }
}

// The persistent form: one request per rank, set up before the measurement
// (make(c) returns it for rank c), then start() + wait() per call.
template <int D>
class persistent_ranks {
 public:
  template <class Make>
  explicit persistent_ranks(Make make) {
    comms_.reserve(1 << D);
    for (int r = 0; r < (1 << D); ++r) comms_.emplace_back(r, 1 << D);
    for (auto& c : comms_) requests_.push_back(make(c));
  }
  [[gnu::noinline]] void round() {
    for (auto& pr : requests_) {
      pr.start();
      pr.wait();
    }
  }

 private:
  std::vector<PersistentComm> comms_;
  std::vector<topocoll::persistent_request> requests_;
};

struct config {
  bool broadcast = true, all_gather = true, all_reduce = true, scan = true;
  long calls = 8192;
};

int failures = 0;

void check_same(const std::string& what, const std::vector<call>& lib,
                const std::vector<call>& hand) {
  if (lib == hand) return;
  ++failures;
  std::printf("MISMATCH %s: topocoll made %zu transport calls, the hand loop %zu\n", what.c_str(),
              lib.size(), hand.size());
}

// The same calls to the same peers with the same sizes, wherever the buffers
// are: all_reduce receives into a work buffer of the library's own.
void check_same_shape(const std::string& what, std::vector<call> lib, std::vector<call> hand) {
  for (auto* log : {&lib, &hand})
    for (call& k : *log) k.out = k.in = nullptr;
  check_same(what, lib, hand);
}

// Zero the counters, run `rounds` rounds, dump under `name`. Everything the
// measured code does lies between the two client requests.
template <class F>
void measure(const std::string& name, int p, long rounds, F round) {
  round();  // warm-up: the workspace pool's first allocation is not counted
  const std::string label = name + " calls=" + std::to_string(rounds * p);
  CALLGRIND_ZERO_STATS;
  for (long i = 0; i < rounds; ++i) round();
  CALLGRIND_DUMP_STATS_AT(label.c_str());
  std::printf("measured %s\n", label.c_str());
}

template <int D>
void run(const config& cfg) {
  constexpr int p = 1 << D;
  const long rounds = std::max(1L, cfg.calls / p);
  const std::string d = "D=" + std::to_string(D);
  const int roots[] = {0, p == 8 ? 5 : 693};  // 0 and one whose XOR relabelling matters

  std::vector<int> buf(1, 7);
  {  // the harness alone
    measure("empty " + d + " harness", p, rounds, [&] { empty_round<D>(buf, 0); });
  }
  if (cfg.broadcast) {
    for (int root : roots) {
      const std::string v = "broadcast " + d + " root=" + std::to_string(root);
      std::vector<call> lib, hand;
      for (int r = 0; r < p; ++r) {
        NullComm<true> cl(r, p, &lib), ch(r, p, &hand);
        broadcast_call<D, impl::topocoll>(cl, std::span<int>(buf), root);
        broadcast_call<D, impl::hand>(ch, std::span<int>(buf), root);
      }
      check_same(v, lib, hand);
      measure(v + " topocoll", p, rounds, [&] { broadcast_round<D, impl::topocoll>(buf, root); });
      measure(v + " apart", p, rounds, [&] { broadcast_round<D, impl::apart>(buf, root); });
      measure(v + " options", p, rounds, [&] { broadcast_round<D, impl::options>(buf, root); });
      persistent_ranks<D> pr([&](auto& c) {
        return topocoll::broadcast_init<topocoll::Hypercube<D>>(c, std::span<int>(buf), root);
      });
      measure(v + " persistent", p, rounds, [&] { pr.round(); });
      measure(v + " hand", p, rounds, [&] { broadcast_round<D, impl::hand>(buf, root); });
    }
  }
  if (cfg.all_gather) {
    const std::string v = "all_gather " + d;
    const std::array<int, 1> in{7};
    std::vector<int> out(static_cast<std::size_t>(p));
    std::vector<call> lib, hand;
    for (int r = 0; r < p; ++r) {
      NullComm<true> cl(r, p, &lib), ch(r, p, &hand);
      all_gather_call<D, impl::topocoll>(cl, std::span<const int>(in), std::span<int>(out));
      all_gather_call<D, impl::hand>(ch, std::span<const int>(in), std::span<int>(out));
    }
    check_same(v, lib, hand);
    measure(v + " topocoll", p, rounds, [&] { all_gather_round<D, impl::topocoll>(in, out); });
    measure(v + " apart", p, rounds, [&] { all_gather_round<D, impl::apart>(in, out); });
    measure(v + " options", p, rounds, [&] { all_gather_round<D, impl::options>(in, out); });
    persistent_ranks<D> pr([&](auto& c) {
      return topocoll::all_gather_init<topocoll::Hypercube<D>>(c, std::span<const int>(in),
                                                               std::span<int>(out));
    });
    measure(v + " persistent", p, rounds, [&] { pr.round(); });
    measure(v + " hand", p, rounds, [&] { all_gather_round<D, impl::hand>(in, out); });
  }
  if (cfg.all_reduce) {
    const std::string v = "all_reduce " + d;
    const std::array<int, 1> in{7};
    std::array<int, 1> out{}, tmp{};
    std::vector<call> lib, hand;
    for (int r = 0; r < p; ++r) {
      NullComm<true> cl(r, p, &lib), ch(r, p, &hand);
      all_reduce_call<D, impl::topocoll>(cl, in, out, tmp);
      all_reduce_call<D, impl::hand>(ch, in, out, tmp);
    }
    check_same_shape(v, lib, hand);
    measure(v + " topocoll", p, rounds, [&] { all_reduce_round<D, impl::topocoll>(in, out, tmp); });
    measure(v + " apart", p, rounds, [&] { all_reduce_round<D, impl::apart>(in, out, tmp); });
    measure(v + " options", p, rounds, [&] { all_reduce_round<D, impl::options>(in, out, tmp); });
    persistent_ranks<D> pr([&](auto& c) {
      return topocoll::all_reduce_init<topocoll::Hypercube<D>>(c, std::span<const int>(in),
                                                               std::span<int>(out), std::plus<>{});
    });
    measure(v + " persistent", p, rounds, [&] { pr.round(); });
    measure(v + " hand", p, rounds, [&] { all_reduce_round<D, impl::hand>(in, out, tmp); });
  }
  if (cfg.scan) {
    const std::string v = "scan " + d;
    const std::array<int, 1> in{7};
    std::array<int, 1> out{}, msg{}, number{};
    std::vector<call> lib, hand;
    for (int r = 0; r < p; ++r) {
      NullComm<true> cl(r, p, &lib), ch(r, p, &hand);
      scan_call<D, impl::topocoll>(cl, in, out, msg, number);
      scan_call<D, impl::hand>(ch, in, out, msg, number);
    }
    check_same_shape(v, lib, hand);
    measure(v + " topocoll", p, rounds,
            [&] { scan_round<D, impl::topocoll>(in, out, msg, number); });
    measure(v + " apart", p, rounds, [&] { scan_round<D, impl::apart>(in, out, msg, number); });
    measure(v + " options", p, rounds, [&] { scan_round<D, impl::options>(in, out, msg, number); });
    persistent_ranks<D> pr([&](auto& c) {
      return topocoll::scan_init<topocoll::Hypercube<D>>(c, std::span<const int>(in),
                                                         std::span<int>(out), std::plus<>{});
    });
    measure(v + " persistent", p, rounds, [&] { pr.round(); });
    measure(v + " hand", p, rounds, [&] { scan_round<D, impl::hand>(in, out, msg, number); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  config cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--only" && i + 1 < argc) {
      const std::string w = argv[++i];
      cfg.broadcast = w == "broadcast";
      cfg.all_gather = w == "all_gather";
      cfg.all_reduce = w == "all_reduce";
      cfg.scan = w == "scan";
      if (!cfg.broadcast && !cfg.all_gather && !cfg.all_reduce && !cfg.scan) {
        std::fprintf(stderr, "--only: broadcast, all_gather, all_reduce or scan, got %s\n",
                     w.c_str());
        return 2;
      }
    } else if (a == "--calls" && i + 1 < argc) {
      cfg.calls = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--only broadcast|all_gather|all_reduce|scan] [--calls N]\n",
                   argv[0]);
      return 2;
    }
  }
  run<3>(cfg);
  run<10>(cfg);
  if (failures) {
    std::printf("the library and the hand loops made different transport calls: see above\n");
    return 1;
  }
  std::printf("transport calls: the library and the hand loops agree (peers, buffers, sizes)\n");
  if (!INSTR_HAVE_CALLGRIND)
    std::printf("built without <valgrind/callgrind.h>: no counts (install valgrind, rebuild)\n");
  else if (!RUNNING_ON_VALGRIND)
    std::printf("instruction counts need callgrind: benchmark/instructions %s\n", argv[0]);
  return 0;
}
