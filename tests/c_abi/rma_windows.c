/*
 * One-sided communication, windows: MPI_Alloc_mem / MPI_Free_mem; every
 * window flavor (create over user memory and over MPI_Alloc_mem memory,
 * allocate, allocate_shared, create_dynamic) with its attributes
 * (MPI_WIN_BASE, SIZE, DISP_UNIT, CREATE_FLAVOR, MODEL), group, name and
 * info, user keyvals (set, get, replace, delete, free: delete callbacks);
 * MPI_Win_shared_query on a contiguous shared window (rank i's
 * memory right after rank i-1's) and direct load/store into a
 * neighbour's memory; MPI_Win_free resets the handle.
 * Prints "PASS rma_windows" from rank 0.
 */
#include "abicheck.h"

static void check_attrs(MPI_Win win, void *base, MPI_Aint size, int disp_unit, int flavor)
{
    void *got_base = NULL;
    MPI_Aint *got_size = NULL;
    int *got_unit = NULL, *got_flavor = NULL, *got_model = NULL, flag = 0;
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &got_base, &flag));
    /* A window without memory may report any base (MPICH: NULL). */
    CHECK(flag && (got_base == base || size == 0), "MPI_WIN_BASE %p, expected %p", got_base, base);
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &got_size, &flag));
    CHECK(flag && *got_size == size, "MPI_WIN_SIZE %ld, expected %ld", (long)*got_size, (long)size);
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &got_unit, &flag));
    CHECK(flag && *got_unit == disp_unit, "MPI_WIN_DISP_UNIT %d, expected %d", *got_unit, disp_unit);
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &got_flavor, &flag));
    CHECK(flag && *got_flavor == flavor, "MPI_WIN_CREATE_FLAVOR %d, expected %d", *got_flavor, flavor);
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &got_model, &flag));
    CHECK(flag && *got_model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL %d", *got_model);
}

static int deleted = 0;
static void *deleted_value = NULL;

