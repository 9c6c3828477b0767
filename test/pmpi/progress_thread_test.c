/* TOPOCOLL_PMPI_PROGRESS=thread: started collectives complete while the rank
 * that started them computes without calling MPI.
 *
 * Rank 0 starts two collectives on one communicator and then spins on a
 * flag in shared memory (MPI_Win_allocate_shared), calling no MPI function.
 * Only then do the other ranks start theirs and wait for them. The adapter
 * runs a communicator's collectives one after the other, so rank 0's second
 * collective can start only once its first has received the other ranks'
 * data, after rank 0 stopped calling MPI: the other ranks' MPI_Waitall
 * returns only if something moves rank 0's collectives on meanwhile. When
 * they have returned and checked their results, they set the flag; rank 0
 * then waits for its own and checks them.
 *
 * Then two threads of each rank call blocking collectives on two
 * communicators, rank 0's in one order and the others' in the other. The
 * progress thread starts each and lets its caller wait, so neither waits
 * for the other (running them one at a time, it would deadlock).
 *
 * Last, nonblocking file writes completed by MPI_Test while the progress
 * thread runs a started collective (--file-rounds rounds, 1000): two threads
 * inside MPI at once, which Open MPI's OMPIO does not survive (doc/pmpi.md,
 * "Progress"). On OMPIO about two runs in three at np 2 die in those rounds.
 *
 * Without the thread nothing does: rank 0 gives up after --guard seconds
 * (30), reports "made no progress", and waits, which completes every rank.
 * The test runs that way too (TOPOCOLL_PMPI_PROGRESS=calls, --guard 0.5) and
 * must report it, so it is known to fail where progress is missing.
 *
 *   progress_thread_test [--guard SECONDS] [--file-rounds N]
 */
#define _XOPEN_SOURCE 700 /* clock_gettime, nanosleep, P_tmpdir */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmpi_check.h"

static double guard_s = 30;
static int file_rounds = 1000;

struct flags {
  int started; /* rank 0 has started its collectives */
  int done;    /* how many other ranks have completed theirs */
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Spins (no MPI call) until *v reaches want; false after the guard. */
static int spin_until(int* v, int want) {
  const double end = now_s() + guard_s;
  while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < want)
    if (now_s() > end) return 0;
  return 1;
}

enum kind { ALLREDUCE, BCAST, REDUCE, ALLTOALL };
static const char* names[] = {"MPI_Iallreduce", "MPI_Ibcast", "MPI_Ireduce", "MPI_Ialltoall"};

/* Starts collective k on n ints per rank (per block for all-to-all; the
 * broadcast's root is 0, the reduction's 1); in and out hold n * p ints. */
static void start(enum kind k, int* in, int* out, int n, MPI_Request* r) {
  switch (k) {
    case ALLREDUCE:
      MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r);
      break;
    case BCAST:
      MPI_Ibcast(out, n, MPI_INT, 0, MPI_COMM_WORLD, r);
      break;
    case REDUCE:
      MPI_Ireduce(in, out, n, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD, r);
      break;
    case ALLTOALL:
      MPI_Ialltoall(in, n, MPI_INT, out, n, MPI_INT, MPI_COMM_WORLD, r);
      break;
  }
}

/* Fills in (and out, for the broadcast's root) with rank r's values: element
 * i of block j is 1000 r + 7 j + i % 5. */
static void fill(enum kind k, int* in, int* out, int n, int rank, int p) {
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < n; ++i) in[j * n + i] = 1000 * rank + 7 * j + i % 5;
  for (int i = 0; i < n * p; ++i) out[i] = k == BCAST && rank == 0 ? in[i] : -1;
}

static void verify(enum kind k, const int* out, int n, int rank, int p, const char* which) {
  const int sum_ranks = 1000 * p * (p - 1) / 2;
  for (int i = 0; i < n; ++i) {
    int want = -1;
    if (k == ALLREDUCE || (k == REDUCE && rank == 1)) want = sum_ranks + p * (i % 5);
    if (k == BCAST) want = i % 5;
    for (int j = 0; k == ALLTOALL && j < p; ++j) {
      const int w = 1000 * j + 7 * rank + i % 5;
      if (out[j * n + i] != w) {
        CHECK(0, "%s (%s), n = %d: block %d element %d is %d, not %d", names[k], which, n, j, i,
              out[j * n + i], w);
        return;
      }
    }
    if (k != ALLTOALL && want != -1 && out[i] != want) {
      CHECK(0, "%s (%s), n = %d: element %d is %d, not %d", names[k], which, n, i, out[i], want);
      return;
    }
  }
}

