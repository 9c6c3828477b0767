// The Fortran bindings of the intercepted functions. Open MPI's own Fortran
// layer (libmpi_mpifh: mpi_allreduce_ for mpif.h and `use mpi`, and
// ompi_allreduce_f, which `use mpi_f08`'s MPI_Allreduce calls) goes straight
// to PMPI_Allreduce, so a Fortran program would never reach the adapter. Each
// entry here takes the Fortran arguments under every name Open MPI exports,
// converts the handles (MPI_Comm_f2c, ...) and the MPI_IN_PLACE / MPI_BOTTOM
// sentinels, and calls the adapter's C function: one path for statistics,
// fallback and selection. See doc/pmpi.md, "Fortran".

#include <dlfcn.h>
#include <mpi.h>

#include <array>
#include <cstdio>
#include <type_traits>

// The sentinels and the ompi_x_f names are Open MPI's; under another MPI the
// adapter serves C only.
#if defined(OPEN_MPI)

namespace {

// A Fortran INTEGER argument: Fortran passes every argument by reference.
using F = MPI_Fint*;
// Fortran INTEGER arrays (counts, displacements) are passed to C as they are.
static_assert(std::is_same_v<MPI_Fint, int>, "MPI_Fint must be int: counts are passed through");

// The address of one of Open MPI's Fortran sentinel common blocks under
// each of the four Fortran manglings (null where this Open MPI does not
// export a name), looked up once, at first use. Without any of them a
// Fortran MPI_IN_PLACE could not be told from a buffer: the job stops.
struct sentinel {
  std::array<const void*, 4> at{};
  explicit sentinel(std::array<const char*, 4> names) {
    for (std::size_t i = 0; i < at.size(); ++i) at[i] = dlsym(RTLD_DEFAULT, names[i]);
    if (at == std::array<const void*, 4>{}) {
      std::fprintf(stderr, "topocoll-pmpi: Fortran call: Open MPI's %s not found\n", names[0]);
      PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_INTERN);
    }
  }
  bool is(const void* p) const {
    for (const void* a : at)
      if (a != nullptr && a == p) return true;
    return false;
  }
};

// A Fortran buffer argument as C sees it. MPI lets a Fortran program pass
// MPI_IN_PLACE exactly where C may; the sentinels are mapped on every buffer,
// as Open MPI's layer does on the buffers that may take them.
void* buffer(void* p) {
  static const sentinel in_place({"mpi_fortran_in_place_", "mpi_fortran_in_place__",
                                  "mpi_fortran_in_place", "MPI_FORTRAN_IN_PLACE"});
  static const sentinel bottom(
      {"mpi_fortran_bottom_", "mpi_fortran_bottom__", "mpi_fortran_bottom", "MPI_FORTRAN_BOTTOM"});
  if (in_place.is(p)) return MPI_IN_PLACE;
  if (bottom.is(p)) return MPI_BOTTOM;
  return p;
}

MPI_Comm comm(F c) {
  return MPI_Comm_f2c(*c);
}
MPI_Datatype type(F t) {
  return MPI_Type_f2c(*t);
}
MPI_Op op(F o) {
  return MPI_Op_f2c(*o);
}
void finish(F ierr, int rc) {
  if (ierr != nullptr) *ierr = static_cast<MPI_Fint>(rc);
}

}  // namespace

// One Fortran entry under the five names Open MPI's libmpi_mpifh exports:
// mpi_x_, mpi_x__, mpi_x, MPI_X (the manglings compilers use) and ompi_x_f
// (called by the mpi_f08 module).
#define TOPOCOLL_FORTRAN_ENTRY(name, params, body) \
  [[gnu::visibility("default")]] void name params body
