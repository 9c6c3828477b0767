/* The nonblocking collectives through the adapter against the blocking
 * PMPI_ functions: MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce, MPI_Iallgather,
 * MPI_Ireduce_scatter_block, MPI_Ireduce_scatter (equal counts), MPI_Iscan,
 * MPI_Iexscan, MPI_Iscatter, MPI_Igather, MPI_Ialltoall and MPI_Ialltoallv
 * on predefined, non-contiguous and contiguous derived datatypes, with
 * MPI_SUM, MPI_MAX and a non-commutative user operation, MPI_IN_PLACE,
 * count 0, every root. Each request is completed by one of the native
 * completion functions in turn (MPI_Wait, MPI_Test, MPI_Waitall,
 * MPI_Waitany, MPI_Waitsome, MPI_Testall, MPI_Testany, MPI_Testsome,
 * MPI_Request_get_status), alone and in arrays with point-to-point and file
 * requests and MPI_REQUEST_NULL, and its status is compared with a native collective
 * request's. Then several collectives outstanding at once on two
 * communicators, completed out of order; progress while the program waits,
 * exchanges messages or computes; MPI_Request_free; and a datatype freed
 * before the wait. */
#include <unistd.h>

#include "pmpi_check.h"

enum fn {
  IBCAST,
  IREDUCE,
  IALLREDUCE,
  IALLGATHER,
  IRSB,
  IRS,
  ISCAN,
  IEXSCAN,
  ISCATTER,
  IGATHER,
  IALLTOALL,
  IALLTOALLV,
  FN_COUNT
};
static const char* fn_names[] = {"MPI_Ibcast",
                                 "MPI_Ireduce",
                                 "MPI_Iallreduce",
                                 "MPI_Iallgather",
                                 "MPI_Ireduce_scatter_block",
                                 "MPI_Ireduce_scatter",
                                 "MPI_Iscan",
                                 "MPI_Iexscan",
                                 "MPI_Iscatter",
                                 "MPI_Igather",
                                 "MPI_Ialltoall",
                                 "MPI_Ialltoallv"};

/* How a request is completed. */
enum how { WAIT, TEST, WAITALL, WAITANY, WAITSOME, TESTALL, TESTANY, TESTSOME, GET_STATUS, HOWS };
static const char* how_names[] = {
    "MPI_Wait",    "a loop of MPI_Test",     "MPI_Waitall",
    "MPI_Waitany", "a loop of MPI_Waitsome", "a loop of MPI_Testall",
    "MPI_Testany", "a loop of MPI_Testsome", "MPI_Request_get_status, then MPI_Wait"};

/* A datatype, and the predefined type its buffers are filled with. */
struct tcase {
  const char* name;
  MPI_Datatype dt, base;
};

struct ocase {
  const char* name;
  MPI_Op op;
};

/* 2x2 integer matrices modulo 7 (an element is 4 MPI_INT, row-major),
 * multiplied in rank order: inout = in * inout, `in` from the lower ranks. */
static void matrix_product(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const int* a = (const int*)in;
  int* b = (int*)inout;
  for (int i = 0; i < *len; ++i, a += 4, b += 4) {
    const int c[4] = {(a[0] * b[0] + a[1] * b[2]) % 7, (a[0] * b[1] + a[1] * b[3]) % 7,
                      (a[2] * b[0] + a[3] * b[2]) % 7, (a[2] * b[1] + a[3] * b[3]) % 7};
    memcpy(b, c, sizeof c);
  }
}

