"""An unmodified mpi4py program: Allreduce, Bcast, Allgather and Alltoall on
NumPy arrays (and a non-commutative user operation), then their nonblocking
forms (Iallreduce, Ibcast, Iallgather, Ialltoall, Iscan, Igather) completed
through mpi4py's Request.Wait, Request.Waitall, Request.Testall and
Request.Waitany beside point-to-point requests, each checked against NumPy.
Run under mpiexec with libtopocoll_pmpi.so preloaded (preloaded.cmake)."""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, p = comm.Get_rank(), comm.Get_size()
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAILED on rank {rank}: {what}", file=sys.stderr, flush=True)


def inputs(r, n=1000, dtype=np.float64):
    return (np.arange(n) * (r + 1) % 97).astype(dtype)


everyone = [inputs(r) for r in range(p)]

out = np.empty(1000)
comm.Allreduce(inputs(rank), out, op=MPI.SUM)
check(np.array_equal(out, np.sum(everyone, axis=0)), "Allreduce SUM float64")

ints = inputs(rank, 333, np.int32)
comm.Allreduce(MPI.IN_PLACE, ints, op=MPI.MAX)
check(np.array_equal(ints, np.max([inputs(r, 333, np.int32) for r in range(p)], axis=0)),
      "Allreduce MAX int32 in place")

# A non-commutative user operation (mpi4py's Op.Create, a C callback through
# MPI_Op_create): x op y = x, so every rank gets rank 0's array.
def keep_lower(inbuf, inoutbuf, datatype):
    np.frombuffer(inoutbuf, dtype=np.float64)[:] = np.frombuffer(inbuf, dtype=np.float64)


lower = MPI.Op.Create(keep_lower, commute=False)
comm.Allreduce(inputs(rank, 64) + rank, out[:64], op=lower)
check(np.array_equal(out[:64], inputs(0, 64)), "Allreduce with a non-commutative user op")
lower.Free()

root = p - 1
b = inputs(7, 5000, np.int64) if rank == root else np.zeros(5000, np.int64)
comm.Bcast(b, root=root)
check(np.array_equal(b, inputs(7, 5000, np.int64)), "Bcast int64 from the last rank")

mine = inputs(rank, 100, np.float32)
gathered = np.empty((p, 100), np.float32)
comm.Allgather(mine, gathered)
check(np.array_equal(gathered, np.array([inputs(r, 100, np.float32) for r in range(p)])),
      "Allgather float32")

send = np.array([[rank * 1000 + j * 10 + k for k in range(7)] for j in range(p)], np.int32)
recv = np.empty_like(send)
comm.Alltoall(send, recv)
want = np.array([[i * 1000 + rank * 10 + k for k in range(7)] for i in range(p)], np.int32)
check(np.array_equal(recv, want), "Alltoall int32")

# The nonblocking forms, several outstanding at once, completed in a mixed
# array with a point-to-point pair to the neighbours.
a = inputs(rank, 1000)
summed, scanned = np.empty(1000), np.empty(1000)
bb = inputs(3, 777, np.int64) if rank == 0 else np.zeros(777, np.int64)
gathered = np.empty((p, 100), np.float32)
right, left = (rank + 1) % p, (rank - 1) % p
token, got = np.array([rank], np.int32), np.empty(1, np.int32)
requests = [comm.Iallreduce(a, summed, op=MPI.SUM), comm.Isend(token, right, tag=5),
            comm.Ibcast(bb, root=0), comm.Irecv(got, left, tag=5),
            comm.Iscan(a, scanned, op=MPI.SUM), comm.Iallgather(mine, gathered)]
MPI.Request.Waitall(requests)
check(np.array_equal(summed, np.sum(everyone, axis=0)), "Iallreduce SUM float64")
check(np.array_equal(bb, inputs(3, 777, np.int64)), "Ibcast int64")
check(np.array_equal(scanned, np.sum(everyone[:rank + 1], axis=0)), "Iscan SUM float64")
check(np.array_equal(gathered, np.array([inputs(r, 100, np.float32) for r in range(p)])),
      "Iallgather float32")
check(got[0] == left, "Irecv beside the nonblocking collectives")

recv = np.empty_like(send)
r = comm.Ialltoall(send, recv)
while not r.Test():
    pass
check(np.array_equal(recv, want), "Ialltoall int32, completed by Test")

ints = inputs(rank, 333, np.int32)
at_root = np.empty((p, 333), np.int32) if rank == root else None
pending = [comm.Igather(ints, at_root, root=root), comm.Iallreduce(MPI.IN_PLACE, ints, op=MPI.MAX)]
while MPI.Request.Waitany(pending) != MPI.UNDEFINED:
    pass
if rank == root:
    check(np.array_equal(at_root, np.array([inputs(r, 333, np.int32) for r in range(p)])),
          "Igather int32")
check(np.array_equal(ints, np.max([inputs(r, 333, np.int32) for r in range(p)], axis=0)),
      "Iallreduce MAX int32 in place, completed by Waitany")

total = comm.allreduce(len(failures))
if rank == 0:
    print("mpi4py_check: ok" if total == 0 else f"mpi4py_check: {total} FAILED checks", flush=True)
