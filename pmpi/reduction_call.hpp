#pragma once
// What the reduction entry points share: the plan of (datatype, op) and the
// run of a collective over the call's topology, the plan's element type and
// operator, now or started (runs.hpp).

#include <cstddef>
#include <span>
#include <utility>

#include "entry.hpp"
#include "nonblocking.hpp"
#include "reduction_ops.hpp"
#include "runs.hpp"

namespace topocoll::pmpi {

// Runs body.template operator()<Topo, E>(op) for the topology serving this
// call of f (on_topology), the element type E of r and r's operator as
// ordered_op: operand_order::free when it commutes, so the algorithms may
// reorder, else operand_order::kept.
template <class Body>
void run_reduction(function f, const reduction& r, call_size s, Body&& body) {
  on_topology(f, s, [&]<class Topo>() {
    auto with_op = [&]<class E>() {
      if (r.op.commutes())
        return body.template operator()<Topo, E>(ordered_op<operand_order::free>{r.op});
      return body.template operator()<Topo, E>(ordered_op<operand_order::kept>{r.op});
    };
    switch (r.elem_bytes) {
      case 1:
        return with_op.template operator()<elem<1>>();
      case 2:
        return with_op.template operator()<elem<2>>();
      case 4:
        return with_op.template operator()<elem<4>>();
      case 8:
        return with_op.template operator()<elem<8>>();
      case 16:
        return with_op.template operator()<elem<16>>();
      default:
        return with_op.template operator()<elem<32>>();  // the plan allows no other
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

// The arguments MPI_Allreduce, MPI_Scan and MPI_Exscan share.
struct elementwise_args {
  const void* sbuf;
  void* rbuf;
  int count;
  MPI_Datatype dt;
  MPI_Op op;
  MPI_Comm comm;
};

// Serves a reduction of `count` items from sbuf (rbuf under MPI_IN_PLACE)
// into rbuf: Call (all_reduce_call, scan_call, exclusive_scan_call) on spans
// of the plan's element type, run now or started (runs.hpp). Returns why it
// is not served.
template <class Call, class Run>
reason serve_elementwise(Run& run, const elementwise_args& a) {
  const reduction_plan plan = plan_call(a.count, a.dt, a.op);
  if (!plan.run) return plan.why;
  const reduction& r = *plan.run;
  const std::size_t n = elements(a.count, r);
  const void* in = input_of(a.sbuf, a.rbuf);
  mpi::Comm& c = transport_of(a.comm);
  run_reduction(run.f, r, {{c.rank(), c.size()}, n * r.elem_bytes},
                [&]<class Topo, class E>(const auto& op) {
                  run.template go<Call, Topo>(c, in_elems<E>(in, n), out_elems<E>(a.rbuf, n), op,
                                              options_of(run.f));
                });
  return reason::none;
}

}  // namespace topocoll::pmpi
