/* Each collective libtopocoll_pmpi.so intercepts, called from C through the
 * adapter (MPI_*) and natively (PMPI_*) on the same buffers, 8 B to 16 MiB.
 * One line per function and size: the median over repetitions of the
 * slowest rank's time per call, both sides, and their ratio. Run under
 * mpiexec (README.md); TOPOCOLL_PMPI selects the adapter's algorithms.
 *   pmpi_bench [--max-bytes N] [--only name]   (name: MPI_Bcast, ...) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fn {
  BCAST,
  REDUCE,
  ALLREDUCE,
  ALLGATHER,
  RSB,
  SCAN,
  EXSCAN,
  SCATTER,
  GATHER,
  ALLTOALL,
  ALLTOALLV,
  FN_COUNT
};
static const char* names[] = {
    "MPI_Bcast",    "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather", "MPI_Reduce_scatter_block",
    "MPI_Scan",     "MPI_Exscan", "MPI_Scatter",   "MPI_Gather",    "MPI_Alltoall",
    "MPI_Alltoallv"};

struct bufs {
  double *in, *out;
  int *counts, *displs;
  int p;
};

/* One call of f on n doubles (per block for the rooted and all-to-all ones). */
static void call(int f, int native, struct bufs* b, int n) {
  MPI_Comm w = MPI_COMM_WORLD;
  switch (f) {
    case BCAST:
      native ? PMPI_Bcast(b->in, n, MPI_DOUBLE, 0, w) : MPI_Bcast(b->in, n, MPI_DOUBLE, 0, w);
      break;
    case REDUCE:
      native ? PMPI_Reduce(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, 0, w)
             : MPI_Reduce(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, 0, w);
      break;
    case ALLREDUCE:
      native ? PMPI_Allreduce(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w)
             : MPI_Allreduce(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w);
      break;
    case ALLGATHER:
      native ? PMPI_Allgather(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, w)
             : MPI_Allgather(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, w);
      break;
    case RSB:
      native ? PMPI_Reduce_scatter_block(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w)
             : MPI_Reduce_scatter_block(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w);
      break;
    case SCAN:
      native ? PMPI_Scan(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w)
             : MPI_Scan(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w);
      break;
    case EXSCAN:
      native ? PMPI_Exscan(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w)
             : MPI_Exscan(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w);
      break;
    case SCATTER:
      native ? PMPI_Scatter(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, 0, w)
             : MPI_Scatter(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, 0, w);
      break;
    case GATHER:
      native ? PMPI_Gather(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, 0, w)
             : MPI_Gather(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, 0, w);
      break;
    case ALLTOALL:
      native ? PMPI_Alltoall(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, w)
             : MPI_Alltoall(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, w);
      break;
    default:
      for (int j = 0; j < b->p; ++j) b->counts[j] = n, b->displs[j] = j * n;
      native ? PMPI_Alltoallv(b->in, b->counts, b->displs, MPI_DOUBLE, b->out, b->counts, b->displs,
                              MPI_DOUBLE, w)
             : MPI_Alltoallv(b->in, b->counts, b->displs, MPI_DOUBLE, b->out, b->counts, b->displs,
                             MPI_DOUBLE, w);
  }
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The slowest rank's time of one call (barrier first, outside the time). */
static double timed(int f, int native, struct bufs* b, int n) {
  PMPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  call(f, native, b, n);
  double t = MPI_Wtime() - t0, slowest;
  PMPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long max_bytes = 16L << 20;
  const char* only = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--max-bytes") == 0) max_bytes = atol(argv[i + 1]);
    if (strcmp(argv[i], "--only") == 0) only = argv[i + 1];
  }
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  struct bufs b = {malloc((size_t)max_bytes * (size_t)p), malloc((size_t)max_bytes * (size_t)p),
                   malloc(sizeof(int) * (size_t)p), malloc(sizeof(int) * (size_t)p), p};
  memset(b.in, 1, (size_t)max_bytes * (size_t)p);
  memset(b.out, 0, (size_t)max_bytes * (size_t)p);
  if (rank == 0)
    printf("%-26s %10s %12s %12s %7s\n", "function", "bytes", "native_us", "topocoll_us", "ratio");
  for (int f = 0; f < FN_COUNT; ++f) {
    if (only && strcmp(only, names[f]) != 0) continue;
    for (long bytes = 8; bytes <= max_bytes; bytes *= 8) {
      const int n = (int)(bytes / 8);
      long reps = 4000000L / (bytes + 8192);
      reps = reps < 7 ? 7 : reps > 301 ? 301 : reps;
      double* t[2] = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps)};
      timed(f, 0, &b, n), timed(f, 1, &b, n); /* warm-up: caches, the adapter's duplicate */
      for (long r = 0; r < reps; ++r)
        for (int native = 0; native < 2; ++native) t[native][r] = timed(f, native, &b, n);
      qsort(t[0], (size_t)reps, sizeof(double), by_value);
      qsort(t[1], (size_t)reps, sizeof(double), by_value);
      const double ours = t[0][reps / 2] * 1e6, theirs = t[1][reps / 2] * 1e6;
      if (rank == 0)
        printf("%-26s %10ld %12.2f %12.2f %7.2f\n", names[f], bytes, theirs, ours, ours / theirs);
      fflush(stdout);
      free(t[0]);
      free(t[1]);
    }
  }
  MPI_Finalize();
  return 0;
}
