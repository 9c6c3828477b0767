#pragma once
// What the reduction entry points share: the plan of (datatype, op) and the
// run of a collective over the selected topology and the plan's element type.

#include <cstddef>
#include <span>
#include <utility>

#include "entry.hpp"
#include "reduction_ops.hpp"

namespace topocoll::pmpi {

// Runs run.template operator()<Topo, E>() for f's selected topology and the
// element type of r.
template <class Run>
void run_reduction(function f, const reduction& r, Run&& run) {
  with_topology(selected(f).topo, [&]<class Topo>() {
    switch (r.elem_bytes) {
      case 1:
        return run.template operator()<Topo, elem<1>>();
      case 2:
        return run.template operator()<Topo, elem<2>>();
      case 4:
        return run.template operator()<Topo, elem<4>>();
      case 8:
        return run.template operator()<Topo, elem<8>>();
      case 16:
        return run.template operator()<Topo, elem<16>>();
      default:
        return run.template operator()<Topo, elem<32>>();  // the plan allows no other
    }
  });
}

template <class E>
std::span<const E> in_elems(const void* p, std::size_t n) {
  return {static_cast<const E*>(p), n};
}
template <class E>
std::span<E> out_elems(void* p, std::size_t n) {
  return {static_cast<E*>(p), n};
}

// The plan of a reduction of `count` items: plan.why when it is not served.
inline reduction_plan plan_call(int count, MPI_Datatype dt, MPI_Op op) {
  if (count < 0) return {std::nullopt, reason::null_or_invalid};
  return plan_reduction(dt, op);
}

// A reduction's input: recvbuf itself under MPI_IN_PLACE.
inline const void* input_of(const void* sbuf, const void* rbuf) {
  return sbuf == MPI_IN_PLACE ? rbuf : sbuf;
}

// A reduction's count in elements of the plan's element type; count >= 0.
inline std::size_t elements(int count, const reduction& r) {
  return static_cast<std::size_t>(count) * r.per_item;
}

}  // namespace topocoll::pmpi
