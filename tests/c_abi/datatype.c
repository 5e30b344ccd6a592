/*
 * Derived datatypes through the C ABI: every constructor with its size,
 * bounds and true bounds; names; envelope and contents; MPI_Pack /
 * MPI_Unpack; point-to-point with non-contiguous types (a matrix column
 * sent as a vector and received contiguous, and back; structs; subarrays;
 * MPI_BOTTOM with absolute addresses; Isend/Irecv, Sendrecv,
 * Sendrecv_replace and persistent requests), MPI_Get_count and
 * MPI_Get_elements of partial messages, and the errors: freeing a
 * predefined type, using an uncommitted type, and (OxMPI only, where the
 * behaviour is defined) freed and made-up handles.
 * Prints "PASS datatype" from rank 0.
 */
#include "abicheck.h"

#include <stddef.h>
#include <stdint.h>

static int rank, size, is_oxmpi;

static int next(void) { return (rank + 1) % size; }
static int prev(void) { return (rank + size - 1) % size; }

static void expect_bounds(MPI_Datatype t, const char *what, int sz, MPI_Aint lb, MPI_Aint ext,
                          MPI_Aint tlb, MPI_Aint text)
{
    int s = -1;
    MPI_Aint l = -1, e = -1, tl = -1, te = -1;
    MPI_CHECK(MPI_Type_size(t, &s));
    MPI_CHECK(MPI_Type_get_extent(t, &l, &e));
    MPI_CHECK(MPI_Type_get_true_extent(t, &tl, &te));
    CHECK(s == sz && l == lb && e == ext && tl == tlb && te == text,
          "%s: size %d lb %ld extent %ld true lb %ld true extent %ld; expected %d %ld %ld %ld %ld",
          what, s, (long)l, (long)e, (long)tl, (long)te, sz, (long)lb, (long)ext, (long)tlb,
          (long)text);
    MPI_Count sc = -1, lc = -1, ec = -1;
    MPI_CHECK(MPI_Type_size_x(t, &sc));
    MPI_CHECK(MPI_Type_get_extent_x(t, &lc, &ec));
    CHECK(sc == sz && lc == lb && ec == ext, "%s: _x queries disagree", what);
}

struct particle {
    char tag;
    double pos[3];
    int id;
};

