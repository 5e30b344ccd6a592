/*
 * MPI_Abort propagation. Usage: abort [RANK]  (default: the last rank).
 * After a barrier, RANK calls MPI_Abort(MPI_COMM_WORLD, 7) while every other
 * rank blocks in a receive that is never matched. Expected: the whole job
 * ends with exit code 7. Any other ending of the program is a failure: a
 * rank whose receive completes exits with 3.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, buf = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int victim = argc > 1 ? atoi(argv[1]) : size - 1;
    if (victim < 0 || victim >= size) {
        if (rank == 0)
            fprintf(stderr, "abort: rank %d out of range for %d ranks\n", victim, size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim) {
        fprintf(stderr, "abort: rank %d calls MPI_Abort(MPI_COMM_WORLD, 7)\n", rank);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 7);
        fprintf(stderr, "abort: MPI_Abort returned on rank %d\n", rank);
        return 4;
    }
    MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "abort: rank %d received a message nobody sent\n", rank);
    return 3;
}
