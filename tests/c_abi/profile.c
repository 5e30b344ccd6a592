/*
 * The profiling interface: this program defines its own MPI_Send and
 * MPI_Recv, which count calls and forward to PMPI_Send / PMPI_Recv. The
 * program's definitions must win over the library's (weak) ones, and the
 * library must not route its other functions (Sendrecv, Isend, Barrier)
 * through them. Prints "PASS profile" from rank 0.
 */
#include "abicheck.h"

static int sends, recvs;

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    recvs++;
    return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    enum { ROUNDS = 5 };
    for (int i = 0; i < ROUNDS; i++) {
        int x = rank * 10 + i, y = -1;
        MPI_Request r;
        MPI_CHECK(MPI_Irecv(&y, 1, MPI_INT, from, i, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Send(&x, 1, MPI_INT, to, i, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(y == from * 10 + i, "round %d got %d", i, y);
    }
    int a = rank, b = -1;
    MPI_CHECK(MPI_Sendrecv(&a, 1, MPI_INT, to, 99, &b, 1, MPI_INT, from, 99, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    MPI_Request r;
    MPI_CHECK(MPI_Isend(&a, 1, MPI_INT, to, 98, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Recv(&b, 1, MPI_INT, from, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(sends == ROUNDS && recvs == 1, "intercepted %d sends and %d receives, expected %d and 1",
          sends, recvs, ROUNDS);
    abicheck_pass("profile");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