/* One case: collectives a then b, n ints each; rank 0 computes meanwhile. */
static void overtake(struct flags* f, enum kind a, enum kind b, int n, int rank, int p) {
  int *in[2], *out[2];
  const enum kind ks[2] = {a, b};
  MPI_Request r[2];
  for (int i = 0; i < 2; ++i) {
    in[i] = malloc((size_t)n * p * sizeof(int));
    out[i] = malloc((size_t)n * p * sizeof(int));
    fill(ks[i], in[i], out[i], n, rank, p);
  }
  if (rank == 0) {
    for (int i = 0; i < 2; ++i) start(ks[i], in[i], out[i], n, &r[i]);
    __atomic_store_n(&f->started, 1, __ATOMIC_RELEASE);
    if (!spin_until(&f->done, p - 1))
      CHECK(0,
            "%s then %s, n = %d: the other ranks' calls made no progress while rank 0 "
            "computed for %g s without calling MPI",
            names[a], names[b], n, guard_s);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  } else {
    CHECK(spin_until(&f->started, 1), "rank 0 did not start %s then %s, n = %d", names[a], names[b],
          n);
    for (int i = 0; i < 2; ++i) start(ks[i], in[i], out[i], n, &r[i]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    __atomic_fetch_add(&f->done, 1, __ATOMIC_ACQ_REL);
  }
  for (int i = 0; i < 2; ++i) {
    verify(ks[i], out[i], n, rank, p, i == 0 ? "first" : "second");
    free(in[i]);
    free(out[i]);
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) f->started = f->done = 0;
  PMPI_Barrier(MPI_COMM_WORLD);
}

/* One of two threads: waits until the other has begun its call where this
 * one goes second, then an MPI_Allreduce of n ints on its own communicator. */
struct caller {
  MPI_Comm comm;
  int n, second, rank, p;
  int* begun; /* the first thread's flag: set as it calls */
  int* in;
  int* out;
};

static void* call_allreduce(void* arg) {
  struct caller* c = arg;
  if (c->second)
    while (!__atomic_load_n(c->begun, __ATOMIC_ACQUIRE)) sched_yield();
  else
    __atomic_store_n(c->begun, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < c->n; ++i) c->in[i] = 1000 * c->rank + i % 5;
  MPI_Allreduce(c->in, c->out, c->n, MPI_INT, MPI_SUM, c->comm);
  verify(ALLREDUCE, c->out, c->n, c->rank, c->p, c->second ? "second thread" : "first thread");
  return NULL;
}

/* Rank 0's first thread calls on a, the others' on b; then the second. */
static void threads_crossed(int rank, int p, int n) {
  MPI_Comm comms[2];
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  int one = 1, all = 0; /* each communicator's transport, made on both */
  for (int i = 0; i < 2; ++i) MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, comms[i]);
  int begun = 0;
  struct caller c[2];
  pthread_t t[2];
  for (int i = 0; i < 2; ++i) {
    const int first_comm = rank == 0 ? 0 : 1;
    c[i] = (struct caller){comms[i == 0 ? first_comm : 1 - first_comm],
                           n,
                           i,
                           rank,
                           p,
                           &begun,
                           malloc((size_t)n * sizeof(int)),
                           malloc((size_t)n * sizeof(int))};
    pthread_create(&t[i], NULL, call_allreduce, &c[i]);
  }
  for (int i = 0; i < 2; ++i) {
    pthread_join(t[i], NULL);
    free(c[i].in);
    free(c[i].out);
  }
  MPI_Comm_free(&comms[0]);
  MPI_Comm_free(&comms[1]);
}

/* Each round: an MPI_Iallreduce, which one rank starts late (by turns) so
 * that the other's progress thread polls it meanwhile, then four writes of
 * 4096 ints, each completed by a loop of MPI_Test; the file is read back. */