static struct tcase t_int = {"MPI_INT", MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
static struct tcase t_double = {"MPI_DOUBLE", MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
static struct tcase t_vector = {"vector(2,1,2,MPI_INT)", MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
static struct tcase t_matrix = {"contiguous(4, MPI_INT)", MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
static struct ocase o_sum = {"MPI_SUM", MPI_OP_NULL};
static struct ocase o_max = {"MPI_MAX", MPI_OP_NULL};
static struct ocase o_matrix = {"matrix product (non-commutative)", MPI_OP_NULL};

/* --quick (the sanitizer builds): counts 0, 1 and 7 only, roots 0 and p - 1. */
static int quick = 0;
static int salt = 0;

/* Small integers, so that every order of summation is exact. */
static void fill(char* buf, size_t bytes, MPI_Datatype base, int rank, int s) {
  if (base == MPI_DOUBLE) {
    for (size_t i = 0; i + sizeof(double) <= bytes; i += sizeof(double)) {
      double v = (double)((i / sizeof(double) * 7 + (size_t)rank * 13 + (size_t)s) % 101);
      memcpy(buf + i, &v, sizeof v);
    }
  } else {
    for (size_t i = 0; i + sizeof(int) <= bytes; i += sizeof(int)) {
      int v = (int)((i / sizeof(int) * 7 + (size_t)rank * 13 + (size_t)s) % 101);
      memcpy(buf + i, &v, sizeof v);
    }
  }
}

/* One collective call with its buffers: `got` for the nonblocking call,
 * `want` for the blocking PMPI_ one. */
struct call {
  int fn, count, root, place;
  MPI_Datatype dt;
  MPI_Op op;
  MPI_Comm comm;
  char *send, *got, *want;
  size_t compared; /* bytes of got that MPI defines (0: none) */
  int *counts, *displs;
  char what[240];
};

static void prepare(struct call* c, int fn, const struct tcase* t, int count, const struct ocase* o,
                    int root, int in_place, MPI_Comm comm, const char* comm_name) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  const int s = ++salt;
  const int is_root = rank == root;
  c->fn = fn, c->count = count, c->root = root, c->dt = t->dt, c->comm = comm;
  c->op = o ? o->op : MPI_OP_NULL;
  c->place = in_place && (fn == IALLREDUCE || fn == IALLGATHER || fn == IRSB || fn == IRS ||
                          fn == ISCAN || fn == IEXSCAN || fn == IALLTOALL ||
                          (is_root && (fn == IREDUCE || fn == IGATHER || fn == ISCATTER)));
  c->counts = malloc(sizeof(int) * (size_t)p);
  c->displs = malloc(sizeof(int) * (size_t)p);
  /* Ialltoallv: uneven blocks, (rank + j) % 3 * count items between rank
   * and j (symmetric), laid out backwards with gaps of 2 items. */
  int at = 0;
  for (int j = p - 1; j >= 0; --j) {
    c->counts[j] = fn == IALLTOALLV ? (rank + j) % 3 * count : count;
    c->displs[j] = at;
    at += c->counts[j] + 2;
  }
  const int spread = fn == IRSB || fn == IRS || fn == ISCATTER || fn == IALLTOALL;
  const int gathered = fn == IALLGATHER || fn == IGATHER || fn == IALLTOALL;
  const size_t item = (size_t)extent_of(t->dt);
  size_t send_bytes = item * (size_t)count * (size_t)(spread ? p : 1) + 64;
  size_t recv_bytes = item * (size_t)count * (size_t)(gathered ? p : 1) + 64;
  if (fn == IALLTOALLV) send_bytes = recv_bytes = item * (size_t)at + 64;
  if (c->place && (fn == IRSB || fn == IRS)) recv_bytes = send_bytes;
  c->send = sentinel_alloc(send_bytes);
  c->got = sentinel_alloc(recv_bytes);
  c->want = sentinel_alloc(recv_bytes);
  fill(c->send, send_bytes, t->base, rank, s);
  if ((fn == IBCAST && is_root) || (c->place && fn != ISCATTER)) {
    fill(c->got, recv_bytes, t->base, rank, s + 1);
    fill(c->want, recv_bytes, t->base, rank, s + 1);
  }
  const int reduction =
      fn == IREDUCE || fn == IALLREDUCE || fn == IRSB || fn == IRS || fn == ISCAN || fn == IEXSCAN;
  c->compared = reduction && c->place ? item * (size_t)count : recv_bytes;
  if ((fn == IREDUCE || fn == IGATHER) && !is_root) c->compared = 0;
  if (fn == IEXSCAN && rank == 0) c->compared = 0;
  snprintf(c->what, sizeof c->what, "%s%s %s%s%s count %d root %d on %s (rank %d of %d)",
           fn_names[fn], c->place ? " (MPI_IN_PLACE)" : "", t->name, o ? " " : "", o ? o->name : "",
           count, root, comm_name, rank, p);
}

/* The nonblocking MPI_ call into `got` when req is given, else the blocking
 * PMPI_ one into `want`. */
static void issue(struct call* c, MPI_Request* req) {
  const int nb = req != NULL;
  const void* sb = c->place && c->fn != ISCATTER ? MPI_IN_PLACE : c->send;
  void* rb = c->place && c->fn == ISCATTER ? MPI_IN_PLACE : nb ? c->got : c->want;
  const int n = c->count, root = c->root;
  const MPI_Datatype dt = c->dt;
  const MPI_Op op = c->op;
  const MPI_Comm comm = c->comm;
  const int *counts = c->counts, *displs = c->displs;
  int rc = MPI_SUCCESS;
  switch (c->fn) {
    case IBCAST:
      rc = nb ? MPI_Ibcast(rb, n, dt, root, comm, req) : PMPI_Bcast(rb, n, dt, root, comm);
      break;
    case IREDUCE:
      rc = nb ? MPI_Ireduce(sb, rb, n, dt, op, root, comm, req)
              : PMPI_Reduce(sb, rb, n, dt, op, root, comm);
      break;
    case IALLREDUCE:
      rc = nb ? MPI_Iallreduce(sb, rb, n, dt, op, comm, req)
              : PMPI_Allreduce(sb, rb, n, dt, op, comm);
      break;
    case IALLGATHER:
      rc = nb ? MPI_Iallgather(sb, n, dt, rb, n, dt, comm, req)
              : PMPI_Allgather(sb, n, dt, rb, n, dt, comm);
      break;
    case IRSB:
      rc = nb ? MPI_Ireduce_scatter_block(sb, rb, n, dt, op, comm, req)
              : PMPI_Reduce_scatter_block(sb, rb, n, dt, op, comm);
      break;
    case IRS:
      rc = nb ? MPI_Ireduce_scatter(sb, rb, counts, dt, op, comm, req)
              : PMPI_Reduce_scatter(sb, rb, counts, dt, op, comm);
      break;
    case ISCAN:
      rc = nb ? MPI_Iscan(sb, rb, n, dt, op, comm, req) : PMPI_Scan(sb, rb, n, dt, op, comm);
      break;
    case IEXSCAN:
      rc = nb ? MPI_Iexscan(sb, rb, n, dt, op, comm, req) : PMPI_Exscan(sb, rb, n, dt, op, comm);
      break;
    case ISCATTER:
      rc = nb ? MPI_Iscatter(sb, n, dt, rb, n, dt, root, comm, req)
              : PMPI_Scatter(sb, n, dt, rb, n, dt, root, comm);
      break;
    case IGATHER:
      rc = nb ? MPI_Igather(sb, n, dt, rb, n, dt, root, comm, req)
              : PMPI_Gather(sb, n, dt, rb, n, dt, root, comm);
      break;
    case IALLTOALL:
      rc = nb ? MPI_Ialltoall(sb, n, dt, rb, n, dt, comm, req)
              : PMPI_Alltoall(sb, n, dt, rb, n, dt, comm);
      break;
    case IALLTOALLV:
      rc = nb ? MPI_Ialltoallv(sb, counts, displs, dt, rb, counts, displs, dt, comm, req)
              : PMPI_Alltoallv(sb, counts, displs, dt, rb, counts, displs, dt, comm);
      break;
  }
  CHECK(rc == MPI_SUCCESS, "%s: the %s call returned %d", c->what, nb ? "MPI_" : "PMPI_", rc);
}

/* The defined bytes of the two results must agree; frees the buffers. */
static void verify(struct call* c) {
  if (c->compared) same_bytes(c->got, c->want, c->compared, c->what);
  free(c->send);
  free(c->got);
  free(c->want);
  free(c->counts);
  free(c->displs);
}

/* Statuses start filled with these bytes, so that a field a completion
 * function leaves alone keeps them. */
#define STATUS_FILL 0x5A
static void blank(MPI_Status* st, int n) {
  memset(st, STATUS_FILL, sizeof *st * (size_t)n);
}

/* Whether `how` completes one request at a time. Open MPI's single
 * completions (MPI_Wait, MPI_Test, MPI_Waitany, MPI_Testany,
 * MPI_Request_get_status) leave MPI_ERROR as it was (MPI 3.2.5); the
 * multiple ones write the request's, MPI_SUCCESS. */
static int single(int how) {
  return how == WAIT || how == TEST || how == WAITANY || how == TESTANY || how == GET_STATUS;
}

/* The status MPI_Wait gives a native collective request (from a blank
 * one). MPI leaves the source and tag of a collective's status undefined,
 * and Open MPI 4.1 leaves them and the byte count uninitialized in a request
 * of its nonblocking collective component (zero from fresh pages, 0xbe bytes
 * under AddressSanitizer); only a request done when started (MPI_Ibcast of
 * count 0) has (MPI_PROC_NULL, MPI_ANY_TAG, 0 bytes). So a request must give
 * what native ones give alike: not cancelled, and MPI_ERROR as a native
 * request's. */
static MPI_Status ref_status;

static void same_status(const MPI_Status* st, int how, const char* what) {
  int cancelled = -1, ref_cancelled = -1;
  MPI_Test_cancelled(st, &cancelled);
  MPI_Test_cancelled(&ref_status, &ref_cancelled);
  const int unset = ref_status.MPI_ERROR;
  const int error =
      single(how) ? st->MPI_ERROR == unset : st->MPI_ERROR == MPI_SUCCESS || st->MPI_ERROR == unset;
  CHECK(error && cancelled == ref_cancelled,
        "%s, completed by %s: status error %d, cancelled %d; a native collective request's has "
        "error %d, cancelled %d",
        what, how_names[how], st->MPI_ERROR, cancelled, unset, ref_cancelled);
}

#define MAX_REQS 16

/* Completes every request of reqs[0..n) by `how`; sts[i] gets request i's
 * status (null requests' are left as they are). The loops of MPI_Waitany,
 * MPI_Testany, MPI_Waitsome and MPI_Testsome end when the call reports
 * MPI_UNDEFINED, which must come exactly once every request is done. */
static void complete_all(int n, MPI_Request* reqs, int how, MPI_Status* sts, const char* what) {
  int active = 0, done = 0, flag = 0, index, outcount, indices[MAX_REQS];
  int seen[MAX_REQS] = {0};
  MPI_Status st, some[MAX_REQS];
  for (int i = 0; i < n; ++i) active += reqs[i] != MPI_REQUEST_NULL;
  blank(sts, n);
  switch (how) {
    case WAIT:
      for (int i = 0; i < n; ++i) MPI_Wait(&reqs[i], &sts[i]);
      done = active;
      break;
    case TEST:
      for (int i = 0; i < n; ++i)
        for (flag = 0; !flag;) MPI_Test(&reqs[i], &flag, &sts[i]);
      done = active;
      break;
    case WAITALL:
      MPI_Waitall(n, reqs, sts);
      done = active;
      break;
    case TESTALL:
      while (!flag) MPI_Testall(n, reqs, &flag, sts);
      done = active;
      break;
    case WAITANY:
    case TESTANY:
      for (;;) {
        blank(&st, 1);
        if (how == WAITANY) {
          MPI_Waitany(n, reqs, &index, &st);
          flag = 1;
        } else {
          MPI_Testany(n, reqs, &index, &flag, &st);
        }
        if (!flag && done < active) continue;
        CHECK(flag, "%s: MPI_Testany gave no flag with every request done", what);
        if (!flag || index == MPI_UNDEFINED) break;
        CHECK(index >= 0 && index < n && !seen[index], "%s: %s gave index %d", what, how_names[how],
              index);
        if (index < 0 || index >= n) break;
        seen[index] = 1, sts[index] = st, ++done;
      }
      break;
    case WAITSOME:
    case TESTSOME:
      for (;;) {
        blank(some, n);
        if (how == WAITSOME)
          MPI_Waitsome(n, reqs, &outcount, indices, some);
        else
          MPI_Testsome(n, reqs, &outcount, indices, some);
        if (outcount == MPI_UNDEFINED) break;
        CHECK(outcount > 0 ? outcount <= n : outcount == 0 && how == TESTSOME && done < active,
              "%s: %s gave outcount %d with %d of %d requests done", what, how_names[how], outcount,
              done, active);
        if (outcount <= 0 && (how == WAITSOME || done == active)) break;
        for (int k = 0; k < outcount && k < n; ++k) {
          CHECK(indices[k] >= 0 && indices[k] < n && !seen[indices[k]], "%s: %s gave index %d",
                what, how_names[how], indices[k]);
          if (indices[k] < 0 || indices[k] >= n) continue;
          seen[indices[k]] = 1, sts[indices[k]] = some[k], ++done;
        }
      }
      break;
    case GET_STATUS:
      for (int i = 0; i < n; ++i) {
        if (reqs[i] == MPI_REQUEST_NULL) continue;
        blank(&st, 1);
        for (flag = 0; !flag;) MPI_Request_get_status(reqs[i], &flag, &st);
        CHECK(reqs[i] != MPI_REQUEST_NULL, "%s: MPI_Request_get_status freed the request", what);
        MPI_Wait(&reqs[i], &sts[i]);
        CHECK(!memcmp(&st, &sts[i], sizeof st),
              "%s: MPI_Request_get_status gave another status than MPI_Wait (source %d tag %d, "
              "and %d %d)",
              what, st.MPI_SOURCE, st.MPI_TAG, sts[i].MPI_SOURCE, sts[i].MPI_TAG);
        ++done;
      }
      break;
  }
  CHECK(done == active, "%s: %s completed %d of %d requests", what, how_names[how], done, active);
  for (int i = 0; i < n; ++i)
    CHECK(reqs[i] == MPI_REQUEST_NULL, "%s: request %d is not MPI_REQUEST_NULL after %s", what, i,
          how_names[how]);
}

static void complete_one(MPI_Request* req, int how, MPI_Status* st, const char* what) {
  complete_all(1, req, how, st, what);
}

/* One case: PMPI_ first, then the nonblocking call completed by the
 * function's next completion method, so that every function meets every
 * method across its cases. */
static void one_case(int fn, const struct tcase* t, int count, const struct ocase* o, int root,
                     int in_place) {
  static int rotation[FN_COUNT];
  const int how = rotation[fn]++ % HOWS;
  struct call c;
  prepare(&c, fn, t, count, o, root, in_place, MPI_COMM_WORLD, "MPI_COMM_WORLD");
  issue(&c, NULL);
  MPI_Request req;
  MPI_Status st;
  issue(&c, &req);
  complete_one(&req, how, &st, c.what);
  same_status(&st, how, c.what);
  verify(&c);
}

static int rooted(int fn) {
  return fn == IBCAST || fn == IREDUCE || fn == ISCATTER || fn == IGATHER;
}
static int has_in_place(int fn) {
  return fn != IBCAST && fn != IALLTOALLV;
}

static void every_case(int fn, const struct tcase* t, int count, const struct ocase* o) {
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (int in_place = 0; in_place < 1 + has_in_place(fn); ++in_place) {
    if (!rooted(fn)) {
      one_case(fn, t, count, o, 0, in_place);
      continue;
    }
    for (int root = 0; root < p; ++root)
      if (!quick || root == 0 || root == p - 1) one_case(fn, t, count, o, root, in_place);
  }
}

static void every_function(void) {
  const int all_counts[] = {0, 1, 7, 1000}, quick_counts[] = {0, 1, 7};
  const int* counts = quick ? quick_counts : all_counts;
  const int ncounts = quick ? 3 : 4;
  const int movement[] = {IBCAST, IALLGATHER, ISCATTER, IGATHER, IALLTOALL, IALLTOALLV};
  const int reduction[] = {IREDUCE, IALLREDUCE, IRSB, IRS, ISCAN, IEXSCAN};
  const struct tcase* mtypes[] = {&t_int, &t_double, &t_vector};
  const struct {
    const struct tcase* t;
    const struct ocase* o;
  } rtypes[] = {{&t_int, &o_sum},
                {&t_int, &o_max},
                {&t_double, &o_sum},
                {&t_double, &o_max},
                {&t_matrix, &o_matrix}};
  for (int k = 0; k < ncounts; ++k) {
    for (int t = 0; t < 3; ++t)
      for (int f = 0; f < 6; ++f) every_case(movement[f], mtypes[t], counts[k], NULL);
    for (int t = 0; t < 5; ++t)
      for (int f = 0; f < 6; ++f) every_case(reduction[f], rtypes[t].t, counts[k], rtypes[t].o);
  }
}

/* Point-to-point requests, a file write, MPI_REQUEST_NULL and collectives on
 * two communicators in one array, completed by each method. */
static void mixed_arrays(MPI_Comm dup) {
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int right = (rank + 1) % p, left = (rank + p - 1) % p;
  /* a file of this rank's, for a file request in the arrays */
  char path[256];
  snprintf(path, sizeof path, "%s/pmpi_nonblocking_test.%ld.%d", P_tmpdir, (long)getpid(), rank);
  MPI_File file;
  MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                MPI_INFO_NULL, &file);
  for (int how = 0; how < HOWS; ++how) {
    char what[160];
    snprintf(what, sizeof what, "a mixed array completed by %s (rank %d of %d)", how_names[how],
             rank, p);
    int out[5], in[5];
    for (int i = 0; i < 5; ++i) out[i] = rank * 1000 + how * 10 + i, in[i] = -1;
    struct call ar, bc, ga;
    prepare(&ar, IALLREDUCE, &t_double, 1000, &o_sum, 0, 0, MPI_COMM_WORLD, "MPI_COMM_WORLD");
    prepare(&bc, IBCAST, &t_vector, 7, NULL, how % p, 0, dup, "a duplicate of MPI_COMM_WORLD");
    prepare(&ga, IGATHER, &t_int, 7, NULL, (how + 1) % p, 0, MPI_COMM_WORLD, "MPI_COMM_WORLD");
    issue(&ar, NULL);
    issue(&bc, NULL);
    issue(&ga, NULL);
    /* the tags differ by sender: this rank sends one and receives another */
    MPI_Request reqs[7];
    MPI_Isend(out, 5, MPI_INT, right, 1000 * (how + 1) + rank, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(in, 5, MPI_INT, left, 1000 * (how + 1) + left, MPI_COMM_WORLD, &reqs[1]);
    reqs[2] = MPI_REQUEST_NULL;
    issue(&ar, &reqs[3]);
    issue(&bc, &reqs[4]);
    issue(&ga, &reqs[5]);
    MPI_File_iwrite_at(file, (MPI_Offset)(how * sizeof out), out, 5, MPI_INT, &reqs[6]);
    MPI_Status sts[7];
    complete_all(7, reqs, how, sts, what);
    for (int i = 0; i < 5; ++i)
      CHECK(in[i] == left * 1000 + how * 10 + i, "%s: received %d at %d", what, in[i], i);
    int n = -1;
    MPI_Get_count(&sts[1], MPI_INT, &n);
    CHECK(sts[1].MPI_SOURCE == left && sts[1].MPI_TAG == 1000 * (how + 1) + left && n == 5,
          "%s: the receive's status has source %d, tag %d, count %d", what, sts[1].MPI_SOURCE,
          sts[1].MPI_TAG, n);
    MPI_Get_count(&sts[6], MPI_INT, &n);
    CHECK(n == 5, "%s: the file write's status has count %d", what, n);
    same_status(&sts[3], how, ar.what);
    same_status(&sts[4], how, bc.what);
    same_status(&sts[5], how, ga.what);
    verify(&ar);
    verify(&bc);
    verify(&ga);
  }
  MPI_File_close(&file);
}

/* Six collectives on MPI_COMM_WORLD and two on a duplicate outstanding at
 * once, completed by MPI_Wait in reverse order, then in a rotated one. */
static void outstanding(MPI_Comm dup) {
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* w = "MPI_COMM_WORLD";
  const char* d = "a duplicate of MPI_COMM_WORLD";
  for (int round = 0; round < 2; ++round) {
    struct call c[8];
    prepare(&c[0], IALLREDUCE, &t_double, 1000, &o_sum, 0, 0, MPI_COMM_WORLD, w);
    prepare(&c[1], IBCAST, &t_vector, 7, NULL, p - 1, 0, MPI_COMM_WORLD, w);
    prepare(&c[2], IREDUCE, &t_matrix, 7, &o_matrix, p / 2, 0, dup, d);
    prepare(&c[3], IALLGATHER, &t_int, 7, NULL, 0, round, MPI_COMM_WORLD, w);
    prepare(&c[4], IALLTOALLV, &t_int, 7, NULL, 0, 0, MPI_COMM_WORLD, w);
    prepare(&c[5], IGATHER, &t_double, 1000, NULL, 0, 0, dup, d);
    prepare(&c[6], ISCAN, &t_matrix, 7, &o_matrix, 0, round, MPI_COMM_WORLD, w);
    prepare(&c[7], IRSB, &t_int, 7, &o_max, 0, 1 - round, MPI_COMM_WORLD, w);
    for (int i = 0; i < 8; ++i) issue(&c[i], NULL);
    MPI_Request reqs[8];
    for (int i = 0; i < 8; ++i) issue(&c[i], &reqs[i]);
    for (int k = 0; k < 8; ++k) {
      const int i = round == 0 ? 7 - k : (k + 3) % 8;
      MPI_Status st;
      blank(&st, 1);
      MPI_Wait(&reqs[i], &st);
      same_status(&st, WAIT, c[i].what);
    }
    for (int i = 0; i < 8; ++i) verify(&c[i]);
  }
}

static double compute(double x) {
  for (int i = 0; i < 2000; ++i) x = x * 0.9995 + 0.5;
  return x;
}

/* Progress: MPI_Wait alone, the program's own blocking traffic, a compute
 * loop that tests. */
static void progress(void) {
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int right = (rank + 1) % p, left = (rank + p - 1) % p;
  const int n = 100000;
  for (int pattern = 0; pattern < 3; ++pattern) {
    struct call c;
    prepare(&c, IALLREDUCE, &t_double, n, &o_sum, 0, 0, MPI_COMM_WORLD, "MPI_COMM_WORLD");
    issue(&c, NULL);
    MPI_Request req;
    MPI_Status st;
    blank(&st, 1);
    issue(&c, &req);
    if (pattern == 0) { /* MPI_Wait only; all but rank 0 come late to it */
      double x = 0;
      if (rank != 0)
        for (int i = 0; i < 200; ++i) x = compute(x);
      CHECK(x >= 0, "compute");
      MPI_Wait(&req, &st);
    } else if (pattern == 1) { /* blocking MPI_Sendrecv with both neighbours */
      for (int round = 0; round < 20; ++round) {
        int out = rank * 100 + round, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, right, 7000 + round, &in, 1, MPI_INT, left, 7000 + round,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(in == left * 100 + round, "MPI_Sendrecv from the left in round %d gave %d", round,
              in);
        in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, left, 7100 + round, &in, 1, MPI_INT, right, 7100 + round,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(in == right * 100 + round, "MPI_Sendrecv from the right in round %d gave %d", round,
              in);
      }
      MPI_Wait(&req, &st);
    } else { /* compute, MPI_Test every iteration */
      double x = 0;
      long iterations = 0;
      for (int flag = 0; !flag; ++iterations) {
        x = compute(x);
        MPI_Test(&req, &flag, &st);
      }
      CHECK(x >= 0 && iterations > 0, "compute");
    }
    CHECK(req == MPI_REQUEST_NULL, "progress pattern %d: the request is not freed", pattern);
    same_status(&st, WAIT, c.what);
    verify(&c);
  }
}

/* MPI_Request_free on a started MPI_Iallreduce, then an MPI_Ibcast on the
 * same communicator, waited for: the adapter runs the collectives of a
 * communicator in the order they start, so the freed one's result is there
 * once the broadcast's is. MPI-3.1 (5.12) makes freeing a nonblocking
 * collective's request erroneous, and Open MPI's own component refuses one
 * that is not complete (MPI_ERR_REQUEST, raised on MPI_COMM_WORLD, the
 * request left as it was; it also completes the collectives of a
 * communicator in no set order): there the request is waited for after the
 * broadcast instead. */
static void request_free(MPI_Comm comm, const char* comm_name) {
  struct call freed, next;
  prepare(&freed, IALLREDUCE, &t_int, 7, &o_sum, 0, 0, comm, comm_name);
  prepare(&next, IBCAST, &t_int, 7, NULL, 0, 0, comm, comm_name);
  issue(&freed, NULL);
  issue(&next, NULL);
  MPI_Request req, later;
  issue(&freed, &req);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int rc = MPI_Request_free(&req);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  CHECK(rc == MPI_SUCCESS ? req == MPI_REQUEST_NULL
                          : cls == MPI_ERR_REQUEST && req != MPI_REQUEST_NULL,
        "%s: MPI_Request_free returned %d (class %d) and left the request %s", freed.what, rc, cls,
        req == MPI_REQUEST_NULL ? "null" : "there");
  issue(&next, &later);
  MPI_Wait(&later, MPI_STATUS_IGNORE);
  if (req != MPI_REQUEST_NULL) MPI_Wait(&req, MPI_STATUS_IGNORE);
  verify(&next);
  verify(&freed);
}

/* A derived datatype freed right after the MPI_Ibcast that uses it, which
 * MPI allows: the broadcast still unpacks into the caller's strided buffer
 * with it at completion. */
static void type_freed_early(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Datatype t, ref;
  MPI_Type_vector(3, 1, 2, MPI_INT, &t);
  MPI_Type_commit(&t);
  MPI_Type_vector(3, 1, 2, MPI_INT, &ref);
  MPI_Type_commit(&ref);
  int got[20], want[20];
  for (int i = 0; i < 20; ++i) got[i] = want[i] = rank == 0 ? 100 + i : -1;
  MPI_Request req;
  MPI_Ibcast(got, 4, t, 0, MPI_COMM_WORLD, &req);
  MPI_Type_free(&t);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  PMPI_Bcast(want, 4, ref, 0, MPI_COMM_WORLD);
  same_bytes(got, want, sizeof got, "MPI_Ibcast of a vector type freed before the wait");
  MPI_Type_free(&ref);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  t_int.dt = t_int.base = MPI_INT;
  t_double.dt = t_double.base = MPI_DOUBLE;
  MPI_Type_vector(2, 1, 2, MPI_INT, &t_vector.dt);
  MPI_Type_commit(&t_vector.dt);
  t_vector.base = MPI_INT;
  MPI_Type_contiguous(4, MPI_INT, &t_matrix.dt);
  MPI_Type_commit(&t_matrix.dt);
  t_matrix.base = MPI_INT;
  o_sum.op = MPI_SUM;
  o_max.op = MPI_MAX;
  MPI_Op_create(matrix_product, 0, &o_matrix.op);
  {
    int x = 1, y = 0;
    MPI_Request req;
    blank(&ref_status, 1);
    PMPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    PMPI_Wait(&req, &ref_status);
  }
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  every_function();
  mixed_arrays(dup);
  outstanding(dup);
  progress();
  request_free(MPI_COMM_WORLD, "MPI_COMM_WORLD");
  request_free(dup, "a duplicate of MPI_COMM_WORLD");
  type_freed_early();
  MPI_Comm_free(&dup);
  MPI_Type_free(&t_vector.dt);
  MPI_Type_free(&t_matrix.dt);
  MPI_Op_free(&o_matrix.op);
  return check_finish("nonblocking_test");
}
