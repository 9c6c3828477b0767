/* Bad input through the adapter (argv[1] picks the case):
 *   op     MPI_SUM on MPI_C_BOOL, MPI_MAXLOC on MPI_INT under
 *          MPI_ERRORS_RETURN: MPI_ERR_OP on every rank, and a message naming
 *          the function, the rank and both values; the program goes on.
 *   count  MPI_Bcast where rank 1 passes one element fewer than the root,
 *          into a buffer of exactly that size: rank 1 reports it and the job
 *          aborts (MPI_ERRORS_ARE_FATAL) instead of hanging or writing past
 *          the buffer (AddressSanitizer watches it in the asan build).
 *   in_place  MPI_Reduce with MPI_IN_PLACE off the root: MPI_ERR_BUFFER.
 *   alltoallv  MPI_Alltoallv expecting less from itself than it sends itself:
 *          MPI_ERR_TRUNCATE.
 *   icount, ialltoallv  the same through MPI_Ibcast and MPI_Ialltoallv: the
 *          error comes at completion (MPI_Wait), with the same message.
 *   cancel MPI_Cancel on an MPI_Iallreduce's request: a message naming the
 *          function and the rank, and MPI_Cancel fails.
 * ctest checks the messages. */
#include <stdbool.h>

#include "pmpi_check.h"

static void bad_operation(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  bool b = true, r = false;
  int rc = MPI_Allreduce(&b, &r, 1, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "MPI_SUM on MPI_C_BOOL returned class %d, want MPI_ERR_OP", cls);
  int i = 1, o = 0;
  rc = MPI_Reduce(&i, &o, 1, MPI_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "MPI_MAXLOC on MPI_INT returned class %d, want MPI_ERR_OP", cls);
  MPI_Request req = MPI_REQUEST_NULL;
  rc = MPI_Iallreduce(&b, &r, 1, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP && req == MPI_REQUEST_NULL,
        "MPI_Iallreduce MPI_SUM on MPI_C_BOOL returned class %d, want MPI_ERR_OP", cls);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  rc = MPI_Allreduce(&i, &o, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* still works */
  CHECK(rc == MPI_SUCCESS, "allreduce after errors");
}

static void count_mismatch(bool nonblocking) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = rank == 1 ? 15 : 16;
  int* buf = calloc((size_t)n, sizeof(int));
  if (nonblocking) {
    MPI_Request req;
    MPI_Ibcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    MPI_Bcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD);
  }
  /* the other ranks may return; rank 1 must not */
  CHECK(rank != 1, "MPI_Bcast with counts 16 and 15 returned");
  PMPI_Barrier(MPI_COMM_WORLD);
  free(buf);
}

/* MPI_Reduce with MPI_IN_PLACE on ranks other than the root, which is
 * erroneous: each of them gets MPI_ERR_BUFFER (as from native MPI) and a
 * message, instead of a fault reading the sentinel as a buffer. The root does
 * not call: nothing would ever reach it. */
static void in_place_off_the_root(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank != 0) {
    int o = 0;
    const int rc = MPI_Reduce(MPI_IN_PLACE, &o, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER,
          "MPI_Reduce(MPI_IN_PLACE) off the root returned class %d, want "
          "MPI_ERR_BUFFER",
          cls);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  PMPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_Alltoallv where every rank expects one element fewer from itself than
 * it sends itself: MPI_ERR_TRUNCATE (as from native MPI) on every rank, and
 * nothing written past the receive buffer (AddressSanitizer in the asan
 * build); the other blocks still arrive. */
static void alltoallv_own_block(bool nonblocking) {
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int* sc = malloc(sizeof(int) * (size_t)p);
  int* rc = malloc(sizeof(int) * (size_t)p);
  int* sd = malloc(sizeof(int) * (size_t)p);
  int* rd = malloc(sizeof(int) * (size_t)p);
  for (int j = 0; j < p; ++j) {
    sc[j] = j == rank ? 3 : 2;
    rc[j] = 2;
    sd[j] = j == 0 ? 0 : sd[j - 1] + sc[j - 1];
    rd[j] = 2 * j;
  }
  int* in = calloc((size_t)(2 * p + 1), sizeof(int));
  int* out = calloc((size_t)(2 * p), sizeof(int));
  int code;
  if (nonblocking) {
    MPI_Request req;
    code = MPI_Ialltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, MPI_COMM_WORLD, &req);
    CHECK(code == MPI_SUCCESS, "MPI_Ialltoallv failed at the call");
    code = MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    code = MPI_Alltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, MPI_COMM_WORLD);
  }
  int cls = -1;
  MPI_Error_class(code, &cls);
  CHECK(cls == MPI_ERR_TRUNCATE,
        "MPI_Alltoallv with recvcounts[me] < sendcounts[me] returned "
        "class %d, want MPI_ERR_TRUNCATE",
        cls);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  free(sc), free(rc), free(sd), free(rd), free(in), free(out);
}

/* A collective's request cannot be cancelled (MPI 4.0, 6.12): MPI_Cancel
 * fails with a message; the collective itself completes. */
static void cancel(void) {
  int i = 1, o = 0;
  MPI_Request req;
  MPI_Iallreduce(&i, &o, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = MPI_Cancel(&req);
  CHECK(rc != MPI_SUCCESS, "MPI_Cancel of a collective's request succeeded");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  CHECK(o == p, "MPI_Iallreduce after MPI_Cancel gave %d, want %d", o, p);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "op";
  if (strcmp(mode, "count") == 0 || strcmp(mode, "icount") == 0)
    count_mismatch(mode[0] == 'i');
  else if (strcmp(mode, "in_place") == 0)
    in_place_off_the_root();
  else if (strcmp(mode, "alltoallv") == 0 || strcmp(mode, "ialltoallv") == 0)
    alltoallv_own_block(mode[0] == 'i');
  else if (strcmp(mode, "cancel") == 0)
    cancel();
  else
    bad_operation();
  return check_finish("bad_input_test");
}
