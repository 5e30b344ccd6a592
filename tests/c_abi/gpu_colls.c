/*
 * Collectives on CUDA device buffers through the C ABI, each called three
 * ways: blocking, non-blocking (then MPI_Wait) and persistent
 * (MPI_<Coll>_init, started twice). Every result is copied back to the
 * host and checked against a serial computation; bytes a call must not
 * write (gaps between displacements, inside datatypes, past a block) are
 * checked too. Calls: Bcast, Gather(v), Scatter(v), Allgather(v),
 * Alltoall(v/w), Reduce_scatter(_block), Reduce, Allreduce (user op,
 * MINLOC, fp16, bf16), Scan, Exscan, the in-place forms, the five
 * neighborhood collectives on a periodic ring, persistent collectives
 * restarted with new contents, and Reduce_local. MPIX_BFLOAT16 is left
 * out where mpi.h does not define it (MPICH 4.0).
 * Prints "PASS gpu_colls" from rank 0.
 */
#include "abicheck.h"
#include "cudacheck.h"

static int rank, size, right, left;

/* How collectives are called. */
enum { BLOCKING, NONBLOCKING, PERSISTENT, MODES };
static int mode;
static const char *mode_names[] = {"blocking", "non-blocking", "persistent"};

/* Calls MPI_<B> (blocking), MPI_<I> (non-blocking) or MPI_<B>_init
   (persistent, started `starts` times) with the arguments. */
