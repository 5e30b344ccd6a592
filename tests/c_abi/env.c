/*
 * Environment: MPI_Init_thread, Initialized/Finalized before, during and
 * after, Query_thread, Is_thread_main, versions, processor name, timers,
 * rank and size of MPI_COMM_WORLD / MPI_COMM_SELF, communicator names.
 * Rank 0 prints "LIBRARY <first word of MPI_Get_library_version>" (so a
 * run shows which library it used) and "PASS env".
 */
#include "abicheck.h"

int main(int argc, char **argv)
{
    int flag = -1, provided = -1, rank, size, len;

    MPI_CHECK(MPI_Initialized(&flag));
    CHECK(flag == 0, "MPI_Initialized before MPI_Init gave %d", flag);
    MPI_CHECK(MPI_Finalized(&flag));
    CHECK(flag == 0, "MPI_Finalized before MPI_Init gave %d", flag);

    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
          "provided thread level %d", provided);
    int queried = -1;
    MPI_CHECK(MPI_Query_thread(&queried));
    CHECK(queried == provided, "MPI_Query_thread gave %d, MPI_Init_thread %d", queried, provided);
    MPI_CHECK(MPI_Is_thread_main(&flag));
    CHECK(flag == 1, "MPI_Is_thread_main on the main thread gave %d", flag);
    MPI_CHECK(MPI_Initialized(&flag));
    CHECK(flag == 1, "MPI_Initialized after MPI_Init gave %d", flag);

    int version = 0, subversion = -1;
    MPI_CHECK(MPI_Get_version(&version, &subversion));
    CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION,
          "MPI_Get_version gave %d.%d, header says %d.%d", version, subversion, MPI_VERSION,
          MPI_SUBVERSION);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && (size_t)len == strlen(lib), "library version length %d for '%s'", len, lib);
    int world_rank;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    if (world_rank == 0)
        printf("LIBRARY %.*s\n", (int)strcspn(lib, " \t"), lib);

    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_CHECK(MPI_Get_processor_name(host, &len));
    CHECK(len > 0 && (size_t)len == strlen(host) && len < MPI_MAX_PROCESSOR_NAME,
          "processor name length %d for '%s'", len, host);

    double t0 = MPI_Wtime(), tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick < 1.0, "MPI_Wtick gave %g", tick);
    double t1 = MPI_Wtime();
    CHECK(t1 >= t0, "MPI_Wtime went backwards: %f then %f", t0, t1);

    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d of %d", rank, size);
    int srank = -1, ssize = -1;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_SELF, &srank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_SELF, &ssize));
    CHECK(srank == 0 && ssize == 1, "MPI_COMM_SELF: rank %d of %d", srank, ssize);

    char name[MPI_MAX_OBJECT_NAME];
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world is named '%s' (%d)", name, len);
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "self is named '%s'", name);
    MPI_CHECK(MPI_Comm_set_name(MPI_COMM_SELF, "my self"));
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "my self") == 0 && len == 7, "renamed self is '%s' (%d)", name, len);

    /* Every rank agrees on the size and tells rank 0 its rank. */
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            int got[2];
            MPI_Status st;
            MPI_CHECK(MPI_Recv(got, 2, MPI_INT, i, 3, MPI_COMM_WORLD, &st));
            CHECK(got[0] == i && got[1] == size, "rank %d reported %d of %d", i, got[0], got[1]);
        }
    } else {
        int mine[2] = {rank, size};
        MPI_CHECK(MPI_Send(mine, 2, MPI_INT, 0, 3, MPI_COMM_WORLD));
    }

    abicheck_pass("env");
    MPI_CHECK(MPI_Finalize());
    MPI_CHECK(MPI_Finalized(&flag));
    CHECK(flag == 1, "MPI_Finalized after MPI_Finalize gave %d", flag);
    MPI_CHECK(MPI_Initialized(&flag));
    CHECK(flag == 1, "MPI_Initialized after MPI_Finalize gave %d", flag);
    return 0;
}
