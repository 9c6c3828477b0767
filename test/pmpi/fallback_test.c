/* Calls the adapter leaves to MPI (an inter-communicator, a user operation
 * on a non-contiguous datatype, MPI_Reduce_scatter with uneven counts, and
 * their nonblocking forms beside a served one) still give MPI's results, and
 * the same decision is taken on every rank (else this would hang). */
#include "pmpi_check.h"

/* A user operation on vector(4, 1, 2, MPI_INT): MPI hands it the items in
 * their own layout. */
static void add_strided(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int k = 0; k < *len; ++k)
    for (int i = 0; i < 8; i += 2) ((int*)inout)[8 * k + i] += ((int*)in)[8 * k + i];
}

/* One item of vector(4, 1, 2, MPI_INT) summed by add_strided: the
 * datatype, the operation, and the buffers. */
struct strided {
  MPI_Datatype type;
  MPI_Op add;
  int in[8], out[8];
};

static void strided_begin(struct strided* s) {
  MPI_Type_vector(4, 1, 2, MPI_INT, &s->type);
  MPI_Type_commit(&s->type);
  MPI_Op_create(add_strided, 1, &s->add);
  for (int i = 0; i < 8; ++i) s->in[i] = i + 1, s->out[i] = 0;
}

static void strided_end(struct strided* s, const char* what) {
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (int i = 0; i < 8; ++i)
    CHECK(s->out[i] == (i % 2 == 0 ? p * (i + 1) : 0), "%s out[%d] = %d", what, i, s->out[i]);
  MPI_Op_free(&s->add);
  MPI_Type_free(&s->type);
}

/* MPI_Reduce_scatter with recvcounts 1, 2, ..., p of the sums of 0, 1, ...:
 * the counts, the input and the output. */
struct uneven {
  int counts[64], out[64];
  int* in;
};

static void uneven_begin(struct uneven* u) {
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int total = 0;
  for (int j = 0; j < p; ++j) total += u->counts[j] = j + 1;
  u->in = malloc(sizeof(int) * (size_t)total);
  for (int i = 0; i < total; ++i) u->in[i] = i;
}

static void uneven_end(struct uneven* u, const char* what) {
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int first = rank * (rank + 1) / 2;
  for (int i = 0; i <= rank; ++i) CHECK(u->out[i] == p * (first + i), "%s out[%d]", what, i);
  free(u->in);
}

static void non_contiguous_reduction(void) {
  struct strided s;
  strided_begin(&s);
  MPI_Allreduce(s.in, s.out, 1, s.type, s.add, MPI_COMM_WORLD);
  strided_end(&s, "vector allreduce");
}

static void uneven_reduce_scatter(void) {
  struct uneven u;
  uneven_begin(&u);
  MPI_Reduce_scatter(u.in, u.out, u.counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  uneven_end(&u, "reduce_scatter");
}

static void inter_communicator(void) {
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (p < 2) return;
  MPI_Comm half, inter;
  const int color = rank < p / 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? p / 2 : 0, 99, &inter);
  int remote;
  MPI_Comm_remote_size(inter, &remote);
  int mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter); /* the other group's sum */
  int want = 0;
  for (int r = color ? p / 2 : 0; r < (color ? p : p / 2); ++r) want += r + 1;
  CHECK(sum == want, "inter-communicator allreduce gives %d, want %d", sum, want);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

/* The nonblocking forms: an MPI_Ireduce_scatter with uneven counts and an
 * MPI_Iallreduce on a non-contiguous datatype go to MPI (its own nonblocking
 * collectives), an MPI_Iallreduce of ints between them is served; one
 * MPI_Waitall completes the three on the same communicator. */
static void nonblocking_beside_native(void) {
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  struct uneven u;
  struct strided s;
  uneven_begin(&u);
  strided_begin(&s);
  int one = 1, n = 0;
  MPI_Request r[3];
  MPI_Ireduce_scatter(u.in, u.out, u.counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
  MPI_Iallreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
  MPI_Iallreduce(s.in, s.out, 1, s.type, s.add, MPI_COMM_WORLD, &r[2]);
  MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
  uneven_end(&u, "ireduce_scatter");
  CHECK(n == p, "iallreduce between fallbacks gives %d, want %d", n, p);
  strided_end(&s, "vector iallreduce");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p > 64) MPI_Abort(MPI_COMM_WORLD, 2);
  non_contiguous_reduction();
  uneven_reduce_scatter();
  inter_communicator();
  nonblocking_beside_native();
  int one = 1, n = 0;
  MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* served */
  CHECK(n == p, "allreduce %d", n);
  return check_finish("fallback_test");
}