#define COLL_N(starts, B, I, ...)                                              \
    do {                                                                       \
        MPI_Request coll_req_;                                                 \
        if (mode == BLOCKING) {                                                \
            MPI_CHECK(MPI_##B(__VA_ARGS__));                                   \
        } else if (mode == NONBLOCKING) {                                      \
            MPI_CHECK(MPI_##I(__VA_ARGS__, &coll_req_));                       \
            MPI_CHECK(MPI_Wait(&coll_req_, MPI_STATUS_IGNORE));                \
        } else {                                                               \
            MPI_CHECK(MPI_##B##_init(__VA_ARGS__, MPI_INFO_NULL, &coll_req_)); \
            for (int start_ = 0; start_ < (starts); start_++) {                \
                MPI_CHECK(MPI_Start(&coll_req_));                              \
                MPI_CHECK(MPI_Wait(&coll_req_, MPI_STATUS_IGNORE));            \
            }                                                                  \
            MPI_CHECK(MPI_Request_free(&coll_req_));                           \
        }                                                                      \
    } while (0)

/* Twice when persistent: for calls whose second run gives the same result. */
#define COLL(B, I, ...) COLL_N(2, B, I, __VA_ARGS__)

#define WORLD MPI_COMM_WORLD

/* check_ints naming the mode. */
static void check(const int *got, const int *want, int n, const char *what)
{
    char name[96];
    snprintf(name, sizeof name, "%s %s", mode_names[mode], what);
    check_ints(got, want, n, name);
}

/* n ints of device memory, checked against `want` (host). */
static void check_device(const void *dev, const int *want, int n, const char *what)
{
    int *got = abicheck_malloc(n * sizeof *got);
    from_device(got, dev, n * sizeof *got);
    check(got, want, n, what);
    free(got);
}

/* counts[r] = r + extra, displs[r] = r * stride + lead. */
static void layout(int *counts, int *displs, int extra, int stride, int lead)
{
    for (int r = 0; r < size; r++) {
        counts[r] = r + extra;
        displs[r] = r * stride + lead;
    }
}

static void test_bcast(void)
{
    enum { N = 40000 };
    int *buf = abicheck_malloc(N * sizeof *buf), root = size - 1;
    for (int i = 0; i < N; i++)
        buf[i] = rank == root ? i * 3 + 1 : -1;
    void *d = to_device(buf, N * sizeof *buf);
    COLL(Bcast, Ibcast, d, N, MPI_INT, root, WORLD);
    for (int i = 0; i < N; i++)
        buf[i] = i * 3 + 1;
    check_device(d, buf, N, "bcast");
    device_free(d);
    free(buf);
}

/* Gather; Gatherv with gaps between the blocks (-7 must stay), also in
   place at the root. */
static void test_gather(void)
{
    enum { N = 50 };
    int mine[N], counts[32], displs[32];
    for (int i = 0; i < N; i++)
        mine[i] = rank * 100 + i;
    int span = size * (size + 2) + 1, total = N * size > span ? N * size : span;
    int *want = abicheck_malloc(total * sizeof *want);
    void *dmine = to_device(mine, sizeof mine), *dall = device_ints(total, -7);
    COLL(Gather, Igather, dmine, N, MPI_INT, dall, N, MPI_INT, 0, WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            want[r * N + i] = r * 100 + i;
    if (rank == 0)
        check_device(dall, want, N * size, "gather");

    int root = size - 1;
    layout(counts, displs, 1, size + 2, 1);
    fill_ints(want, span, -7);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            want[displs[r] + i] = r * 100 + i;
    for (int in_place = 0; in_place < 2; in_place++) {
        /* In place, the root's block is already where it belongs. */
        int *start = abicheck_malloc(span * sizeof *start);
        fill_ints(start, span, -7);
        if (in_place)
            memcpy(start + displs[root], want + displs[root], counts[root] * sizeof *start);
        set_device(dall, start, span * sizeof *start);
        free(start);
        const void *send = in_place && rank == root ? MPI_IN_PLACE : dmine;
        COLL(Gatherv, Igatherv, send, rank + 1, MPI_INT, dall, counts, displs, MPI_INT, root,
             WORLD);
        if (rank == root)
            check_device(dall, want, span, in_place ? "gatherv in place" : "gatherv");
    }
    device_free(dmine);
    device_free(dall);
    free(want);
}

/* Scatter, also in place at the root; Scatterv from blocks with gaps into
   a longer buffer (-6 after the block must stay). */
static void test_scatter(void)
{
    enum { N = 60 };
    int counts[32], displs[32], want[N];
    int span = size * (size + 4) + 2, total = N * size > span ? N * size : span;
    int *all = abicheck_malloc(total * sizeof *all), root = 1 % size;
    for (int i = 0; i < total; i++)
        all[i] = 5000 + i;
    void *dall = to_device(all, total * sizeof *all), *dgot = device_ints(N, -6);
    COLL(Scatter, Iscatter, dall, N, MPI_INT, dgot, N, MPI_INT, root, WORLD);
    for (int i = 0; i < N; i++)
        want[i] = 5000 + rank * N + i;
    check_device(dgot, want, N, "scatter");
    void *recv = rank == root ? MPI_IN_PLACE : dgot;
    set_device(dgot, (fill_ints(want, N, -6), want), sizeof want);
    COLL(Scatter, Iscatter, dall, N, MPI_INT, recv, N, MPI_INT, root, WORLD);
    for (int i = 0; i < N; i++)
        want[i] = rank == root ? -6 : 5000 + rank * N + i;
    check_device(dgot, want, N, "scatter in place");
    if (rank == root)
        check_device(dall, all, total, "scatter in place root's buffer");

    layout(counts, displs, 2, size + 4, 2);
    set_device(dgot, (fill_ints(want, N, -6), want), sizeof want);
    COLL(Scatterv, Iscatterv, dall, counts, displs, MPI_INT, dgot, rank + 2, MPI_INT, 0, WORLD);
    for (int i = 0; i < N; i++)
        want[i] = i < rank + 2 ? 5000 + displs[rank] + i : -6;
    check_device(dgot, want, N, "scatterv");
    device_free(dall);
    device_free(dgot);
    free(all);
}

/* Allgather; Allgatherv with gaps of one and two ints (-5 must stay),
   also in place. */
static void test_allgather(void)
{
    enum { N = 40 };
    int counts[32], displs[32], mine[N], span = size * (size + 2) + 2;
    for (int i = 0; i < N; i++)
        mine[i] = rank * 1000 + i;
    int total = N * size > span ? N * size : span;
    int *want = abicheck_malloc(total * sizeof *want);
    void *dmine = to_device(mine, sizeof mine), *dall = device_ints(total, -5);
    COLL(Allgather, Iallgather, dmine, N, MPI_INT, dall, N, MPI_INT, WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            want[r * N + i] = r * 1000 + i;
    check_device(dall, want, N * size, "allgather");

    layout(counts, displs, 1, size + 2, 0);
    for (int r = 0; r < size; r++)
        displs[r] += r % 2;
    fill_ints(want, span, -5);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            want[displs[r] + i] = r * 1000 + i;
    for (int in_place = 0; in_place < 2; in_place++) {
        int *start = abicheck_malloc(span * sizeof *start);
        fill_ints(start, span, -5);
        if (in_place)
            memcpy(start + displs[rank], want + displs[rank], counts[rank] * sizeof *start);
        set_device(dall, start, span * sizeof *start);
        free(start);
        if (in_place)
            COLL(Allgatherv, Iallgatherv, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, dall, counts,
                 displs, MPI_INT, WORLD);
        else
            COLL(Allgatherv, Iallgatherv, dmine, rank + 1, MPI_INT, dall, counts, displs,
                 MPI_INT, WORLD);
        check_device(dall, want, span, in_place ? "allgatherv in place" : "allgatherv");
    }
    device_free(dmine);
    device_free(dall);
    free(want);
}

/* Alltoall; Alltoallv with uneven counts and gaps on both sides;
   Alltoallw with a vector type for odd peers (its gaps keep -3). */
static void test_alltoall(void)
{
    int scounts[32], sdispls[32], rcounts[32], rdispls[32];
    int sspan = size * (size + 3), rspan = size * (rank + 3) + 1;
    int *s = abicheck_malloc(sspan * sizeof *s), *want = abicheck_malloc(rspan * sizeof *want);
    for (int q = 0; q < size; q++)
        for (int i = 0; i < 3; i++)
            s[3 * q + i] = rank * 1000 + q * 10 + i;
    void *ds = to_device(s, 3 * size * sizeof *s), *dr = device_ints(3 * size, -8);
    COLL(Alltoall, Ialltoall, ds, 3, MPI_INT, dr, 3, MPI_INT, WORLD);
    for (int q = 0; q < size; q++)
        for (int i = 0; i < 3; i++)
            want[3 * q + i] = q * 1000 + rank * 10 + i;
    check_device(dr, want, 3 * size, "alltoall");
    device_free(ds);
    device_free(dr);

    fill_ints(s, sspan, -1);
    for (int q = 0; q < size; q++) {
        scounts[q] = q + 1;
        sdispls[q] = q * (size + 1);
        rcounts[q] = rank + 1;
        rdispls[q] = q * (rank + 3) + 1;
        for (int i = 0; i < scounts[q]; i++)
            s[sdispls[q] + i] = rank * 1000 + q * 10 + i;
    }
    fill_ints(want, rspan, -8);
    for (int q = 0; q < size; q++)
        for (int i = 0; i < rcounts[q]; i++)
            want[rdispls[q] + i] = q * 1000 + rank * 10 + i;
    ds = to_device(s, sspan * sizeof *s);
    dr = device_ints(rspan, -8);
    COLL(Alltoallv, Ialltoallv, ds, scounts, sdispls, MPI_INT, dr, rcounts, rdispls, MPI_INT,
         WORLD);
    check_device(dr, want, rspan, "alltoallv");
    device_free(ds);
    device_free(dr);

    /* Two ints to every peer; received as 2 x MPI_INT or one
       vector(2, 1, 2) into a 4-int slot per peer. */
    MPI_Datatype vec, stypes[32], rtypes[32];
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    int w[64], wwant[128];
    fill_ints(wwant, 4 * size, -3);
    for (int q = 0; q < size; q++) {
        w[2 * q] = rank * 1000 + q * 10;
        w[2 * q + 1] = rank * 1000 + q * 10 + 1;
        stypes[q] = MPI_INT;
        scounts[q] = 2;
        sdispls[q] = 2 * q * (int)sizeof(int);
        rtypes[q] = q % 2 ? vec : MPI_INT;
        rcounts[q] = q % 2 ? 1 : 2;
        rdispls[q] = 4 * q * (int)sizeof(int);
        wwant[4 * q] = q * 1000 + rank * 10;
        wwant[4 * q + (q % 2 ? 2 : 1)] = q * 1000 + rank * 10 + 1;
    }
    void *dw = to_device(w, 2 * size * sizeof(int)), *dwr = device_ints(4 * size, -3);
    COLL(Alltoallw, Ialltoallw, dw, scounts, sdispls, stypes, dwr, rcounts, rdispls, rtypes,
         WORLD);
    check_device(dwr, wwant, 4 * size, "alltoallw");
    MPI_CHECK(MPI_Type_free(&vec));
    device_free(dw);
    device_free(dwr);
    free(s);
    free(want);
}

static long long rs_value(int r, int i) { return (r * 7 + i * 3) % 11 - 5; }

/* MIN over ranks of rs_value(., i). */
static long long rs_min(int i)
{
    long long m = rs_value(0, i);
    for (int r = 1; r < size; r++)
        m = rs_value(r, i) < m ? rs_value(r, i) : m;
    return m;
}

/* Reduce_scatter with uneven blocks (rank r gets r + 1 elements; the
   element after the block stays), also in place; Reduce_scatter_block.
   MIN on long longs. */
static void test_reduce_scatter(void)
{
    int counts[32], total = size * (size + 1) / 2, first = rank * (rank + 1) / 2;
    long long *in = abicheck_malloc(total * sizeof *in), out[33];
    for (int i = 0; i < total; i++)
        in[i] = rs_value(rank, i);
    for (int r = 0; r < size; r++)
        counts[r] = r + 1;
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int i = 0; i < 33; i++)
            out[i] = 99;
        void *din = to_device(in, total * sizeof *in), *dout = to_device(out, sizeof out);
        if (in_place)
            COLL_N(1, Reduce_scatter, Ireduce_scatter, MPI_IN_PLACE, din, counts, MPI_LONG_LONG,
                   MPI_MIN, WORLD);
        else
            COLL(Reduce_scatter, Ireduce_scatter, din, dout, counts, MPI_LONG_LONG, MPI_MIN,
                 WORLD);
        /* In place, MPI leaves the rest of the buffer undefined. */
        from_device(out, in_place ? din : dout, (rank + 1 + !in_place) * sizeof *out);
        for (int i = 0; i <= rank; i++)
            CHECK(out[i] == rs_min(first + i), "%s reduce_scatter%s[%d] = %lld, expected %lld",
                  mode_names[mode], in_place ? " in place" : "", i, out[i], rs_min(first + i));
        CHECK(in_place || out[rank + 1] == 99, "%s reduce_scatter wrote past its block: %lld",
              mode_names[mode], out[rank + 1]);
        device_free(din);
        device_free(dout);
    }

    enum { B = 7 };
    long long *blocks = abicheck_malloc(B * size * sizeof *blocks), got[B];
    for (int i = 0; i < B * size; i++)
        blocks[i] = rs_value(rank, i);
    void *dblocks = to_device(blocks, B * size * sizeof *blocks), *dgot = to_device(got, sizeof got);
    COLL(Reduce_scatter_block, Ireduce_scatter_block, dblocks, dgot, B, MPI_LONG_LONG, MPI_MIN,
         WORLD);
    from_device(got, dgot, sizeof got);
    for (int i = 0; i < B; i++)
        CHECK(got[i] == rs_min(rank * B + i), "%s reduce_scatter_block[%d] = %lld",
              mode_names[mode], i, got[i]);
    device_free(dblocks);
    device_free(dgot);
    free(blocks);
    free(in);
}

static int scan_value(int r, int i) { return (r * 5 + i) % 7 - 3; }

/* Scan and Exscan, SUM and MAX on ints (the only int SUM and MAX here:
   the kernel log shows these ran on the device), and Scan in place. */
static void test_scans(void)
{
    enum { N = 300 };
    int in[N], want[N];
    for (int i = 0; i < N; i++)
        in[i] = scan_value(rank, i);
    void *din = to_device(in, sizeof in);
    MPI_Op ops[2] = {MPI_SUM, MPI_MAX};
    for (int k = 0; k < 5; k++) {
        MPI_Op op = ops[k % 2];
        int exclusive = k == 2 || k == 3, in_place = k == 4;
        void *dout = in_place ? to_device(in, sizeof in) : device_ints(N, -100);
        if (in_place)
            COLL_N(1, Scan, Iscan, MPI_IN_PLACE, dout, N, MPI_INT, op, WORLD);
        else if (exclusive)
            COLL(Exscan, Iexscan, din, dout, N, MPI_INT, op, WORLD);
        else
            COLL(Scan, Iscan, din, dout, N, MPI_INT, op, WORLD);
        int last = exclusive ? rank - 1 : rank;
        for (int i = 0; i < N; i++) {
            want[i] = scan_value(0, i);
            for (int r = 1; r <= last; r++) {
                int v = scan_value(r, i);
                want[i] = op == MPI_SUM ? want[i] + v : (v > want[i] ? v : want[i]);
            }
        }
        if (last >= 0) /* rank 0's Exscan result is undefined */
            check_device(dout, want, N, exclusive ? "exscan" : in_place ? "scan in place" : "scan");
        device_free(dout);
    }
    device_free(din);
}

/* 1 + k/16: products of up to 4 are exact in double. */
static double small_value(int r, int i) { return 1.0 + 0.0625 * ((r * 3 + i) % 16); }

/* Reduce (SUM) to rank 0; Reduce (PROD) in place at the last rank. */
static void test_reduce(void)
{
    enum { N = 1000 };
    double buf[N], out[N];
    for (int i = 0; i < N; i++)
        buf[i] = small_value(rank, i);
    void *d = to_device(buf, sizeof buf), *dout = to_device(buf, sizeof buf);
    COLL(Reduce, Ireduce, d, dout, N, MPI_DOUBLE, MPI_SUM, 0, WORLD);
    if (rank == 0) {
        from_device(out, dout, sizeof out);
        for (int i = 0; i < N; i++) {
            double want = 0;
            for (int r = 0; r < size; r++)
                want += small_value(r, i);
            CHECK(out[i] == want, "%s reduce[%d] = %g, expected %g", mode_names[mode], i, out[i],
                  want);
        }
    }
    int root = size - 1;
    if (rank == root)
        COLL_N(1, Reduce, Ireduce, MPI_IN_PLACE, d, N, MPI_DOUBLE, MPI_PROD, root, WORLD);
    else
        COLL_N(1, Reduce, Ireduce, d, NULL, N, MPI_DOUBLE, MPI_PROD, root, WORLD);
    if (rank == root) {
        from_device(out, d, sizeof out);
        for (int i = 0; i < N; i++) {
            double want = 1.0;
            for (int r = 0; r < size; r++)
                want *= small_value(r, i);
            CHECK(out[i] == want, "%s reduce in place[%d] = %g, expected %g", mode_names[mode], i,
                  out[i], want);
        }
    }
    device_free(d);
    device_free(dout);
}

/* Affine maps x -> a*x + b mod 1009 as (a, b) pairs, composed in rank
   order: associative, not commutative. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *f = in;
    int *g = inout;
    for (int i = 0; i < *len; i++) {
        int a = f[2 * i] * g[2 * i] % 1009;
        g[2 * i + 1] = (g[2 * i] * f[2 * i + 1] + g[2 * i + 1]) % 1009;
        g[2 * i] = a;
    }
}

static void affine(int r, int i, int *pair)
{
    pair[0] = (r * 3 + i) % 7 + 1;
    pair[1] = (r + 2 * i) % 11;
}

/* The maps of ranks 0..size-1 composed, serially. */
static void affine_all(int i, int *pair)
{
    affine(0, i, pair);
    for (int r = 1; r < size; r++) {
        int next[2], len = 1;
        affine(r, i, next);
        compose(pair, next, &len, NULL);
        pair[0] = next[0];
        pair[1] = next[1];
    }
}

/* Allreduce with the user op (through the host), also in place; MINLOC
   on MPI_DOUBLE_INT (no kernel either). */
static void test_allreduce_host_ops(void)
{
    enum { N = 500 };
    static int in[2 * N], want[2 * N];
    for (int i = 0; i < N; i++) {
        affine(rank, i, &in[2 * i]);
        affine_all(i, &want[2 * i]);
    }
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(compose, 0, &op));
    void *din = to_device(in, sizeof in), *dout = device_ints(2 * N, 0);
    COLL(Allreduce, Iallreduce, din, dout, N, MPI_2INT, op, WORLD);
    check_device(dout, want, 2 * N, "allreduce user op");
    COLL_N(1, Allreduce, Iallreduce, MPI_IN_PLACE, din, N, MPI_2INT, op, WORLD);
    check_device(din, want, 2 * N, "allreduce user op in place");
    MPI_CHECK(MPI_Op_free(&op));
    device_free(din);
    device_free(dout);

    /* Ties between ranks go to the lowest rank. */
    struct { double v; int at; } mine[N], got[N];
    for (int i = 0; i < N; i++) {
        mine[i].v = (double)((rank * 3 + i) % 4) - 0.5;
        mine[i].at = rank;
    }
    void *dm = to_device(mine, sizeof mine), *dg = to_device(mine, sizeof got);
    COLL(Allreduce, Iallreduce, dm, dg, N, MPI_DOUBLE_INT, MPI_MINLOC, WORLD);
    from_device(got, dg, sizeof got);
    for (int i = 0; i < N; i++) {
        double v = (double)(i % 4) - 0.5;
        int at = 0;
        for (int r = 1; r < size; r++) {
            double x = (double)((r * 3 + i) % 4) - 0.5;
            if (x < v) {
                v = x;
                at = r;
            }
        }
        CHECK(got[i].v == v && got[i].at == at, "%s minloc[%d] = (%g, %d), expected (%g, %d)",
              mode_names[mode], i, got[i].v, got[i].at, v, at);
    }
    device_free(dm);
    device_free(dg);
}

/* The bits of a float exact in IEEE half precision (normal or zero). */
static uint16_t half_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    if (f == 0.0f)
        return (uint16_t)(b >> 16);
    uint32_t exp = ((b >> 23) & 0xff) - 127 + 15;
    return (uint16_t)((b >> 31) << 15 | exp << 10 | (b & 0x7fffff) >> 13);
}

/* The bits of a float exact in bfloat16. */
static uint16_t bf16_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return (uint16_t)(b >> 16);
}

