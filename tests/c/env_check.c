/*
 * Prints environment variables, for launcher tests.
 * Usage: env_check [--mpi] NAME...
 * For each NAME prints "NAME=value" or "NAME unset", one per line, prefixed
 * with "rank R: " where R is PMI_RANK (or "?" when that is unset). With
 * --mpi the variables are read after MPI_Init, the prefix is the MPI rank,
 * and each rank prints in turn (rank order, separated by barriers).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_vars(const char *who, int argc, char **argv, int first)
{
    for (int i = first; i < argc; i++) {
        const char *v = getenv(argv[i]);
        if (v)
            printf("rank %s: %s=%s\n", who, argv[i], v);
        else
            printf("rank %s: %s unset\n", who, argv[i]);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--mpi") == 0) {
        int rank, size;
        char who[16];
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        snprintf(who, sizeof who, "%d", rank);
        for (int r = 0; r < size; r++) {
            if (r == rank)
                print_vars(who, argc, argv, 2);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Finalize();
        return 0;
    }
    const char *who = getenv("PMI_RANK");
    print_vars(who ? who : "?", argc, argv, 1);
    return 0;
}
