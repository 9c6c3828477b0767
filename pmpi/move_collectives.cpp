// The collectives that move data without combining it: MPI_Bcast,
// MPI_Allgather, MPI_Gather, MPI_Scatter, MPI_Alltoall, MPI_Alltoallv. Each
// runs on std::byte, the datatypes seen through byte_image, so any datatype
// is served and ranks may pass different datatypes of one type signature.

#include <string>

#include "byte_image.hpp"
#include "entry.hpp"

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

}  // namespace
}  // namespace topocoll::pmpi

using namespace topocoll::pmpi;
namespace tc = topocoll;

extern "C" {

int MPI_Bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  const function f = function::bcast;
  auto serve = [&] {
    const place at = place_of(comm);
    if (count < 0 || !valid_root(root, at)) return reason::null_or_invalid;
    byte_image img(buf, static_cast<std::size_t>(count), dt);
    if (at.rank == root) img.load();
    tc::mpi::Comm& c = transport_of(comm);
    on_topology(f, {at, img.size()},
                [&]<class Topo>() { tc::broadcast<Topo>(c, img.bytes(), root, options_of(f)); });
    if (at.rank != root) img.store();
    return reason::none;
  };
  return intercept(f, comm, serve, [&] { return PMPI_Bcast(buf, count, dt, root, comm); });
}

int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
  const function f = function::allgather;
  auto serve = [&] {
    const place at = place_of(comm);
    if (rcount < 0 || (sbuf != MPI_IN_PLACE && scount < 0)) return reason::null_or_invalid;
    const auto m = static_cast<std::size_t>(rcount);
    byte_image out(rbuf, m * static_cast<std::size_t>(at.size), rtype), in;
    cbytes mine = out.items(m * static_cast<std::size_t>(at.rank), m);
    if (sbuf == MPI_IN_PLACE) {
      out.load();
    } else {
      in = byte_image(sbuf, static_cast<std::size_t>(scount), stype);
      in.load();
      same_block(f, in.size(), mine.size());
      mine = in.cbytes();
    }
    tc::mpi::Comm& c = transport_of(comm);
    on_topology(f, {at, mine.size()},
                [&]<class Topo>() { tc::all_gather<Topo>(c, mine, out.bytes(), options_of(f)); });
    out.store();
    return reason::none;
  };
  return intercept(f, comm, serve,
                   [&] { return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
}

int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
  const function f = function::gather;
  auto serve = [&] {
    const place at = place_of(comm);
    if (!valid_root(root, at)) return reason::null_or_invalid;
    const bool is_root = at.rank == root, in_place = is_root && sbuf == MPI_IN_PLACE;
    if ((is_root && rcount < 0) || (!in_place && scount < 0)) return reason::null_or_invalid;
    const auto m = is_root ? static_cast<std::size_t>(rcount) : 0;
    byte_image out = is_root ? byte_image(rbuf, m * static_cast<std::size_t>(at.size), rtype)
                             : byte_image(),
               in;
    cbytes mine = out.items(m * static_cast<std::size_t>(root), m);
    if (in_place) {
      out.load();
    } else {
      in = byte_image(sbuf, static_cast<std::size_t>(scount), stype);
      in.load();
      if (is_root) same_block(f, in.size(), mine.size());
      mine = in.cbytes();
    }
    tc::mpi::Comm& c = transport_of(comm);
    on_topology(f, {at, mine.size()},
                [&]<class Topo>() { tc::gather<Topo>(c, mine, out.bytes(), root, options_of(f)); });
    if (is_root) out.store();
    return reason::none;
  };
  return intercept(f, comm, serve, [&] {
    return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  });
}

int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  const function f = function::scatter;
  auto serve = [&] {
    const place at = place_of(comm);
    if (!valid_root(root, at)) return reason::null_or_invalid;
    const bool is_root = at.rank == root, in_place = is_root && rbuf == MPI_IN_PLACE;
    if ((is_root && scount < 0) || (!in_place && rcount < 0)) return reason::null_or_invalid;
    const auto m = is_root ? static_cast<std::size_t>(scount) : 0;
    byte_image in = is_root ? byte_image(sbuf, m * static_cast<std::size_t>(at.size), stype)
                            : byte_image(),
               out;
    in.load();
    bytes mine = in.items(m * static_cast<std::size_t>(root), m);
    if (!in_place) {
      out = byte_image(rbuf, static_cast<std::size_t>(rcount), rtype);
      if (is_root) same_block(f, mine.size(), out.size());
      mine = out.bytes();
    }
    tc::mpi::Comm& c = transport_of(comm);
    on_topology(f, {at, mine.size()}, [&]<class Topo>() {
      tc::scatter<Topo>(c, in.cbytes(), mine, root, options_of(f));
    });
    if (!in_place) out.store();
    return reason::none;
  };
  return intercept(f, comm, serve, [&] {
    return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  });
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
  const function f = function::alltoall;
  auto serve = [&] {
    const place at = place_of(comm);
    if (rcount < 0 || (sbuf != MPI_IN_PLACE && scount < 0)) return reason::null_or_invalid;
    const auto p = static_cast<std::size_t>(at.size);
    byte_image out(rbuf, static_cast<std::size_t>(rcount) * p, rtype), in;
    cbytes from = out.cbytes();
    if (sbuf == MPI_IN_PLACE) {
      out.load();
    } else {
      in = byte_image(sbuf, static_cast<std::size_t>(scount) * p, stype);
      in.load();
      same_block(f, in.size(), out.size());
      from = in.cbytes();
    }
    tc::mpi::Comm& c = transport_of(comm);
    on_topology(f, {at, from.size() / p},
                [&]<class Topo>() { tc::all_to_all<Topo>(c, from, out.bytes(), options_of(f)); });
    out.store();
    return reason::none;
  };
  return intercept(f, comm, serve,
                   [&] { return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
}

}  // extern "C"