/* 1 + k/4 for k < 8: sums of up to 4 are exact in both 16-bit formats. */
static float f16_value(int r, int i) { return 1.0f + 0.25f * (float)((r + i) % 8); }

static void allreduce_16(MPI_Datatype t, uint16_t (*bits)(float), const char *what)
{
    enum { N = 1000 };
    uint16_t in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = bits(f16_value(rank, i));
    void *din = to_device(in, sizeof in), *dout = to_device(in, sizeof out);
    COLL(Allreduce, Iallreduce, din, dout, N, t, MPI_SUM, WORLD);
    from_device(out, dout, sizeof out);
    for (int i = 0; i < N; i++) {
        float sum = 0;
        for (int r = 0; r < size; r++)
            sum += f16_value(r, i);
        CHECK(out[i] == bits(sum), "%s %s sum[%d] = %#06x, expected %#06x (%g)",
              mode_names[mode], what, i, out[i], bits(sum), sum);
    }
    device_free(din);
    device_free(dout);
}

static void test_16bit_floats(void)
{
    allreduce_16(MPIX_C_FLOAT16, half_bits, "MPIX_C_FLOAT16");
#ifdef MPIX_BFLOAT16
    allreduce_16(MPIX_BFLOAT16, bf16_bits, "MPIX_BFLOAT16");
#else
    (void)bf16_bits;
#endif
}

