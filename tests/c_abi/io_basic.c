/*
 * MPI-IO basics: open / close / delete and their errors (amode, missing and
 * existing files, read-only), sizes, sync, hints, groups, handles, file
 * error handlers, independent reads and writes at explicit offsets and
 * through the individual pointer, seeks, partial reads at the end of the
 * file, and a block-cyclic view of a derived filetype whose file contents
 * are checked against a serial computation.
 * Prints "PASS io_basic" from rank 0.
 */
#include "abicheck.h"

#define N 100 /* ints per rank in the plain part */
#define B 3   /* ints per block of the view */
#define K 5   /* blocks per rank */
#define ISZ ((int)sizeof(int))

static int handler_calls = 0;
static MPI_File handler_file = MPI_FILE_NULL;
static int handler_code = MPI_SUCCESS;

static void on_file_error(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_file = *fh;
    handler_code = *code;
}

static void sync_all(MPI_File fh)
{
    MPI_CHECK(MPI_File_sync(fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_File_sync(fh));
}

static void errors_and_modes(int rank)
{
    MPI_File fh = MPI_FILE_NULL;
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, "io_basic_missing.dat", MPI_MODE_RDONLY,
                               MPI_INFO_NULL, &fh),
                 MPI_ERR_NO_SUCH_FILE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, "io_basic_x.dat",
                               MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, "io_basic_x.dat",
                               MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    CHECK(fh == MPI_FILE_NULL, "a failed open set the handle");

    /* Delete on close. */
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, "io_basic_doc.dat",
                            MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    MPI_CHECK(MPI_File_close(&fh));
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, "io_basic_doc.dat", MPI_MODE_RDONLY,
                               MPI_INFO_NULL, &fh),
                 MPI_ERR_NO_SUCH_FILE);

    /* Exclusive creation of an existing file; writing a read-only file. */
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, "io_basic_x.dat", MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    MPI_CHECK(MPI_File_close(&fh));
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, "io_basic_x.dat",
                               MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL,
                               &fh),
                 MPI_ERR_FILE_EXISTS);
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, "io_basic_x.dat", MPI_MODE_RDONLY, MPI_INFO_NULL,
                            &fh));
    int v = 7;
    MPI_Status st;
    EXPECT_CLASS(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, &st), MPI_ERR_READ_ONLY);
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_CHECK(MPI_File_delete("io_basic_x.dat", MPI_INFO_NULL));
        EXPECT_CLASS(MPI_File_delete("io_basic_x.dat", MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Filetypes with a negative, decreasing or (for writing) overlapping
   typemap make no view; overlaps are fine on a read-only file. */
static void bad_views(int rank)
{
    const char *fn = "io_basic_views.dat";
    int bad[3][4] = {{1, 1, -2, 2}, {1, 1, 3, 0}, {3, 1, 0, 1}}; /* lens, displs */
    for (int ro = 0; ro < 2; ro++) {
        MPI_File fh;
        int amode = ro ? MPI_MODE_RDONLY : MPI_MODE_CREATE | MPI_MODE_RDWR;
        MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn, amode, MPI_INFO_NULL, &fh));
        for (int k = 0; k < 3; k++) {
            MPI_Datatype t;
            MPI_CHECK(MPI_Type_indexed(2, bad[k], bad[k] + 2, MPI_INT, &t));
            MPI_CHECK(MPI_Type_commit(&t));
            int rc = MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL);
            if (ro && k == 2)
                CHECK(rc == MPI_SUCCESS, "overlapping read-only view refused: %d", rc);
            else
                CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_IO,
                      "bad view %d (read-only %d) gave %d", k, ro, rc);
            MPI_CHECK(MPI_Type_free(&t));
        }
        MPI_CHECK(MPI_File_close(&fh));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_CHECK(MPI_File_delete(fn, MPI_INFO_NULL));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void plain_accesses(int rank, int size)
{
    const char *fn = "io_basic.dat";
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                            &fh));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    int amode = 0;
    MPI_CHECK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %d", amode);
    MPI_Errhandler eh;
    MPI_CHECK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "a file's default handler is not MPI_ERRORS_RETURN");

    int buf[N], got[N + 20];
    for (int i = 0; i < N; i++)
        buf[i] = rank * 1000 + i;
    MPI_Status st;
    int count = -1;
    MPI_CHECK(MPI_File_write_at(fh, (MPI_Offset)rank * N * ISZ, buf, N, MPI_INT, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N, "write_at count %d", count);
    sync_all(fh);
    MPI_Offset fsize = -1;
    MPI_CHECK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == (MPI_Offset)size * N * ISZ, "size %lld", (long long)fsize);

    int next = (rank + 1) % size;
    MPI_CHECK(MPI_File_read_at(fh, (MPI_Offset)next * N * ISZ, got, N, MPI_INT, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N, "read_at count %d", count);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == next * 1000 + i, "read_at: int %d is %d", i, got[i]);

    /* The individual pointer (in bytes: the default view's etype). */
    MPI_CHECK(MPI_File_seek(fh, (MPI_Offset)rank * N * ISZ, MPI_SEEK_SET));
    MPI_CHECK(MPI_File_read(fh, got, 10, MPI_INT, &st));
    MPI_CHECK(MPI_File_read(fh, got + 10, 10, MPI_INT, &st));
    for (int i = 0; i < 20; i++)
        CHECK(got[i] == rank * 1000 + i, "read: int %d is %d", i, got[i]);
    MPI_Offset pos = -1;
    MPI_CHECK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)rank * N * ISZ + 80, "position %lld", (long long)pos);
    MPI_CHECK(MPI_File_seek(fh, -8, MPI_SEEK_CUR));
    MPI_CHECK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)rank * N * ISZ + 72, "position %lld", (long long)pos);
    MPI_CHECK(MPI_File_seek(fh, -4, MPI_SEEK_END));
    MPI_CHECK(MPI_File_get_position(fh, &pos));
    CHECK(pos == fsize - 4, "position after SEEK_END %lld", (long long)pos);

    /* A read across the end of the file gets what is there. */
    MPI_CHECK(MPI_File_read_at(fh, fsize - 8, got, 20, MPI_INT, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 2, "read at the end: count %d, expected 2", count);
    CHECK(got[1] == (size - 1) * 1000 + N - 1, "last int %d", got[1]);
    MPI_CHECK(MPI_File_read_at(fh, fsize + 100, got, 5, MPI_INT, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0, "read past the end: count %d", count);

    /* Bad arguments return (the file's handler), naming the problem. */
    EXPECT_CLASS(MPI_File_read_at(fh, -1, got, 1, MPI_INT, &st), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_read_at(fh, 0, got, -1, MPI_INT, &st), MPI_ERR_COUNT);

    /* A file error handler gets the file handle and the code. */
    MPI_Errhandler mine;
    MPI_CHECK(MPI_File_create_errhandler(on_file_error, &mine));
    MPI_CHECK(MPI_File_set_errhandler(fh, mine));
    int rc = MPI_File_read_at(fh, -1, got, 1, MPI_INT, &st);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_file == fh && handler_code == rc,
          "handler: calls %d, code %d vs %d", handler_calls, handler_code, rc);
    MPI_CHECK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_IO, "call_errhandler: %d calls",
          handler_calls);
    MPI_CHECK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Errhandler_free(&mine));

    /* Hints, group, handle conversion. */
    MPI_Info info;
    MPI_CHECK(MPI_File_get_info(fh, &info));
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_CHECK(MPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && atoi(value) > 0, "no cb_buffer_size hint");
    MPI_CHECK(MPI_Info_free(&info));
    MPI_Group g, wg;
    int cmp;
    MPI_CHECK(MPI_File_get_group(fh, &g));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_CHECK(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT, "group compare %d", cmp);
    MPI_CHECK(MPI_Group_free(&g));
    MPI_CHECK(MPI_Group_free(&wg));
    CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "c2f / f2c do not round-trip");

    /* Sizes (once every rank is done reading). */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_File_set_size(fh, 10));
    MPI_CHECK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 10, "size after set_size %lld", (long long)fsize);
    MPI_CHECK(MPI_File_preallocate(fh, 1000));
    MPI_CHECK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 1000, "size after preallocate %lld", (long long)fsize);
    MPI_CHECK(MPI_File_preallocate(fh, 100));
    MPI_CHECK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 1000, "preallocate shrank the file to %lld", (long long)fsize);
    MPI_CHECK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not set MPI_FILE_NULL");
}

