/*
 * One-sided errors under MPI_ERRORS_RETURN on the window: a target
 * displacement outside the window (MPI_ERR_RMA_RANGE), operations and
 * unlocks outside an epoch (MPI_ERR_RMA_SYNC), locking a rank twice,
 * a bad lock type (MPI_ERR_LOCKTYPE), MPI_WIN_NULL (MPI_ERR_WIN),
 * shared_query on a window that is not shared (MPI_ERR_RMA_FLAVOR),
 * a negative MPI_Alloc_mem size; and a user error handler of the window
 * called with the window's handle. The window still works afterwards.
 * Prints "PASS rma_errors" from rank 0.
 */
#include "abicheck.h"

static int calls = 0;
static MPI_Win seen_win = MPI_WIN_NULL;
static int seen_code = 0;

static void on_error(MPI_Win *win, int *code, ...)
{
    calls++;
    seen_win = *win;
    seen_code = *code;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    int *mem;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                               &win));
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "a new window's handler is not MPI_ERRORS_ARE_FATAL");
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int right = (rank + 1) % size, v = 1;

    /* Outside any epoch. */
    EXPECT_CLASS(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);

    /* Lock errors (MPICH 4.0.2 reports a bad lock type as MPI_ERR_ARG;
       the standard's class is MPI_ERR_LOCKTYPE, which OxMPI reports). */
    int locktype_class = abicheck_is_oxmpi() ? MPI_ERR_LOCKTYPE : MPI_ERR_ARG;
    EXPECT_CLASS(MPI_Win_lock(12345, right, 0, win), locktype_class);
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    /* Displacements outside the target's 4 ints (MPICH 4.0.2 does not
       check them for targets on its node: OxMPI only). */
    if (abicheck_is_oxmpi()) {
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_INT, right, 4, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
        int four[4] = {0};
        EXPECT_CLASS(MPI_Get(four, 2, MPI_INT, right, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
        EXPECT_CLASS(MPI_Accumulate(&v, 1, MPI_INT, right, 100, 1, MPI_INT, MPI_SUM, win),
                     MPI_ERR_RMA_RANGE);
    }
    /* In range works. */
    MPI_CHECK(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Win_unlock(right, win));
    /* Closed again: operations and flushes to that target are refused
       (OxMPI only: MPICH 4.0.2 does not check every one). */
    if (abicheck_is_oxmpi()) {
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Get(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
        MPI_CHECK(MPI_Win_lock_all(0, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        MPI_CHECK(MPI_Win_unlock_all(win));
        EXPECT_CLASS(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
        MPI_CHECK(MPI_Win_fence(0, win));
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win));
        EXPECT_CLASS(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC); /* fence is not passive */
        MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    }

    /* The window's own user handler gets the window. */
    MPI_Errhandler mine;
    MPI_CHECK(MPI_Win_create_errhandler(on_error, &mine));
    MPI_CHECK(MPI_Win_set_errhandler(win, mine));
    int rc = MPI_Win_lock(12345, right, 0, win);
    CHECK(rc != MPI_SUCCESS && calls == 1 && seen_win == win && seen_code == rc,
          "user handler: calls %d, code %d vs %d", calls, seen_code, rc);
    MPI_CHECK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(calls == 2 && seen_code == MPI_ERR_OTHER, "MPI_Win_call_errhandler: %d calls", calls);
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Errhandler_free(&mine));

    /* Not a shared window. */
    MPI_Aint qs;
    int qu;
    int *qb;
    if (abicheck_is_oxmpi()) {
        /* MPICH answers for allocate windows on one node too; OxMPI also
           does for allocate, but not for create windows. */
        int *plain = abicheck_malloc(sizeof(int));
        MPI_Win w2;
        MPI_CHECK(MPI_Win_create(plain, sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w2));
        MPI_CHECK(MPI_Win_set_errhandler(w2, MPI_ERRORS_RETURN));
        EXPECT_CLASS(MPI_Win_shared_query(w2, 0, &qs, &qu, &qb), MPI_ERR_RMA_FLAVOR);
        /* Without an epoch. */
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w2), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Rput(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w2, &(MPI_Request){0}),
                     MPI_ERR_RMA_SYNC);
        MPI_Win stale = w2;
        MPI_CHECK(MPI_Win_free(&w2));
        /* A freed window's handle (raised on MPI_COMM_WORLD: it returns). */
        EXPECT_CLASS(MPI_Win_fence(0, stale), MPI_ERR_WIN);
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, stale), MPI_ERR_WIN);
        free(plain);
        /* Not memory from MPI_Alloc_mem. */
        EXPECT_CLASS(MPI_Free_mem(&v), MPI_ERR_BASE);
    }

    /* MPI_WIN_NULL (raised on MPI_COMM_WORLD, which returns). */
    EXPECT_CLASS(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_lock_all(0, MPI_WIN_NULL), MPI_ERR_WIN);
    void *p = NULL;
    rc = MPI_Alloc_mem(-8, MPI_INFO_NULL, &p);
    CHECK(rc != MPI_SUCCESS, "MPI_Alloc_mem(-8) succeeded");

    /* The window still works. */
    MPI_CHECK(MPI_Win_fence(0, win));
    MPI_CHECK(MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    int left = (rank + size - 1) % size;
    CHECK(mem[0] == left && mem[3] == 1, "after errors: %d %d", mem[0], mem[3]);
    MPI_CHECK(MPI_Win_free(&win));
    abicheck_pass("rma_errors");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
