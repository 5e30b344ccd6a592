/*
 * Collective MPI-IO: write_at_all / read_at_all, write_all / read_all,
 * split collectives and non-blocking forms, over interleaved views (a
 * block-cyclic filetype and a 2-D subarray of a global array), with hints
 * that force several aggregation rounds and fewer aggregators than ranks.
 * File contents are checked against serial computations.
 * Prints "PASS io_coll" from rank 0.
 */
#include "abicheck.h"

#define ISZ ((int)sizeof(int))
#define BLK 7   /* ints per block */
#define NBLK 40 /* blocks per rank */
#define ROWS 6  /* rows of the global array per rank */
#define COLS 5  /* columns of the global array per rank */

static int rank, size;

static int cyclic_value(int owner, int local)
{
    return owner * 1000003 + local * 7 + 1;
}

static void sync_all(MPI_File fh)
{
    MPI_CHECK(MPI_File_sync(fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_File_sync(fh));
}

/* Checks the whole file against the block-cyclic layout (all ranks). */
static void check_cyclic_file(MPI_File fh, int nblk)
{
    int total = BLK * nblk * size;
    int *all = abicheck_malloc(total * ISZ);
    MPI_Status st;
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
    for (int j = 0; j < total; j++) {
        int blk = j / BLK, owner = blk % size, local = (blk / size) * BLK + j % BLK;
        CHECK(all[j] == cyclic_value(owner, local), "file int %d is %d, expected %d", j,
              all[j], cyclic_value(owner, local));
    }
    free(all);
}

static void cyclic(const char *cb_buffer_size, const char *cb_nodes)
{
    const char *fn = "io_coll_cyclic.dat";
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "cb_buffer_size", cb_buffer_size));
    MPI_CHECK(MPI_Info_set(info, "cb_nodes", cb_nodes));
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    MPI_Datatype block, tile;
    MPI_CHECK(MPI_Type_contiguous(BLK, MPI_INT, &block));
    MPI_CHECK(MPI_Type_create_resized(block, 0, (MPI_Aint)BLK * size * ISZ, &tile));
    MPI_CHECK(MPI_Type_commit(&tile));
    MPI_Offset disp = (MPI_Offset)rank * BLK * ISZ;

    int n = BLK * NBLK;
    int *mine = abicheck_malloc(n * ISZ), *back = abicheck_malloc(n * ISZ);
    for (int i = 0; i < n; i++)
        mine[i] = cyclic_value(rank, i);
    MPI_Status st;
    int count;

    /* write_at_all: the first half; write_all through the pointer: the rest. */
    MPI_CHECK(MPI_File_set_view(fh, disp, MPI_INT, tile, "native", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_write_at_all(fh, 0, mine, n / 2, MPI_INT, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == n / 2, "write_at_all count %d", count);
    MPI_CHECK(MPI_File_seek(fh, n / 2, MPI_SEEK_SET));
    MPI_CHECK(MPI_File_write_all(fh, mine + n / 2, n - n / 2, MPI_INT, &st));
    sync_all(fh);
    check_cyclic_file(fh, NBLK);

    /* read_at_all and read_all give each rank its own ints back. */
    MPI_CHECK(MPI_File_set_view(fh, disp, MPI_INT, tile, "native", MPI_INFO_NULL));
    memset(back, 0, n * ISZ);
    MPI_CHECK(MPI_File_read_at_all(fh, 0, back, n, MPI_INT, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == n, "read_at_all count %d", count);
    for (int i = 0; i < n; i++)
        CHECK(back[i] == mine[i], "read_at_all int %d is %d", i, back[i]);
    memset(back, 0, n * ISZ);
    MPI_CHECK(MPI_File_read_all(fh, back, 3, MPI_INT, &st));
    MPI_CHECK(MPI_File_read_all(fh, back + 3, n - 3, MPI_INT, &st));
    for (int i = 0; i < n; i++)
        CHECK(back[i] == mine[i], "read_all int %d is %d", i, back[i]);
    /* At the end of the file a collective read counts what it got (each
       rank's next tile lies past the end); ROMIO counts what was asked. */
    MPI_CHECK(MPI_File_read_at_all(fh, n - 2, back, 10, MPI_INT, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 2 || !abicheck_is_oxmpi(), "read_at_all at the end: count %d", count);
    CHECK(back[0] == mine[n - 2] && back[1] == mine[n - 1], "read_at_all at the end: %d %d",
          back[0], back[1]);

    /* A rank with nothing to access still takes part. */
    memset(back, 0, n * ISZ);
    MPI_CHECK(MPI_File_read_at_all(fh, 0, back, rank == 0 ? 0 : 5, MPI_INT, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == (rank == 0 ? 0 : 5), "read_at_all of %d: count %d", rank ? 5 : 0, count);
    for (int i = 0; i < (rank == 0 ? 0 : 5); i++)
        CHECK(back[i] == mine[i], "partial read_at_all int %d is %d", i, back[i]);
    MPI_CHECK(MPI_File_write_at_all(fh, 0, mine, rank == size - 1 ? 0 : 1, MPI_INT, &st));

    /* OxMPI: a bad argument on one rank fails the collective call on every
       rank instead of leaving the others waiting (ROMIO would hang). */
    if (abicheck_is_oxmpi() && size > 1) {
        int rc = MPI_File_write_at_all(fh, rank == 0 ? -1 : 0, mine, 1, MPI_INT, &st);
        CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_ARG,
              "write_at_all with a bad offset on rank 0 gave %d", rc);
        MPI_Datatype backwards;
        int lens[2] = {1, 1}, displs[2] = {1, 0};
        MPI_CHECK(MPI_Type_indexed(2, lens, displs, MPI_INT, &backwards));
        MPI_CHECK(MPI_Type_commit(&backwards));
        rc = MPI_File_set_view(fh, 0, MPI_INT, rank == size - 1 ? backwards : MPI_INT, "native",
                               MPI_INFO_NULL);
        CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_IO,
              "set_view with a bad filetype on the last rank gave %d", rc);
        MPI_CHECK(MPI_Type_free(&backwards));
    }

    /* Split collectives and non-blocking forms write the same file again. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    MPI_CHECK(MPI_File_set_view(fh, disp, MPI_INT, tile, "native", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_write_at_all_begin(fh, 0, mine, n / 3, MPI_INT));
    MPI_CHECK(MPI_File_write_at_all_end(fh, mine, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == n / 3, "write_at_all_end count %d", count);
    MPI_CHECK(MPI_File_seek(fh, n / 3, MPI_SEEK_SET));
    MPI_CHECK(MPI_File_write_all_begin(fh, mine + n / 3, n / 3, MPI_INT));
    MPI_CHECK(MPI_File_write_all_end(fh, mine + n / 3, &st));
    MPI_Request reqs[2];
    MPI_CHECK(MPI_File_iwrite_at_all(fh, 2 * (n / 3), mine + 2 * (n / 3), 5, MPI_INT, &reqs[0]));
    MPI_CHECK(MPI_File_iwrite_at(fh, 2 * (n / 3) + 5, mine + 2 * (n / 3) + 5,
                                 n - 2 * (n / 3) - 5, MPI_INT, &reqs[1]));
    MPI_Status sts[2];
    MPI_CHECK(MPI_Waitall(2, reqs, sts));
    sync_all(fh);
    check_cyclic_file(fh, NBLK);

    MPI_CHECK(MPI_File_set_view(fh, disp, MPI_INT, tile, "native", MPI_INFO_NULL));
    memset(back, 0, n * ISZ);
    MPI_CHECK(MPI_File_read_at_all_begin(fh, 0, back, n / 2, MPI_INT));
    MPI_CHECK(MPI_File_read_at_all_end(fh, back, &st));
    MPI_CHECK(MPI_File_iread_at(fh, n / 2, back + n / 2, n - n / 2, MPI_INT, &reqs[0]));
    MPI_CHECK(MPI_Wait(&reqs[0], &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == n - n / 2, "iread_at count %d", count);
    for (int i = 0; i < n; i++)
        CHECK(back[i] == mine[i], "split/iread int %d is %d", i, back[i]);
    memset(back, 0, n * ISZ);
    MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MPI_CHECK(MPI_File_read_all_begin(fh, back, n, MPI_INT));
    MPI_CHECK(MPI_File_read_all_end(fh, back, &st));
    for (int i = 0; i < n; i++)
        CHECK(back[i] == mine[i], "read_all_begin int %d is %d", i, back[i]);
    MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(back, 0, n * ISZ);
    MPI_CHECK(MPI_File_iread_all(fh, back, n, MPI_INT, &reqs[0]));
    MPI_CHECK(MPI_Wait(&reqs[0], &st));
    for (int i = 0; i < n; i++)
        CHECK(back[i] == mine[i], "iread_all int %d is %d", i, back[i]);

    free(mine);
    free(back);
    MPI_CHECK(MPI_Type_free(&tile));
    MPI_CHECK(MPI_Type_free(&block));
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_CHECK(MPI_File_delete(fn, MPI_INFO_NULL));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A (ROWS x size*COLS) row-major array of doubles; rank r owns columns
   r*COLS .. r*COLS+COLS-1: each row of the file interleaves every rank. */
static void subarray(void)
{
    const char *fn = "io_coll_sub.dat";
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &fh));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    int gsizes[2] = {ROWS, size * COLS}, subsizes[2] = {ROWS, COLS}, starts[2] = {0, rank * COLS};
    MPI_Datatype sub;
    MPI_CHECK(MPI_Type_create_subarray(2, gsizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE,
                                       &sub));
    MPI_CHECK(MPI_Type_commit(&sub));
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_DOUBLE, sub, "native", MPI_INFO_NULL));
    double local[ROWS * COLS];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            local[i * COLS + j] = i * 1000.0 + rank * COLS + j;
    MPI_Status st;
    MPI_CHECK(MPI_File_write_all(fh, local, ROWS * COLS, MPI_DOUBLE, &st));
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* Rank 0 checks the global array. */
    if (rank == 0) {
        MPI_CHECK(MPI_File_open(MPI_COMM_SELF, fn, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        int n = ROWS * size * COLS;
        double *g = abicheck_malloc(n * sizeof(double));
        MPI_CHECK(MPI_File_read(fh, g, n, MPI_DOUBLE, &st));
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < size * COLS; j++)
                CHECK(g[i * size * COLS + j] == i * 1000.0 + j, "array[%d][%d] = %g", i, j,
                      g[i * size * COLS + j]);
        free(g);
        MPI_CHECK(MPI_File_close(&fh));
        MPI_CHECK(MPI_File_delete(fn, MPI_INFO_NULL));
    }
    MPI_CHECK(MPI_Type_free(&sub));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    cyclic("16777216", "4");
    cyclic("64", "1"); /* many rounds, one aggregator */
    cyclic("100", "2");
    subarray();
    abicheck_pass("io_coll");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
