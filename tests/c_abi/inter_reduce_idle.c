/*
 * MPI_Reduce / MPI_Ireduce on an intercommunicator: in the root's group,
 * the ranks other than the root pass MPI_PROC_NULL, and for them only
 * `root` and `comm` are significant. mpi4py passes NULL buffers, count 0
 * and MPI_BYTE with the reduction's operation (MPI_SUM, MPI_PROD on a byte
 * is no valid pair): the call must still succeed and the reduction reach
 * the root (whose sendbuf is not significant; MPICH 4.0.2 still rejects
 * NULL there, so it passes one). Groups: ranks below size/2 (they send) and the others (at 3
 * ranks and more, at least two: a root and an idle rank), every rank of
 * which is the root in turn. Prints "PASS inter_reduce_idle" from rank 0.
 */
#include "abicheck.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2) {
        int half = size / 2, color = rank < half ? 0 : 1;
        MPI_Comm local, inter;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, 0, &local));
        MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? half : 0, 7, &inter));
        int lrank;
        MPI_CHECK(MPI_Comm_rank(inter, &lrank));
        MPI_Op ops[2] = {MPI_SUM, MPI_PROD};
        for (int blocking = 0; blocking < 2; blocking++)
            for (int k = 0; k < 2; k++)
                for (int root = 0; root < size - half; root++) {
                    MPI_Request req = MPI_REQUEST_NULL;
                    int data[3], out[3] = {-1, -1, -1}, expect[3];
                    for (int i = 0; i < 3; i++) {
                        data[i] = rank + i + 1;
                        expect[i] = k == 0 ? 0 : 1;
                        for (int r = 0; r < half; r++)
                            expect[i] = k == 0 ? expect[i] + r + i + 1 : expect[i] * (r + i + 1);
                    }
                    if (color == 0) {
                        /* The lower group sends to `root` of the other. */
                        if (blocking)
                            MPI_CHECK(MPI_Reduce(data, NULL, 3, MPI_INT, ops[k], root, inter));
                        else
                            MPI_CHECK(MPI_Ireduce(data, NULL, 3, MPI_INT, ops[k], root, inter,
                                                  &req));
                    } else if (lrank == root) {
                        if (blocking)
                            MPI_CHECK(MPI_Reduce(data, out, 3, MPI_INT, ops[k], MPI_ROOT, inter));
                        else
                            MPI_CHECK(MPI_Ireduce(data, out, 3, MPI_INT, ops[k], MPI_ROOT, inter,
                                                  &req));
                    } else {
                        if (blocking)
                            MPI_CHECK(MPI_Reduce(NULL, NULL, 0, MPI_BYTE, ops[k], MPI_PROC_NULL,
                                                 inter));
                        else
                            MPI_CHECK(MPI_Ireduce(NULL, NULL, 0, MPI_BYTE, ops[k], MPI_PROC_NULL,
                                                  inter, &req));
                    }
                    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
                    if (color == 1 && lrank == root)
                        for (int i = 0; i < 3; i++)
                            CHECK(out[i] == expect[i], "root %d op %d: out[%d] = %d, expected %d",
                                  root, k, i, out[i], expect[i]);
                }
        MPI_CHECK(MPI_Comm_free(&inter));
        MPI_CHECK(MPI_Comm_free(&local));
    }
    MPI_Finalize();
    if (rank == 0)
        printf("PASS inter_reduce_idle\n");
    return 0;
}
