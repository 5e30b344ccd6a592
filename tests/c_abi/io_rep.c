/*
 * Data representations and atomic mode: external32 views store big-endian
 * bytes and read back to native values; MPI_File_get_type_extent;
 * MPI_Register_datarep (a duplicate name is MPI_ERR_DUP_DATAREP, and on
 * OxMPI a view in a registered representation without conversions); atomic
 * mode keeps concurrent overlapping strided writes whole.
 * Prints "PASS io_rep" from rank 0.
 */
#include "abicheck.h"

#define M 20000 /* ints each rank writes in atomic mode */

static int rank, size;
static int extent_calls = 0;

static int file_extent(MPI_Datatype type, MPI_Aint *extent, void *state)
{
    (void)state;
    extent_calls++;
    MPI_Aint lb;
    return MPI_Type_get_extent(type, &lb, extent);
}

static void external32(void)
{
    const char *fn = "io_rep_ext.dat";
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                            &fh));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    MPI_Aint ext = 0;
    MPI_CHECK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK(ext == 4, "external32 extent of MPI_INT %ld", (long)ext);
    int vals[3] = {1 + rank, 258, -2};
    MPI_Status st;
    MPI_CHECK(MPI_File_write_at(fh, 3 * rank, vals, 3, MPI_INT, &st));
    MPI_CHECK(MPI_File_sync(fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_File_sync(fh));
    int back[3] = {0};
    MPI_CHECK(MPI_File_read_at(fh, 3 * rank, back, 3, MPI_INT, &st));
    int count;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 3 && back[0] == vals[0] && back[1] == 258 && back[2] == -2,
          "external32 read back: %d: %d %d %d", count, back[0], back[1], back[2]);
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset d;
    MPI_Datatype et, ft;
    MPI_CHECK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(strcmp(rep, "external32") == 0, "datarep %s", rep);

    /* The bytes in the file are big-endian. */
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[12];
    MPI_CHECK(MPI_File_read_at(fh, 12 * rank, raw, 12, MPI_BYTE, &st));
    const unsigned char expect[12] = {0, 0, 0, (unsigned char)(1 + rank), 0, 0, 1, 2,
                                      0xff, 0xff, 0xff, 0xfe};
    for (int i = 0; i < 12; i++)
        CHECK(raw[i] == expect[i], "external32 byte %d is %#x, expected %#x", i, raw[i],
              expect[i]);

    /* long is 4 bytes in external32 (MPI 4.0 table 14.2): a view of longs
       packs them so. OxMPI only: MPICH 4.0.2 stores 8. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (!abicheck_is_oxmpi())
        goto done;
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == 4, "external32 extent of MPI_LONG %ld", (long)ext);
    long lv[2] = {1 + rank, -3}, lb[2] = {0, 0};
    MPI_CHECK(MPI_File_write_at_all(fh, 2 * rank, lv, 2, MPI_LONG, &st));
    MPI_CHECK(MPI_File_read_at_all(fh, 2 * rank, lb, 2, MPI_LONG, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_LONG, &count));
    CHECK(count == 2 && lb[0] == 1 + rank && lb[1] == -3, "external32 longs: %d: %ld %ld",
          count, lb[0], lb[1]);
    MPI_Offset at = -1;
    MPI_CHECK(MPI_File_seek(fh, 2 * rank, MPI_SEEK_SET));
    MPI_CHECK(MPI_File_read(fh, lb, 1, MPI_LONG, &st));
    MPI_CHECK(MPI_File_get_position(fh, &at));
    CHECK(at == 2 * rank + 1 && lb[0] == 1 + rank, "external32 long pointer %lld: %ld",
          (long long)at, lb[0]);
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_read_at(fh, 8 * rank, raw, 8, MPI_BYTE, &st));
    const unsigned char lexpect[8] = {0, 0, 0, (unsigned char)(1 + rank), 0xff, 0xff, 0xff, 0xfd};
    for (int i = 0; i < 8; i++)
        CHECK(raw[i] == lexpect[i], "external32 long byte %d is %#x, expected %#x", i, raw[i],
              lexpect[i]);
done:
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_CHECK(MPI_File_delete(fn, MPI_INFO_NULL));
}

static void user_datarep(void)
{
    MPI_CHECK(MPI_Register_datarep("io_rep_plain", MPI_CONVERSION_FN_NULL,
                                   MPI_CONVERSION_FN_NULL, file_extent, NULL));
    EXPECT_CLASS(MPI_Register_datarep("io_rep_plain", MPI_CONVERSION_FN_NULL,
                                      MPI_CONVERSION_FN_NULL, file_extent, NULL),
                 MPI_ERR_DUP_DATAREP);
    if (!abicheck_is_oxmpi())
        return; /* ROMIO lets "external32" be registered, and refuses views in
                   registered representations */
    EXPECT_CLASS(MPI_Register_datarep("external32", MPI_CONVERSION_FN_NULL,
                                      MPI_CONVERSION_FN_NULL, file_extent, NULL),
                 MPI_ERR_DUP_DATAREP);
    const char *fn = "io_rep_user.dat";
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "io_rep_plain", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset d;
    MPI_Datatype et, ft;
    MPI_CHECK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(strcmp(rep, "io_rep_plain") == 0, "datarep %s", rep);
    MPI_Aint ext = 0;
    MPI_CHECK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    CHECK(ext == 8 && extent_calls == 1, "extent %ld after %d calls", (long)ext, extent_calls);
    int v = rank, back = -1;
    MPI_Status st;
    MPI_CHECK(MPI_File_write_at_all(fh, rank, &v, 1, MPI_INT, &st));
    MPI_CHECK(MPI_File_read_at_all(fh, rank, &back, 1, MPI_INT, &st));
    CHECK(back == rank, "user datarep read back %d", back);
    EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no_such_rep", MPI_INFO_NULL),
                 MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_CHECK(MPI_File_delete(fn, MPI_INFO_NULL));
}

/* Every rank writes M ints, every other int of the file, all at once. */
static void atomic_mode(void)
{
    const char *fn = "io_rep_atomic.dat";
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                            &fh));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    MPI_CHECK(MPI_File_set_atomicity(fh, 1));
    int flag = 0;
    MPI_CHECK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity flag %d", flag);
    MPI_Datatype strided;
    MPI_CHECK(MPI_Type_vector(M, 1, 2, MPI_INT, &strided));
    MPI_CHECK(MPI_Type_commit(&strided));
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, strided, "native", MPI_INFO_NULL));
    int *mine = abicheck_malloc(M * (int)sizeof(int));
    for (int i = 0; i < M; i++)
        mine[i] = rank + 1;
    MPI_Status st;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int round = 0; round < 10; round++)
        MPI_CHECK(MPI_File_write_at(fh, 0, mine, M, MPI_INT, &st));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    /* One writer's data, whole (atomic mode makes writes visible at once). */
    int *back = abicheck_malloc(M * (int)sizeof(int));
    MPI_CHECK(MPI_File_read_at(fh, 0, back, M, MPI_INT, &st));
    for (int i = 0; i < M; i++)
        CHECK(back[i] == back[0] && back[0] >= 1 && back[0] <= size,
              "atomic writes mixed: int %d is %d, int 0 is %d", i, back[i], back[0]);
    MPI_CHECK(MPI_File_set_atomicity(fh, 0));
    MPI_CHECK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "atomicity flag %d after clearing", flag);
    free(mine);
    free(back);
    MPI_CHECK(MPI_Type_free(&strided));
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_CHECK(MPI_File_delete(fn, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    external32();
    user_datarep();
    atomic_mode();
    abicheck_pass("io_rep");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
