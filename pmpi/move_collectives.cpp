// The collectives that move data without combining it: MPI_Bcast,
// MPI_Allgather, MPI_Gather, MPI_Scatter, MPI_Alltoall and their nonblocking
// forms (MPI_Alltoallv: alltoallv.cpp). Each runs on std::byte, the
// datatypes seen through byte_image, so any datatype is served and ranks may
// pass different datatypes of one type signature. Each is served once, for
// a run now or a started one (runs.hpp).

#include <string>

#include "byte_image.hpp"
#include "entry.hpp"
#include "nonblocking.hpp"
#include "runs.hpp"

namespace topocoll::pmpi {
namespace {

using bytes = std::span<std::byte>;
using cbytes = std::span<const std::byte>;

bool valid_root(int root, const place& at) {
  return root >= 0 && root < at.size;
}

// A rank whose send and receive sides differ in bytes per block.
void same_block(function f, std::size_t send, std::size_t recv) {
  if (send != recv)
    throw usage_error{MPI_ERR_TRUNCATE,
                      "sendcount * sendtype size = " + std::to_string(send) +
                          " bytes per block, recvcount * recvtype size = " + std::to_string(recv) +
                          " (" + std::string(mpi_name(f)) + " needs them equal)"};
}

template <class Run>
reason serve_bcast(Run& run, void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  const place at = place_of(comm);
  if (count < 0 || !valid_root(root, at)) return reason::null_or_invalid;
  byte_image local(buf, static_cast<std::size_t>(count), dt);
  byte_image& img = run.keep(local);
  if (at.rank == root) img.load();
  mpi::Comm& c = transport_of(comm);
  on_topology(run.f, {at, img.size()}, [&]<class Topo>() {
    run.template go<broadcast_call, Topo>(c, img.bytes(), root, options_of(run.f));
  });
  if (at.rank != root) run.then([&img] { img.store(); });
  return reason::none;
}

// The arguments MPI_Allgather, MPI_Gather, MPI_Scatter and MPI_Alltoall share.
struct move_args {
  const void* sbuf;
  int scount;
  MPI_Datatype stype;
  void* rbuf;
  int rcount;
  MPI_Datatype rtype;
  MPI_Comm comm;
};

template <class Run>
reason serve_allgather(Run& run, const move_args& a) {
  const place at = place_of(a.comm);
  if (a.rcount < 0 || (a.sbuf != MPI_IN_PLACE && a.scount < 0)) return reason::null_or_invalid;
  const auto m = static_cast<std::size_t>(a.rcount);
  byte_image out_local(a.rbuf, m * static_cast<std::size_t>(at.size), a.rtype), in_local;
  byte_image& out = run.keep(out_local);
  cbytes mine = out.items(m * static_cast<std::size_t>(at.rank), m);
  if (a.sbuf == MPI_IN_PLACE) {
    out.load();
  } else {
    in_local = byte_image(a.sbuf, static_cast<std::size_t>(a.scount), a.stype);
    byte_image& in = run.keep(in_local);
    in.load();
    same_block(run.f, in.size(), mine.size());
    mine = in.cbytes();
  }
  mpi::Comm& c = transport_of(a.comm);
  on_topology(run.f, {at, mine.size()}, [&]<class Topo>() {
    run.template go<all_gather_call, Topo>(c, mine, out.bytes(), options_of(run.f));
  });
  run.then([&out] { out.store(); });
  return reason::none;
}

template <class Run>
reason serve_gather(Run& run, const move_args& a, int root) {
  const place at = place_of(a.comm);
  if (!valid_root(root, at)) return reason::null_or_invalid;
  const bool is_root = at.rank == root, in_place = is_root && a.sbuf == MPI_IN_PLACE;
  if ((is_root && a.rcount < 0) || (!in_place && a.scount < 0)) return reason::null_or_invalid;
  const auto m = is_root ? static_cast<std::size_t>(a.rcount) : 0;
  byte_image out_local =
      is_root ? byte_image(a.rbuf, m * static_cast<std::size_t>(at.size), a.rtype) : byte_image();
  byte_image& out = run.keep(out_local);
  cbytes mine = out.items(m * static_cast<std::size_t>(root), m);
  byte_image in_local;
  if (in_place) {
    out.load();
  } else {
    in_local = byte_image(a.sbuf, static_cast<std::size_t>(a.scount), a.stype);
    byte_image& in = run.keep(in_local);
    in.load();
    if (is_root) same_block(run.f, in.size(), mine.size());
    mine = in.cbytes();
  }
  mpi::Comm& c = transport_of(a.comm);
  on_topology(run.f, {at, mine.size()}, [&]<class Topo>() {
    run.template go<gather_call, Topo>(c, mine, out.bytes(), root, options_of(run.f));
  });
  if (is_root) run.then([&out] { out.store(); });
  return reason::none;
}

template <class Run>
reason serve_scatter(Run& run, const move_args& a, int root) {
  const place at = place_of(a.comm);
  if (!valid_root(root, at)) return reason::null_or_invalid;
  const bool is_root = at.rank == root, in_place = is_root && a.rbuf == MPI_IN_PLACE;
  if ((is_root && a.scount < 0) || (!in_place && a.rcount < 0)) return reason::null_or_invalid;
  const auto m = is_root ? static_cast<std::size_t>(a.scount) : 0;
  byte_image in_local =
      is_root ? byte_image(a.sbuf, m * static_cast<std::size_t>(at.size), a.stype) : byte_image();
  byte_image& in = run.keep(in_local);
  in.load();
  bytes mine = in.items(m * static_cast<std::size_t>(root), m);
  byte_image* out = nullptr;
  byte_image out_local;
  if (!in_place) {
    out_local = byte_image(a.rbuf, static_cast<std::size_t>(a.rcount), a.rtype);
    out = &run.keep(out_local);
    if (is_root) same_block(run.f, mine.size(), out->size());
    mine = out->bytes();
  }
  mpi::Comm& c = transport_of(a.comm);
  on_topology(run.f, {at, mine.size()}, [&]<class Topo>() {
    run.template go<scatter_call, Topo>(c, in.cbytes(), mine, root, options_of(run.f));
  });
  if (out != nullptr) run.then([out] { out->store(); });
  return reason::none;
}

template <class Run>
reason serve_alltoall(Run& run, const move_args& a) {
  const place at = place_of(a.comm);
  if (a.rcount < 0 || (a.sbuf != MPI_IN_PLACE && a.scount < 0)) return reason::null_or_invalid;
  const auto p = static_cast<std::size_t>(at.size);
  byte_image out_local(a.rbuf, static_cast<std::size_t>(a.rcount) * p, a.rtype);
  byte_image& out = run.keep(out_local);
  cbytes from = out.cbytes();
  byte_image in_local;
  if (a.sbuf == MPI_IN_PLACE) {
    out.load();
  } else {
    in_local = byte_image(a.sbuf, static_cast<std::size_t>(a.scount) * p, a.stype);
    byte_image& in = run.keep(in_local);
    in.load();
    same_block(run.f, in.size(), out.size());
    from = in.cbytes();
  }
  mpi::Comm& c = transport_of(a.comm);
  on_topology(run.f, {at, from.size() / p}, [&]<class Topo>() {
    run.template go<all_to_all_call, Topo>(c, from, out.bytes(), options_of(run.f));
  });
  run.then([&out] { out.store(); });
  return reason::none;
}

}  // namespace
}  // namespace topocoll::pmpi

