/* The nonblocking collectives libtopocoll_pmpi.so serves, called from C
 * through the adapter (MPI_I*) and natively (PMPI_I*) on the same buffers, in
 * the same run, alternating.
 *
 * latency (default): MPI_I* + MPI_Wait, 8 B to --max-bytes (1 MiB: powers
 *   of 8, and 64 KiB and 1 MiB); one line per function and size: the median
 *   over repetitions, both sides, ratio. --method says what a repetition is:
 *   loop (default): a loop of back-to-back calls, the slowest rank's time
 *     per call;
 *   osu: osu_ibcast's method, each call timed alone and followed by a
 *     barrier (not timed), the ranks' mean time per call.
 * overlap: osu_iallreduce's method at --bytes (1 MiB): t_comm, the time of
 *   MPI_Iallreduce + MPI_Wait; then MPI_Iallreduce, computation of t_comm
 *   with MPI_Test every --test-us (50) microseconds (0: none, computation
 *   that calls no MPI function; --idle 1: sleep instead of computing),
 *   MPI_Wait: t_total. One
 *   line per side: t_comm, t_compute, t_total, t_total / max(t_comm,
 *   t_compute) (1.0 is full overlap, 2.0 none) and the overlap percentage
 *   100 * (1 - (t_total - t_compute) / t_comm).
 *
 *   pmpi_nonblocking_bench [latency|overlap] [--max-bytes N] [--bytes N]
 *                          [--method loop|osu] [--test-us U] [--idle 0|1]
 *                          [--only name]
 *                          (name: MPI_Ibcast, ...) */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum fn {
  IBCAST,
  IREDUCE,
  IALLREDUCE,
  IALLGATHER,
  IRSB,
  ISCAN,
  IEXSCAN,
  ISCATTER,
  IGATHER,
  IALLTOALL,
  FN_COUNT
};
static const char* names[] = {
    "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Iallgather", "MPI_Ireduce_scatter_block",
    "MPI_Iscan",  "MPI_Iexscan", "MPI_Iscatter",   "MPI_Igather",    "MPI_Ialltoall"};

typedef int (*reduce_fn)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*);
typedef int (*move_fn)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm,
                       MPI_Request*);
typedef int (*rooted_fn)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm,
                         MPI_Request*);

