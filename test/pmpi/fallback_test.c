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

static void non_contiguous_reduction(void) {
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Datatype every_other;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int in[8], out[8] = {0};
  for (int i = 0; i < 8; ++i) in[i] = i + 1;
  MPI_Op add;
  MPI_Op_create(add_strided, 1, &add);
  MPI_Allreduce(in, out, 1, every_other, add, MPI_COMM_WORLD);
  MPI_Op_free(&add);
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == (i % 2 == 0 ? p * (i + 1) : 0), "vector allreduce out[%d] = %d", i, out[i]);
  MPI_Type_free(&every_other);
}

static void uneven_reduce_scatter(void) {
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int counts[64], total = 0;
  for (int j = 0; j < p; ++j) total += counts[j] = j + 1;
  int* in = malloc(sizeof(int) * (size_t)total);
  int out[64];
  for (int i = 0; i < total; ++i) in[i] = i;
  MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int first = rank * (rank + 1) / 2;
  for (int i = 0; i <= rank; ++i) CHECK(out[i] == p * (first + i), "reduce_scatter out[%d]", i);
  free(in);
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
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int counts[64], total = 0;
  for (int j = 0; j < p; ++j) total += counts[j] = j + 1;
  int* in = malloc(sizeof(int) * (size_t)total);
  int out[64];
  for (int i = 0; i < total; ++i) in[i] = i;
  MPI_Datatype every_other;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Op add;
  MPI_Op_create(add_strided, 1, &add);
  int v_in[8], v_out[8] = {0}, one = 1, n = 0;
  for (int i = 0; i < 8; ++i) v_in[i] = i + 1;
  MPI_Request r[3];
  MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
  MPI_Iallreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
  MPI_Iallreduce(v_in, v_out, 1, every_other, add, MPI_COMM_WORLD, &r[2]);
  MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
  const int first = rank * (rank + 1) / 2;
  for (int i = 0; i <= rank; ++i) CHECK(out[i] == p * (first + i), "ireduce_scatter out[%d]", i);
  CHECK(n == p, "iallreduce between fallbacks gives %d, want %d", n, p);
  for (int i = 0; i < 8; ++i)
    CHECK(v_out[i] == (i % 2 == 0 ? p * (i + 1) : 0), "vector iallreduce out[%d] = %d", i,
          v_out[i]);
  MPI_Op_free(&add);
  MPI_Type_free(&every_other);
  free(in);
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