using namespace topocoll::pmpi;

extern "C" {

int MPI_Bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  return intercept_blocking(
      function::bcast, comm,
      [&](auto& run) { return serve_bcast(run, buf, count, dt, root, comm); },
      [&] { return PMPI_Bcast(buf, count, dt, root, comm); });
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* req) {
  const function f = function::ibcast;
  auto serve = [&](started_call& run) { return serve_bcast(run, buf, count, dt, root, comm); };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Ibcast(buf, count, dt, root, comm, req); });
}

int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
  return intercept_blocking(
      function::allgather, comm,
      [&](auto& run) {
        return serve_allgather(run, {sbuf, scount, stype, rbuf, rcount, rtype, comm});
      },
      [&] { return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
}

int MPI_Iallgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  const function f = function::iallgather;
  auto serve = [&](started_call& run) {
    return serve_allgather(run, {sbuf, scount, stype, rbuf, rcount, rtype, comm});
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req); });
}

int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
  return intercept_blocking(
      function::gather, comm,
      [&](auto& run) {
        return serve_gather(run, {sbuf, scount, stype, rbuf, rcount, rtype, comm}, root);
      },
      [&] { return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
}

int MPI_Igather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  const function f = function::igather;
  auto serve = [&](started_call& run) {
    return serve_gather(run, {sbuf, scount, stype, rbuf, rcount, rtype, comm}, root);
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req); });
}

int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  return intercept_blocking(
      function::scatter, comm,
      [&](auto& run) {
        return serve_scatter(run, {sbuf, scount, stype, rbuf, rcount, rtype, comm}, root);
      },
      [&] { return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
}

int MPI_Iscatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  const function f = function::iscatter;
  auto serve = [&](started_call& run) {
    return serve_scatter(run, {sbuf, scount, stype, rbuf, rcount, rtype, comm}, root);
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req); });
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
  return intercept_blocking(
      function::alltoall, comm,
      [&](auto& run) {
        return serve_alltoall(run, {sbuf, scount, stype, rbuf, rcount, rtype, comm});
      },
      [&] { return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
}

int MPI_Ialltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  const function f = function::ialltoall;
  auto serve = [&](started_call& run) {
    return serve_alltoall(run, {sbuf, scount, stype, rbuf, rcount, rtype, comm});
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] { return PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req); });
}

}  // extern "C"
