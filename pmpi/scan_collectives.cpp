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
  return serve_elementwise(f, {sbuf, rbuf, count, dt, op, comm},
                           [&]<class Topo>(tc::mpi::Comm& c, auto in, auto out, const auto& o) {
                             if constexpr (K == prefix::inclusive)
                               tc::scan<Topo>(c, in, out, o, options_of(f));
                             else
                               tc::exclusive_scan<Topo>(c, in, out, o, options_of(f));
                           });
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