/* Starts f on n doubles (per block for the rooted and all-to-all ones). */
static void start(int f, int native, double* in, double* out, int n, MPI_Request* r) {
  MPI_Comm w = MPI_COMM_WORLD;
  const MPI_Datatype d = MPI_DOUBLE;
  const reduce_fn reduce_all[2][3] = {{MPI_Iallreduce, MPI_Iscan, MPI_Iexscan},
                                      {PMPI_Iallreduce, PMPI_Iscan, PMPI_Iexscan}};
  const move_fn move_all[2][3] = {{MPI_Iallgather, MPI_Ialltoall, NULL},
                                  {PMPI_Iallgather, PMPI_Ialltoall, NULL}};
  const rooted_fn rooted[2][2] = {{MPI_Iscatter, MPI_Igather}, {PMPI_Iscatter, PMPI_Igather}};
  switch (f) {
    case IBCAST:
      (native ? PMPI_Ibcast : MPI_Ibcast)(in, n, d, 0, w, r);
      break;
    case IREDUCE:
      (native ? PMPI_Ireduce : MPI_Ireduce)(in, out, n, d, MPI_SUM, 0, w, r);
      break;
    case IALLREDUCE:
    case ISCAN:
    case IEXSCAN:
      reduce_all[native][f == IALLREDUCE ? 0 : f == ISCAN ? 1 : 2](in, out, n, d, MPI_SUM, w, r);
      break;
    case IRSB:
      (native ? PMPI_Ireduce_scatter_block : MPI_Ireduce_scatter_block)(in, out, n, d, MPI_SUM, w,
                                                                        r);
      break;
    case IALLGATHER:
    case IALLTOALL:
      move_all[native][f == IALLTOALL](in, n, d, out, n, d, w, r);
      break;
    default:
      rooted[native][f == IGATHER](in, n, d, out, n, d, 0, w, r);
  }
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double slowest(double t) {
  double s;
  PMPI_Allreduce(&t, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return s;
}

/* The slowest rank's time per call of `iters` back-to-back start + wait. */
static double loop(int f, int native, double* in, double* out, int n, int iters) {
  PMPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    MPI_Request r;
    start(f, native, in, out, n, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  return slowest((MPI_Wtime() - t0) / iters);
}

/* osu_ibcast's method: each of `iters` start + wait timed alone, a barrier
 * (not timed) after each; the ranks' mean time per call. */
static double separated(int f, int native, double* in, double* out, int n, int iters) {
  double busy = 0, sum, t0;
  int p;
  for (int i = 0; i < iters; ++i) {
    MPI_Request r;
    t0 = MPI_Wtime();
    start(f, native, in, out, n, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    busy += MPI_Wtime() - t0;
    PMPI_Barrier(MPI_COMM_WORLD);
  }
  busy /= iters;
  PMPI_Allreduce(&busy, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  PMPI_Comm_size(MPI_COMM_WORLD, &p);
  return sum / p;
}

static void latency(int rank, long max_bytes, const char* only, int osu, double* in, double* out) {
  double (*timed)(int, int, double*, double*, int, int) = osu ? separated : loop;
  if (rank == 0)
    printf("%-26s %10s %12s %12s %7s\n", "function", "bytes", "native_us", "topocoll_us", "ratio");
  for (int f = 0; f < FN_COUNT; ++f) {
    if (only && strcmp(only, names[f]) != 0) continue;
    /* powers of 8 from 8 B, and 64 KiB and 1 MiB, where the targets change */
    static const long sizes[] = {8, 64, 512, 4096, 32768, 65536, 262144, 1048576};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes && sizes[s] <= max_bytes; ++s) {
      const long bytes = sizes[s];
      const int n = (int)(bytes / 8);
      const int iters = bytes <= 8192 ? 100 : bytes <= 65536 ? 20 : 4, reps = 21;
      double t[2][21];
      timed(f, 0, in, out, n, iters), timed(f, 1, in, out, n, iters); /* warm-up */
      for (int r = 0; r < reps; ++r)
        for (int native = 0; native < 2; ++native)
          t[native][r] = timed(f, native, in, out, n, iters);
      qsort(t[0], reps, sizeof(double), by_value);
      qsort(t[1], reps, sizeof(double), by_value);
      const double ours = t[0][reps / 2] * 1e6, theirs = t[1][reps / 2] * 1e6;
      if (rank == 0)
        printf("%-26s %10ld %12.2f %12.2f %7.2f\n", names[f], bytes, theirs, ours, ours / theirs);
      fflush(stdout);
    }
  }
}

/* Floating-point work for about `seconds` (or, with --idle, a sleep, as a
 * program waiting for a device or a file), calling MPI_Test on r (if any)
 * every `test_s` seconds. */
static double sink = 0;
static int idle = 0;
static void compute(double seconds, double test_s, MPI_Request* r) {
  const double t0 = MPI_Wtime();
  double next = t0 + test_s, x = 1.0;
  int done = r == NULL;
  for (double now = t0; now - t0 < seconds; now = MPI_Wtime()) {
    if (idle) {
      const double left = t0 + seconds - now, nap = !done && test_s < left ? test_s : left;
      const struct timespec ts = {0, (long)(nap * 1e9)};
      nanosleep(&ts, NULL);
    } else {
      for (int i = 0; i < 64; ++i) x = x * 1.0000001 + 1e-9;
    }
    if (!done && now >= next) {
      MPI_Test(r, &done, MPI_STATUS_IGNORE);
      next = now + test_s;
    }
  }
  sink += x;
}

static void overlap(int rank, long bytes, double test_us, double* in, double* out) {
  const int n = (int)(bytes / 8), reps = 15;
  if (rank == 0)
    printf("%-14s %10s %10s %12s %12s %10s %8s %9s\n", "side", "bytes", "test_us", "t_comm_us",
           "t_compute_us", "t_total_us", "ratio", "overlap%");
  for (int native = 1; native >= 0; --native) {
    double comm[15], total[15];
    loop(IALLREDUCE, native, in, out, n, 2); /* warm-up */
    for (int k = 0; k < reps; ++k) comm[k] = loop(IALLREDUCE, native, in, out, n, 1);
    qsort(comm, reps, sizeof(double), by_value);
    const double t_comm = comm[reps / 2];
    for (int k = 0; k < reps; ++k) {
      PMPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Request r;
      start(IALLREDUCE, native, in, out, n, &r);
      compute(t_comm, test_us * 1e-6, test_us > 0 ? &r : NULL);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      total[k] = slowest(MPI_Wtime() - t0);
    }
    qsort(total, reps, sizeof(double), by_value);
    const double t_total = total[reps / 2];
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    compute(t_comm, 1, NULL);
    const double t_compute = slowest(MPI_Wtime() - t0);
    const double longer = t_comm > t_compute ? t_comm : t_compute;
    if (rank == 0)
      printf("%-14s %10ld %10.0f %12.1f %12.1f %10.1f %8.2f %9.1f\n",
             native ? "native" : "topocoll", bytes, test_us, t_comm * 1e6, t_compute * 1e6,
             t_total * 1e6, t_total / longer, 100 * (1 - (t_total - t_compute) / t_comm));
    fflush(stdout);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long max_bytes = 1L << 20, bytes = 1L << 20;
  double test_us = 50;
  const char* only = NULL;
  int mode_overlap = 0, osu = 0, i = 1;
  if (argc > 1 && argv[1][0] != '-') mode_overlap = strcmp(argv[i++], "overlap") == 0;
  for (; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--max-bytes") == 0) max_bytes = atol(argv[i + 1]);
    if (strcmp(argv[i], "--bytes") == 0) bytes = atol(argv[i + 1]);
    if (strcmp(argv[i], "--test-us") == 0) test_us = atof(argv[i + 1]);
    if (strcmp(argv[i], "--only") == 0) only = argv[i + 1];
    if (strcmp(argv[i], "--idle") == 0) idle = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--method") == 0) osu = strcmp(argv[i + 1], "osu") == 0;
  }
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long most = (mode_overlap ? bytes : max_bytes) * p;
  double* in = malloc((size_t)most);
  double* out = malloc((size_t)most);
  memset(in, 1, (size_t)most);
  memset(out, 0, (size_t)most);
  if (mode_overlap)
    overlap(rank, bytes, test_us, in, out);
  else
    latency(rank, max_bytes, only, osu, in, out);
  free(in);
  free(out);
  MPI_Finalize();
  return sink == 12345.0; /* keeps the computation */
}
