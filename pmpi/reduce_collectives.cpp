// MPI_Reduce and MPI_Allreduce.

#include "reduction_call.hpp"

using namespace topocoll::pmpi;
namespace tc = topocoll;

extern "C" {

int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm) {
  const function f = function::reduce;
  auto serve = [&] {
    const place at = place_of(comm);
    if (root < 0 || root >= at.size) return reason::null_or_invalid;
    // Erroneous (MPI_IN_PLACE is the root's alone), and the sentinel is no
    // buffer: read as one it faults. Native MPI returns MPI_ERR_BUFFER.
    if (sbuf == MPI_IN_PLACE && at.rank != root)
      throw usage_error{MPI_ERR_BUFFER, "MPI_IN_PLACE as the send buffer on rank " +
                                            std::to_string(at.rank) + ", not the root " +
                                            std::to_string(root)};
    const reduction_plan plan = plan_call(count, dt, op);
    if (!plan.run) return plan.why;
    const reduction& r = *plan.run;
    const std::size_t n = elements(count, r);
    const bool is_root = at.rank == root;
    const void* in = is_root && sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    tc::mpi::Comm& c = transport_of(comm);
    run_reduction(f, r, {at, n * r.elem_bytes}, [&]<class Topo, class E>(const auto& o) {
      tc::reduce<Topo>(c, in_elems<E>(in, n), out_elems<E>(rbuf, is_root ? n : 0), o, root,
                       options_of(f));
    });
    return reason::none;
  };
  return intercept(f, comm, serve,
                   [&] { return PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm); });
}

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm) {
  const function f = function::allreduce;
  auto serve = [&] {
    return serve_elementwise(f, {sbuf, rbuf, count, dt, op, comm},
                             [&]<class Topo>(tc::mpi::Comm& c, auto in, auto out, const auto& o) {
                               tc::all_reduce<Topo>(c, in, out, o, options_of(f));
                             });
  };
  return intercept(f, comm, serve, [&] { return PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm); });
}

}  // extern "C"
