#pragma once
// What a choice compared, for TOPOCOLL_EXPLAIN. With TOPOCOLL_EXPLAIN set
// (and not "0"), rank 0 writes one line to std::cerr for each new plan of a
// call that chooses as it runs (blocking and nonblocking; a persistent
// request writes its describe() at init):
//
//   topocoll: all_reduce on Ring, p = 12, m = 8, 8-byte elements: automatic
//   takes reduce_broadcast; the plan priced reduce_broadcast 8.128 us against
//   recursive_doubling 11.21 us
//
// A new plan: the first call on this thread of one call site (one
// instantiation of the collective: topology, element type, operator) with its
// p, m, root and cost model. For it the call chooses once more, out of line,
// with a ledger set for this thread: every chooser in plan/ notes each
// comparison it makes (note()), and the choices remembered from earlier calls
// (core/last_choice.hpp) are priced anew. An automatic choice that priced
// nothing says so ("chosen without pricing"): it went by a rule, such as one
// element on two ranks, a message below the pipeline's floor, an element of
// unknown size or a topology only the tree fits.
//
// Without the setting a call tests one constant (on); note() is reached only
// where a choice is priced, never where it is remembered.

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../core/last_choice.hpp"
#include "../core/options.hpp"
#include "../topology/layout.hpp"
#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::explain {

// One side of a comparison: what was priced (an algorithm's name) and its
// modelled time in microseconds.
struct priced {
  std::string_view what;
  double us;
};

// Every comparison a choice made, in the order made.
using comparisons = std::vector<std::vector<priced>>;

// Where this thread's choice writes its comparisons while a plan is explained;
// null otherwise.
inline thread_local comparisons* ledger = nullptr;

// A comparison a chooser makes: the sides it priced, cheapest taken.
inline void note(std::initializer_list<priced> sides) {
  if (ledger != nullptr) [[unlikely]]
    ledger->emplace_back(sides);
}

inline bool requested() {
  const char* e = std::getenv("TOPOCOLL_EXPLAIN");
  return e != nullptr && *e != '\0' && std::string_view(e) != "0";
}

// Read once, when the program starts: a call tests a constant.
inline const bool on = requested();

// Where and how much: the first words of the line.
struct call_shape {
  std::string_view collective;
  int rank, p;
  std::size_t m, element_bytes;
  int root;  // collective_info::no_root (-1) for a collective without one
};

// The line of a plan whose choice took `chosen` after comparing `noted`.
inline std::string line(const call_shape& s, std::string_view topology, algorithm chosen,
                        const comparisons& noted) {
  std::ostringstream o;
  o.precision(4);
  o << "topocoll: " << s.collective << " on " << topology << ", p = " << s.p << ", m = " << s.m
    << ", " << s.element_bytes << "-byte elements";
  if (s.root >= 0) o << ", root " << s.root;
  o << ": automatic takes " << to_string(chosen);
  if (noted.empty()) return o.str() + ", chosen without pricing";
  const char* sep = "; the plan priced ";
  for (const std::vector<priced>& c : noted) {
    o << sep;
    for (std::size_t i = 0; i < c.size(); ++i)
      o << (i == 0 ? "" : " against ") << c[i].what << ' ' << c[i].us << " us";
    sep = "; then ";
  }
  return o.str();
}

// The ledger of one explained choice, set for this thread while it lives.
class noting {
 public:
  explicit noting(comparisons& into) {
    ledger = &into;
    forget_remembered();
  }
  ~noting() { ledger = nullptr; }
  noting(const noting&) = delete;
  noting& operator=(const noting&) = delete;
};

// A call site's choice, seen without its type, so that the work of a new plan
// is compiled once rather than at every call site: call(choose, l, m, opt).
struct erased_choice {
  const void* choose;
  algorithm (*call)(const void* choose, const layout& l, std::size_t m, const options& opt);
};

// new_plan's body: unless this thread has seen the plan (the call site, which
// choose.call stands for, with its shape and cost model), notes it and writes
// its line, choosing again over the topology's shape at p with the ledger set.
// The key holds every word of the line but the comparisons, so that two call
// sites whose choices compiled to one function (identical code folded) still
// write a line each where their lines differ.
[[gnu::cold, gnu::noinline]] inline void write_new_plan(const call_shape& s, const options& opt,
                                                        std::string (*topology)(),
                                                        layout (*shape)(int p),
                                                        erased_choice choose) {
  thread_local std::vector<std::string> seen;  // a few plans per call site
  const std::string name = topology();
  std::string key(reinterpret_cast<const char*>(&choose.call), sizeof choose.call);
  key.append(reinterpret_cast<const char*>(&opt.cost), sizeof opt.cost);
  for (const std::size_t v : {std::size_t(s.p), s.m, std::size_t(s.root), s.element_bytes})
    key.append(reinterpret_cast<const char*>(&v), sizeof v);
  key.append(s.collective).append(1, '\0').append(name);
  if (std::find(seen.begin(), seen.end(), key) != seen.end()) return;
  seen.push_back(std::move(key));
  comparisons noted;
  algorithm chosen;
  {
    const noting scope(noted);
    chosen = choose.call(choose.choose, shape(s.p), s.m, opt);
  }
  if (chosen == algorithm::automatic) return;  // left to the kernel (strings)
  std::cerr << line(s, name, chosen, noted) << '\n';
}

// On rank 0, for automatic: writes the line of a plan not seen before at this
// call site (Choose, the caller's lambda, is its type), choosing again with
// the ledger set: choose(layout, m, options) returns the algorithm. The
// caller passes a copy of its options made in the branch that calls this, so
// that nothing of the caller's escapes: a caller whose options did would
// build them in memory on every call, explained or not. The call site passes
// its choice and its topology's name and shape as plain functions; the rest
// is write_new_plan, compiled once.
template <class Topo, class Choose>
[[gnu::cold, gnu::noinline]] void new_plan(const call_shape& s, const options& opt,
                                           const Choose& choose) {
  if (s.rank != 0 || opt.algo != algorithm::automatic) return;
  write_new_plan(
      s, opt, [] { return std::string(Topo::name()); }, [](int p) { return Topo::shape(p); },
      {&choose, [](const void* c, const layout& l, std::size_t m, const options& o) {
         return (*static_cast<const Choose*>(c))(l, m, o);
       }});
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::plan::explain
