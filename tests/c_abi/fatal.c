/*
 * MPI_ERRORS_ARE_FATAL, the default: an invalid call ends the job. With
 * argument `rank` the program sends to a rank that does not exist; with
 * `comm` it uses MPI_COMM_NULL. Reaching the end is a failure: it prints
 * "NOT FATAL" and exits with 0 only so the harness can tell the cases apart.
 */
#include "abicheck.h"

int main(int argc, char **argv)
{
    int size, x = 0;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *what = argc > 1 ? argv[1] : "rank";
    if (strcmp(what, "comm") == 0)
        MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    else
        MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    printf("NOT FATAL\n");
    MPI_Finalize();
    return 0;
}