/* The five neighborhood collectives on a periodic 1-D ring, whose
   neighbours are (left, right) in that order. */
static void test_neighbors(MPI_Comm ring)
{
    enum { N = 30 };
    int mine[2 * N], want[2 * N + 8];
    for (int i = 0; i < 2 * N; i++)
        mine[i] = rank * 100 + i;
    void *dm = to_device(mine, sizeof mine), *dg = device_ints(2 * N + 8, -1);
    COLL(Neighbor_allgather, Ineighbor_allgather, dm, N, MPI_INT, dg, N, MPI_INT, ring);
    for (int i = 0; i < N; i++) {
        want[i] = left * 100 + i;
        want[N + i] = right * 100 + i;
    }
    check_device(dg, want, 2 * N, "neighbor_allgather");

    /* Block 0 goes left, block 1 right: from the left comes its block 1. */
    COLL(Neighbor_alltoall, Ineighbor_alltoall, dm, N, MPI_INT, dg, N, MPI_INT, ring);
    for (int i = 0; i < N; i++) {
        want[i] = left * 100 + N + i;
        want[N + i] = right * 100 + i;
    }
    check_device(dg, want, 2 * N, "neighbor_alltoall");

    /* Rank r sends r % 3 + 1 ints; gaps of 1 before and 2 between. */
    int rc[2] = {left % 3 + 1, right % 3 + 1}, rd[2] = {1, 1 + rc[0] + 2};
    set_device(dg, (fill_ints(want, 2 * N + 8, -1), want), (2 * N + 8) * sizeof(int));
    COLL(Neighbor_allgatherv, Ineighbor_allgatherv, dm, rank % 3 + 1, MPI_INT, dg, rc, rd,
         MPI_INT, ring);
    for (int i = 0; i < rc[0]; i++)
        want[rd[0] + i] = left * 100 + i;
    for (int i = 0; i < rc[1]; i++)
        want[rd[1] + i] = right * 100 + i;
    check_device(dg, want, 2 * N + 8, "neighbor_allgatherv");

    /* r + 1 ints left (from 0), r + 2 right (from N). */
    int sc[2] = {rank + 1, rank + 2}, sd[2] = {0, N};
    rc[0] = left + 2;
    rc[1] = right + 1;
    rd[0] = 2;
    rd[1] = 2 + rc[0] + 1;
    set_device(dg, (fill_ints(want, 2 * N + 8, -1), want), (2 * N + 8) * sizeof(int));
    COLL(Neighbor_alltoallv, Ineighbor_alltoallv, dm, sc, sd, MPI_INT, dg, rc, rd, MPI_INT,
         ring);
    for (int i = 0; i < rc[0]; i++)
        want[rd[0] + i] = left * 100 + N + i;
    for (int i = 0; i < rc[1]; i++)
        want[rd[1] + i] = right * 100 + i;
    check_device(dg, want, 2 * N + 8, "neighbor_alltoallv");

    /* Two ints each way: from the left as vector(2, 1, 2) at 0, from the
       right as 2 x MPI_INT at 4. */
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    MPI_Datatype st[2] = {MPI_INT, MPI_INT}, rt[2] = {vec, MPI_INT};
    int wsc[2] = {2, 2}, wrc[2] = {1, 2};
    MPI_Aint wsd[2] = {0, N * sizeof(int)}, wrd[2] = {0, 4 * sizeof(int)};
    set_device(dg, (fill_ints(want, 2 * N + 8, -1), want), (2 * N + 8) * sizeof(int));
    COLL(Neighbor_alltoallw, Ineighbor_alltoallw, dm, wsc, wsd, st, dg, wrc, wrd, rt, ring);
    want[0] = left * 100 + N;
    want[2] = left * 100 + N + 1;
    want[4] = right * 100;
    want[5] = right * 100 + 1;
    check_device(dg, want, 2 * N + 8, "neighbor_alltoallw");
    MPI_CHECK(MPI_Type_free(&vec));
    device_free(dm);
    device_free(dg);
}

