/* MPI_Bcast, MPI_Allgather, MPI_Gather, MPI_Scatter, MPI_Alltoall and
 * MPI_Alltoallv through the adapter against PMPI_: predefined, pair,
 * contiguous derived and non-contiguous datatypes, ranks passing different
 * datatypes of one type signature, MPI_IN_PLACE, count 0, every root, on
 * MPI_COMM_WORLD and a communicator from MPI_Comm_split; and communicators
 * freed and made again. */
#include "pmpi_check.h"

enum fn { BCAST, ALLGATHER, GATHER, SCATTER, ALLTOALL, ALLTOALLV, FN_COUNT };
static const char* fn_names[] = {"MPI_Bcast",   "MPI_Allgather", "MPI_Gather",
                                 "MPI_Scatter", "MPI_Alltoall",  "MPI_Alltoallv"};

/* A case: the datatype each rank passes, and how many items. Ranks may pass
 * different datatypes with one signature: `alt` on odd ranks, with
 * alt_per items for each of `dt`'s. */
struct tcase {
  const char* name;
  MPI_Datatype dt, alt;
  int alt_per; /* items of alt per item of dt (alt's signature is dt's / alt_per) */
};

static void fill(unsigned char* p, size_t n, int rank, int salt) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(i * 31 + (size_t)rank * 7 + (size_t)salt);
}

struct side {
  MPI_Datatype dt;
  int count;    /* per block */
  size_t bytes; /* of the whole buffer */
};

static struct side side_of(const struct tcase* c, int rank, int count, int blocks) {
  struct side s;
  const int odd = rank % 2 == 1 && c->alt != MPI_DATATYPE_NULL;
  s.dt = odd ? c->alt : c->dt;
  s.count = odd ? count / c->alt_per : count;
  s.bytes = (size_t)extent_of(s.dt) * (size_t)s.count * (size_t)blocks + 64;
  return s;
}

static int call(int fn, int pmpi, const void* sb, struct side s, void* rb, struct side r,
                const int* counts, const int* displs, int root, MPI_Comm comm) {
  switch (fn) {
    case BCAST:
      return pmpi ? PMPI_Bcast(rb, r.count, r.dt, root, comm)
                  : MPI_Bcast(rb, r.count, r.dt, root, comm);
    case ALLGATHER:
      return pmpi ? PMPI_Allgather(sb, s.count, s.dt, rb, r.count, r.dt, comm)
                  : MPI_Allgather(sb, s.count, s.dt, rb, r.count, r.dt, comm);
    case GATHER:
      return pmpi ? PMPI_Gather(sb, s.count, s.dt, rb, r.count, r.dt, root, comm)
                  : MPI_Gather(sb, s.count, s.dt, rb, r.count, r.dt, root, comm);
    case SCATTER:
      return pmpi ? PMPI_Scatter(sb, s.count, s.dt, rb, r.count, r.dt, root, comm)
                  : MPI_Scatter(sb, s.count, s.dt, rb, r.count, r.dt, root, comm);
    case ALLTOALL:
      return pmpi ? PMPI_Alltoall(sb, s.count, s.dt, rb, r.count, r.dt, comm)
                  : MPI_Alltoall(sb, s.count, s.dt, rb, r.count, r.dt, comm);
    default:
      return pmpi ? PMPI_Alltoallv(sb, counts, displs, s.dt, rb, counts, displs, r.dt, comm)
                  : MPI_Alltoallv(sb, counts, displs, s.dt, rb, counts, displs, r.dt, comm);
  }
}

/* Alltoallv counts: block j has (j + rank) % 3 * count items of the case's
 * dt (symmetric, so what i sends j is what j expects from i), spaced by a
 * gap of `gap` items when asked. */
static int v_count(int count, int from, int to) {
  return ((from + to) % 3) * count;
}

static void compare(int fn, int in_place, int root, const struct tcase* c, int count, int gap,
                    MPI_Comm comm, const char* comm_name) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  const int is_root = rank == root;
  const int many = fn == BCAST ? 1 : p;
  const int send_blocks = (fn == SCATTER || fn == ALLTOALL || fn == ALLTOALLV) ? many : 1;
  const int recv_blocks = (fn == SCATTER) ? 1 : (fn == BCAST ? 1 : many);
  struct side s = side_of(c, rank, count, send_blocks), r = side_of(c, rank, count, recv_blocks);
  int* counts = malloc(sizeof(int) * (size_t)p);
  int* displs = malloc(sizeof(int) * (size_t)p);
  int at = 0;
  for (int j = 0; j < p; ++j) {
    counts[j] = v_count(count, rank, j) / (s.dt == c->alt ? c->alt_per : 1);
    displs[j] = at;
    at += counts[j] + gap;
  }
  if (fn == ALLTOALLV) s.bytes = r.bytes = (size_t)extent_of(s.dt) * (size_t)(at + 1) + 64;
  unsigned char* send = sentinel_alloc(s.bytes);
  unsigned char* got = sentinel_alloc(r.bytes);
  unsigned char* want = sentinel_alloc(r.bytes);
  fill(send, s.bytes, rank, count);
  if (fn == BCAST && is_root) fill(got, r.bytes, rank, count), fill(want, r.bytes, rank, count);
  const int place = in_place && (fn == ALLGATHER || fn == ALLTOALL || fn == ALLTOALLV ||
                                 (is_root && (fn == GATHER || fn == SCATTER)));
  const void* sb = send;
  if (place) {
    fill(got, r.bytes, rank, count + 1);
    fill(want, r.bytes, rank, count + 1);
    if (fn == SCATTER) { /* MPI_IN_PLACE is the root's recvbuf there */
      CHECK(call(fn, 0, send, s, MPI_IN_PLACE, r, counts, displs, root, comm) == MPI_SUCCESS, "rc");
      CHECK(call(fn, 1, send, s, MPI_IN_PLACE, r, counts, displs, root, comm) == MPI_SUCCESS, "rc");
      goto done;
    }
    sb = MPI_IN_PLACE;
  }
  CHECK(call(fn, 0, sb, s, got, r, counts, displs, root, comm) == MPI_SUCCESS, "%s rc",
        fn_names[fn]);
  CHECK(call(fn, 1, sb, s, want, r, counts, displs, root, comm) == MPI_SUCCESS, "%s rc",
        fn_names[fn]);
