/* A program's own point-to-point traffic interleaved with collectives the
 * adapter serves on the same communicator: messages sent before the
 * collectives and received after them with MPI_ANY_SOURCE / MPI_ANY_TAG,
 * wildcard receives posted before the collectives and completed after, tags
 * over the whole range. None may match an adapter message, and none of the
 * adapter's may be taken by them. */
#include "pmpi_check.h"

#define N 64

static int tag_of(int from, int to, int round, int tag_ub) {
  return (int)(((long)round * 7919 + from * 131 + to) % ((long)tag_ub + 1));
}

/* The collectives the adapter serves, checked. */
static void collectives(MPI_Comm comm, int round) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  double x[N], sum[N], all[N * 64];
  for (int i = 0; i < N; ++i) x[i] = rank + i + round;
  MPI_Allreduce(x, sum, N, MPI_DOUBLE, MPI_SUM, comm);
  for (int i = 0; i < N; ++i)
    CHECK(sum[i] == (double)p * (i + round) + p * (p - 1) / 2.0, "allreduce round %d", round);
  int b[N];
  for (int i = 0; i < N; ++i) b[i] = rank == p - 1 ? i * 3 + round : -1;
  MPI_Bcast(b, N, MPI_INT, p - 1, comm);
  for (int i = 0; i < N; ++i) CHECK(b[i] == i * 3 + round, "bcast round %d", round);
  MPI_Allgather(x, N, MPI_DOUBLE, all, N, MPI_DOUBLE, comm);
  for (int j = 0; j < p; ++j) CHECK(all[j * N + 5] == j + 5 + round, "allgather round %d", round);
  MPI_Alltoall(MPI_IN_PLACE, N, MPI_DOUBLE, all, N, MPI_DOUBLE, comm);
  for (int j = 0; j < p; ++j) CHECK(all[j * N + 5] == rank + 5 + round, "alltoall round %d", round);
}

enum order { RECEIVES_FIRST, SENDS_FIRST };

/* RECEIVES_FIRST: wildcard receives are posted before the collectives and
 * matched by sends after them; SENDS_FIRST: the messages are sent before the
 * collectives (unexpected at their destinations) and received by wildcard
 * after. Either way a collective message taken by the program, or a program
 * message taken by a collective, fails a check or hangs. */
static void one_round(MPI_Comm comm, int round, enum order order) {
  int p, rank, ub_flag = 0, *ub = NULL;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &ub_flag);
  const int tag_ub = ub_flag ? *ub : 32767;
  int out[64][3], in[64][3];
  MPI_Request sends[64], recvs[64];
  MPI_Status st[64];
  int ns = 0, nr = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const int receiving = (pass == 0) == (order == RECEIVES_FIRST);
    if (pass == 1) collectives(comm, round);
    for (int j = 0; j < p; ++j) {
      if (j == rank) continue;
      if (receiving) {
        MPI_Irecv(in[nr], 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &recvs[nr]);
        ++nr;
      } else {
        out[ns][0] = rank, out[ns][1] = round, out[ns][2] = tag_of(rank, j, round, tag_ub);
        MPI_Isend(out[ns], 3, MPI_INT, j, out[ns][2], comm, &sends[ns]);
        ++ns;
      }
    }
  }
  MPI_Waitall(nr, recvs, st);
  MPI_Waitall(ns, sends, MPI_STATUSES_IGNORE);
  for (int j = 0; j < nr; ++j)
    CHECK(in[j][0] == st[j].MPI_SOURCE && in[j][1] == round && in[j][2] == st[j].MPI_TAG &&
              st[j].MPI_TAG == tag_of(st[j].MPI_SOURCE, rank, round, tag_ub),
          "round %d: a wildcard receive got (%d, %d, %d) with tag %d from %d", round, in[j][0],
          in[j][1], in[j][2], st[j].MPI_TAG, st[j].MPI_SOURCE);
  int flag = 1;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
  CHECK(!flag, "a message is left over on the communicator after round %d", round);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p > 64) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (int round = 0; round < 20; ++round) {
    one_round(MPI_COMM_WORLD, round, round % 2 ? SENDS_FIRST : RECEIVES_FIRST);
    one_round(dup, round, round % 2 ? RECEIVES_FIRST : SENDS_FIRST); /* a transport of its own */
  }
  MPI_Comm_free(&dup);
  return check_finish("mixed_test");
}
