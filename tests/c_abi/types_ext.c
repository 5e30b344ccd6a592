/*
 * MPI_Type_create_darray, the external32 data representation and the f90
 * type functions through the C ABI:
 *
 * - darray: size, bounds, true bounds and MPI_Pack output of block,
 *   cyclic(k) and undistributed dimensions in C and Fortran order, against
 *   a serial model of which process owns which index; envelope and
 *   contents; a 2D array scattered from rank 0 with one darray per rank
 *   (over the MPI_Dims_create grid, then a 1 x size grid), changed by each
 *   rank and gathered back, checked against the serial computation;
 * - external32: MPI_Pack_external bytes against literal big-endian bytes
 *   (MPI_LONG is 4 bytes, long double is IEEE binary128), sizes, derived
 *   types, positions, the _c forms and round trips;
 * - f90: the kinds chosen, their combiners and contents, the same handle
 *   for the same arguments, and their use in communication.
 *
 * MPICH 4.0.2 crashes or is wrong on some of this (external32 of
 * MPI_WCHAR, pair types, mixed structs, MPI_COMPLEX; many darray argument
 * errors; freeing an f90 type), so those checks run on OxMPI only.
 * Prints "PASS types_ext" from rank 0.
 */
#include "abicheck.h"

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

static int rank, size, is_oxmpi;

/* MPI_STATUSES_IGNORE through a variable: gcc 12 warns when it sees the
 * constant passed as an array (as nonblocking.c does). */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

#define DFLT MPI_DISTRIBUTE_DFLT_DARG

/* ------------------------------------------------------------- darray */

/* Whether grid coordinate `c` of `p` owns index `i` of a dimension of `g`
 * indices distributed as `dist` with argument `darg`. */
static int owns(int i, int g, int dist, int darg, int p, int c)
{
    if (dist == MPI_DISTRIBUTE_NONE)
        return 1;
    if (dist == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == DFLT ? (g + p - 1) / p : darg;
        return i / b == c;
    }
    int b = darg == DFLT ? 1 : darg;
    return (i / b) % p == c;
}

struct darray_case {
    int nd, gs[3], dist[3], darg[3], ps[3], order;
};

/* The element offsets (in elements, increasing) that `r` owns; returns
 * how many. */
static int owned_offsets(const struct darray_case *c, int r, int *out)
{
    int coords[3], n = 1, k = 0;
    for (int d = c->nd - 1, q = r; d >= 0; d--) {
        coords[d] = q % c->ps[d];
        q /= c->ps[d];
    }
    for (int d = 0; d < c->nd; d++)
        n *= c->gs[d];
    for (int lin = 0; lin < n; lin++) {
        /* Index of each dimension at storage offset `lin`. */
        int idx[3], rest = lin, ok = 1;
        for (int s = 0; s < c->nd; s++) {
            int d = c->order == MPI_ORDER_C ? c->nd - 1 - s : s;
            idx[d] = rest % c->gs[d];
            rest /= c->gs[d];
        }
        for (int d = 0; d < c->nd; d++)
            ok = ok && owns(idx[d], c->gs[d], c->dist[d], c->darg[d], c->ps[d], coords[d]);
        if (ok)
            out[k++] = lin;
    }
    return k;
}

