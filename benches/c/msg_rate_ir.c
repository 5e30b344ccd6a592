/*
 * The per-message cost of small non-blocking messages, for instruction
 * counts (docs/ARCHITECTURE.md, "Small messages"): rank 0 sends windows
 * of 64 MPI_Isend of SIZE bytes, rank 1 posts 64 MPI_Irecv, both
 * MPI_Waitall, then rank 1 answers with 0 bytes. Run one rank under
 * callgrind with scripts/msg_rate_ir.sh.
 *
 * Arguments: SIZE (8), WINDOWS (2000), NAP: microseconds rank 1 sleeps
 * (outside MPI) before its MPI_Waitall, so that the messages are there and
 * the count is the path's, not the time spent waiting for the sender (0).
 */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

/* MPI_STATUSES_IGNORE through a variable: gcc 12 warns when it sees the
   constant (MPI_Status *)1 passed as an array parameter. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size = argc > 1 ? atoi(argv[1]) : 8, windows = argc > 2 ? atoi(argv[2]) : 2000;
    int nap = argc > 3 ? atoi(argv[3]) : 0;
    char *buf = calloc(64, size > 0 ? (size_t)size : 1);
    MPI_Request req[64];
    for (int w = 0; w < windows; w++) {
        for (int i = 0; i < 64; i++) {
            if (rank == 0)
                MPI_Isend(buf, size, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &req[i]);
            else
                MPI_Irecv(buf + (size_t)i * size, size, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &req[i]);
        }
        if (rank == 1 && nap > 0)
            usleep(nap);
        MPI_Waitall(64, req, statuses_ignore);
        if (rank == 0)
            MPI_Recv(NULL, 0, MPI_CHAR, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(NULL, 0, MPI_CHAR, 0, 8, MPI_COMM_WORLD);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
