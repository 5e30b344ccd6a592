/*
 * The shared file pointer: write_shared from every rank at once (each
 * record lands exactly once, none overlap), write_ordered / read_ordered
 * (rank order), seek_shared / get_position_shared, read_shared, the
 * non-blocking and split forms, and MPI_MODE_SEQUENTIAL's rules.
 * Prints "PASS io_shared" from rank 0.
 */
#include "abicheck.h"

#define REC 8   /* ints per record */
#define NREC 25 /* records per rank */

static int rank, size;

static void sync_all(MPI_File fh)
{
    MPI_CHECK(MPI_File_sync(fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_File_sync(fh));
}

/* Every rank appends NREC records at the shared pointer, concurrently. */
static void concurrent_records(MPI_File fh)
{
    int rec[REC];
    MPI_Status st;
    MPI_Request req;
    for (int k = 0; k < NREC; k++) {
        for (int i = 0; i < REC; i++)
            rec[i] = (rank * NREC + k) * 100 + i;
        if (k % 2)
            MPI_CHECK(MPI_File_write_shared(fh, rec, REC, MPI_INT, &st));
        else {
            MPI_CHECK(MPI_File_iwrite_shared(fh, rec, REC, MPI_INT, &req));
            MPI_CHECK(MPI_Wait(&req, &st));
        }
    }
    sync_all(fh);
    MPI_Offset pos;
    MPI_CHECK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * NREC * REC, "shared position %lld", (long long)pos);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* Each record is whole and appears once. */
    int total = size * NREC;
    int *all = abicheck_malloc(total * REC * (int)sizeof(int));
    char *seen = calloc(total, 1);
    MPI_CHECK(MPI_File_read_at(fh, 0, all, total * REC, MPI_INT, &st));
    for (int r = 0; r < total; r++) {
        int id = all[r * REC] / 100;
        CHECK(id >= 0 && id < total && !seen[id], "record %d: id %d twice or wrong", r, id);
        seen[id] = 1;
        for (int i = 0; i < REC; i++)
            CHECK(all[r * REC + i] == id * 100 + i, "record %d torn at %d", r, i);
    }
    free(seen);
    free(all);
}

static void ordered(MPI_File fh)
{
    /* Rank r writes r + 1 ints; they land in rank order after what is there. */
    MPI_Offset start;
    MPI_CHECK(MPI_File_get_position_shared(fh, &start));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int vals[8];
    for (int i = 0; i <= rank; i++)
        vals[i] = 5000 + rank * 10 + i;
    MPI_Status st;
    MPI_CHECK(MPI_File_write_ordered(fh, vals, rank + 1, MPI_INT, &st));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Offset pos;
    MPI_CHECK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == start + size * (size + 1) / 2, "after write_ordered: %lld", (long long)pos);
    sync_all(fh);
    int n = size * (size + 1) / 2, *got = abicheck_malloc(n * (int)sizeof(int));
    MPI_CHECK(MPI_File_read_at(fh, start, got, n, MPI_INT, &st));
    for (int r = 0, k = 0; r < size; r++)
        for (int i = 0; i <= r; i++, k++)
            CHECK(got[k] == 5000 + r * 10 + i, "ordered int %d is %d", k, got[k]);

    /* read_ordered from the same place gives each rank its own ints. */
    MPI_CHECK(MPI_File_seek_shared(fh, start, MPI_SEEK_SET));
    int back[8] = {0};
    MPI_CHECK(MPI_File_read_ordered(fh, back, rank + 1, MPI_INT, &st));
    for (int i = 0; i <= rank; i++)
        CHECK(back[i] == vals[i], "read_ordered int %d is %d", i, back[i]);
    /* Split form, again from the start. */
    MPI_CHECK(MPI_File_seek_shared(fh, start, MPI_SEEK_SET));
    memset(back, 0, sizeof back);
    MPI_CHECK(MPI_File_read_ordered_begin(fh, back, rank + 1, MPI_INT));
    MPI_CHECK(MPI_File_read_ordered_end(fh, back, &st));
    for (int i = 0; i <= rank; i++)
        CHECK(back[i] == vals[i], "read_ordered_begin int %d is %d", i, back[i]);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == start + n, "after read_ordered: %lld", (long long)pos);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* read_shared by rank 0 alone: it takes the next int after the block. */
    MPI_CHECK(MPI_File_seek_shared(fh, start, MPI_SEEK_SET));
    if (rank == 0) {
        int one = 0;
        MPI_CHECK(MPI_File_read_shared(fh, &one, 1, MPI_INT, &st));
        CHECK(one == 5000, "read_shared got %d", one);
        MPI_CHECK(MPI_File_get_position_shared(fh, &pos));
        CHECK(pos == start + 1, "after read_shared: %lld", (long long)pos);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == start + 1, "shared position seen by rank %d: %lld", rank, (long long)pos);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    free(got);
}

static void sequential(void)
{
    const char *fn = "io_shared_seq.dat";
    MPI_File fh;
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, fn,
                               MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                               MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn,
                            MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                            MPI_INFO_NULL, &fh));
    int v = rank;
    MPI_Status st;
    int rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, &st);
    CHECK(rc != MPI_SUCCESS, "write_at on a sequential file succeeded");
    MPI_CHECK(MPI_File_write_ordered(fh, &v, 1, MPI_INT, &st));
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_CHECK(MPI_File_open(MPI_COMM_SELF, fn, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh));
        int got[64];
        MPI_CHECK(MPI_File_read(fh, got, size, MPI_INT, &st));
        for (int r = 0; r < size; r++)
            CHECK(got[r] == r, "sequential: int %d is %d", r, got[r]);
        MPI_CHECK(MPI_File_close(&fh));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *fn = "io_shared.dat";
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                            &fh));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset pos = -1;
    MPI_CHECK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 0, "initial shared position %lld", (long long)pos);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* before anyone moves it */
    concurrent_records(fh);
    ordered(fh);
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_CHECK(MPI_File_delete(fn, MPI_INFO_NULL));
    sequential();
    abicheck_pass("io_shared");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
