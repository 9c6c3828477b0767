// MPI_Alltoallv and MPI_Ialltoallv on topocoll::all_to_all_v with the
// receive counts known.
// Blocks are moved as bytes: the caller's buffer itself when the datatype is
// contiguous and the displacements are the running sums of the counts (the
// blocks back to back in rank order), else a packed copy in that order.

#include <optional>
#include <string>
#include <vector>

#include "byte_image.hpp"
#include "entry.hpp"
#include "nonblocking.hpp"
#include "runs.hpp"

namespace topocoll::pmpi {
namespace {

// p blocks of counts[j] items of dt at buf + displs[j] extents, as bytes in
// rank order.
class blocks {
 public:
  blocks(const void* buf, const int* counts, const int* displs, MPI_Datatype dt, int p)
      : user_(static_cast<std::byte*>(const_cast<void*>(buf))),
        counts_(counts),
        displs_(displs),
        dt_(dt),
        bytes_(static_cast<std::size_t>(p)) {
    const std::size_t item = type_size(dt);
    MPI_Aint lb = 0;
    PMPI_Type_get_extent(dt, &lb, &extent_);
    std::size_t total = 0, items = 0;
    bool packed = contiguous(dt);
    for (int j = 0; j < p; ++j) {
      if (counts[j] < 0)
        throw usage_error{MPI_ERR_COUNT, "count[" + std::to_string(j) +
                                             "] = " + std::to_string(counts[j]) + " < 0"};
      packed = packed && static_cast<std::size_t>(displs[j]) == items && displs[j] >= 0;
      items += static_cast<std::size_t>(counts[j]);
      bytes_[static_cast<std::size_t>(j)] = static_cast<std::size_t>(counts[j]) * item;
      total += bytes_[static_cast<std::size_t>(j)];
    }
    if (!packed) copy_.resize(total);
    data_ = {packed ? user_ : copy_.data(), total};
  }

  std::span<std::byte> data() { return data_; }
  // As byte_image::hold_type.
  void hold_type() {
    if (copy_.empty()) return;
    held_ = owned_type(dt_);
    dt_ = held_.get();
  }
  std::span<const std::size_t> counts() const { return bytes_; }

  void load() {
    for_each_block([&](std::size_t j, std::byte* at) {
      pack_items(user_ + displs_[j] * extent_, static_cast<std::size_t>(counts_[j]), dt_, at);
    });
  }
  void store() {
    for_each_block([&](std::size_t j, std::byte* at) {
      unpack_items(at, static_cast<std::size_t>(counts_[j]), dt_, user_ + displs_[j] * extent_);
    });
  }

 private:
  template <class F>
  void for_each_block(F&& f) {
    if (copy_.empty()) return;
    std::byte* at = copy_.data();
    for (std::size_t j = 0; j < bytes_.size(); ++j) {
      f(j, at);
      at += bytes_[j];
    }
  }

  std::byte* user_;
  const int* counts_;
  const int* displs_;
  MPI_Datatype dt_;
  owned_type held_;
  MPI_Aint extent_ = 0;
  std::vector<std::size_t> bytes_;
  std::vector<std::byte> copy_;
  std::span<std::byte> data_;
};

// The arguments of MPI_Alltoallv.
struct v_args {
  const void* sbuf;
  const int* scounts;
  const int* sdispls;
  MPI_Datatype stype;
  void* rbuf;
  const int* rcounts;
  const int* rdispls;
  MPI_Datatype rtype;
  MPI_Comm comm;
};

template <class Run>
reason serve_alltoallv(Run& run, const v_args& a) {
  const place at = place_of(a.comm);
  blocks out_local(a.rbuf, a.rcounts, a.rdispls, a.rtype, at.size);
  blocks& out = run.keep(out_local);
  blocks* from = &out;
  std::optional<blocks> in_local;
  if (a.sbuf == MPI_IN_PLACE) {
    out.load();  // the send blocks are the receive blocks (in == out for topocoll)
  } else {
    in_local.emplace(a.sbuf, a.scounts, a.sdispls, a.stype, at.size);
    from = &run.keep(*in_local);
    from->load();
  }
  mpi::Comm& c = transport_of(a.comm);
  // Block sizes differ per rank: no size the ranks agree on (topology_for
  // does not model MPI_Alltoallv).
  on_topology(run.f, {at, 0}, [&]<class Topo>() {
    run.template go<all_to_all_v_call, Topo>(c, std::span<const std::byte>(from->data()),
                                             from->counts(), out.data(), out.counts(),
                                             options_of(run.f));
  });
  run.then([&out] { out.store(); });
  return reason::none;
}

}  // namespace
}  // namespace topocoll::pmpi

using namespace topocoll::pmpi;

extern "C" {

int MPI_Alltoallv(const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype,
                  void* rbuf, const int* rcounts, const int* rdispls, MPI_Datatype rtype,
                  MPI_Comm comm) {
  return intercept_blocking(
      function::alltoallv, comm,
      [&](auto& run) {
        return serve_alltoallv(
            run, {sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm});
      },
      [&] {
        return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
      });
}

int MPI_Ialltoallv(const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype,
                   void* rbuf, const int* rcounts, const int* rdispls, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request* req) {
  const function f = function::ialltoallv;
  auto serve = [&](started_call& run) {
    return serve_alltoallv(run,
                           {sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm});
  };
  return intercept(
      f, comm, [&] { return start(f, comm, req, serve); },
      [&] {
        return PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                               req);
      });
}

}  // extern "C"
