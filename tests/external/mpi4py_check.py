"""mpi4py (PyPI wheel, MPICH flavour) on OxMPI: NumPy buffers through
point-to-point, broadcast, allreduce and a split communicator, plus
pickled objects and a derived datatype. Run under `oxrun -n 4`; every
rank checks its results and rank 0 prints "PASS mpi4py".

A section that hits a function OxMPI does not implement
(MPI_ERR_UNSUPPORTED_OPERATION, raised alike on every rank) is reported on
stderr and the others still run, so one run lists everything missing; the
script then fails."""
import sys

from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def check(cond, what):
    if not cond:
        sys.stderr.write(f"FAIL rank {rank}: {what}\n")
        sys.stderr.flush()
        comm.Abort(1)


check("OxMPI" in MPI.Get_library_version(), "not running on OxMPI: " + MPI.Get_library_version())
check(".mpich." in MPI.__file__, "mpi4py did not pick its MPICH flavour: " + MPI.__file__)


nxt, prv = (rank + 1) % size, (rank - 1) % size


def section_0():
    """Point-to-point with NumPy buffers: a ring."""
    out = np.arange(1000, dtype=np.float64) + rank
    got = np.empty(1000, dtype=np.float64)
    req = comm.Irecv(got, source=prv, tag=7)
    comm.Send(out, dest=nxt, tag=7)
    st = MPI.Status()
    req.Wait(st)
    check(np.array_equal(got, np.arange(1000) + prv), "ring Send/Irecv")
    check(st.Get_source() == prv and st.Get_count(MPI.DOUBLE) == 1000, "ring status")


def section_1():
    """Blocking Recv with a wildcard, and pickled objects."""
    if rank == 0:
        for _ in range(size - 1):
            s = MPI.Status()
            msg = comm.recv(source=MPI.ANY_SOURCE, tag=3, status=s)
            check(msg == {"from": s.Get_source(), "squares": [i * i for i in range(s.Get_source())]},
                  f"pickled message {msg}")
    else:
        comm.send({"from": rank, "squares": [i * i for i in range(rank)]}, dest=0, tag=3)


def section_2():
    """Broadcast of an array from the last rank."""
    b = np.zeros(257, dtype=np.int32)
    if rank == size - 1:
        b[:] = np.arange(257) * 3
    comm.Bcast(b, root=size - 1)
    check(np.array_equal(b, np.arange(257) * 3), "Bcast")


def section_3():
    """Allreduce of arrays (sum and max) and of a Python object."""
    x = np.full(100, rank + 1, dtype=np.float64)
    y = np.empty_like(x)
    comm.Allreduce(x, y, op=MPI.SUM)
    check(np.all(y == size * (size + 1) / 2), f"Allreduce SUM gave {y[:3]}")
    comm.Allreduce(np.array([rank], dtype=np.int64), z := np.zeros(1, dtype=np.int64), op=MPI.MAX)
    check(z[0] == size - 1, "Allreduce MAX")
    check(comm.allreduce(rank, op=MPI.SUM) == size * (size - 1) // 2, "allreduce of objects")


def section_4():
    """Split into even and odd ranks; reduce within each half."""
    sub = comm.Split(color=rank % 2, key=-rank)
    members = [r for r in range(size) if r % 2 == rank % 2]
    check(sub.Get_size() == len(members), "split size")
    check(sub.Get_rank() == sorted(members, reverse=True).index(rank), "split rank (by key)")
    s = np.zeros(1, dtype=np.int64)
    sub.Allreduce(np.array([rank], dtype=np.int64), s, op=MPI.SUM)
    check(s[0] == sum(members), "Allreduce on the split communicator")
    sub.Free()


def section_5():
    """A derived datatype: every other element."""
    vec = MPI.DOUBLE.Create_vector(4, 1, 2).Commit()
    src = np.arange(8, dtype=np.float64) + 10 * rank
    dst = np.zeros(4, dtype=np.float64)
    comm.Sendrecv([src, 1, vec], dest=nxt, recvbuf=[dst, 4, MPI.DOUBLE], source=prv)
    check(np.array_equal(dst, np.arange(0, 8, 2) + 10 * prv), "vector datatype")
    vec.Free()

missing = []
for section in [section_0, section_1, section_2, section_3, section_4, section_5]:
    try:
        section()
    except MPI.Exception as e:
        if e.Get_error_class() != MPI.ERR_UNSUPPORTED_OPERATION:
            raise
        missing.append(e.Get_error_string())
        sys.stderr.write(f"rank {rank}: {section.__doc__ or section.__name__}: {e.Get_error_string()}\n")
if missing:
    comm.Barrier()
    sys.exit(1)

comm.Barrier()
if rank == 0:
    print("PASS mpi4py", flush=True)
