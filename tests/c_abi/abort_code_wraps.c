/*
 * MPI_Abort with an error code whose low 8 bits are 0 (256): the process
 * must not exit with status 0. With argument `preinit` it aborts before
 * MPI_Init, else after it. Reaching the end prints "NOT ABORTED".
 */
#include "abicheck.h"

int main(int argc, char **argv)
{
    const char *when = argc > 1 ? argv[1] : "after";
    if (strcmp(when, "preinit") == 0)
        MPI_Abort(MPI_COMM_WORLD, 256);
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Abort(MPI_COMM_WORLD, 256);
    printf("NOT ABORTED\n");
    MPI_Finalize();
    return 0;
}
