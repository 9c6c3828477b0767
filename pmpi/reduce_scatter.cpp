// MPI_Reduce_scatter_block, and MPI_Reduce_scatter when every recvcount is
// the same (topocoll's reduce_scatter has blocks of one size; recvcounts
// must be identical on every rank, so the check agrees everywhere); and
// their nonblocking forms.

#include "reduction_call.hpp"

using namespace topocoll::pmpi;

namespace {

template <class Run>
reason serve_block(Run& run, const elementwise_args& a) {
  const reduction_plan plan = plan_call(a.count, a.dt, a.op);
  if (!plan.run) return plan.why;
  const reduction& r = *plan.run;
  const std::size_t m = elements(a.count, r);
  const place at = place_of(a.comm);
  const auto p = static_cast<std::size_t>(at.size);
  // In place, recvbuf holds the p blocks and gets the result in its first.
  const void* in = input_of(a.sbuf, a.rbuf);
  topocoll::mpi::Comm& c = transport_of(a.comm);
  run_reduction(run.f, r, {at, m * r.elem_bytes}, [&]<class Topo, class E>(const auto& o) {
    run.template go<reduce_scatter_call, Topo>(c, in_elems<E>(in, p * m), out_elems<E>(a.rbuf, m),
                                               o, options_of(run.f));
  });
  return reason::none;
}

// MPI_Reduce_scatter's recvcounts, served when they are all the same.
template <class Run>
reason serve_even(Run& run, const void* sbuf, void* rbuf, const int* counts, MPI_Datatype dt,
                  MPI_Op op, MPI_Comm comm) {
  const int p = place_of(comm).size;
  for (int j = 1; j < p; ++j)
    if (counts[j] != counts[0]) return reason::uneven_counts;
  return serve_block(run, {sbuf, rbuf, counts[0], dt, op, comm});
}

}  // namespace

extern "C" {

int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op,
                             MPI_Comm comm) {
  return intercept_blocking(
      function::reduce_scatter_block, comm,
      [&](auto& run) {
        return serve_block(run, {sbuf, rbuf, count, dt, op, comm});
      },
      [&] { return PMPI_Reduce_scatter_block(sbuf, rbuf, count, dt, op, comm); });
}

int MPI_Ireduce_scatter_block(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm, MPI_Request* req) {
  const function f = function::ireduce_scatter_block;
  auto serve = [&](started_call& run) {
    return serve_block(run, {sbuf, rbuf, count, dt, op, comm});
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Ireduce_scatter_block(sbuf, rbuf, count, dt, op, comm, req); });
}

int MPI_Reduce_scatter(const void* sbuf, void* rbuf, const int* counts, MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm) {
  return intercept_blocking(
      function::reduce_scatter, comm,
      [&](auto& run) { return serve_even(run, sbuf, rbuf, counts, dt, op, comm); },
      [&] { return PMPI_Reduce_scatter(sbuf, rbuf, counts, dt, op, comm); });
}

int MPI_Ireduce_scatter(const void* sbuf, void* rbuf, const int* counts, MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm, MPI_Request* req) {
  const function f = function::ireduce_scatter;
  auto serve = [&](started_call& run) { return serve_even(run, sbuf, rbuf, counts, dt, op, comm); };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Ireduce_scatter(sbuf, rbuf, counts, dt, op, comm, req); });
}

}  // extern "C"
