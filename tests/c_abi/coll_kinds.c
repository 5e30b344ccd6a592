/*
 * Blocking and non-blocking collectives never match each other (MPI 4.1
 * section 6.12): one rank starts a non-blocking collective, then makes a
 * blocking one; the others make the blocking one first and start the
 * non-blocking one after it (the pattern of mpi4py's Comm.Iagree test,
 * whose fallback is MPI_Iallreduce with MPI_BAND). Each call must still
 * meet its own kind: results are checked against serial computations, and
 * the early non-blocking call cannot have completed before the blocking
 * one let the others start theirs. Prints "PASS coll_kinds" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

/* Rank `root` starts MPI_Iallreduce(BAND) before MPI_Barrier, the others
 * after it. */
static void iallreduce_around_barrier(MPI_Comm comm, int root)
{
    int in = rank == root ? 0xB : 0xD, out = -1, flag = 1;
    MPI_Request req;
    MPI_CHECK(MPI_Barrier(comm));
    if (rank == root) {
        MPI_CHECK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, comm, &req));
        MPI_CHECK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        CHECK(size == 1 || !flag, "iallreduce completed before the others started it");
        MPI_CHECK(MPI_Barrier(comm));
    } else {
        MPI_CHECK(MPI_Barrier(comm));
        MPI_CHECK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, comm, &req));
    }
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int expect = size == 1 ? 0xB : (0xB & 0xD);
    CHECK(out == expect, "root %d: band %#x, expected %#x", root, out, expect);
}

/* Rank `root` starts MPI_Ibcast, then joins a blocking MPI_Allreduce; the
 * others make the allreduce first, then start the ibcast. */
static void ibcast_around_allreduce(MPI_Comm comm, int root)
{
    int data[4], sum = -1;
    for (int i = 0; i < 4; i++)
        data[i] = rank == root ? 100 * root + i : -1;
    MPI_Request req;
    if (rank == root) {
        MPI_CHECK(MPI_Ibcast(data, 4, MPI_INT, root, comm, &req));
        MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    } else {
        MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
        MPI_CHECK(MPI_Ibcast(data, 4, MPI_INT, root, comm, &req));
    }
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(sum == size * (size - 1) / 2, "allreduce sum %d", sum);
    for (int i = 0; i < 4; i++)
        CHECK(data[i] == 100 * root + i, "ibcast from %d: data[%d] = %d", root, i, data[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    for (int round = 0; round < 3; round++)
        for (int root = 0; root < size; root++) {
            iallreduce_around_barrier(comm, root);
            ibcast_around_allreduce(comm, root);
            ibcast_around_allreduce(MPI_COMM_WORLD, root);
        }
    MPI_CHECK(MPI_Comm_free(&comm));
    MPI_Finalize();
    if (rank == 0)
        printf("PASS coll_kinds\n");
    return 0;
}