static MPI_Datatype make_darray(const struct darray_case *c, int r)
{
    int procs = 1;
    for (int d = 0; d < c->nd; d++)
        procs *= c->ps[d];
    MPI_Datatype t;
    MPI_CHECK(MPI_Type_create_darray(procs, r, c->nd, c->gs, c->dist, c->darg, c->ps, c->order,
                                     MPI_INT, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
}

/* Checks the darray of case `c` for every rank of its grid. */
static void check_darray_case(const struct darray_case *c, const char *what)
{
    int procs = 1, n = 1;
    for (int d = 0; d < c->nd; d++) {
        procs *= c->ps[d];
        n *= c->gs[d];
    }
    int *global = abicheck_malloc(n * sizeof(int));
    int *want = abicheck_malloc(n * sizeof(int));
    int *got = abicheck_malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        global[i] = i;
    for (int r = 0; r < procs; r++) {
        MPI_Datatype t = make_darray(c, r);
        int k = owned_offsets(c, r, want);
        int sz;
        MPI_Aint lb, ext, tlb, text;
        MPI_CHECK(MPI_Type_size(t, &sz));
        MPI_CHECK(MPI_Type_get_extent(t, &lb, &ext));
        MPI_CHECK(MPI_Type_get_true_extent(t, &tlb, &text));
        MPI_Aint wtlb = k ? want[0] * 4 : 0, wtext = k ? (want[k - 1] - want[0] + 1) * 4 : 0;
        CHECK(sz == 4 * k && lb == 0 && ext == 4 * n && tlb == wtlb && text == wtext,
              "%s rank %d: size %d lb %ld extent %ld true %ld+%ld; expected %d 0 %d %ld+%ld",
              what, r, sz, (long)lb, (long)ext, (long)tlb, (long)text, 4 * k, 4 * n,
              (long)wtlb, (long)wtext);
        int pos = 0;
        MPI_CHECK(MPI_Pack(global, 1, t, got, n * (int)sizeof(int), &pos, MPI_COMM_SELF));
        CHECK(pos == 4 * k, "%s rank %d: packed %d bytes, expected %d", what, r, pos, 4 * k);
        for (int i = 0; i < k; i++)
            CHECK(got[i] == want[i], "%s rank %d: element %d is %d, expected %d", what, r, i,
                  got[i], want[i]);
        MPI_CHECK(MPI_Type_free(&t));
    }
    free(global);
    free(want);
    free(got);
}

static void darray_layouts(void)
{
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
    const int OC = MPI_ORDER_C, OF = MPI_ORDER_FORTRAN;
    const struct darray_case cases[] = {
        {2, {4, 6}, {B, B}, {DFLT, DFLT}, {2, 2}, OC},
        {2, {4, 6}, {B, B}, {DFLT, DFLT}, {2, 2}, OF},
        {2, {5, 7}, {C, B}, {2, DFLT}, {2, 2}, OC},
        {2, {5, 7}, {C, C}, {2, 3}, {2, 2}, OC},
        {2, {5, 7}, {B, C}, {DFLT, 2}, {2, 2}, OF},
        {2, {5, 7}, {N, C}, {DFLT, DFLT}, {1, 3}, OC},
        {2, {3, 2}, {B, N}, {DFLT, DFLT}, {4, 1}, OC}, /* the last process has nothing */
        {2, {7, 2}, {C, N}, {3, DFLT}, {4, 1}, OC},
        {1, {10}, {B}, {4}, {3}, OC},                  /* blocks of 4, 4, 2 */
        {3, {3, 4, 5}, {C, B, C}, {1, DFLT, 2}, {2, 2, 2}, OC},
        {3, {3, 4, 5}, {C, B, C}, {2, DFLT, 2}, {2, 2, 2}, OF},
    };
    char what[32];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(what, sizeof what, "darray case %zu", i);
        check_darray_case(&cases[i], what);
    }

    /* Envelope and contents; the _c form gives the same type map. */
    const struct darray_case *c = &cases[2];
    MPI_Datatype t = make_darray(c, 1), tc;
    int ni, na, ndt, comb;
    MPI_CHECK(MPI_Type_get_envelope(t, &ni, &na, &ndt, &comb));
    CHECK(ni == 12 && na == 0 && ndt == 1 && comb == MPI_COMBINER_DARRAY,
          "darray envelope %d %d %d combiner %d", ni, na, ndt, comb);
    int ints[12];
    MPI_Aint addr[1];
    MPI_Datatype old;
    MPI_CHECK(MPI_Type_get_contents(t, 12, 0, 1, ints, addr, &old));
    const int want[12] = {4, 1, 2, 5, 7, C, B, 2, DFLT, 2, 2, OC};
    for (int i = 0; i < 12; i++)
        CHECK(ints[i] == want[i], "darray contents[%d] is %d, expected %d", i, ints[i], want[i]);
    CHECK(old == MPI_INT, "darray contents: oldtype is not MPI_INT");
    MPI_Count gs_c[2] = {5, 7};
    MPI_CHECK(MPI_Type_create_darray_c(4, 1, 2, gs_c, c->dist, c->darg, c->ps, OC, MPI_INT, &tc));
    MPI_CHECK(MPI_Type_commit(&tc));
    int a[35], p1[35], p2[35], n1 = 0, n2 = 0;
    for (int i = 0; i < 35; i++)
        a[i] = 3 * i;
    MPI_CHECK(MPI_Pack(a, 1, t, p1, sizeof p1, &n1, MPI_COMM_SELF));
    MPI_CHECK(MPI_Pack(a, 1, tc, p2, sizeof p2, &n2, MPI_COMM_SELF));
    CHECK(n1 == n2 && n1 == 36 && memcmp(p1, p2, n1) == 0, "darray_c differs from darray");
    MPI_CHECK(MPI_Type_free(&t));
    MPI_CHECK(MPI_Type_free(&tc));
}

/* Scatters a rows x cols array from rank 0 with one darray per rank, has
 * every rank check and change its part, and gathers it back. */
static void darray_scatter_gather(const int ps[2], const int dist[2], const int darg[2],
                                  int order, const char *what)
{
    enum { ROWS = 7, COLS = 9 };
    const struct darray_case c = {2, {ROWS, COLS}, {dist[0], dist[1]}, {darg[0], darg[1]},
                                  {ps[0], ps[1]}, order};
    int global[ROWS * COLS], back[ROWS * COLS], local[ROWS * COLS], want[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) {
        global[i] = 1000 + 7 * i;
        back[i] = -1;
    }
    MPI_Datatype *types = abicheck_malloc(size * sizeof(MPI_Datatype));
    MPI_Request *reqs = abicheck_malloc(size * sizeof(MPI_Request));
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            types[r] = make_darray(&c, r);
            MPI_CHECK(MPI_Isend(global, 1, types[r], r, 5, MPI_COMM_WORLD, &reqs[r]));
        }
    }
    int k = owned_offsets(&c, rank, want), sz;
    MPI_Datatype mine = make_darray(&c, rank);
    MPI_CHECK(MPI_Type_size(mine, &sz));
    CHECK(sz == 4 * k, "%s: darray of %d bytes, %d elements owned", what, sz, k);
    MPI_CHECK(MPI_Type_free(&mine));
    MPI_Status st;
    int got;
    MPI_CHECK(MPI_Recv(local, ROWS * COLS, MPI_INT, 0, 5, MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == k, "%s: received %d elements, expected %d", what, got, k);
    for (int i = 0; i < k; i++) {
        CHECK(local[i] == 1000 + 7 * want[i], "%s: local %d is %d, expected %d", what, i,
              local[i], 1000 + 7 * want[i]);
        local[i] = 2 * local[i] + rank;
    }
    if (rank == 0) {
        MPI_CHECK(MPI_Waitall(size, reqs, statuses_ignore));
        for (int r = 0; r < size; r++)
            MPI_CHECK(MPI_Irecv(back, 1, types[r], r, 6, MPI_COMM_WORLD, &reqs[r]));
    }
    MPI_CHECK(MPI_Send(local, k, MPI_INT, 0, 6, MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_CHECK(MPI_Waitall(size, reqs, statuses_ignore));
        /* Serially: each element doubled plus the rank that owns it. */
        int *off = abicheck_malloc(ROWS * COLS * sizeof(int));
        int expect[ROWS * COLS];
        for (int i = 0; i < ROWS * COLS; i++)
            expect[i] = -1;
        for (int r = 0; r < size; r++) {
            int m = owned_offsets(&c, r, off);
            for (int i = 0; i < m; i++)
                expect[off[i]] = 2 * global[off[i]] + r;
        }
        for (int i = 0; i < ROWS * COLS; i++)
            CHECK(back[i] == expect[i] && expect[i] != -1, "%s: element %d is %d, expected %d",
                  what, i, back[i], expect[i]);
        for (int r = 0; r < size; r++)
            MPI_CHECK(MPI_Type_free(&types[r]));
        free(off);
    }
    free(types);
    free(reqs);
}

static void darray_distributed(void)
{
    int dims[2] = {0, 0};
    MPI_CHECK(MPI_Dims_create(size, 2, dims));
    const int cb[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, d2[2] = {2, DFLT};
    darray_scatter_gather(dims, cb, d2, MPI_ORDER_C, "grid, cyclic(2) x block, C");
    darray_scatter_gather(dims, cb, d2, MPI_ORDER_FORTRAN, "grid, cyclic(2) x block, Fortran");
    const int row[2] = {1, size}, nc[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC};
    const int dd[2] = {DFLT, DFLT};
    darray_scatter_gather(row, nc, dd, MPI_ORDER_C, "1 x size, none x cyclic, C");
}

static void darray_errors(void)
{
    const int B = MPI_DISTRIBUTE_BLOCK;
    int gs[2] = {10, 4}, dist[2] = {B, B}, darg[2] = {DFLT, DFLT}, ps[2] = {2, 1};
    MPI_Datatype t;
    EXPECT_CLASS(MPI_Type_create_darray(2, 2, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Type_create_darray(2, 0, 2, gs, dist, darg, ps, 5, MPI_INT, &t),
                 MPI_ERR_ARG);
    darg[0] = 4; /* 2 blocks of 4 cannot hold 10 */
    EXPECT_CLASS(MPI_Type_create_darray(2, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
    dist[0] = MPI_DISTRIBUTE_CYCLIC;
    darg[0] = 0;
    EXPECT_CLASS(MPI_Type_create_darray(2, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
    if (!is_oxmpi)
        return; /* MPICH 4.0.2 crashes or accepts these */
    darg[0] = DFLT;
    EXPECT_CLASS(MPI_Type_create_darray(3, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG); /* a grid of 2, size 3 */
    dist[0] = MPI_DISTRIBUTE_NONE;
    EXPECT_CLASS(MPI_Type_create_darray(2, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG); /* not distributed over 2 processes */
    dist[0] = 77;
    EXPECT_CLASS(MPI_Type_create_darray(2, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
    dist[0] = B;
    gs[1] = 0;
    EXPECT_CLASS(MPI_Type_create_darray(2, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
    gs[1] = 4;
    ps[1] = 0;
    EXPECT_CLASS(MPI_Type_create_darray(2, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_darray(0, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_darray(1, 0, 0, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_DIMS);
}

/* --------------------------------------------------------- external32 */

/* Fails unless the `n` bytes at `got` are the hex digits `hex` (spaces
 * ignored). */
static void expect_hex(const void *got, int n, const char *hex, const char *what)
{
    const unsigned char *g = got;
    int k = 0;
    for (const char *h = hex; *h; h++) {
        if (*h == ' ')
            continue;
        unsigned v;
        CHECK(sscanf(h, "%2x", &v) == 1, "bad hex in test: %s", hex);
        CHECK(k < n && g[k] == v, "%s: byte %d is %02x, expected %02x (%s)", what, k,
              k < n ? g[k] : 0, v, hex);
        k++;
        h++;
    }
    CHECK(k == n, "%s: %d bytes, expected %d", what, n, k);
}

/* Packs `count` elements of `t` at `buf`, checks the bytes, the size,
 * and that unpacking gives `buf` back. */
static void ext32(const void *buf, int count, MPI_Datatype t, const char *hex, const char *what)
{
    unsigned char out[256], back[256];
    MPI_Aint size = -1, pos = 0, ipos = 0;
    MPI_CHECK(MPI_Pack_external_size("external32", count, t, &size));
    MPI_CHECK(MPI_Pack_external("external32", buf, count, t, out, sizeof out, &pos));
    CHECK(pos == size, "%s: packed %ld bytes, MPI_Pack_external_size says %ld", what,
          (long)pos, (long)size);
    expect_hex(out, (int)pos, hex, what);
    MPI_Aint lb, ext, tlb, text;
    MPI_CHECK(MPI_Type_get_extent(t, &lb, &ext));
    MPI_CHECK(MPI_Type_get_true_extent(t, &tlb, &text));
    MPI_Aint span = tlb + text + (count - 1) * ext;
    memcpy(back, buf, span);
    MPI_CHECK(MPI_Unpack_external("external32", out, pos, &ipos, back, count, t));
    CHECK(ipos == pos && memcmp(back, buf, span) == 0, "%s: unpacking did not give it back", what);
}

/* Types with padding are zeroed before their values are stored, so that
 * whole-buffer comparisons after unpacking are meaningful. */
struct ldc {
    long double re, im;
};

struct int_double {
    int i;
    double d;
};

static void external32_basic(void)
{
    int i[3] = {1, -2, 0x01020304};
    ext32(i, 3, MPI_INT, "00000001 fffffffe 01020304", "MPI_INT");
    short s[2] = {0x1234, -1};
    ext32(s, 2, MPI_SHORT, "1234 ffff", "MPI_SHORT");
    long l[2] = {0x12345678L, -2L};
    ext32(l, 2, MPI_LONG, "12345678 fffffffe", "MPI_LONG (4 bytes in external32)");
    unsigned long ul = 0xfffffffeUL;
    ext32(&ul, 1, MPI_UNSIGNED_LONG, "fffffffe", "MPI_UNSIGNED_LONG");
    long long ll = 0x0102030405060708LL;
    ext32(&ll, 1, MPI_LONG_LONG, "0102030405060708", "MPI_LONG_LONG");
    float f[2] = {1.5f, -2.0f};
    ext32(f, 2, MPI_FLOAT, "3fc00000 c0000000", "MPI_FLOAT");
    double d[2] = {1.0, -0.5};
    ext32(d, 2, MPI_DOUBLE, "3ff0000000000000 bfe0000000000000", "MPI_DOUBLE");
    long double ld[2];
    memset(ld, 0, sizeof ld);
    ld[0] = 1.5L;
    ld[1] = -2.0L;
    ext32(ld, 2, MPI_LONG_DOUBLE,
          "3fff8000000000000000000000000000 c0000000000000000000000000000000",
          "MPI_LONG_DOUBLE (binary128)");
    unsigned char c[2] = {0xa5, 0x01};
    ext32(c, 2, MPI_UNSIGNED_CHAR, "a501", "MPI_UNSIGNED_CHAR");
    ext32(c, 2, MPI_BYTE, "a501", "MPI_BYTE");
    _Bool b[2] = {1, 0};
    ext32(b, 2, MPI_C_BOOL, "0100", "MPI_C_BOOL");
    int8_t i8 = -3;
    ext32(&i8, 1, MPI_INT8_T, "fd", "MPI_INT8_T");
    uint16_t u16 = 0xabcd;
    ext32(&u16, 1, MPI_UINT16_T, "abcd", "MPI_UINT16_T");
    uint32_t u32 = 0xdeadbeef;
    ext32(&u32, 1, MPI_UINT32_T, "deadbeef", "MPI_UINT32_T");
    int64_t i64 = -2;
    ext32(&i64, 1, MPI_INT64_T, "fffffffffffffffe", "MPI_INT64_T");
    MPI_Aint ai = 0x0102030405060708L;
    ext32(&ai, 1, MPI_AINT, "0102030405060708", "MPI_AINT");
    MPI_Offset of = -1;
    ext32(&of, 1, MPI_OFFSET, "ffffffffffffffff", "MPI_OFFSET");
    MPI_Count cn = 0x10;
    ext32(&cn, 1, MPI_COUNT, "0000000000000010", "MPI_COUNT");
    float fc[2] = {1.0f, -1.0f};
    ext32(fc, 1, MPI_C_FLOAT_COMPLEX, "3f800000 bf800000", "MPI_C_FLOAT_COMPLEX");
    ext32(fc, 1, MPI_COMPLEX8, "3f800000 bf800000", "MPI_COMPLEX8");
    double dc[2] = {1.0, -0.5};
    ext32(dc, 1, MPI_C_DOUBLE_COMPLEX, "3ff0000000000000 bfe0000000000000",
          "MPI_C_DOUBLE_COMPLEX");
    ext32(dc, 1, MPI_COMPLEX16, "3ff0000000000000 bfe0000000000000", "MPI_COMPLEX16");
    struct ldc z;
    memset(&z, 0, sizeof z);
    z.re = 1.5L;
    z.im = -2.0L;
    ext32(&z, 1, MPI_C_LONG_DOUBLE_COMPLEX,
          "3fff8000000000000000000000000000 c0000000000000000000000000000000",
          "MPI_C_LONG_DOUBLE_COMPLEX");
    int fi = 7;
    ext32(&fi, 1, MPI_INTEGER, "00000007", "MPI_INTEGER");
    ext32(&fi, 1, MPI_LOGICAL, "00000007", "MPI_LOGICAL");
    ext32(f, 1, MPI_REAL, "3fc00000", "MPI_REAL");
    ext32(d, 1, MPI_DOUBLE_PRECISION, "3ff0000000000000", "MPI_DOUBLE_PRECISION");
    ext32(&ll, 1, MPI_INTEGER8, "0102030405060708", "MPI_INTEGER8");
}

static void external32_derived(void)
{
    /* Every other short. */
    short s[5] = {1, 2, 3, 4, 5};
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector(3, 1, 2, MPI_SHORT, &v));
    MPI_CHECK(MPI_Type_commit(&v));
    ext32(s, 1, v, "0001 0003 0005", "vector of shorts");
    MPI_CHECK(MPI_Type_free(&v));
    /* A vector of longs: 4 bytes each. */
    long l[3] = {-1L, 99L, 0x7fffffffL};
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_LONG, &v));
    MPI_CHECK(MPI_Type_commit(&v));
    ext32(l, 1, v, "ffffffff 7fffffff", "vector of longs");
    MPI_CHECK(MPI_Type_free(&v));
    /* A darray: rank 1 of a 1 x 2 block distribution of int a[2][4]. */
    int gs[2] = {2, 4}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int darg[2] = {DFLT, DFLT}, ps[2] = {1, 2};
    int a[8] = {0, 1, 2, 3, 0x10, 0x11, 0x12, 0x13};
    MPI_CHECK(MPI_Type_create_darray(2, 1, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &v));
    MPI_CHECK(MPI_Type_commit(&v));
    ext32(a, 1, v, "00000002 00000003 00000012 00000013", "darray");
    MPI_CHECK(MPI_Type_free(&v));

    /* Positions accumulate; the _c forms; zero elements. */
    unsigned char out[32];
    int i = 0x0a0b0c0d;
    double d = -2.0;
    MPI_Aint pos = 0;
    MPI_CHECK(MPI_Pack_external("external32", &i, 1, MPI_INT, out, sizeof out, &pos));
    MPI_CHECK(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, out, sizeof out, &pos));
    MPI_CHECK(MPI_Pack_external("external32", &d, 0, MPI_DOUBLE, out, sizeof out, &pos));
    CHECK(pos == 12, "position after int and double is %ld", (long)pos);
    expect_hex(out, 12, "0a0b0c0d c000000000000000", "int then double");
    MPI_Count cpos = 12, csize = -1;
    short sh = 0x0102;
    MPI_CHECK(MPI_Pack_external_c("external32", &sh, 1, MPI_SHORT, out, sizeof out, &cpos));
    CHECK(cpos == 14, "MPI_Pack_external_c position %lld", (long long)cpos);
    MPI_CHECK(MPI_Pack_external_size_c("external32", 3, MPI_LONG, &csize));
    CHECK(csize == 12, "MPI_Pack_external_size_c of 3 MPI_LONG is %lld", (long long)csize);
    int i2 = 0;
    double d2 = 0;
    short sh2 = 0;
    MPI_Aint ipos = 0;
    MPI_Count icpos = 12;
    MPI_CHECK(MPI_Unpack_external("external32", out, 14, &ipos, &i2, 1, MPI_INT));
    MPI_CHECK(MPI_Unpack_external("external32", out, 14, &ipos, &d2, 1, MPI_DOUBLE));
    MPI_CHECK(MPI_Unpack_external_c("external32", out, 14, &icpos, &sh2, 1, MPI_SHORT));
    CHECK(i2 == i && d2 == d && sh2 == sh && ipos == 12 && icpos == 14,
          "unpacked %x %g %x at %ld %lld", i2, d2, sh2, (long)ipos, (long long)icpos);
}

/* Types MPICH 4.0.2 crashes on or converts wrongly, and the errors. */
static void external32_oxmpi_only(void)
{
    wchar_t w[2] = {0x41, 0x263a};
    ext32(w, 2, MPI_WCHAR, "0041 263a", "MPI_WCHAR (2 bytes in external32)");
    struct { double v; int i; } di;
    memset(&di, 0, sizeof di);
    di.v = 1.5;
    di.i = 7;
    ext32(&di, 1, MPI_DOUBLE_INT, "3ff8000000000000 00000007", "MPI_DOUBLE_INT");
    struct { short v; int i; } si;
    memset(&si, 0, sizeof si);
    si.v = 0x0102;
    si.i = -1;
    ext32(&si, 1, MPI_SHORT_INT, "0102 ffffffff", "MPI_SHORT_INT");
    struct { long v; int i; } li;
    memset(&li, 0, sizeof li);
    li.v = -2L;
    li.i = 7;
    ext32(&li, 1, MPI_LONG_INT, "fffffffe 00000007", "MPI_LONG_INT");
    int ii[2] = {1, 2};
    ext32(ii, 1, MPI_2INT, "00000001 00000002", "MPI_2INT");
    float fc[2] = {1.0f, -1.0f};
    ext32(fc, 1, MPI_COMPLEX, "3f800000 bf800000", "MPI_COMPLEX");
    double dc[2] = {1.0, -0.5};
    ext32(dc, 1, MPI_DOUBLE_COMPLEX, "3ff0000000000000 bfe0000000000000", "MPI_DOUBLE_COMPLEX");
    struct int_double sd[2];
    memset(sd, 0, sizeof sd);
    sd[0].i = 1;
    sd[0].d = 1.5;
    sd[1].i = -1;
    sd[1].d = -2.0;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct int_double, i), offsetof(struct int_double, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st;
    MPI_CHECK(MPI_Type_create_struct(2, bl, disp, types, &st));
    MPI_CHECK(MPI_Type_commit(&st));
    ext32(sd, 2, st, "00000001 3ff8000000000000 ffffffff c000000000000000", "struct int double");

    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    unsigned char out[16];
    MPI_Aint pos = 0, sz;
    int x[4] = {0};
    EXPECT_CLASS(MPI_Pack_external("native", x, 1, MPI_INT, out, sizeof out, &pos), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Pack_external_size(NULL, 1, MPI_INT, &sz), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Unpack_external("External32", out, 4, &pos, x, 1, MPI_INT), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Pack_external("external32", x, 4, MPI_INT, out, 8, &pos), MPI_ERR_TRUNCATE);
    EXPECT_CLASS(MPI_Unpack_external("external32", out, 8, &pos, x, 4, MPI_INT),
                 MPI_ERR_TRUNCATE);
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    EXPECT_CLASS(MPI_Pack_external("external32", x, 1, v, out, sizeof out, &pos), MPI_ERR_TYPE);
    MPI_CHECK(MPI_Type_free(&v));
    MPI_CHECK(MPI_Type_free(&st));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* ---------------------------------------------------------------- f90 */

static void expect_f90(MPI_Datatype t, int combiner, int ni, int p, int r, int bytes,
                       const char *what)
{
    int n_i, n_a, n_d, comb, sz, ints[2] = {-1, -1};
    MPI_CHECK(MPI_Type_get_envelope(t, &n_i, &n_a, &n_d, &comb));
    CHECK(n_i == ni && n_a == 0 && n_d == 0 && comb == combiner,
          "%s: envelope %d %d %d combiner %d", what, n_i, n_a, n_d, comb);
    MPI_CHECK(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
    CHECK(ni == 1 ? ints[0] == r : ints[0] == p && ints[1] == r, "%s: contents %d %d", what,
          ints[0], ints[1]);
    MPI_CHECK(MPI_Type_size(t, &sz));
    CHECK(sz == bytes, "%s: %d bytes, expected %d", what, sz, bytes);
}

static void f90_types(void)
{
    const int U = MPI_UNDEFINED;
    const int rs[] = {1, 2, 3, 4, 5, 9, 10, 18, U}, bytes[] = {1, 1, 2, 2, 4, 4, 8, 8, 1};
    char what[48];
    for (size_t k = 0; k < sizeof rs / sizeof *rs; k++) {
        MPI_Datatype t, again;
        MPI_CHECK(MPI_Type_create_f90_integer(rs[k], &t));
        snprintf(what, sizeof what, "f90 integer r=%d", rs[k]);
        expect_f90(t, MPI_COMBINER_F90_INTEGER, 1, 0, rs[k], bytes[k], what);
        MPI_CHECK(MPI_Type_create_f90_integer(rs[k], &again));
        CHECK(again == t, "%s: a second call gave another handle", what);
    }
    const int prs[][4] = {/* p, r, real bytes, complex bytes */
                          {6, 37, 4, 8},  {1, 1, 4, 8},    {7, U, 8, 16},
                          {U, 38, 8, 16}, {15, 307, 8, 16}, {U, 10, 4, 8}};
    for (size_t k = 0; k < sizeof prs / sizeof *prs; k++) {
        MPI_Datatype t;
        MPI_CHECK(MPI_Type_create_f90_real(prs[k][0], prs[k][1], &t));
        snprintf(what, sizeof what, "f90 real p=%d r=%d", prs[k][0], prs[k][1]);
        expect_f90(t, MPI_COMBINER_F90_REAL, 2, prs[k][0], prs[k][1], prs[k][2], what);
        MPI_CHECK(MPI_Type_create_f90_complex(prs[k][0], prs[k][1], &t));
        snprintf(what, sizeof what, "f90 complex p=%d r=%d", prs[k][0], prs[k][1]);
        expect_f90(t, MPI_COMBINER_F90_COMPLEX, 2, prs[k][0], prs[k][1], prs[k][3], what);
    }
    /* Different arguments, different handles, even for the same kind. */
    MPI_Datatype i5, i9, r8, c16;
    MPI_CHECK(MPI_Type_create_f90_integer(5, &i5));
    MPI_CHECK(MPI_Type_create_f90_integer(9, &i9));
    CHECK(i5 != i9, "f90 integer r=5 and r=9 share a handle");

    /* In communication and reductions, as the kind's predefined type. */
    MPI_CHECK(MPI_Type_commit(&i9));
    int in[3] = {rank, 1, -rank}, sum[3];
    MPI_CHECK(MPI_Allreduce(in, sum, 3, i9, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum[0] == size * (size - 1) / 2 && sum[1] == size && sum[2] == -sum[0],
          "allreduce with the f90 integer: %d %d %d", sum[0], sum[1], sum[2]);
    MPI_CHECK(MPI_Type_create_f90_real(15, 300, &r8));
    double dv = rank + 0.5, dmax;
    MPI_CHECK(MPI_Allreduce(&dv, &dmax, 1, r8, MPI_MAX, MPI_COMM_WORLD));
    CHECK(dmax == size - 0.5, "allreduce with the f90 real: %g", dmax);
    MPI_CHECK(MPI_Type_create_f90_complex(10, 100, &c16));
    double zs[2] = {rank, -rank}, zr[2] = {-1, -1};
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_CHECK(MPI_Sendrecv(zs, 1, c16, to, 9, zr, 1, c16, from, 9, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    CHECK(zr[0] == from && zr[1] == -from, "sendrecv with the f90 complex: %g %g", zr[0], zr[1]);
    MPI_Aint ext32size;
    MPI_CHECK(MPI_Pack_external_size("external32", 2, i9, &ext32size));
    CHECK(ext32size == 8, "external32 size of 2 f90 integer(9) is %ld", (long)ext32size);

    /* A dup records the f90 type itself as its argument. */
    MPI_Datatype dup, inner;
    MPI_CHECK(MPI_Type_dup(r8, &dup));
    MPI_CHECK(MPI_Type_get_contents(dup, 0, 0, 1, NULL, NULL, &inner));
    CHECK(inner == r8, "the dup's contents are not the f90 handle");
    MPI_CHECK(MPI_Type_free(&dup));

    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Datatype t = MPI_DATATYPE_NULL;
    /* No such kinds: MPICH says MPI_ERR_OTHER, OxMPI MPI_ERR_ARG. */
    int rc[3] = {MPI_Type_create_f90_integer(19, &t), MPI_Type_create_f90_real(16, 307, &t),
                 MPI_Type_create_f90_complex(1, 400, &t)};
    for (int k = 0; k < 3; k++)
        CHECK(rc[k] != MPI_SUCCESS, "f90 call %d found a kind that does not exist", k);
    if (is_oxmpi) {
        for (int k = 0; k < 3; k++)
            CHECK(abicheck_class(rc[k]) == MPI_ERR_ARG, "f90 call %d: class %d", k,
                  abicheck_class(rc[k]));
        EXPECT_CLASS(MPI_Type_create_f90_real(U, U, &t), MPI_ERR_ARG);
        EXPECT_CLASS(MPI_Type_free(&i5), MPI_ERR_TYPE); /* predefined */
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
    darray_layouts();
    darray_distributed();
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    darray_errors();
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    external32_basic();
    external32_derived();
    if (is_oxmpi)
        external32_oxmpi_only();
    f90_types();
    abicheck_pass("types_ext");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