/* Allreduce_init and Bcast_init, each started twice with new contents. */
static void test_persistent_new_contents(void)
{
    enum { N = 2000 };
    static double in[N], out[N];
    void *din = to_device(in, sizeof in), *dout = to_device(out, sizeof out);
    int root = size / 2;
    MPI_Request ar, bc;
    MPI_CHECK(MPI_Allreduce_init(din, dout, N, MPI_DOUBLE, MPI_SUM, WORLD, MPI_INFO_NULL, &ar));
    MPI_CHECK(MPI_Bcast_init(din, N, MPI_DOUBLE, root, WORLD, MPI_INFO_NULL, &bc));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            in[i] = small_value(rank, i) + round;
        set_device(din, in, sizeof in);
        MPI_CHECK(MPI_Start(&ar));
        MPI_CHECK(MPI_Wait(&ar, MPI_STATUS_IGNORE));
        from_device(out, dout, sizeof out);
        for (int i = 0; i < N; i++) {
            double want = 0;
            for (int r = 0; r < size; r++)
                want += small_value(r, i) + round;
            CHECK(out[i] == want, "allreduce_init round %d [%d] = %g, expected %g", round, i,
                  out[i], want);
        }
        MPI_CHECK(MPI_Start(&bc));
        MPI_CHECK(MPI_Wait(&bc, MPI_STATUS_IGNORE));
        from_device(in, din, sizeof in);
        for (int i = 0; i < N; i++)
            CHECK(in[i] == small_value(root, i) + round, "bcast_init round %d [%d] = %g", round,
                  i, in[i]);
    }
    MPI_CHECK(MPI_Request_free(&ar));
    MPI_CHECK(MPI_Request_free(&bc));
    device_free(din);
    device_free(dout);
}

