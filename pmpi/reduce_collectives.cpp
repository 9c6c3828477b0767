// MPI_Reduce, MPI_Allreduce and their nonblocking forms.

#include "reduction_call.hpp"

using namespace topocoll::pmpi;

namespace {

template <class Run>
reason serve_reduce(Run& run, const elementwise_args& a, int root) {
  const place at = place_of(a.comm);
  if (root < 0 || root >= at.size) return reason::null_or_invalid;
  // Erroneous (MPI_IN_PLACE is the root's alone), and the sentinel is no
  // buffer: read as one it faults. Native MPI returns MPI_ERR_BUFFER.
  if (a.sbuf == MPI_IN_PLACE && at.rank != root)
    throw usage_error{MPI_ERR_BUFFER, "MPI_IN_PLACE as the send buffer on rank " +
                                          std::to_string(at.rank) + ", not the root " +
                                          std::to_string(root)};
  const reduction_plan plan = plan_call(a.count, a.dt, a.op);
  if (!plan.run) return plan.why;
  const reduction& r = *plan.run;
  const std::size_t n = elements(a.count, r);
  const bool is_root = at.rank == root;
  const void* in = input_of(a.sbuf, a.rbuf);
  topocoll::mpi::Comm& c = transport_of(a.comm);
  run_reduction(run.f, r, {at, n * r.elem_bytes}, [&]<class Topo, class E>(const auto& o) {
    run.template go<reduce_call, Topo>(c, in_elems<E>(in, n), out_elems<E>(a.rbuf, is_root ? n : 0),
                                       o, root, options_of(run.f));
  });
  return reason::none;
}

}  // namespace

extern "C" {

int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm) {
  return intercept_blocking(
      function::reduce, comm,
      [&](auto& run) {
        return serve_reduce(run, {sbuf, rbuf, count, dt, op, comm}, root);
      },
      [&] { return PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm); });
}

int MPI_Ireduce(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request* req) {
  const function f = function::ireduce;
  auto serve = [&](started_call& run) {
    return serve_reduce(run, {sbuf, rbuf, count, dt, op, comm}, root);
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Ireduce(sbuf, rbuf, count, dt, op, root, comm, req); });
}

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm) {
  return intercept_blocking(
      function::allreduce, comm,
      [&](auto& run) {
        return serve_elementwise<all_reduce_call>(run, {sbuf, rbuf, count, dt, op, comm});
      },
      [&] { return PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm); });
}

int MPI_Iallreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request* req) {
  const function f = function::iallreduce;
  auto serve = [&](started_call& run) {
    return serve_elementwise<all_reduce_call>(run, {sbuf, rbuf, count, dt, op, comm});
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, req); });
}

}  // extern "C"