/* Rank r owns blocks r, r + size, r + 2 size, ... of B ints. */
static void cyclic_view(int rank, int size)
{
    const char *fn = "io_basic_view.dat";
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, fn, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                            &fh));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    MPI_Datatype block, tile;
    MPI_CHECK(MPI_Type_contiguous(B, MPI_INT, &block));
    MPI_CHECK(MPI_Type_create_resized(block, 0, (MPI_Aint)B * size * ISZ, &tile));
    MPI_CHECK(MPI_Type_commit(&tile));
    MPI_Offset disp = (MPI_Offset)rank * B * ISZ;
    MPI_CHECK(MPI_File_set_view(fh, disp, MPI_INT, tile, "native", MPI_INFO_NULL));

    int mine[B * K];
    for (int i = 0; i < B * K; i++)
        mine[i] = rank * 100000 + i;
    MPI_Status st;
    /* Two writes through the individual pointer, split inside a block. */
    MPI_CHECK(MPI_File_write(fh, mine, 4, MPI_INT, &st));
    MPI_CHECK(MPI_File_write(fh, mine + 4, B * K - 4, MPI_INT, &st));
    MPI_Offset pos, byte;
    MPI_CHECK(MPI_File_get_position(fh, &pos));
    CHECK(pos == B * K, "view position %lld", (long long)pos);
    MPI_CHECK(MPI_File_get_byte_offset(fh, B, &byte));
    CHECK(byte == disp + (MPI_Offset)B * size * ISZ, "byte offset %lld",
          (long long)byte);

    MPI_Offset d;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_CHECK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(d == disp && et == MPI_INT && strcmp(rep, "native") == 0, "get_view: %lld %s",
          (long long)d, rep);
    MPI_Aint lb, ext;
    MPI_CHECK(MPI_Type_get_extent(ft, &lb, &ext));
    CHECK(ext == (MPI_Aint)B * size * ISZ, "view filetype extent %ld", (long)ext);
    MPI_CHECK(MPI_Type_free(&ft));
    sync_all(fh);

    /* Every rank reads the whole file through a byte view and checks it. */
    int total = B * K * size;
    int *all = abicheck_malloc(total * ISZ);
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
    int count;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == total, "whole-file count %d of %d", count, total);
    for (int j = 0; j < total; j++) {
        int blk = j / B, owner = blk % size, local = (blk / size) * B + j % B;
        CHECK(all[j] == owner * 100000 + local, "file int %d is %d, expected %d", j, all[j],
              owner * 100000 + local);
    }
    /* Read back the view into a strided memory type. */
    MPI_CHECK(MPI_File_set_view(fh, disp, MPI_INT, tile, "native", MPI_INFO_NULL));
    MPI_Datatype every_other;
    MPI_CHECK(MPI_Type_vector(B * K, 1, 2, MPI_INT, &every_other));
    MPI_CHECK(MPI_Type_commit(&every_other));
    int *spread = abicheck_malloc(2 * B * K * ISZ);
    for (int i = 0; i < 2 * B * K; i++)
        spread[i] = -1;
    MPI_CHECK(MPI_File_read_at(fh, 0, spread, 1, every_other, &st));
    for (int i = 0; i < B * K; i++)
        CHECK(spread[2 * i] == mine[i] && spread[2 * i + 1] == -1, "strided read: %d", i);
    MPI_CHECK(MPI_Type_free(&every_other));
    free(spread);
    free(all);
    MPI_CHECK(MPI_Type_free(&tile));
    MPI_CHECK(MPI_Type_free(&block));
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_CHECK(MPI_File_delete(fn, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    errors_and_modes(rank);
    bad_views(rank);
    plain_accesses(rank, size);
    cyclic_view(rank, size);
    abicheck_pass("io_basic");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