done:;
  char what[256];
  snprintf(what, sizeof what, "%s%s %s count %d gap %d root %d on %s (rank %d of %d)", fn_names[fn],
           place ? " (MPI_IN_PLACE)" : "", c->name, count, gap, root, comm_name, rank, p);
  if (!(fn == GATHER && !is_root)) same_bytes(got, want, r.bytes, what);
  free(send);
  free(got);
  free(want);
  free(counts);
  free(displs);
}

static void every_function(const struct tcase* c, int count, MPI_Comm comm, const char* name) {
  int p;
  MPI_Comm_size(comm, &p);
  for (int fn = 0; fn < FN_COUNT; ++fn)
    for (int in_place = 0; in_place < 2; ++in_place) {
      if (in_place && fn == BCAST) continue;
      const int roots[] = {0, p - 1, p / 2};
      const int nroots = (fn == BCAST || fn == GATHER || fn == SCATTER) ? 3 : 1;
      for (int k = 0; k < nroots; ++k) compare(fn, in_place, roots[k], c, count, 0, comm, name);
      if (fn == ALLTOALLV) compare(fn, in_place, 0, c, count, 2, comm, name);
    }
}

static void everything(MPI_Comm comm, const char* name) {
  MPI_Datatype triple, strided, pair_block;
  MPI_Type_contiguous(3, MPI_SHORT, &triple);
  MPI_Type_commit(&triple);
  /* two ints 3 apart, resized to 16 bytes: gaps inside and between items */
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, 16, &strided);
  MPI_Type_commit(&strided);
  MPI_Type_free(&vec);
  MPI_Datatype two_ints;
  MPI_Type_contiguous(2, MPI_INT, &two_ints);
  MPI_Type_commit(&two_ints);
  MPI_Type_contiguous(2, MPI_DOUBLE_INT, &pair_block);
  MPI_Type_commit(&pair_block);
  /* ints at offsets 4 and 0: no gap, lower bound 0, extent = size, yet not
   * in memory order, so its bytes are not its type signature's order */
  MPI_Datatype swapped;
  const int ones[] = {1, 1}, backwards[] = {1, 0};
  MPI_Type_indexed(2, ones, backwards, MPI_INT, &swapped);
  MPI_Type_commit(&swapped);
  const struct tcase cases[] = {
      {"MPI_INT", MPI_INT, MPI_DATATYPE_NULL, 1},
      {"MPI_DOUBLE", MPI_DOUBLE, MPI_DATATYPE_NULL, 1},
      {"MPI_DOUBLE_INT (padded)", MPI_DOUBLE_INT, MPI_DATATYPE_NULL, 1},
      {"contiguous(3, MPI_SHORT)", triple, MPI_DATATYPE_NULL, 1},
      {"contiguous(2, MPI_DOUBLE_INT)", pair_block, MPI_DATATYPE_NULL, 1},
      {"vector(2,1,3,MPI_INT) resized", strided, MPI_DATATYPE_NULL, 1},
      {"2 x MPI_INT / contiguous(2, MPI_INT) on odd ranks", MPI_INT, two_ints, 2},
      {"strided / 2 x MPI_INT on odd ranks", strided, two_ints, 1},
      {"indexed {1,0} / contiguous(2, MPI_INT) on odd ranks", swapped, two_ints, 1},
      {"2 x MPI_INT / indexed {1,0} on odd ranks", MPI_INT, swapped, 2},
  };
  const int counts[] = {0, 2, 10, 5000};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
    for (int i = 0; i < 4; ++i) every_function(&cases[k], counts[i], comm, name);
  MPI_Type_free(&triple);
  MPI_Type_free(&strided);
  MPI_Type_free(&two_ints);
  MPI_Type_free(&pair_block);
  MPI_Type_free(&swapped);
}

/* Communicators freed and made again, of other sizes. MPI may give a new one
 * the handle of a freed one; each call must still run on the transport of
 * the communicator it names (the adapter remembers the last one per
 * thread). Split rank % groups ways, a group's members are ranks k, k +
 * groups, ... */
static void remade_communicators(int rank) {
  for (int round = 0; round < 6; ++round) {
    const int groups = round % 3 + 1;
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, rank % groups, rank, &c);
    int n = 0;
    MPI_Comm_size(c, &n);
    int* got = malloc((size_t)n * sizeof(int));
    MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, c);
    for (int i = 0; i < n; ++i)
      CHECK(got[i] == rank % groups + i * groups,
            "MPI_Allgather on a communicator made in round %d: block %d holds %d, not %d", round, i,
            got[i], rank % groups + i * groups);
    free(got);
    MPI_Comm_free(&c);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  everything(MPI_COMM_WORLD, "MPI_COMM_WORLD");
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 3 == 0, rank, &half);
  everything(half, "a split communicator");
  MPI_Comm_free(&half);
  remade_communicators(rank);
  return check_finish("movement_test");
}
