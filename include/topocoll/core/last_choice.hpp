#pragma once
// detail::remembered(p, size, cost, price): price(), the automatic choice of
// one decision, computed again only when p, the size (elements or bytes, as
// the caller counts them) or the cost model differ from the calling thread's
// last call of the same decision.
//
//   return remembered(l.p, m, opt.cost, [&] { return tree_time < fold_time; });
//
// Pricing an algorithm walks the topology's dimensions and the tree's links,
// several times the call's own work at small sizes (benchmark/instructions
// --breakdown shows both). An application calls a collective with the same p,
// size and model again and again; then the choice costs a comparison.
//
// One decision is one instantiation: the key is the type of `price`, and a
// lambda's type is unique to its place in the code and to the template
// arguments of the function around it (Topo, T, Op), so every decision of
// every instantiation has a slot of its own. The slot is per thread (an MPI
// process, or one loopback rank), so nothing is shared and nothing is locked.
// price must depend on nothing but p, the size and the cost model. Models are
// compared byte for byte, as one block: the same bytes price the same. The
// default options' model (detail::default_options) is known by its address:
// where the last call passed it too, that comparison is skipped.
// forget_remembered() has every decision of this thread priced anew at its
// next call: TOPOCOLL_EXPLAIN (plan/explain.hpp) prices a new plan's choice
// again to write down what it compared.

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "../version.hpp"
#include "options.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

// The generation of this thread's remembered choices: a slot filled in an
// earlier one is empty.
inline thread_local unsigned remembered_generation = 1;
inline void forget_remembered() {
  ++remembered_generation;
}

template <class Price>
auto remembered(int p, std::size_t size, const cost_model& cost, const Price& price) {
  using R = decltype(price());
  static_assert(std::is_trivially_copyable_v<R>, "an automatic choice is a plain value");
  struct slot {
    unsigned generation = 0;    // remembered_generation when filled; 0: never
    bool default_cost = false;  // cost was default_options.cost itself
    int p = 0;
    std::size_t size = 0;
    cost_model cost{};
    R value{};
  };
  thread_local slot last;
  const bool default_cost = &cost == &default_options.cost;
  if (last.generation != remembered_generation || last.p != p || last.size != size ||
      !((default_cost && last.default_cost) ||
        std::memcmp(&last.cost, &cost, sizeof(cost_model)) == 0))
    last = {remembered_generation, default_cost, p, size, cost, price()};
  return last.value;
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
