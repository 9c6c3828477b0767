// MPI_Scan, MPI_Exscan and their nonblocking forms.

#include "reduction_call.hpp"

using namespace topocoll::pmpi;

extern "C" {

int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return intercept_blocking(
      function::scan, comm,
      [&](auto& run) {
        return serve_elementwise<scan_call>(run, {sbuf, rbuf, count, dt, op, comm});
      },
      [&] { return PMPI_Scan(sbuf, rbuf, count, dt, op, comm); });
}

int MPI_Iscan(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
              MPI_Request* req) {
  const function f = function::iscan;
  auto serve = [&](started_call& run) {
    return serve_elementwise<scan_call>(run, {sbuf, rbuf, count, dt, op, comm});
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Iscan(sbuf, rbuf, count, dt, op, comm, req); });
}

int MPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return intercept_blocking(
      function::exscan, comm,
      [&](auto& run) {
        return serve_elementwise<exclusive_scan_call>(run, {sbuf, rbuf, count, dt, op, comm});
      },
      [&] { return PMPI_Exscan(sbuf, rbuf, count, dt, op, comm); });
}

int MPI_Iexscan(const void* sbuf, void* rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                MPI_Request* req) {
  const function f = function::iexscan;
  auto serve = [&](started_call& run) {
    return serve_elementwise<exclusive_scan_call>(run, {sbuf, rbuf, count, dt, op, comm});
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Iexscan(sbuf, rbuf, count, dt, op, comm, req); });
}

}  // extern "C"