/* Reduce_local on device operands: a built-in op and the user op. */
static void test_reduce_local(void)
{
    enum { N = 256 };
    double a[N], b[N];
    int f[2 * N], g[2 * N], want[2 * N];
    for (int i = 0; i < N; i++) {
        a[i] = i * 0.5;
        b[i] = 100.0 - i;
        affine(1, i, &f[2 * i]);
        affine(2, i, &g[2 * i]);
        affine(2, i, &want[2 * i]);
    }
    void *da = to_device(a, sizeof a), *db = to_device(b, sizeof b);
    MPI_CHECK(MPI_Reduce_local(da, db, N, MPI_DOUBLE, MPI_SUM));
    from_device(b, db, sizeof b);
    for (int i = 0; i < N; i++)
        CHECK(b[i] == 100.0 - i + i * 0.5, "reduce_local sum[%d] = %g", i, b[i]);
    int len = N;
    compose(f, want, &len, NULL);
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(compose, 0, &op));
    void *df = to_device(f, sizeof f), *dg = to_device(g, sizeof g);
    MPI_CHECK(MPI_Reduce_local(df, dg, N, MPI_2INT, op));
    check_device(dg, want, 2 * N, "reduce_local user op");
    MPI_CHECK(MPI_Op_free(&op));
    device_free(da);
    device_free(db);
    device_free(df);
    device_free(dg);
}

int main(int argc, char **argv)
{
    cuda_start();
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(WORLD, &size));
    CHECK(size <= 16, "at most 16 ranks (fixed-size arrays), not %d", size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    CHECK(MPIX_Query_cuda_support() == 1, "MPIX_Query_cuda_support() = %d",
          MPIX_Query_cuda_support());
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_CHECK(MPI_Cart_create(WORLD, 1, dims, periods, 0, &ring));
    for (mode = BLOCKING; mode < MODES; mode++) {
        test_bcast();
        test_gather();
        test_scatter();
        test_allgather();
        test_alltoall();
        test_reduce_scatter();
        test_scans();
        test_reduce();
        test_allreduce_host_ops();
        test_16bit_floats();
        test_neighbors(ring);
    }
    mode = PERSISTENT;
    test_persistent_new_contents();
    test_reduce_local();
    MPI_CHECK(MPI_Comm_free(&ring));
    abicheck_pass("gpu_colls");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