static void constructors(void)
{
    MPI_Datatype t, u;
    MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &t));
    expect_bounds(t, "contiguous", 12, 0, 12, 0, 12);
    MPI_CHECK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "MPI_Type_free did not set MPI_DATATYPE_NULL");

    MPI_CHECK(MPI_Type_vector(2, 3, 4, MPI_INT, &t));
    expect_bounds(t, "vector", 24, 0, 28, 0, 28);
    MPI_CHECK(MPI_Type_create_hvector(3, 1, -16, MPI_DOUBLE, &u));
    expect_bounds(u, "negative hvector", 24, -32, 40, -32, 40);
    MPI_CHECK(MPI_Type_free(&u));
    MPI_CHECK(MPI_Type_free(&t));

    int lens[3] = {2, 1, 3}, disps[3] = {5, 0, 10};
    MPI_CHECK(MPI_Type_indexed(3, lens, disps, MPI_SHORT, &t));
    expect_bounds(t, "indexed", 12, 0, 26, 0, 26);
    MPI_CHECK(MPI_Type_free(&t));
    MPI_Aint hd[2] = {8, 32};
    int hl[2] = {1, 2};
    MPI_CHECK(MPI_Type_create_hindexed(2, hl, hd, MPI_DOUBLE, &t));
    expect_bounds(t, "hindexed", 24, 8, 40, 8, 40);
    MPI_CHECK(MPI_Type_free(&t));
    int bd[3] = {0, 4, 2};
    MPI_CHECK(MPI_Type_create_indexed_block(3, 2, bd, MPI_FLOAT, &t));
    expect_bounds(t, "indexed_block", 24, 0, 24, 0, 24);
    MPI_CHECK(MPI_Type_free(&t));
    MPI_Aint hbd[2] = {100, 0};
    MPI_CHECK(MPI_Type_create_hindexed_block(2, 3, hbd, MPI_CHAR, &t));
    expect_bounds(t, "hindexed_block", 6, 0, 103, 0, 103);
    MPI_CHECK(MPI_Type_free(&t));

    /* struct particle, padded like the compiler pads it. */
    int sl[3] = {1, 3, 1};
    MPI_Aint sd[3] = {offsetof(struct particle, tag), offsetof(struct particle, pos),
                      offsetof(struct particle, id)};
    MPI_Datatype st[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_CHECK(MPI_Type_create_struct(3, sl, sd, st, &t));
    expect_bounds(t, "struct", 1 + 24 + 4, 0, sizeof(struct particle), 0,
                  offsetof(struct particle, id) + 4);
    MPI_CHECK(MPI_Type_create_resized(t, 0, 48, &u));
    expect_bounds(u, "resized struct", 29, 0, 48, 0, offsetof(struct particle, id) + 4);
    MPI_CHECK(MPI_Type_free(&u));
    MPI_CHECK(MPI_Type_dup(t, &u));
    expect_bounds(u, "dup", 29, 0, sizeof(struct particle), 0, offsetof(struct particle, id) + 4);
    MPI_CHECK(MPI_Type_free(&t));
    /* The dup outlives the type it was made from. */
    MPI_CHECK(MPI_Type_commit(&u));
    expect_bounds(u, "dup after free", 29, 0, sizeof(struct particle), 0,
                  offsetof(struct particle, id) + 4);
    MPI_CHECK(MPI_Type_free(&u));

    int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 1};
    MPI_CHECK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
    expect_bounds(t, "subarray C", 24, 0, 80, 24, 32);
    MPI_CHECK(MPI_Type_free(&t));
    MPI_CHECK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t));
    /* First element (1,1) at index 1 + 4 * 1, last (2,3) at 2 + 4 * 3. */
    expect_bounds(t, "subarray Fortran", 24, 0, 80, 4 * 5, 4 * (14 - 5 + 1));
    MPI_CHECK(MPI_Type_free(&t));

    MPI_CHECK(MPI_Type_create_resized(MPI_INT, -4, 12, &t));
    expect_bounds(t, "resized int", 4, -4, 12, 0, 4);
    MPI_CHECK(MPI_Type_free(&t));

    expect_bounds(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, 0, 16, 0, 12);
}

