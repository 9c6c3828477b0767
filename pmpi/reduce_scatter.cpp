// MPI_Reduce_scatter_block, and MPI_Reduce_scatter when every recvcount is
// the same (topocoll's reduce_scatter has blocks of one size; recvcounts
// must be identical on every rank, so the check agrees everywhere).

#include "reduction_call.hpp"

using namespace topocoll::pmpi;
namespace tc = topocoll;

namespace {

reason serve_block(function f, const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm) {
  const reduction_plan plan = plan_call(count, dt, op);
  if (!plan.run) return plan.why;
  const reduction& r = *plan.run;
  const std::size_t m = elements(count, r);
  const place at = place_of(comm);
  const auto p = static_cast<std::size_t>(at.size);
  // In place, recvbuf holds the p blocks and gets the result in its first.
  const void* in = input_of(sbuf, rbuf);
  tc::mpi::Comm& c = transport_of(comm);
  run_reduction(f, r, {at, m * r.elem_bytes}, [&]<class Topo, class E>(const auto& o) {
    tc::reduce_scatter<Topo>(c, in_elems<E>(in, p * m), out_elems<E>(rbuf, m), o, options_of(f));
  });
  return reason::none;
}

}  // namespace

extern "C" {

int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op,
                             MPI_Comm comm) {
  const function f = function::reduce_scatter_block;
  return intercept(
      f, comm, [&] { return serve_block(f, sbuf, rbuf, count, dt, op, comm); },
      [&] { return PMPI_Reduce_scatter_block(sbuf, rbuf, count, dt, op, comm); });
}

int MPI_Reduce_scatter(const void* sbuf, void* rbuf, const int* counts, MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm) {
  const function f = function::reduce_scatter;
  auto serve = [&] {
    const int p = place_of(comm).size;
    for (int j = 1; j < p; ++j)
      if (counts[j] != counts[0]) return reason::uneven_counts;
    return serve_block(f, sbuf, rbuf, counts[0], dt, op, comm);
  };
  return intercept(f, comm, serve,
                   [&] { return PMPI_Reduce_scatter(sbuf, rbuf, counts, dt, op, comm); });
}

}  // extern "C"
