/*
 * Generalized active target (post-start-complete-wait) and dynamic
 * windows: each rank exposes its window to its left neighbour and
 * accesses its right one's, several epochs in a row (puts and an
 * accumulate, checked exactly), MPI_Win_test polled until the epoch
 * ends; rank 0 exposing to everyone at once; a dynamic window with
 * regions attached at addresses from MPI_Get_address, reached by put,
 * get and accumulate, then detached.
 * Prints "PASS rma_pscw" from rank 0.
 */
#include "abicheck.h"

static MPI_Group group_of(int *ranks, int n)
{
    MPI_Group world, g;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_CHECK(MPI_Group_incl(world, n, ranks, &g));
    MPI_CHECK(MPI_Group_free(&world));
    return g;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int *mem;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &mem, &win));
    for (int i = 0; i < 16; i++)
        mem[i] = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Group to_left = group_of(&left, 1), to_right = group_of(&right, 1);
    for (int epoch = 0; epoch < 5; epoch++) {
        MPI_CHECK(MPI_Win_post(to_left, 0, win));
        MPI_CHECK(MPI_Win_start(to_right, 0, win));
        int v = rank * 10 + epoch, one = 1;
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT, right, epoch, 1, MPI_INT, win));
        MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT, right, 15, 1, MPI_INT, MPI_SUM, win));
        MPI_CHECK(MPI_Win_complete(win));
        if (epoch % 2) {
            int flag = 0;
            while (!flag)
                MPI_CHECK(MPI_Win_test(win, &flag));
        } else {
            MPI_CHECK(MPI_Win_wait(win));
        }
        CHECK(mem[epoch] == left * 10 + epoch, "epoch %d: mem = %d", epoch, mem[epoch]);
        CHECK(mem[15] == epoch + 1, "epoch %d: accumulated %d", epoch, mem[15]);
    }
    /* Rank 0 exposes to every rank; every rank adds to it. */
    int *everyone = abicheck_malloc(size * sizeof(int));
    for (int r = 0; r < size; r++)
        everyone[r] = r;
    MPI_Group all = group_of(everyone, size), zero = group_of(everyone, 1);
    if (rank == 0)
        MPI_CHECK(MPI_Win_post(all, MPI_MODE_NOSTORE, win));
    MPI_CHECK(MPI_Win_start(zero, 0, win));
    int add = rank + 1;
    MPI_CHECK(MPI_Accumulate(&add, 1, MPI_INT, 0, 14, 1, MPI_INT, MPI_SUM, win));
    MPI_CHECK(MPI_Win_complete(win));
    if (rank == 0) {
        MPI_CHECK(MPI_Win_wait(win));
        CHECK(mem[14] == size * (size + 1) / 2, "rank 0 accumulated %d", mem[14]);
    }
    MPI_CHECK(MPI_Group_free(&all));
    MPI_CHECK(MPI_Group_free(&zero));
    MPI_CHECK(MPI_Group_free(&to_left));
    MPI_CHECK(MPI_Group_free(&to_right));
    free(everyone);
    MPI_CHECK(MPI_Win_free(&win));

    /* Dynamic window: each rank attaches two regions and publishes their
       addresses; the left neighbour writes into them. */
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *a = abicheck_malloc(8 * sizeof(int));
    double *b = abicheck_malloc(4 * sizeof(double));
    for (int i = 0; i < 8; i++)
        a[i] = -1;
    for (int i = 0; i < 4; i++)
        b[i] = 0.5;
    MPI_CHECK(MPI_Win_attach(win, a, 8 * sizeof(int)));
    MPI_CHECK(MPI_Win_attach(win, b, 4 * sizeof(double)));
    MPI_Aint mine[2], theirs[2];
    MPI_CHECK(MPI_Get_address(a, &mine[0]));
    MPI_CHECK(MPI_Get_address(b, &mine[1]));
    MPI_CHECK(MPI_Sendrecv(mine, 2, MPI_AINT, left, 0, theirs, 2, MPI_AINT, right, 0,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_fence(0, win));
    int vals[8];
    for (int i = 0; i < 8; i++)
        vals[i] = rank * 100 + i;
    double dv[4] = {1.0, 2.0, 3.0, 4.0};
    MPI_CHECK(MPI_Put(vals, 8, MPI_INT, right, theirs[0], 8, MPI_INT, win));
    MPI_CHECK(MPI_Accumulate(dv, 4, MPI_DOUBLE, right, theirs[1], 4, MPI_DOUBLE, MPI_SUM, win));
    /* No fence epoch follows: the lock epoch below starts on its own. */
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < 8; i++)
        CHECK(a[i] == left * 100 + i, "dynamic a[%d] = %d", i, a[i]);
    for (int i = 0; i < 4; i++)
        CHECK(b[i] == 0.5 + i + 1, "dynamic b[%d] = %g", i, b[i]);
    int got[8];
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_CHECK(MPI_Get(got, 8, MPI_INT, right, theirs[0], 8, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock(right, win));
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == rank * 100 + i, "dynamic get [%d] = %d", i, got[i]);
    /* Every rank's get is done (unlock completes it at the target too)
       before its target detaches. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_detach(win, a));
    MPI_CHECK(MPI_Win_detach(win, b));
    MPI_CHECK(MPI_Win_free(&win));
    free(a);
    free(b);

    abicheck_pass("rma_pscw");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