static int on_delete(MPI_Win win, int keyval, void *value, void *extra)
{
    (void)win;
    (void)keyval;
    CHECK(*(int *)extra == 42, "delete callback got extra_state %d", *(int *)extra);
    deleted++;
    deleted_value = value;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* Alloc_mem: usable memory, freed by Free_mem. */
    double *mem = NULL;
    MPI_CHECK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem));
    CHECK(mem != NULL, "MPI_Alloc_mem gave NULL");
    for (int i = 0; i < 1000; i++)
        mem[i] = i + rank;
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "64"));
    char *small = NULL;
    MPI_CHECK(MPI_Alloc_mem(10, info, &small));
    memset(small, 1, 10);
    MPI_CHECK(MPI_Free_mem(small));

    /* create over MPI_Alloc_mem memory */
    MPI_Win win;
    MPI_CHECK(MPI_Win_create(mem, 1000 * sizeof(double), sizeof(double), info, MPI_COMM_WORLD, &win));
    check_attrs(win, mem, 1000 * sizeof(double), sizeof(double), MPI_WIN_FLAVOR_CREATE);
    MPI_Group wg, worldg;
    int cmp;
    MPI_CHECK(MPI_Win_get_group(win, &wg));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &worldg));
    MPI_CHECK(MPI_Group_compare(wg, worldg, &cmp));
    CHECK(cmp == MPI_IDENT, "window group compares %d to the world's", cmp);
    MPI_CHECK(MPI_Group_free(&wg));
    MPI_CHECK(MPI_Win_set_name(win, "counters"));
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 8 && strcmp(name, "counters") == 0, "window name '%s'", name);
    /* User keyvals: set, get, replace (delete callback), delete, and the
       delete callback once more when the window is freed. */
    static int extra = 42;
    int key;
    MPI_CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, on_delete, &key, &extra));
    int a = 1, b = 2, c = 3, flag = 0;
    int *got = NULL;
    MPI_CHECK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(!flag, "an attribute before any was set");
    MPI_CHECK(MPI_Win_set_attr(win, key, &a));
    MPI_CHECK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &a, "attribute %p, expected %p", (void *)got, (void *)&a);
    MPI_CHECK(MPI_Win_set_attr(win, key, &b));
    CHECK(deleted == 1 && deleted_value == &a, "replacing: %d deletes", deleted);
    MPI_CHECK(MPI_Win_delete_attr(win, key));
    CHECK(deleted == 2 && deleted_value == &b, "deleting: %d deletes", deleted);
    MPI_CHECK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(!flag, "the attribute is still there after MPI_Win_delete_attr");
    MPI_CHECK(MPI_Win_set_attr(win, key, &c));
    MPI_CHECK(MPI_Win_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval did not reset the keyval");
    MPI_Info used;
    MPI_CHECK(MPI_Win_get_info(win, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Win_get_info gave MPI_INFO_NULL");
    char value[MPI_MAX_INFO_VAL + 1];
    int found = 0;
    MPI_CHECK(MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL, value, &found));
    CHECK(found && strcmp(value, "false") == 0, "no_locks hint: found %d '%s'", found,
          found ? value : "");
    MPI_CHECK(MPI_Info_free(&used));
    MPI_CHECK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
    CHECK(deleted == 3 && deleted_value == &c, "MPI_Win_free: %d deletes", deleted);
    MPI_CHECK(MPI_Free_mem(mem));
    MPI_CHECK(MPI_Info_free(&info));

    /* create over plain memory, one rank with none */
    int *plain = abicheck_malloc(64 * sizeof(int));
    MPI_Aint plain_size = rank == 1 ? 0 : 64 * sizeof(int);
    MPI_CHECK(MPI_Win_create(plain, plain_size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, plain, plain_size, 4, MPI_WIN_FLAVOR_CREATE);
    MPI_CHECK(MPI_Win_free(&win));
    free(plain);

    /* allocate */
    long *lbase = NULL;
    MPI_CHECK(MPI_Win_allocate(100 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &lbase, &win));
    CHECK(lbase != NULL, "MPI_Win_allocate gave NULL");
    for (int i = 0; i < 100; i++)
        lbase[i] = rank * 1000 + i;
    check_attrs(win, lbase, 100 * sizeof(long), sizeof(long), MPI_WIN_FLAVOR_ALLOCATE);
    MPI_CHECK(MPI_Win_free(&win));

    /* allocate_shared, contiguous: rank i's memory follows rank i-1's */
    int per = 10 + rank; /* ints per rank: sizes differ */
    int *sbase = NULL;
    MPI_CHECK(MPI_Win_allocate_shared(per * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                      MPI_COMM_WORLD, &sbase, &win));
    check_attrs(win, sbase, per * sizeof(int), sizeof(int), MPI_WIN_FLAVOR_SHARED);
    for (int i = 0; i < per; i++)
        sbase[i] = rank * 100 + i;
    MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    MPI_CHECK(MPI_Win_sync(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_sync(win));
    char *expect = NULL;
    for (int r = 0; r < size; r++) {
        MPI_Aint qsize = -1;
        int qunit = -1;
        int *qbase = NULL;
        MPI_CHECK(MPI_Win_shared_query(win, r, &qsize, &qunit, &qbase));
        CHECK(qsize == (MPI_Aint)((10 + r) * sizeof(int)) && qunit == (int)sizeof(int),
              "shared_query(%d): size %ld unit %d", r, (long)qsize, qunit);
        if (r > 0)
            CHECK((char *)qbase == expect, "rank %d's memory at %p, expected %p (contiguous)",
                  r, (void *)qbase, (void *)expect);
        expect = (char *)qbase + qsize;
        for (int i = 0; i < 10 + r; i++)
            CHECK(qbase[i] == r * 100 + i, "rank %d's element %d reads %d", r, i, qbase[i]);
    }
    /* Store into the right neighbour's memory directly. */
    int right = (rank + 1) % size;
    MPI_Aint rsize;
    int runit;
    int *rbase;
    MPI_CHECK(MPI_Win_shared_query(win, right, &rsize, &runit, &rbase));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    rbase[0] = -1 - rank;
    MPI_CHECK(MPI_Win_sync(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_sync(win));
    int left = (rank + size - 1) % size;
    CHECK(sbase[0] == -1 - left, "my first element is %d, expected %d from rank %d", sbase[0],
          -1 - left, left);
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Win_free(&win));

    /* allocate_shared, noncontiguous: still every rank's memory readable */
    MPI_Info nc;
    MPI_CHECK(MPI_Info_create(&nc));
    MPI_CHECK(MPI_Info_set(nc, "alloc_shared_noncontig", "true"));
    MPI_CHECK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), nc, MPI_COMM_WORLD, &sbase, &win));
    *sbase = rank + 7;
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int r = 0; r < size; r++) {
        MPI_Aint qsize;
        int qunit;
        int *qbase;
        MPI_CHECK(MPI_Win_shared_query(win, r, &qsize, &qunit, &qbase));
        CHECK(*qbase == r + 7, "noncontig rank %d reads %d", r, *qbase);
    }
    MPI_CHECK(MPI_Win_fence(0, win));
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Info_free(&nc));

    /* dynamic: no memory, flavor dynamic */
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *flavor = NULL;
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "dynamic flavor %d", *flavor);
    MPI_CHECK(MPI_Win_free(&win));

    /* MPI_PROC_NULL in passive-target calls does nothing. */
    MPI_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &sbase,
                               &win));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, win));
    MPI_CHECK(MPI_Win_unlock(MPI_PROC_NULL, win));
    MPI_CHECK(MPI_Win_free(&win));

    /* A window over a sub-communicator. */
    MPI_Comm half;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    MPI_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, half, &sbase, &win));
    MPI_CHECK(MPI_Win_get_group(win, &wg));
    int gsize;
    MPI_CHECK(MPI_Group_size(wg, &gsize));
    CHECK(gsize == (size + 1 - rank % 2) / 2, "sub-window group of %d", gsize);
    MPI_CHECK(MPI_Group_free(&wg));
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Comm_free(&half));
    MPI_CHECK(MPI_Group_free(&worldg));

    abicheck_pass("rma_windows");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
