/*
 * Sessions without MPI_Init: MPI_Session_init, a communicator from the
 * world process set doing an allreduce (result checked exactly) and a
 * point-to-point ring, MPI_Session_finalize; MPI_Initialized and
 * MPI_Finalized stay 0 throughout.
 */
#include "abicheck.h"

int main(void)
{
    MPI_Session s;
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Group g;
    MPI_CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_create_from_group(g, "test.sessions_only", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &c));
    int size, rank;
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    int mine = 3 * rank + 1, sum = 0, want = 0;
    for (int r = 0; r < size; r++)
        want += 3 * r + 1;
    MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == want, "allreduce %d want %d", sum, want);
    int left = -1;
    MPI_CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &left, 1, MPI_INT,
                           (rank + size - 1) % size, 0, c, MPI_STATUS_IGNORE));
    CHECK(left == (rank + size - 1) % size, "ring got %d", left);
    int flag = -1;
    MPI_Initialized(&flag);
    CHECK(flag == 0, "MPI_Initialized = %d under a session only", flag);
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Group_free(&g));
    if (rank == 0)
        printf("PASS sessions_only\n");
    fflush(stdout);
    MPI_CHECK(MPI_Session_finalize(&s));
    MPI_Finalized(&flag);
    CHECK(flag == 0, "MPI_Finalized = %d after a session only", flag);
    return 0;
}
