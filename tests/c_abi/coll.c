/*
 * Collectives through the C ABI, every result checked against a serial
 * reference computed locally: barrier, bcast, reduce, allreduce (built-in
 * ops on several types, MINLOC on MPI_DOUBLE_INT, MAXLOC on MPI_2INT),
 * gather(v), scatter(v), allgather(v), alltoall(v,w), reduce_scatter(_block),
 * scan, exscan, reduce_local; MPI_IN_PLACE variants; a non-commutative user
 * operation proving rank order; uneven v-counts with zero blocks and gaps;
 * the non-blocking twins, several in flight at once; and the error classes
 * of bad arguments under MPI_ERRORS_RETURN.
 * Prints "PASS coll" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

#define CHECK_EQ(got, want, ...)                                               \
    CHECK((got) == (want), __VA_ARGS__)

/* ---- a non-commutative, associative operation: decimal concatenation ---- */

static long tens_above(long b)
{
    long p = 10;
    while (b >= p)
        p *= 10;
    return p;
}

static int concat_calls;

/* inoutvec[i] = invec[i] "followed by" inoutvec[i] (invec is the lower ranks'). */
static void concat_fn(void *invec, void *inoutvec, int *len, MPI_Datatype *type)
{
    const long *a = invec;
    long *b = inoutvec;
    if (*type != MPI_LONG) {
        fprintf(stderr, "FAIL coll.c: user op got the wrong datatype\n");
        abort();
    }
    for (int i = 0; i < *len; i++)
        b[i] = a[i] * tens_above(b[i]) + b[i];
    concat_calls++;
}

/* Rank r's digit for element i: 1..9, never 0. */
static long digit(int r, int i) { return (r + i) % 9 + 1; }

static long concat_ref(int from, int to, int i)
{
    long v = 0;
    for (int r = from; r <= to; r++)
        v = v * 10 + digit(r, i);
    return v;
}

/* ---- helpers ---- */

static int value(int r, int i) { return r * 1000 + i; }

static void fill_int(int *p, int n, int v)
{
    for (int i = 0; i < n; i++)
        p[i] = v;
}