static void file_requests(int rank, int p, int rounds) {
  char path[256];
  snprintf(path, sizeof path, "%s/pmpi_progress_thread_test.%ld.%d", P_tmpdir, (long)getpid(),
           rank);
  MPI_File file;
  MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                MPI_INFO_NULL, &file);
  enum { n = 4096, blocks = 4 };
  int* data = malloc(n * sizeof(int));
  for (int r = 0; r < rounds; ++r) {
    int mine = rank + r, sum = -1;
    MPI_Request coll;
    if ((r + rank) % 2) nanosleep(&(struct timespec){0, 200000}, NULL);
    MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &coll);
    for (int i = 0; i < n; ++i) data[i] = r + i;
    for (int k = 0; k < blocks; ++k) {
      MPI_Request w;
      MPI_Status st;
      int done = 0, count = -1;
      MPI_File_iwrite_at(file, (MPI_Offset)k * n * (MPI_Offset)sizeof(int), data, n, MPI_INT, &w);
      while (!done) MPI_Test(&w, &done, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      CHECK(count == n, "file write %d of round %d: the status counts %d ints, not %d", k, r, count,
            n);
    }
    MPI_Wait(&coll, MPI_STATUS_IGNORE);
    CHECK(sum == p * (p - 1) / 2 + p * r, "MPI_Iallreduce beside file writes, round %d: %d, not %d",
          r, sum, p * (p - 1) / 2 + p * r);
  }
  for (int k = 0; rounds > 0 && k < blocks; ++k) {
    MPI_File_read_at(file, (MPI_Offset)k * n * (MPI_Offset)sizeof(int), data, n, MPI_INT,
                     MPI_STATUS_IGNORE);
    const int want = rounds - 1;
    CHECK(data[0] == want && data[n - 1] == want + n - 1,
          "file block %d read back: %d ... %d, not %d ... %d", k, data[0], data[n - 1], want,
          want + n - 1);
  }
  free(data);
  MPI_File_close(&file);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  for (int i = 1; i + 1 < argc; i += 2)
    if (strcmp(argv[i], "--guard") == 0)
      guard_s = atof(argv[i + 1]);
    else if (strcmp(argv[i], "--file-rounds") == 0)
      file_rounds = atoi(argv[i + 1]);
  int rank, p, level;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Query_thread(&level);
  const char* setting = getenv("TOPOCOLL_PMPI_PROGRESS");
  if (setting != NULL && strcmp(setting, "thread") == 0)
    CHECK(level == MPI_THREAD_MULTIPLE,
          "MPI_Init under TOPOCOLL_PMPI_PROGRESS=thread gave thread level %d, not "
          "MPI_THREAD_MULTIPLE (%d)",
          level, MPI_THREAD_MULTIPLE);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size;
  MPI_Comm_size(node, &node_size);
  if (node_size != p || p < 2) {
    if (rank == 0) printf("progress_thread_test: needs 2 or more ranks on one node\n");
    MPI_Comm_free(&node);
    return check_finish("progress_thread_test");
  }
  struct flags* f;
  MPI_Win win;
  MPI_Win_allocate_shared(rank == 0 ? sizeof *f : 0, 1, MPI_INFO_NULL, node, &f, &win);
  MPI_Aint size;
  int unit;
  MPI_Win_shared_query(win, 0, &size, &unit, &f);
  if (rank == 0) f->started = f->done = 0;
  /* The first served call on a communicator makes its transport, which is
   * collective (MPI_Comm_dup): made here, not while rank 0 waits alone. */
  int one = 1, all = 0;
  MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int counts[] = {1, 1000, 100000};
  for (int c = 0; c < 3; ++c) {
    overtake(f, ALLREDUCE, ALLREDUCE, counts[c], rank, p);
    overtake(f, BCAST, REDUCE, counts[c], rank, p);
    overtake(f, ALLTOALL, ALLREDUCE, counts[c] / 10 + 1, rank, p);
  }
  if (level == MPI_THREAD_MULTIPLE)
    for (int n = 1; n <= 100000; n *= 100) threads_crossed(rank, p, n);
  if (file_rounds > 0) file_requests(rank, p, file_rounds);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  return check_finish("progress_thread_test");
}
