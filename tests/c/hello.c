/*
 * Every rank prints "hello from R of N". Checks MPI_Get_processor_name: a
 * non-empty, NUL-terminated name whose reported length matches, the same on
 * every rank (all ranks run on one host here) and equal to gethostname().
 * Prints "PASS hello" from rank 0.
 */
#define _POSIX_C_SOURCE 200809L
#include "oxcheck.h"

#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, len = -1;
    char name[MPI_MAX_PROCESSOR_NAME];
    char host[256];
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    printf("hello from %d of %d\n", rank, size);
    fflush(stdout);

    memset(name, 'x', sizeof name);
    MPI_CHECK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "processor name length %d", len);
    CHECK(name[len] == '\0' && (int)strlen(name) == len,
          "processor name length %d does not match the string", len);
    CHECK(gethostname(host, sizeof host) == 0, "gethostname failed");
    host[sizeof host - 1] = '\0';
    CHECK(strcmp(name, host) == 0, "processor name '%s', hostname '%s'", name, host);

    char *all = oxcheck_malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    MPI_CHECK(MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; r++)
            CHECK(strcmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0,
                  "rank %d runs on '%s', rank 0 on '%s'", r, all + (size_t)r * MPI_MAX_PROCESSOR_NAME,
                  name);
    free(all);
    oxcheck_pass("hello");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