static void test_bcast(void)
{
    enum { N = 7 };
    for (int root = 0; root < size; root++) {
        int buf[N];
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? value(root, i) : -1;
        MPI_CHECK(MPI_Bcast(buf, N, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK_EQ(buf[i], value(root, i), "bcast root %d: buf[%d] = %d", root, i, buf[i]);
    }
    /* Large, non-blocking: doubles. */
    int n = 100000, root = size - 1;
    double *d = abicheck_malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        d[i] = rank == root ? i * 0.5 : -1.0;
    MPI_Request req;
    MPI_CHECK(MPI_Ibcast(d, n, MPI_DOUBLE, root, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "Wait did not free the request");
    for (int i = 0; i < n; i++)
        CHECK(d[i] == i * 0.5, "ibcast d[%d] = %g", i, d[i]);
    free(d);
}

static void test_reduce(void)
{
    enum { N = 6 };
    int send[N], recv[N], want[N];
    for (int i = 0; i < N; i++) {
        send[i] = value(rank, i);
        want[i] = 0;
        for (int r = 0; r < size; r++)
            want[i] += value(r, i);
    }
    for (int root = 0; root < size; root++) {
        fill_int(recv, N, -1);
        MPI_CHECK(MPI_Reduce(send, recv, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            if (rank == root)
                CHECK_EQ(recv[i], want[i], "reduce root %d: [%d] = %d", root, i, recv[i]);
            else
                CHECK_EQ(recv[i], -1, "reduce wrote recvbuf on a non-root rank");
        }
        /* In place at the root. */
        int buf[N];
        memcpy(buf, send, sizeof buf);
        if (rank == root)
            MPI_CHECK(MPI_Reduce(MPI_IN_PLACE, buf, N, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Reduce(buf, NULL, N, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int i = 0; i < N; i++)
                CHECK_EQ(buf[i], value(size - 1, i), "reduce in place: [%d] = %d", i, buf[i]);
        MPI_Request req;
        fill_int(recv, N, -1);
        MPI_CHECK(MPI_Ireduce(send, recv, N, MPI_INT, MPI_MIN, root, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (rank == root)
            for (int i = 0; i < N; i++)
                CHECK_EQ(recv[i], value(0, i), "ireduce min: [%d] = %d", i, recv[i]);
    }
}

static void test_allreduce(void)
{
    enum { N = 5 };
    /* Integers: sum, prod, min, max, bitwise and logical ops. */
    int send[N], recv[N];
    for (int i = 0; i < N; i++)
        send[i] = (rank + 1) * (i + 1);
    struct {
        MPI_Op op;
        const char *name;
    } ops[] = {{MPI_SUM, "sum"}, {MPI_PROD, "prod"}, {MPI_MIN, "min"}, {MPI_MAX, "max"},
               {MPI_BAND, "band"}, {MPI_BOR, "bor"}, {MPI_BXOR, "bxor"},
               {MPI_LAND, "land"}, {MPI_LOR, "lor"}, {MPI_LXOR, "lxor"}};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        MPI_CHECK(MPI_Allreduce(send, recv, N, MPI_INT, ops[k].op, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            int w = (i + 1);
            for (int r = 1; r < size; r++) {
                int x = (r + 1) * (i + 1);
                switch (k) {
                case 0: w += x; break;
                case 1: w *= x; break;
                case 2: w = w < x ? w : x; break;
                case 3: w = w > x ? w : x; break;
                case 4: w &= x; break;
                case 5: w |= x; break;
                case 6: w ^= x; break;
                case 7: w = w && x; break;
                case 8: w = w || x; break;
                case 9: w = !w != !x; break;
                }
            }
            CHECK_EQ(recv[i], w, "allreduce %s: [%d] = %d, expected %d", ops[k].name, i,
                     recv[i], w);
        }
    }
    /* Large doubles in place (other algorithms), exact integer values. */
    int n = 50000;
    double *d = abicheck_malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        d[i] = (double)(rank + i % 7);
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) {
        double w = size * (size - 1) / 2.0 + (double)size * (i % 7);
        CHECK(d[i] == w, "allreduce in place: d[%d] = %g, expected %g", i, d[i], w);
    }
    free(d);
    /* Long, unsigned long, float, C bool. */
    long l = rank == 0 ? -5 : rank, lw = -5;
    for (int r = 1; r < size; r++)
        lw += r;
    long lr = 0;
    MPI_CHECK(MPI_Allreduce(&l, &lr, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK_EQ(lr, lw, "allreduce long: %ld", lr);
    unsigned long ul = 1ul << (rank % 60), ulr = 0, ulw = 0;
    for (int r = 0; r < size; r++)
        ulw |= 1ul << (r % 60);
    MPI_CHECK(MPI_Allreduce(&ul, &ulr, 1, MPI_UNSIGNED_LONG, MPI_BOR, MPI_COMM_WORLD));
    CHECK_EQ(ulr, ulw, "allreduce unsigned long bor: %lx", ulr);
    float f = (float)rank + 0.5f, fr = 0;
    MPI_CHECK(MPI_Allreduce(&f, &fr, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(fr == (float)(size - 1) + 0.5f, "allreduce float max: %g", fr);
    _Bool b = rank == size - 1, br = 0;
    MPI_CHECK(MPI_Allreduce(&b, &br, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD));
    CHECK(br == 1, "allreduce bool lor: %d", br);
    /* Non-blocking, two in flight. */
    int a1 = rank, a2 = 2 * rank, r1 = -1, r2 = -1;
    MPI_Request reqs[2];
    MPI_CHECK(MPI_Iallreduce(&a1, &r1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Iallreduce(&a2, &r2, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &reqs[1]));
    MPI_Status sts[2];
    MPI_CHECK(MPI_Waitall(2, reqs, sts));
    CHECK_EQ(r1, size * (size - 1) / 2, "iallreduce sum: %d", r1);
    CHECK_EQ(r2, 2 * (size - 1), "iallreduce max: %d", r2);
}

struct double_int {
    double v;
    int i;
};

struct int_int {
    int v;
    int i;
};

static void test_loc(void)
{
    enum { N = 9 };
    struct double_int in[N], out[N];
    struct int_int in2[N], out2[N];
    for (int k = 0; k < N; k++) {
        in[k].v = (double)((rank * 3 + k) % 4);
        in[k].i = rank;
        in2[k].v = (rank * 5 + k) % 3;
        in2[k].i = rank + 100;
    }
    MPI_CHECK(MPI_Allreduce(in, out, N, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Allreduce(in2, out2, N, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
    for (int k = 0; k < N; k++) {
        double bv = 1e300;
        int bi = -1, mv = -1, mi = -1;
        for (int r = 0; r < size; r++) {
            double v = (double)((r * 3 + k) % 4);
            if (v < bv) { /* ties keep the lowest index */
                bv = v;
                bi = r;
            }
            int v2 = (r * 5 + k) % 3;
            if (v2 > mv) {
                mv = v2;
                mi = r + 100;
            }
        }
        CHECK(out[k].v == bv && out[k].i == bi, "minloc [%d] = (%g, %d), expected (%g, %d)",
              k, out[k].v, out[k].i, bv, bi);
        CHECK(out2[k].v == mv && out2[k].i == mi, "maxloc [%d] = (%d, %d), expected (%d, %d)",
              k, out2[k].v, out2[k].i, mv, mi);
    }
    /* MINLOC at a root. */
    MPI_CHECK(MPI_Reduce(in, rank == 0 ? out : NULL, N, MPI_DOUBLE_INT, MPI_MAXLOC, 0,
                         MPI_COMM_WORLD));
    if (rank == 0)
        for (int k = 0; k < N; k++) {
            double bv = -1;
            int bi = -1;
            for (int r = 0; r < size; r++)
                if ((double)((r * 3 + k) % 4) > bv) {
                    bv = (double)((r * 3 + k) % 4);
                    bi = r;
                }
            CHECK(out[k].v == bv && out[k].i == bi, "reduce maxloc [%d]", k);
        }
}

static void test_user_op(void)
{
    MPI_Op concat;
    int commute = -1;
    MPI_CHECK(MPI_Op_create(concat_fn, 0, &concat));
    MPI_CHECK(MPI_Op_commutative(concat, &commute));
    CHECK_EQ(commute, 0, "MPI_Op_commutative says %d", commute);
    MPI_CHECK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK_EQ(commute, 1, "MPI_SUM not commutative?");

    int counts[] = {1, 7, 3000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int n = counts[c];
        long *in = abicheck_malloc(n * sizeof(long));
        long *out = abicheck_malloc(n * sizeof(long));
        for (int i = 0; i < n; i++)
            in[i] = digit(rank, i);
        for (int root = 0; root < size; root += size > 2 ? size - 1 : 1) {
            MPI_CHECK(MPI_Reduce(in, out, n, MPI_LONG, concat, root, MPI_COMM_WORLD));
            if (rank == root)
                for (int i = 0; i < n; i++)
                    CHECK_EQ(out[i], concat_ref(0, size - 1, i),
                             "reduce concat root %d: [%d] = %ld, expected %ld", root, i, out[i],
                             concat_ref(0, size - 1, i));
        }
        MPI_CHECK(MPI_Allreduce(in, out, n, MPI_LONG, concat, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK_EQ(out[i], concat_ref(0, size - 1, i), "allreduce concat [%d] = %ld", i,
                     out[i]);
        MPI_CHECK(MPI_Scan(in, out, n, MPI_LONG, concat, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK_EQ(out[i], concat_ref(0, rank, i), "scan concat [%d] = %ld", i, out[i]);
        MPI_CHECK(MPI_Exscan(in, out, n, MPI_LONG, concat, MPI_COMM_WORLD));
        if (rank > 0)
            for (int i = 0; i < n; i++)
                CHECK_EQ(out[i], concat_ref(0, rank - 1, i), "exscan concat [%d] = %ld", i,
                         out[i]);
        free(in);
        free(out);
    }
    /* reduce_scatter_block: block r of the concatenation lands on rank r. */
    enum { B = 3 };
    long *in = abicheck_malloc(B * size * sizeof(long)), out[B];
    for (int i = 0; i < B * size; i++)
        in[i] = digit(rank, i);
    MPI_CHECK(MPI_Reduce_scatter_block(in, out, B, MPI_LONG, concat, MPI_COMM_WORLD));
    for (int i = 0; i < B; i++)
        CHECK_EQ(out[i], concat_ref(0, size - 1, rank * B + i), "reduce_scatter_block concat");
    free(in);
    /* Reduce_local: inout = in op inout. */
    long a = 12, b = 345;
    MPI_CHECK(MPI_Reduce_local(&a, &b, 1, MPI_LONG, concat));
    CHECK_EQ(b, 12345L, "reduce_local concat: %ld", b);
    int ia[3] = {1, 2, 3}, ib[3] = {10, 20, 30};
    MPI_CHECK(MPI_Reduce_local(ia, ib, 3, MPI_INT, MPI_SUM));
    CHECK(ib[0] == 11 && ib[1] == 22 && ib[2] == 33, "reduce_local sum");
    CHECK(concat_calls > 0, "the user function was never called");
    MPI_CHECK(MPI_Op_free(&concat));
    CHECK(concat == MPI_OP_NULL, "MPI_Op_free did not set MPI_OP_NULL");
}

/* Rank r's block in the v tests: r % 3 elements (zero for some ranks). */
static int vcount(int r) { return r % 3 + (r == 0); }

static void test_gather_scatter(void)
{
    enum { B = 4 };
    int *all = abicheck_malloc(B * size * sizeof(int));
    int mine[B];
    for (int root = 0; root < size; root++) {
        /* Gather. */
        for (int i = 0; i < B; i++)
            mine[i] = value(rank, i);
        fill_int(all, B * size, -1);
        MPI_CHECK(MPI_Gather(mine, B, MPI_INT, all, B, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < B; i++)
                    CHECK_EQ(all[r * B + i], value(r, i), "gather root %d: [%d][%d]", root, r, i);
        /* Gather in place. */
        if (rank == root) {
            fill_int(all, B * size, -1);
            for (int i = 0; i < B; i++)
                all[root * B + i] = value(root, i);
            MPI_CHECK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, B, MPI_INT, root,
                                 MPI_COMM_WORLD));
            for (int r = 0; r < size; r++)
                for (int i = 0; i < B; i++)
                    CHECK_EQ(all[r * B + i], value(r, i), "gather in place [%d][%d]", r, i);
        } else {
            MPI_CHECK(MPI_Gather(mine, B, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root,
                                 MPI_COMM_WORLD));
        }
        /* Scatter back, shifted values. */
        if (rank == root)
            for (int i = 0; i < B * size; i++)
                all[i] = i + 7 * root;
        fill_int(mine, B, -1);
        MPI_CHECK(MPI_Scatter(all, B, MPI_INT, mine, B, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < B; i++)
            CHECK_EQ(mine[i], rank * B + i + 7 * root, "scatter root %d: [%d] = %d", root, i,
                     mine[i]);
        /* Scatter in place at the root. */
        if (rank == root)
            MPI_CHECK(MPI_Scatter(all, B, MPI_INT, MPI_IN_PLACE, B, MPI_INT, root,
                                  MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, mine, B, MPI_INT, root,
                                  MPI_COMM_WORLD));
        for (int i = 0; i < B; i++)
            CHECK_EQ(mine[i], rank * B + i + 7 * root, "scatter in place");
        /* Igather + Iscatter in flight together (separate buffers). */
        MPI_Request reqs[2];
        int back[B];
        int *src = abicheck_malloc(B * size * sizeof(int));
        for (int i = 0; i < B * size; i++)
            src[i] = -i;
        fill_int(all, B * size, -1);
        MPI_CHECK(MPI_Igather(mine, B, MPI_INT, all, B, MPI_INT, root, MPI_COMM_WORLD,
                              &reqs[0]));
        MPI_CHECK(MPI_Iscatter(src, B, MPI_INT, back, B, MPI_INT, root, MPI_COMM_WORLD,
                               &reqs[1]));
        MPI_Status sts[2];
    MPI_CHECK(MPI_Waitall(2, reqs, sts));
        for (int i = 0; i < B; i++)
            CHECK_EQ(back[i], -(rank * B + i), "iscatter [%d] = %d", i, back[i]);
        if (rank == root)
            for (int i = 0; i < B * size; i++)
                CHECK_EQ(all[i], i + 7 * root, "igather [%d] = %d", i, all[i]);
        free(src);
    }
    free(all);

    /* Gatherv / scatterv with uneven counts, zero blocks and gaps. */
    int *counts = abicheck_malloc(size * sizeof(int));
    int *displs = abicheck_malloc(size * sizeof(int));
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = vcount(r);
        displs[r] = total + r; /* one-element gap before each block */
        total += counts[r] + r;
    }
    total += 1;
    int *v = abicheck_malloc(total * sizeof(int));
    int my[3];
    for (int i = 0; i < vcount(rank); i++)
        my[i] = value(rank, i);
    for (int root = 0; root < size; root++) {
        fill_int(v, total, -1);
        MPI_Request req;
        MPI_CHECK(MPI_Igatherv(my, vcount(rank), MPI_INT, v, counts, displs, MPI_INT, root,
                               MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (rank == root) {
            int *want = abicheck_malloc(total * sizeof(int));
            fill_int(want, total, -1);
            for (int r = 0; r < size; r++)
                for (int i = 0; i < counts[r]; i++)
                    want[displs[r] + i] = value(r, i);
            for (int i = 0; i < total; i++)
                CHECK_EQ(v[i], want[i], "gatherv root %d: [%d] = %d, expected %d", root, i, v[i],
                         want[i]);
            free(want);
        }
        /* Gatherv in place, then scatterv it back. */
        if (rank == root)
            MPI_CHECK(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, v, counts, displs, MPI_INT, root,
                                  MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Gatherv(my, vcount(rank), MPI_INT, NULL, NULL, NULL, MPI_INT, root,
                                  MPI_COMM_WORLD));
        int got[3] = {-1, -1, -1};
        MPI_CHECK(MPI_Scatterv(v, counts, displs, MPI_INT, got, vcount(rank), MPI_INT, root,
                               MPI_COMM_WORLD));
        for (int i = 0; i < vcount(rank); i++)
            CHECK_EQ(got[i], value(rank, i), "scatterv root %d: [%d] = %d", root, i, got[i]);
        CHECK_EQ(got[vcount(rank)], -1, "scatterv wrote past its block");
        if (rank == root)
            MPI_CHECK(MPI_Iscatterv(v, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root,
                                    MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Iscatterv(NULL, NULL, NULL, MPI_INT, got, vcount(rank), MPI_INT, root,
                                    MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    free(v);
    free(counts);
    free(displs);
}

static void test_allgather(void)
{
    enum { B = 3 };
    int *all = abicheck_malloc(B * size * sizeof(int));
    int mine[B];
    for (int i = 0; i < B; i++)
        mine[i] = value(rank, i);
    MPI_CHECK(MPI_Allgather(mine, B, MPI_INT, all, B, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < B; i++)
            CHECK_EQ(all[r * B + i], value(r, i), "allgather [%d][%d]", r, i);
    fill_int(all, B * size, -1);
    memcpy(all + rank * B, mine, sizeof mine);
    MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, B, MPI_INT,
                            MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < B; i++)
            CHECK_EQ(all[r * B + i], value(r, i), "allgather in place [%d][%d]", r, i);
    MPI_Request req;
    fill_int(all, B * size, -1);
    MPI_CHECK(MPI_Iallgather(mine, B, MPI_INT, all, B, MPI_INT, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int r = 0; r < size; r++)
        CHECK_EQ(all[r * B], value(r, 0), "iallgather [%d]", r);
    free(all);

    /* Allgatherv, uneven, with gaps; blocking, in place and non-blocking. */
    int *counts = abicheck_malloc(size * sizeof(int));
    int *displs = abicheck_malloc(size * sizeof(int));
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = vcount(r);
        displs[r] = total; /* a one-element gap after each block */
        total += counts[r] + 1;
    }
    int *v = abicheck_malloc(total * sizeof(int));
    int *want = abicheck_malloc(total * sizeof(int));
    fill_int(want, total, -1);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            want[displs[r] + i] = value(r, i);
    for (int mode = 0; mode < 3; mode++) {
        fill_int(v, total, -1);
        if (mode == 0) {
            MPI_CHECK(MPI_Allgatherv(mine, vcount(rank), MPI_INT, v, counts, displs, MPI_INT,
                                     MPI_COMM_WORLD));
        } else if (mode == 1) {
            for (int i = 0; i < vcount(rank); i++)
                v[displs[rank] + i] = value(rank, i);
            MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, counts, displs,
                                     MPI_INT, MPI_COMM_WORLD));
        } else {
            MPI_CHECK(MPI_Iallgatherv(mine, vcount(rank), MPI_INT, v, counts, displs, MPI_INT,
                                      MPI_COMM_WORLD, &req));
            MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        for (int i = 0; i < total; i++)
            CHECK_EQ(v[i], want[i], "allgatherv mode %d: [%d] = %d, expected %d", mode, i, v[i],
                     want[i]);
    }
    free(v);
    free(want);
    free(counts);
    free(displs);
}

/* What rank i sends rank j, element k. */
static int a2a_small(int i, int j) { return i * 100 + j; }

static int a2a(int i, int j, int k) { return i * 10000 + j * 100 + k; }

static void test_alltoall(void)
{
    enum { B = 2 };
    int *s = abicheck_malloc(B * size * sizeof(int));
    int *r = abicheck_malloc(B * size * sizeof(int));
    for (int j = 0; j < size; j++)
        for (int k = 0; k < B; k++)
            s[j * B + k] = a2a(rank, j, k);
    for (int mode = 0; mode < 3; mode++) {
        fill_int(r, B * size, -1);
        if (mode == 0) {
            MPI_CHECK(MPI_Alltoall(s, B, MPI_INT, r, B, MPI_INT, MPI_COMM_WORLD));
        } else if (mode == 1) {
            memcpy(r, s, B * size * sizeof(int));
            MPI_CHECK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, B, MPI_INT,
                                   MPI_COMM_WORLD));
        } else {
            MPI_Request req;
            MPI_CHECK(MPI_Ialltoall(s, B, MPI_INT, r, B, MPI_INT, MPI_COMM_WORLD, &req));
            MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        for (int j = 0; j < size; j++)
            for (int k = 0; k < B; k++)
                CHECK_EQ(r[j * B + k], a2a(j, rank, k), "alltoall mode %d: from %d [%d] = %d",
                         mode, j, k, r[j * B + k]);
    }
    free(s);
    free(r);

    /* Alltoallv: rank i sends (i + j) % 3 elements to rank j. */
    int *sc = abicheck_malloc(size * sizeof(int)), *sd = abicheck_malloc(size * sizeof(int));
    int *rc = abicheck_malloc(size * sizeof(int)), *rd = abicheck_malloc(size * sizeof(int));
    int st = 0, rt = 0;
    for (int j = 0; j < size; j++) {
        sc[j] = (rank + j) % 3;
        sd[j] = st;
        st += sc[j];
        rc[j] = (j + rank) % 3;
        rd[j] = rt + 1; /* gaps on the receive side */
        rt += rc[j] + 1;
    }
    int *sv = abicheck_malloc((st + 1) * sizeof(int)), *rv = abicheck_malloc((rt + 1) * sizeof(int));
    for (int j = 0; j < size; j++)
        for (int k = 0; k < sc[j]; k++)
            sv[sd[j] + k] = a2a(rank, j, k);
    for (int mode = 0; mode < 2; mode++) {
        fill_int(rv, rt + 1, -1);
        if (mode == 0) {
            MPI_CHECK(MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD));
        } else {
            MPI_Request req;
            MPI_CHECK(MPI_Ialltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD,
                                     &req));
            MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        for (int j = 0; j < size; j++) {
            CHECK_EQ(rv[rd[j] - 1], -1, "alltoallv wrote into a gap");
            for (int k = 0; k < rc[j]; k++)
                CHECK_EQ(rv[rd[j] + k], a2a(j, rank, k), "alltoallv from %d [%d] = %d", j, k,
                         rv[rd[j] + k]);
        }
    }
    /* Alltoallv in place: equal counts. */
    int *ip = abicheck_malloc(2 * size * sizeof(int));
    int *c2 = abicheck_malloc(size * sizeof(int)), *d2 = abicheck_malloc(size * sizeof(int));
    for (int j = 0; j < size; j++) {
        c2[j] = 2;
        d2[j] = 2 * j;
        ip[2 * j] = a2a(rank, j, 0);
        ip[2 * j + 1] = a2a(rank, j, 1);
    }
    MPI_CHECK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ip, c2, d2, MPI_INT,
                            MPI_COMM_WORLD));
    for (int j = 0; j < size; j++)
        CHECK(ip[2 * j] == a2a(j, rank, 0) && ip[2 * j + 1] == a2a(j, rank, 1),
              "alltoallv in place from %d", j);

    /* Alltoallw: ints with even peers-sum, doubles with odd; byte displacements. */
    int *wc = abicheck_malloc(size * sizeof(int)), *wsd = abicheck_malloc(size * sizeof(int));
    int *wrd = abicheck_malloc(size * sizeof(int));
    MPI_Datatype *wt = abicheck_malloc(size * sizeof(MPI_Datatype));
    char *wsend = abicheck_malloc(size * 16), *wrecv = abicheck_malloc(size * 16);
    for (int j = 0; j < size; j++) {
        int dbl = (rank + j) % 2;
        wt[j] = dbl ? MPI_DOUBLE : MPI_INT;
        wc[j] = dbl ? 2 : 3;
        wsd[j] = wrd[j] = 16 * j;
        for (int k = 0; k < wc[j]; k++) {
            if (dbl)
                ((double *)(wsend + 16 * j))[k] = a2a(rank, j, k) + 0.25;
            else
                ((int *)(wsend + 16 * j))[k] = a2a(rank, j, k);
        }
    }
    memset(wrecv, 0, size * 16);
    MPI_Request req;
    MPI_CHECK(MPI_Ialltoallw(wsend, wc, wsd, wt, wrecv, wc, wrd, wt, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int j = 0; j < size; j++)
        for (int k = 0; k < wc[j]; k++) {
            if ((rank + j) % 2)
                CHECK(((double *)(wrecv + 16 * j))[k] == a2a(j, rank, k) + 0.25,
                      "alltoallw double from %d [%d]", j, k);
            else
                CHECK_EQ(((int *)(wrecv + 16 * j))[k], a2a(j, rank, k),
                         "alltoallw int from %d [%d]", j, k);
        }
    memset(wrecv, 0, size * 16);
    MPI_CHECK(MPI_Alltoallw(wsend, wc, wsd, wt, wrecv, wc, wrd, wt, MPI_COMM_WORLD));
    for (int j = 0; j < size; j++)
        if ((rank + j) % 2 == 0)
            CHECK_EQ(((int *)(wrecv + 16 * j))[0], a2a(j, rank, 0), "alltoallw int from %d", j);
    free(wc);
    free(wsd);
    free(wrd);
    free(wt);
    free(wsend);
    free(wrecv);
    free(ip);
    free(c2);
    free(d2);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sv);
    free(rv);
}

static void test_reduce_scatter(void)
{
    int *counts = abicheck_malloc(size * sizeof(int));
    int total = 0, before = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = vcount(r);
        if (r < rank)
            before += counts[r];
        total += counts[r];
    }
    int *in = abicheck_malloc(total * sizeof(int));
    int out[3];
    for (int i = 0; i < total; i++)
        in[i] = value(rank, i);
    for (int mode = 0; mode < 3; mode++) {
        fill_int(out, 3, -1);
        if (mode == 0) {
            MPI_CHECK(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        } else if (mode == 1) {
            MPI_Request req;
            MPI_CHECK(MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                          &req));
            MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            int *buf = abicheck_malloc(total * sizeof(int));
            memcpy(buf, in, total * sizeof(int));
            MPI_CHECK(MPI_Reduce_scatter(MPI_IN_PLACE, buf, counts, MPI_INT, MPI_SUM,
                                         MPI_COMM_WORLD));
            memcpy(out, buf, vcount(rank) * sizeof(int));
            free(buf);
        }
        for (int i = 0; i < counts[rank]; i++) {
            int w = 0;
            for (int r = 0; r < size; r++)
                w += value(r, before + i);
            CHECK_EQ(out[i], w, "reduce_scatter mode %d: [%d] = %d, expected %d", mode, i,
                     out[i], w);
        }
    }
    free(in);
    free(counts);

    enum { B = 4 };
    double *din = abicheck_malloc(B * size * sizeof(double)), dout[B];
    for (int i = 0; i < B * size; i++)
        din[i] = rank + i;
    for (int mode = 0; mode < 3; mode++) {
        if (mode == 0) {
            MPI_CHECK(MPI_Reduce_scatter_block(din, dout, B, MPI_DOUBLE, MPI_MAX,
                                               MPI_COMM_WORLD));
        } else if (mode == 1) {
            MPI_Request req;
            MPI_CHECK(MPI_Ireduce_scatter_block(din, dout, B, MPI_DOUBLE, MPI_MAX,
                                                MPI_COMM_WORLD, &req));
            MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            double *buf = abicheck_malloc(B * size * sizeof(double));
            memcpy(buf, din, B * size * sizeof(double));
            MPI_CHECK(MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, B, MPI_DOUBLE, MPI_MAX,
                                               MPI_COMM_WORLD));
            memcpy(dout, buf, sizeof dout);
            free(buf);
        }
        for (int i = 0; i < B; i++)
            CHECK(dout[i] == (double)(size - 1 + rank * B + i),
                  "reduce_scatter_block mode %d: [%d] = %g", mode, i, dout[i]);
    }
    free(din);
}

static void test_scan(void)
{
    enum { N = 3 };
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = value(rank, i);
    for (int mode = 0; mode < 4; mode++) {
        fill_int(out, N, -1);
        MPI_Request req;
        switch (mode) {
        case 0:
            MPI_CHECK(MPI_Scan(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            break;
        case 1:
            memcpy(out, in, sizeof in);
            MPI_CHECK(MPI_Scan(MPI_IN_PLACE, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            break;
        case 2:
            MPI_CHECK(MPI_Iscan(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
            MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            break;
        default:
            MPI_CHECK(MPI_Exscan(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            break;
        }
        int upto = mode == 3 ? rank - 1 : rank;
        if (upto < 0)
            continue; /* exscan leaves rank 0's result undefined */
        for (int i = 0; i < N; i++) {
            int w = 0;
            for (int r = 0; r <= upto; r++)
                w += value(r, i);
            CHECK_EQ(out[i], w, "scan mode %d: [%d] = %d, expected %d", mode, i, out[i], w);
        }
    }
    /* Exscan in place and non-blocking. */
    memcpy(out, in, sizeof in);
    MPI_CHECK(MPI_Exscan(MPI_IN_PLACE, out, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (rank > 0)
        CHECK_EQ(out[0], value(rank - 1, 0), "exscan in place max: %d", out[0]);
    MPI_Request req;
    MPI_CHECK(MPI_Iexscan(in, out, N, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank > 0)
        CHECK_EQ(out[0], value(0, 0), "iexscan min: %d", out[0]);
}

static void test_barriers(void)
{
    MPI_Request req;
    for (int i = 0; i < 5; i++)
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    int flag = 0;
    while (!flag)
        MPI_CHECK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Barrier(MPI_COMM_SELF));
}

/* The large-count forms: MPI_Count counts, MPI_Aint displacements, and a
   user function with an MPI_Count length. */
static void concat_fn_c(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *type)
{
    int n = (int)*len;
    concat_fn(invec, inoutvec, &n, type);
}

static void test_large_count(void)
{
    enum { N = 5 };
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = value(rank, i);
    MPI_CHECK(MPI_Allreduce_c(in, out, (MPI_Count)N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        int w = 0;
        for (int r = 0; r < size; r++)
            w += value(r, i);
        CHECK_EQ(out[i], w, "allreduce_c [%d] = %d", i, out[i]);
    }
    int b[N];
    for (int i = 0; i < N; i++)
        b[i] = rank == size - 1 ? value(size - 1, i) : -1;
    MPI_Request req;
    MPI_CHECK(MPI_Ibcast_c(b, (MPI_Count)N, MPI_INT, size - 1, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_EQ(b[N - 1], value(size - 1, N - 1), "ibcast_c");

    /* Gatherv_c / Scatterv_c with uneven counts. */
    MPI_Count *counts = abicheck_malloc(size * sizeof(MPI_Count));
    MPI_Aint *displs = abicheck_malloc(size * sizeof(MPI_Aint));
    MPI_Count total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = vcount(r);
        displs[r] = (MPI_Aint)total;
        total += counts[r];
    }
    int *v = abicheck_malloc((total + 1) * sizeof(int));
    int mine[3], back[3] = {-1, -1, -1};
    for (int i = 0; i < vcount(rank); i++)
        mine[i] = value(rank, i);
    MPI_CHECK(MPI_Gatherv_c(mine, (MPI_Count)vcount(rank), MPI_INT, v, counts, displs, MPI_INT,
                            0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Scatterv_c(v, counts, displs, MPI_INT, back, (MPI_Count)vcount(rank), MPI_INT,
                             0, MPI_COMM_WORLD));
    for (int i = 0; i < vcount(rank); i++)
        CHECK_EQ(back[i], value(rank, i), "gatherv_c/scatterv_c [%d] = %d", i, back[i]);
    /* Allgatherv_c, Alltoallv_c. */
    MPI_CHECK(MPI_Allgatherv_c(mine, (MPI_Count)vcount(rank), MPI_INT, v, counts, displs,
                               MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            CHECK_EQ(v[displs[r] + i], value(r, i), "allgatherv_c");
    MPI_Count *ones = abicheck_malloc(size * sizeof(MPI_Count));
    MPI_Aint *seq = abicheck_malloc(size * sizeof(MPI_Aint));
    int *s1 = abicheck_malloc(size * sizeof(int)), *r1 = abicheck_malloc(size * sizeof(int));
    for (int j = 0; j < size; j++) {
        ones[j] = 1;
        seq[j] = j;
        s1[j] = a2a_small(rank, j);
    }
    MPI_CHECK(MPI_Alltoallv_c(s1, ones, seq, MPI_INT, r1, ones, seq, MPI_INT, MPI_COMM_WORLD));
    for (int j = 0; j < size; j++)
        CHECK_EQ(r1[j], a2a_small(j, rank), "alltoallv_c from %d", j);
    /* Reduce_scatter_c with the block counts. */
    int *rin = abicheck_malloc((total + 1) * sizeof(int)), rout[3];
    for (int i = 0; i < total; i++)
        rin[i] = rank + i;
    MPI_CHECK(MPI_Reduce_scatter_c(rin, rout, counts, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < vcount(rank); i++)
        CHECK_EQ(rout[i], size - 1 + (int)displs[rank] + i, "reduce_scatter_c [%d]", i);

    /* A large-count user operation: rank order again. */
    MPI_Op concat;
    MPI_CHECK(MPI_Op_create_c(concat_fn_c, 0, &concat));
    long lin = digit(rank, 0), lout = 0;
    MPI_CHECK(MPI_Scan_c(&lin, &lout, 1, MPI_LONG, concat, MPI_COMM_WORLD));
    CHECK_EQ(lout, concat_ref(0, rank, 0), "scan_c concat: %ld", lout);
    long x = 9, y = 87;
    MPI_CHECK(MPI_Reduce_local_c(&x, &y, 1, MPI_LONG, concat));
    CHECK_EQ(y, 987L, "reduce_local_c concat: %ld", y);
    MPI_CHECK(MPI_Op_free(&concat));
    free(counts);
    free(displs);
    free(v);
    free(ones);
    free(seq);
    free(s1);
    free(r1);
    free(rin);
}

static void test_errors(void)
{
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x = 1, y = 0;
    float fx = 1.0f, fy = 0.0f;
    EXPECT_CLASS(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Bcast(&x, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, size + 3, MPI_COMM_WORLD),
                 MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Allreduce(&fx, &fy, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Bcast(&x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Gather(&x, 1, MPI_INT, &y, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    if (size > 1 && abicheck_is_oxmpi()) {
        /* One rank's block fits the address space, all ranks' blocks do not
           (MPICH 4.0.2 crashes in a memcpy of -2^63 bytes instead). */
        MPI_Datatype mib;
        MPI_CHECK(MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib));
        MPI_CHECK(MPI_Type_commit(&mib));
        MPI_Count huge = (MPI_Count)1 << 43; /* 2^63 bytes */
        EXPECT_CLASS(MPI_Allgather_c(&x, huge, mib, &y, huge, mib, MPI_COMM_WORLD),
                     MPI_ERR_COUNT);
        EXPECT_CLASS(MPI_Alltoall_c(&x, huge, mib, &y, huge, mib, MPI_COMM_WORLD),
                     MPI_ERR_COUNT);
        MPI_CHECK(MPI_Type_free(&mib));
    }
    MPI_Request req = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Iallreduce(&fx, &fy, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD, &req),
                 MPI_ERR_OP);
    EXPECT_CLASS(MPI_Ibcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD, &req), MPI_ERR_ROOT);
    MPI_Op op = MPI_SUM;
    EXPECT_CLASS(MPI_Op_free(&op), MPI_ERR_OP);
    /* Still works afterwards. */
    MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_EQ(y, size, "allreduce after errors: %d", y);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    test_barriers();
    test_bcast();
    test_reduce();
    test_allreduce();
    test_loc();
    test_user_op();
    test_gather_scatter();
    test_allgather();
    test_alltoall();
    test_reduce_scatter();
    test_scan();
    test_large_count();
    test_errors();
    abicheck_pass("coll");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
