/* The C tests' shared harness: each intercepted MPI_ function is run next to
 * its PMPI_ counterpart on the same inputs and the results compared byte for
 * byte. Output buffers start with the same sentinel bytes on both sides, so a
 * byte one side writes and the other does not (a gap, padding, a block that
 * is not the caller's) shows as a difference too. */
#ifndef TOPOCOLL_PMPI_CHECK_H
#define TOPOCOLL_PMPI_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures = 0;

#define CHECK(cond, ...)                                                           \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      int r_;                                                                      \
      PMPI_Comm_rank(MPI_COMM_WORLD, &r_);                                         \
      fprintf(stderr, "FAILED on world rank %d, %s:%d: ", r_, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                                \
      fputc('\n', stderr);                                                         \
      ++check_failures;                                                            \
    }                                                                              \
  } while (0)

/* Compares n bytes of the adapter's result with PMPI's; names the case. */
static inline void same_bytes(const void* got, const void* want, size_t n, const char* what) {
  const unsigned char* a = (const unsigned char*)got;
  const unsigned char* b = (const unsigned char*)want;
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) {
      CHECK(0, "%s: byte %zu of %zu is %u, PMPI gives %u", what, i, n, a[i], b[i]);
      return;
    }
}

static inline void* sentinel_alloc(size_t n) {
  void* p = malloc(n ? n : 1);
  memset(p, 0xA5, n ? n : 1);
  return p;
}

static inline MPI_Aint extent_of(MPI_Datatype dt) {
  MPI_Aint lb, extent;
  MPI_Type_get_extent(dt, &lb, &extent);
  return extent;
}

/* Ends the test: every rank's failures summed (with PMPI, so a broken
 * adapter cannot hide them), "<name>: ok" from rank 0 when there are none. */
static inline int check_finish(const char* name) {
  int total = 0, rank;
  PMPI_Allreduce(&check_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    if (total == 0)
      printf("%s: ok\n", name);
    else
      printf("%s: %d FAILED checks\n", name, total);
    fflush(stdout);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

#endif