#define TOPOCOLL_FORTRAN(lower, UPPER, params, body)    \
  TOPOCOLL_FORTRAN_ENTRY(mpi_##lower##_, params, body)  \
  TOPOCOLL_FORTRAN_ENTRY(mpi_##lower##__, params, body) \
  TOPOCOLL_FORTRAN_ENTRY(mpi_##lower, params, body)     \
  TOPOCOLL_FORTRAN_ENTRY(MPI_##UPPER, params, body)     \
  TOPOCOLL_FORTRAN_ENTRY(ompi_##lower##_f, params, body)

// The signature families: one parameter list each.
#define TOPOCOLL_FORTRAN_REDUCE_ALL(lower, UPPER, cfn)                        \
  TOPOCOLL_FORTRAN(lower, UPPER, (void* s, void* r, F n, F t, F o, F c, F e), \
                   { finish(e, cfn(buffer(s), buffer(r), *n, type(t), op(o), comm(c))); })
#define TOPOCOLL_FORTRAN_MOVE_ALL(lower, UPPER, cfn)                                     \
  TOPOCOLL_FORTRAN(lower, UPPER, (void* s, F sn, F st, void* r, F rn, F rt, F c, F e), { \
    finish(e, cfn(buffer(s), *sn, type(st), buffer(r), *rn, type(rt), comm(c)));         \
  })
#define TOPOCOLL_FORTRAN_MOVE_ROOTED(lower, UPPER, cfn)                                          \
  TOPOCOLL_FORTRAN(lower, UPPER, (void* s, F sn, F st, void* r, F rn, F rt, F root, F c, F e), { \
    finish(e, cfn(buffer(s), *sn, type(st), buffer(r), *rn, type(rt), *root, comm(c)));          \
  })

// The nonblocking forms: the same arguments, then the request (MPI_Request_c2f).
#define TOPOCOLL_FORTRAN_IREDUCE_ALL(lower, UPPER, cfn)                              \
  TOPOCOLL_FORTRAN(lower, UPPER, (void* s, void* r, F n, F t, F o, F c, F q, F e), { \
    MPI_Request req = MPI_REQUEST_NULL;                                              \
    finish(e, cfn(buffer(s), buffer(r), *n, type(t), op(o), comm(c), &req));         \
    *q = MPI_Request_c2f(req);                                                       \
  })
#define TOPOCOLL_FORTRAN_IMOVE_ALL(lower, UPPER, cfn)                                         \
  TOPOCOLL_FORTRAN(lower, UPPER, (void* s, F sn, F st, void* r, F rn, F rt, F c, F q, F e), { \
    MPI_Request req = MPI_REQUEST_NULL;                                                       \
    finish(e, cfn(buffer(s), *sn, type(st), buffer(r), *rn, type(rt), comm(c), &req));        \
    *q = MPI_Request_c2f(req);                                                                \
  })
#define TOPOCOLL_FORTRAN_IMOVE_ROOTED(lower, UPPER, cfn)                                          \
  TOPOCOLL_FORTRAN(                                                                               \
      lower, UPPER, (void* s, F sn, F st, void* r, F rn, F rt, F root, F c, F q, F e), {          \
        MPI_Request req = MPI_REQUEST_NULL;                                                       \
        finish(e, cfn(buffer(s), *sn, type(st), buffer(r), *rn, type(rt), *root, comm(c), &req)); \
        *q = MPI_Request_c2f(req);                                                                \
      })

extern "C" {

TOPOCOLL_FORTRAN(bcast, BCAST, (void* b, F n, F t, F root, F c, F e),
                 { finish(e, MPI_Bcast(buffer(b), *n, type(t), *root, comm(c))); })
TOPOCOLL_FORTRAN(reduce, REDUCE, (void* s, void* r, F n, F t, F o, F root, F c, F e), {
  finish(e, MPI_Reduce(buffer(s), buffer(r), *n, type(t), op(o), *root, comm(c)));
})
TOPOCOLL_FORTRAN_REDUCE_ALL(allreduce, ALLREDUCE, MPI_Allreduce)
TOPOCOLL_FORTRAN_REDUCE_ALL(reduce_scatter_block, REDUCE_SCATTER_BLOCK, MPI_Reduce_scatter_block)
TOPOCOLL_FORTRAN_REDUCE_ALL(scan, SCAN, MPI_Scan)
TOPOCOLL_FORTRAN_REDUCE_ALL(exscan, EXSCAN, MPI_Exscan)
TOPOCOLL_FORTRAN(reduce_scatter, REDUCE_SCATTER, (void* s, void* r, F n, F t, F o, F c, F e), {
  finish(e, MPI_Reduce_scatter(buffer(s), buffer(r), n, type(t), op(o), comm(c)));
})
TOPOCOLL_FORTRAN_MOVE_ALL(allgather, ALLGATHER, MPI_Allgather)
TOPOCOLL_FORTRAN_MOVE_ALL(alltoall, ALLTOALL, MPI_Alltoall)
TOPOCOLL_FORTRAN_MOVE_ROOTED(gather, GATHER, MPI_Gather)
TOPOCOLL_FORTRAN_MOVE_ROOTED(scatter, SCATTER, MPI_Scatter)
TOPOCOLL_FORTRAN(alltoallv, ALLTOALLV,
                 (void* s, F sn, F sd, F st, void* r, F rn, F rd, F rt, F c, F e), {
                   finish(e, MPI_Alltoallv(buffer(s), sn, sd, type(st), buffer(r), rn, rd, type(rt),
                                           comm(c)));
                 })

TOPOCOLL_FORTRAN(ibcast, IBCAST, (void* b, F n, F t, F root, F c, F q, F e), {
  MPI_Request req = MPI_REQUEST_NULL;
  finish(e, MPI_Ibcast(buffer(b), *n, type(t), *root, comm(c), &req));
  *q = MPI_Request_c2f(req);
})
TOPOCOLL_FORTRAN(ireduce, IREDUCE, (void* s, void* r, F n, F t, F o, F root, F c, F q, F e), {
  MPI_Request req = MPI_REQUEST_NULL;
  finish(e, MPI_Ireduce(buffer(s), buffer(r), *n, type(t), op(o), *root, comm(c), &req));
  *q = MPI_Request_c2f(req);
})
TOPOCOLL_FORTRAN_IREDUCE_ALL(iallreduce, IALLREDUCE, MPI_Iallreduce)
TOPOCOLL_FORTRAN_IREDUCE_ALL(ireduce_scatter_block, IREDUCE_SCATTER_BLOCK,
                             MPI_Ireduce_scatter_block)
TOPOCOLL_FORTRAN_IREDUCE_ALL(iscan, ISCAN, MPI_Iscan)
TOPOCOLL_FORTRAN_IREDUCE_ALL(iexscan, IEXSCAN, MPI_Iexscan)
TOPOCOLL_FORTRAN(ireduce_scatter, IREDUCE_SCATTER, (void* s, void* r, F n, F t, F o, F c, F q, F e),
                 {
                   MPI_Request req = MPI_REQUEST_NULL;
                   finish(e, MPI_Ireduce_scatter(buffer(s), buffer(r), n, type(t), op(o), comm(c),
                                                 &req));
                   *q = MPI_Request_c2f(req);
                 })
TOPOCOLL_FORTRAN_IMOVE_ALL(iallgather, IALLGATHER, MPI_Iallgather)
TOPOCOLL_FORTRAN_IMOVE_ALL(ialltoall, IALLTOALL, MPI_Ialltoall)
TOPOCOLL_FORTRAN_IMOVE_ROOTED(igather, IGATHER, MPI_Igather)
TOPOCOLL_FORTRAN_IMOVE_ROOTED(iscatter, ISCATTER, MPI_Iscatter)
TOPOCOLL_FORTRAN(ialltoallv, IALLTOALLV,
                 (void* s, F sn, F sd, F st, void* r, F rn, F rd, F rt, F c, F q, F e), {
                   MPI_Request req = MPI_REQUEST_NULL;
                   finish(e, MPI_Ialltoallv(buffer(s), sn, sd, type(st), buffer(r), rn, rd,
                                            type(rt), comm(c), &req));
                   *q = MPI_Request_c2f(req);
                 })

// Lifetime: the statistics print at MPI_Finalize, the selection is read at
// MPI_Init, and a freed operation is forgotten, through the adapter's C
// functions. (Open MPI's Fortran MPI_Init passes no arguments either.)
TOPOCOLL_FORTRAN(init, INIT, (F e), { finish(e, MPI_Init(nullptr, nullptr)); })
TOPOCOLL_FORTRAN(init_thread, INIT_THREAD, (F required, F provided, F e),
                 { finish(e, MPI_Init_thread(nullptr, nullptr, *required, provided)); })
TOPOCOLL_FORTRAN(finalize, FINALIZE, (F e), { finish(e, MPI_Finalize()); })
TOPOCOLL_FORTRAN(op_free, OP_FREE, (F o, F e), {
  MPI_Op c_op = op(o);
  const int rc = MPI_Op_free(&c_op);
  if (rc == MPI_SUCCESS) *o = MPI_Op_c2f(c_op);
  finish(e, rc);
})

}  // extern "C"

#endif  // OPEN_MPI
