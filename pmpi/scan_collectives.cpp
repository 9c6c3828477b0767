// MPI_Scan and MPI_Exscan.

#include "reduction_call.hpp"

using namespace topocoll::pmpi;
namespace tc = topocoll;

namespace {

enum class prefix { inclusive, exclusive };

template <prefix K>
reason serve_scan(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm) {
  const function f = K == prefix::inclusive ? function::scan : function::exscan;
  const reduction_plan plan = plan_call(count, dt, op);
  if (!plan.run) return plan.why;
  const reduction& r = *plan.run;
  const std::size_t n = elements(count, r);
  const void* in = input_of(sbuf, rbuf);
  tc::mpi::Comm& c = transport_of(comm);
  run_reduction(f, r, [&]<class Topo, class E>() {
    if constexpr (K == prefix::inclusive)
      tc::scan<Topo>(c, in_elems<E>(in, n), out_elems<E>(rbuf, n), r.op, options_of(f));
    else
      tc::exclusive_scan<Topo>(c, in_elems<E>(in, n), out_elems<E>(rbuf, n), r.op, options_of(f));
  });
  return reason::none;
}

}  // namespace

extern "C" {

int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return intercept(
      function::scan, comm,
      [&] { return serve_scan<prefix::inclusive>(sbuf, rbuf, count, dt, op, comm); },
      [&] { return PMPI_Scan(sbuf, rbuf, count, dt, op, comm); });
}

int MPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return intercept(
      function::exscan, comm,
      [&] { return serve_scan<prefix::exclusive>(sbuf, rbuf, count, dt, op, comm); },
      [&] { return PMPI_Exscan(sbuf, rbuf, count, dt, op, comm); });
}

}  // extern "C"