static void names_and_contents(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_CHECK(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "MPI_INT is named '%s' (%d)", name, len);
    MPI_Datatype t;
    MPI_CHECK(MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &t));
    MPI_CHECK(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0 && name[0] == 0, "a new type is named '%s'", name);
    MPI_CHECK(MPI_Type_set_name(t, "columns"));
    MPI_CHECK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "columns") == 0 && len == 7, "set name: got '%s'", name);

    int ni = -1, na = -1, nd = -1, comb = -1;
    MPI_CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1,
          "vector envelope: %d %d %d combiner %d", ni, na, nd, comb);
    int ints[3];
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    MPI_CHECK(MPI_Type_get_contents(t, 3, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_DOUBLE,
          "vector contents: %d %d %d", ints[0], ints[1], ints[2]);
    MPI_CHECK(MPI_Type_get_envelope(MPI_FLOAT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED, "MPI_FLOAT's combiner is %d", comb);
    MPI_CHECK(MPI_Type_free(&t));

    MPI_Datatype m = MPI_DATATYPE_NULL;
    MPI_CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    int msize = 0;
    MPI_CHECK(MPI_Type_size(m, &msize));
    CHECK(msize == 8, "MPI_Type_match_size(REAL, 8) has size %d", msize);
}

static void pack_unpack(void)
{
    int a[12], b[12];
    for (int i = 0; i < 12; i++)
        a[i] = i * 7, b[i] = -1;
    MPI_Datatype col;
    MPI_CHECK(MPI_Type_vector(4, 1, 3, MPI_INT, &col)); /* column 0 of int[4][3] */
    MPI_CHECK(MPI_Type_commit(&col));
    int psize = -1;
    MPI_CHECK(MPI_Pack_size(2, col, MPI_COMM_WORLD, &psize));
    CHECK(psize >= 32, "MPI_Pack_size of 2 columns: %d", psize);
    char buf[256];
    int pos = 0;
    MPI_CHECK(MPI_Pack(a, 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Pack(&a[1], 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    double d = 2.5;
    MPI_CHECK(MPI_Pack(&d, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    int end = pos;
    pos = 0;
    int flat[8];
    MPI_CHECK(MPI_Unpack(buf, end, &pos, flat, 8, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(flat[i] == a[3 * i] && flat[4 + i] == a[3 * i + 1], "packed column %d wrong", i);
    double d2 = 0;
    MPI_CHECK(MPI_Unpack(buf, end, &pos, &d2, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    CHECK(d2 == 2.5 && pos == end, "unpacked double %g at %d of %d", d2, pos, end);
    pos = 0;
    MPI_CHECK(MPI_Unpack(buf, end, &pos, &b[2], 1, col, MPI_COMM_WORLD));
    for (int i = 0; i < 12; i++)
        CHECK(b[i] == (i % 3 == 2 ? a[3 * (i / 3)] : -1), "unpack into a column: b[%d] = %d", i,
              b[i]);
    MPI_CHECK(MPI_Type_free(&col));
}

/* A 4x4 matrix's column goes to the next rank, which stores it as a row. */
static void p2p_vector(void)
{
    int m[4][4], row[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            m[i][j] = rank * 100 + i * 10 + j;
    MPI_Datatype col;
    MPI_CHECK(MPI_Type_vector(4, 1, 4, MPI_INT, &col));
    MPI_CHECK(MPI_Type_commit(&col));
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(&m[0][2], 1, col, next(), 10, row, 4, MPI_INT, prev(), 10,
                           MPI_COMM_WORLD, &st));
    for (int i = 0; i < 4; i++)
        CHECK(row[i] == prev() * 100 + i * 10 + 2, "column as row: [%d] = %d", i, row[i]);
    int n = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 4, "Get_count of the column as ints: %d", n);

    /* And back: a contiguous row received as column 1. */
    int in[4][4];
    memset(in, 0xff, sizeof in);
    MPI_CHECK(MPI_Sendrecv(m[3], 4, MPI_INT, next(), 11, &in[0][1], 1, col, prev(), 11,
                           MPI_COMM_WORLD, &st));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            CHECK(in[i][j] == (j == 1 ? prev() * 100 + 30 + i : -1), "row as column: [%d][%d] = %d",
                  i, j, in[i][j]);
    MPI_CHECK(MPI_Get_count(&st, col, &n));
    CHECK(n == 1, "Get_count with the column type: %d", n);

    /* Nonblocking, two columns at once (count 2 of a resized column). */
    MPI_Datatype col1;
    MPI_CHECK(MPI_Type_create_resized(col, 0, sizeof(int), &col1));
    MPI_CHECK(MPI_Type_commit(&col1));
    int out2[4][4];
    memset(out2, 0, sizeof out2);
    MPI_Request r[2];
    MPI_CHECK(MPI_Irecv(&out2[0][1], 2, col1, prev(), 12, MPI_COMM_WORLD, &r[0]));
    MPI_CHECK(MPI_Isend(&m[0][0], 2, col1, next(), 12, MPI_COMM_WORLD, &r[1]));
    MPI_Status sts[2];
    MPI_CHECK(MPI_Waitall(2, r, sts));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int want = (j == 1 || j == 2) ? prev() * 100 + i * 10 + (j - 1) : 0;
            CHECK(out2[i][j] == want, "two columns: [%d][%d] = %d, want %d", i, j, out2[i][j],
                  want);
        }
    MPI_CHECK(MPI_Get_count(&sts[0], col1, &n));
    CHECK(n == 2, "Get_count of two columns: %d", n);

    /* Sendrecv_replace of a column in place. */
    int rep[4][4];
    memcpy(rep, m, sizeof rep);
    MPI_CHECK(MPI_Sendrecv_replace(&rep[0][3], 1, col, next(), 13, prev(), 13, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int want = j == 3 ? prev() * 100 + i * 10 + 3 : m[i][j];
            CHECK(rep[i][j] == want, "replace: [%d][%d] = %d, want %d", i, j, rep[i][j], want);
        }

    /* Persistent requests, started twice. */
    int pin[4][4];
    MPI_Request pr[2];
    MPI_CHECK(MPI_Recv_init(&pin[0][0], 1, col, prev(), 14, MPI_COMM_WORLD, &pr[0]));
    MPI_CHECK(MPI_Send_init(&m[0][1], 1, col, next(), 14, MPI_COMM_WORLD, &pr[1]));
    for (int round = 0; round < 2; round++) {
        memset(pin, 0, sizeof pin);
        for (int i = 0; i < 4; i++)
            m[i][1] = rank * 100 + i * 10 + 1 + round * 1000;
        MPI_CHECK(MPI_Startall(2, pr));
        MPI_Status pst[2];
        MPI_CHECK(MPI_Waitall(2, pr, pst));
        for (int i = 0; i < 4; i++)
            CHECK(pin[i][0] == prev() * 100 + i * 10 + 1 + round * 1000 && pin[i][1] == 0,
                  "persistent round %d: [%d][0] = %d", round, i, pin[i][0]);
    }
    MPI_CHECK(MPI_Request_free(&pr[0]));
    MPI_CHECK(MPI_Request_free(&pr[1]));

    MPI_CHECK(MPI_Type_free(&col1));
    MPI_CHECK(MPI_Type_free(&col));
}

/* Structs, MPI_BOTTOM, partial messages with MPI_Get_elements. */
static void p2p_struct(void)
{
    int sl[3] = {1, 3, 1};
    MPI_Aint sd[3] = {offsetof(struct particle, tag), offsetof(struct particle, pos),
                      offsetof(struct particle, id)};
    MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, pt;
    MPI_CHECK(MPI_Type_create_struct(3, sl, sd, types, &pt));
    MPI_CHECK(MPI_Type_commit(&pt));
    struct particle out[3], in[3];
    memset(out, 0, sizeof out);
    memset(in, 0, sizeof in);
    for (int i = 0; i < 3; i++) {
        out[i].tag = (char)('a' + i);
        out[i].pos[0] = rank + i;
        out[i].pos[2] = -rank - i;
        out[i].id = rank * 10 + i;
    }
    MPI_Request r;
    MPI_Status st;
    MPI_CHECK(MPI_Irecv(in, 3, pt, prev(), 20, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Send(out, 3, pt, next(), 20, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&r, &st));
    for (int i = 0; i < 3; i++)
        CHECK(in[i].tag == 'a' + i && in[i].pos[0] == prev() + i && in[i].pos[2] == -prev() - i &&
                  in[i].id == prev() * 10 + i,
              "particle %d: %c %g %g %d", i, in[i].tag, in[i].pos[0], in[i].pos[2], in[i].id);
    int n = -1, e = -1;
    MPI_CHECK(MPI_Get_count(&st, pt, &n));
    MPI_CHECK(MPI_Get_elements(&st, pt, &e));
    CHECK(n == 3 && e == 15, "3 particles: count %d elements %d", n, e);

    /* MPI_BOTTOM with absolute addresses: an int and a double elsewhere. */
    int x = rank + 7, xin = 0;
    double y = rank * 0.5, yin = 0;
    MPI_Aint ad[2];
    int one[2] = {1, 1};
    MPI_Datatype xy[2] = {MPI_INT, MPI_DOUBLE}, abs_out, abs_in;
    MPI_CHECK(MPI_Get_address(&x, &ad[0]));
    MPI_CHECK(MPI_Get_address(&y, &ad[1]));
    MPI_CHECK(MPI_Type_create_struct(2, one, ad, xy, &abs_out));
    MPI_CHECK(MPI_Get_address(&xin, &ad[0]));
    MPI_CHECK(MPI_Get_address(&yin, &ad[1]));
    MPI_CHECK(MPI_Type_create_struct(2, one, ad, xy, &abs_in));
    MPI_CHECK(MPI_Type_commit(&abs_out));
    MPI_CHECK(MPI_Type_commit(&abs_in));
    MPI_CHECK(MPI_Sendrecv(MPI_BOTTOM, 1, abs_out, next(), 21, MPI_BOTTOM, 1, abs_in, prev(), 21,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(xin == prev() + 7 && yin == prev() * 0.5, "MPI_BOTTOM: %d %g", xin, yin);
    MPI_CHECK(MPI_Type_free(&abs_out));
    MPI_CHECK(MPI_Type_free(&abs_in));

    /* 5 ints into room for 3 pairs of ints: count undefined, 5 elements. */
    MPI_Datatype pair;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
    MPI_CHECK(MPI_Type_commit(&pair));
    int five[5] = {1, 2, 3, 4, 5}, room[12];
    for (int i = 0; i < 12; i++)
        room[i] = -1;
    MPI_CHECK(MPI_Irecv(room, 3, pair, prev(), 22, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Send(five, 5, MPI_INT, next(), 22, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&r, &st));
    MPI_CHECK(MPI_Get_count(&st, pair, &n));
    MPI_CHECK(MPI_Get_elements(&st, pair, &e));
    CHECK(n == MPI_UNDEFINED && e == 5, "5 ints as pairs: count %d elements %d", n, e);
    /* pair's extent is 3 ints: elements land at 0, 2, 3, 5, 6. */
    int want[12] = {1, -1, 2, 3, -1, 4, 5, -1, -1, -1, -1, -1};
    for (int i = 0; i < 12; i++)
        CHECK(room[i] == want[i], "partial pairs: room[%d] = %d, want %d", i, room[i], want[i]);
    MPI_CHECK(MPI_Type_free(&pair));

    /* A subarray: the 2x2 block at (1,1) of a 3x4 int array. */
    int sizes[2] = {3, 4}, subs[2] = {2, 2}, starts[2] = {1, 1};
    MPI_Datatype blk;
    MPI_CHECK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &blk));
    MPI_CHECK(MPI_Type_commit(&blk));
    int arr[3][4], got[4];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            arr[i][j] = rank * 100 + i * 10 + j;
    MPI_CHECK(MPI_Sendrecv(arr, 1, blk, next(), 23, got, 4, MPI_INT, prev(), 23, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    int p = prev() * 100;
    CHECK(got[0] == p + 11 && got[1] == p + 12 && got[2] == p + 21 && got[3] == p + 22,
          "subarray: %d %d %d %d", got[0], got[1], got[2], got[3]);
    MPI_CHECK(MPI_Type_free(&blk));
    MPI_CHECK(MPI_Type_free(&pt));
}

/* A large non-contiguous message (the rendezvous path): every other double. */
static void p2p_large(void)
{
    const int n = 1 << 19;
    double *a = abicheck_malloc(2 * n * sizeof(double));
    double *b = abicheck_malloc(n * sizeof(double));
    for (int i = 0; i < 2 * n; i++)
        a[i] = rank * 1e7 + i;
    MPI_Datatype evens;
    MPI_CHECK(MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &evens));
    MPI_CHECK(MPI_Type_commit(&evens));
    MPI_CHECK(MPI_Sendrecv(a, 1, evens, next(), 30, b, n, MPI_DOUBLE, prev(), 30, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        if (b[i] != prev() * 1e7 + 2 * i)
            FAIL("large vector: b[%d] = %g", i, b[i]);
    MPI_CHECK(MPI_Type_free(&evens));
    free(a);
    free(b);
}

static void errors(void)
{
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Datatype t = MPI_INT;
    EXPECT_CLASS(MPI_Type_free(&t), MPI_ERR_TYPE);
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    int buf[4] = {0};
    /* Not committed: cannot move data. */
    EXPECT_CLASS(MPI_Send(buf, 1, v, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    if (is_oxmpi) {
        /* Freed and made-up handles are errors, never dereferenced. */
        MPI_Datatype stale = v;
        MPI_CHECK(MPI_Type_free(&v));
        int s;
        EXPECT_CLASS(MPI_Type_size(stale, &s), MPI_ERR_TYPE);
        EXPECT_CLASS(MPI_Send(buf, 1, stale, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(MPI_Type_size((MPI_Datatype)0x8c123456, &s), MPI_ERR_TYPE);
        EXPECT_CLASS(MPI_Type_size((MPI_Datatype)0x12345678, &s), MPI_ERR_TYPE);
        EXPECT_CLASS(MPI_Type_size(MPI_DATATYPE_NULL, &s), MPI_ERR_TYPE);
        MPI_Datatype again = stale;
        EXPECT_CLASS(MPI_Type_free(&again), MPI_ERR_TYPE);
    } else {
        MPI_CHECK(MPI_Type_free(&v));
    }
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    is_oxmpi = strstr(lib, "OxMPI") != NULL;
    constructors();
    names_and_contents();
    pack_unpack();
    p2p_vector();
    p2p_struct();
    p2p_large();
    errors();
    abicheck_pass("datatype");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
