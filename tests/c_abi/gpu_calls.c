/*
 * The data-moving calls gpu_buffers.c leaves out, on CUDA device buffers
 * through the C ABI. Every result is copied back to the host and checked
 * against a serial computation; bytes a call must not write (gaps of
 * displacements and datatypes, the rest of a buffer) are checked too.
 * Point-to-point: Probe/Mprobe/Improbe receives, Ssend, Bsend,
 * Sendrecv_replace, persistent Send_init/Recv_init restarted, derived
 * types, statuses and a truncation. Collectives: Ibcast, Igather, Gatherv,
 * Scatter(v), Allgatherv, Alltoallv/w, Reduce_scatter, Scan, Exscan,
 * Reduce in place, Allreduce with a user op, MINLOC, fp16 and bf16,
 * persistent collectives, neighborhood collectives, Reduce_local.
 * MPIX_BFLOAT16 is left out where mpi.h does not define it (MPICH 4.0).
 * Prints "PASS gpu_calls" from rank 0.
 */
#include "abicheck.h"
#include "cudacheck.h"

#include <stddef.h>

static int rank, size, right, left;

/* Sets n ints of `a` to `v`. */
static void fill_ints(int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        a[i] = v;
}

static void check_ints(const int *got, const int *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s[%d] = %d, expected %d", what, i, got[i], want[i]);
}

static void check_status(const MPI_Status *st, MPI_Datatype t, int count, int source, int tag,
                         const char *what)
{
    int got = -1;
    MPI_CHECK(MPI_Get_count(st, t, &got));
    CHECK(got == count && st->MPI_SOURCE == source && st->MPI_TAG == tag,
          "%s status: count %d source %d tag %d, expected %d %d %d", what, got, st->MPI_SOURCE,
          st->MPI_TAG, count, source, tag);
}

/* How a ring message is sent: every send mode, blocking, non-blocking,
   persistent, partitioned. */
enum send_kind {
    SEND, SSEND, BSEND, RSEND, ISEND, ISSEND, IBSEND, IRSEND,
    SEND_INIT, SSEND_INIT, BSEND_INIT, RSEND_INIT, PSEND, SEND_KINDS
};
static const char *send_names[] = {
    "Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Ibsend", "Irsend",
    "Send_init", "Ssend_init", "Bsend_init", "Rsend_init", "Psend_init"};

/* How it is received: the first three are posted before the send starts
   (as Rsend needs), the others after. */
enum recv_kind { IRECV, RECV_INIT, PRECV, RECV, PROBE, IPROBE, MPROBE, IMPROBE, RECV_KINDS };
static const char *recv_names[] = {"Irecv", "Recv_init", "Precv_init", "Recv",
                                   "Probe+Recv", "Iprobe+Recv", "Mprobe+Mrecv",
                                   "Improbe+Imrecv"};
enum { PARTS = 4 };

/* Starts sending n ints at `buf` to the right; the request to wait for.
   A persistent kind creates `*p` on first use and starts it. */
static MPI_Request send_as(int kind, void *buf, int n, int tag, MPI_Request *p)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request r = MPI_REQUEST_NULL;
    int fresh = *p == MPI_REQUEST_NULL;
    switch (kind) {
    case SEND: MPI_CHECK(MPI_Send(buf, n, MPI_INT, right, tag, w)); break;
    case SSEND: MPI_CHECK(MPI_Ssend(buf, n, MPI_INT, right, tag, w)); break;
    case BSEND: MPI_CHECK(MPI_Bsend(buf, n, MPI_INT, right, tag, w)); break;
    case RSEND: MPI_CHECK(MPI_Rsend(buf, n, MPI_INT, right, tag, w)); break;
    case ISEND: MPI_CHECK(MPI_Isend(buf, n, MPI_INT, right, tag, w, &r)); break;
    case ISSEND: MPI_CHECK(MPI_Issend(buf, n, MPI_INT, right, tag, w, &r)); break;
    case IBSEND: MPI_CHECK(MPI_Ibsend(buf, n, MPI_INT, right, tag, w, &r)); break;
    case IRSEND: MPI_CHECK(MPI_Irsend(buf, n, MPI_INT, right, tag, w, &r)); break;
    case SEND_INIT:
        if (fresh)
            MPI_CHECK(MPI_Send_init(buf, n, MPI_INT, right, tag, w, p));
        break;
    case SSEND_INIT:
        if (fresh)
            MPI_CHECK(MPI_Ssend_init(buf, n, MPI_INT, right, tag, w, p));
        break;
    case BSEND_INIT:
        if (fresh)
            MPI_CHECK(MPI_Bsend_init(buf, n, MPI_INT, right, tag, w, p));
        break;
    case RSEND_INIT:
        if (fresh)
            MPI_CHECK(MPI_Rsend_init(buf, n, MPI_INT, right, tag, w, p));
        break;
    case PSEND:
        if (fresh)
            MPI_CHECK(MPI_Psend_init(buf, PARTS, n / PARTS, MPI_INT, right, tag, w,
                                     MPI_INFO_NULL, p));
        break;
    }
    if (kind >= SEND_INIT) {
        r = *p;
        MPI_CHECK(MPI_Start(&r));
        for (int k = 0; kind == PSEND && k < PARTS; k++)
            MPI_CHECK(MPI_Pready(PARTS - 1 - k, r));
    }
    return r;
}

/* Posts a receive of n ints from the left into `buf` (the pre-posted
   kinds); the request to wait for. */
static MPI_Request post_recv(int kind, void *buf, int n, int tag, MPI_Request *p)
{
    MPI_Request r = MPI_REQUEST_NULL;
    if (kind == IRECV)
        MPI_CHECK(MPI_Irecv(buf, n, MPI_INT, left, tag, MPI_COMM_WORLD, &r));
    if (kind == IRECV)
        return r;
    if (*p == MPI_REQUEST_NULL && kind == RECV_INIT)
        MPI_CHECK(MPI_Recv_init(buf, n, MPI_INT, left, tag, MPI_COMM_WORLD, p));
    if (*p == MPI_REQUEST_NULL && kind == PRECV)
        MPI_CHECK(MPI_Precv_init(buf, PARTS, n / PARTS, MPI_INT, left, tag, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, p));
    r = *p;
    MPI_CHECK(MPI_Start(&r));
    return r;
}

/* Receives n ints from the left into `buf` (the other kinds), checking
   the probe's status too. */
static void recv_now(int kind, void *buf, int n, int tag, MPI_Status *st)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Message msg;
    MPI_Request r;
    int flag = 0;
    switch (kind) {
    case RECV: MPI_CHECK(MPI_Recv(buf, n, MPI_INT, left, tag, w, st)); return;
    case PROBE: MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, tag, w, st)); break;
    case IPROBE:
        while (!flag)
            MPI_CHECK(MPI_Iprobe(left, MPI_ANY_TAG, w, &flag, st));
        break;
    case MPROBE: MPI_CHECK(MPI_Mprobe(left, tag, w, &msg, st)); break;
    case IMPROBE:
        while (!flag)
            MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, tag, w, &flag, &msg, st));
        break;
    }
    check_status(st, MPI_INT, n, left, tag, recv_names[kind]);
    if (kind == PROBE || kind == IPROBE) {
        MPI_CHECK(MPI_Recv(buf, n, MPI_INT, st->MPI_SOURCE, st->MPI_TAG, w, st));
    } else if (kind == MPROBE) {
        MPI_CHECK(MPI_Mrecv(buf, n, MPI_INT, &msg, st));
    } else {
        MPI_CHECK(MPI_Imrecv(buf, n, MPI_INT, &msg, &r));
        MPI_CHECK(MPI_Wait(&r, st));
    }
}

/* n ints around the ring from device to device, sent `s` and received
   `rk`, twice with new contents (persistent requests restarted). */
static void ring_case(int s, int rk, int n, int tag)
{
    int *out = abicheck_malloc(n * sizeof *out), *in = abicheck_malloc(n * sizeof *in);
    fill_ints(in, n, -1);
    void *dout = to_device(in, n * sizeof *out), *din = to_device(in, n * sizeof *in);
    MPI_Request sp = MPI_REQUEST_NULL, rp = MPI_REQUEST_NULL;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < n; i++)
            out[i] = rank * 10000 + round * 77 + i;
        set_device(dout, out, n * sizeof *out);
        set_device(din, (fill_ints(in, n, -1), in), n * sizeof *in);
        MPI_Request sr, rr = MPI_REQUEST_NULL;
        MPI_Status st;
        if (rk <= PRECV) {
            rr = post_recv(rk, din, n, tag, &rp);
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* posted everywhere: Rsend may go */
            sr = send_as(s, dout, n, tag, &sp);
            /* A buffered send took its copy: the buffer may change now. */
            if (s == BSEND || s == IBSEND)
                set_device(dout, in, n * sizeof *in);
            MPI_CHECK(MPI_Wait(&rr, &st));
        } else {
            sr = send_as(s, dout, n, tag, &sp);
            recv_now(rk, din, n, tag, &st);
        }
        MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        if (rk != PRECV)
            check_status(&st, MPI_INT, n, left, tag, recv_names[rk]);
        from_device(in, din, n * sizeof *in);
        for (int i = 0; i < n; i++)
            CHECK(in[i] == left * 10000 + round * 77 + i,
                  "%s -> %s of %d ints, round %d: [%d] = %d", send_names[s], recv_names[rk], n,
                  round, i, in[i]);
    }
    if (sp != MPI_REQUEST_NULL)
        MPI_CHECK(MPI_Request_free(&sp));
    if (rp != MPI_REQUEST_NULL)
        MPI_CHECK(MPI_Request_free(&rp));
    device_free(dout);
    device_free(din);
    free(out);
    free(in);
}

/* Every send kind into an Irecv and every receive kind from an Isend (and
   Send_init into Recv_init, partitioned into partitioned), at an eager
   and a rendezvous size. */
static void test_send_recv_kinds(void)
{
    enum { BIG = 300000 };
    int bytes = 2 * (BIG * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *attached = abicheck_malloc(bytes), *detached;
    MPI_CHECK(MPI_Buffer_attach(attached, bytes));
    int sizes[2] = {1000, BIG}, tag = 100;
    for (int k = 0; k < 2; k++) {
        for (int s = SEND; s < PSEND; s++)
            ring_case(s, IRECV, sizes[k], tag++);
        for (int rk = RECV; rk < RECV_KINDS; rk++)
            ring_case(ISEND, rk, sizes[k], tag++);
        ring_case(SEND_INIT, RECV_INIT, sizes[k], tag++);
        ring_case(BSEND_INIT, RECV_INIT, sizes[k], tag++);
        ring_case(PSEND, PRECV, sizes[k], tag++);
    }
    MPI_CHECK(MPI_Buffer_detach(&detached, &bytes));
    free(attached);
}

static void test_sendrecv_replace(void)
{
    enum { N = 3000 };
    double buf[N];
    for (int i = 0; i < N; i++)
        buf[i] = rank * 100.0 + i * 0.25;
    void *d = to_device(buf, sizeof buf);
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv_replace(d, N, MPI_DOUBLE, right, 30, left, 30, MPI_COMM_WORLD, &st));
    check_status(&st, MPI_DOUBLE, N, left, 30, "sendrecv_replace");
    from_device(buf, d, sizeof buf);
    for (int i = 0; i < N; i++)
        CHECK(buf[i] == left * 100.0 + i * 0.25, "sendrecv_replace[%d] = %g", i, buf[i]);
    device_free(d);
}

/* Send_init/Recv_init started three times (Start, then Startall twice),
   with new contents each time. */
static void test_persistent_p2p(void)
{
    enum { N = 20000 };
    static int out[N], in[N], want[N];
    fill_ints(in, N, -1);
    void *dout = to_device(in, sizeof out), *din = to_device(in, sizeof in);
    MPI_Request reqs[2];
    MPI_CHECK(MPI_Recv_init(din, N, MPI_INT, left, 40, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Send_init(dout, N, MPI_INT, right, 40, MPI_COMM_WORLD, &reqs[1]));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            out[i] = rank * 100 + round * 7 + i;
            want[i] = left * 100 + round * 7 + i;
        }
        set_device(dout, out, sizeof out);
        if (round == 0) {
            MPI_CHECK(MPI_Start(&reqs[0]));
            MPI_CHECK(MPI_Start(&reqs[1]));
        } else {
            MPI_CHECK(MPI_Startall(2, reqs));
        }
        MPI_Status sts[2];
        MPI_CHECK(MPI_Waitall(2, reqs, sts));
        check_status(&sts[0], MPI_INT, N, left, 40, "persistent recv");
        from_device(in, din, sizeof in);
        check_ints(in, want, N, "persistent");
    }
    MPI_CHECK(MPI_Request_free(&reqs[0]));
    MPI_CHECK(MPI_Request_free(&reqs[1]));
    device_free(dout);
    device_free(din);
}

/* A struct type with a gap (int, then a double at 8) sent between device
   buffers, and an indexed type receiving a contiguous message: the gaps
   of the receive buffer keep their bytes. */
static void test_derived_p2p(void)
{
    enum { M = 300 };
    struct rec { int a; double b; };
    MPI_Datatype rec_t, idx_t;
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {offsetof(struct rec, a), offsetof(struct rec, b)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_CHECK(MPI_Type_create_struct(2, lens, disps, types, &rec_t));
    MPI_CHECK(MPI_Type_commit(&rec_t));
    static struct rec out[M], in[M];
    memset(out, 0x5a, sizeof out);
    memset(in, 0xab, sizeof in);
    for (int i = 0; i < M; i++) {
        out[i].a = rank * 1000 + i;
        out[i].b = rank + i * 0.5;
    }
    void *dout = to_device(out, sizeof out), *din = to_device(in, sizeof in);
    MPI_Request req;
    MPI_Status st;
    MPI_CHECK(MPI_Isend(dout, M, rec_t, right, 50, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Recv(din, M, rec_t, left, 50, MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_status(&st, rec_t, M, left, 50, "struct recv");
    int elements = -1;
    MPI_CHECK(MPI_Get_elements(&st, rec_t, &elements));
    CHECK(elements == 2 * M, "struct recv: %d basic elements", elements);
    static struct rec want[M];
    memset(want, 0xab, sizeof want);
    for (int i = 0; i < M; i++) {
        want[i].a = left * 1000 + i;
        want[i].b = left + i * 0.5;
    }
    from_device(in, din, sizeof in);
    CHECK(memcmp(in, want, sizeof in) == 0, "struct recv: fields or gap bytes differ");

    /* Blocks of 2 and 3 ints at 0 and 5 of every 8; 5 ints per element. */
    enum { K = 100 };
    int blens[2] = {2, 3}, bdisps[2] = {0, 5};
    MPI_Datatype blocks;
    MPI_CHECK(MPI_Type_indexed(2, blens, bdisps, MPI_INT, &blocks));
    MPI_CHECK(MPI_Type_create_resized(blocks, 0, 8 * sizeof(int), &idx_t));
    MPI_CHECK(MPI_Type_commit(&idx_t));
    static int flat[5 * K], got[8 * K], expect[8 * K];
    for (int i = 0; i < 5 * K; i++)
        flat[i] = rank * 7 + i;
    fill_ints(got, 8 * K, -4);
    memcpy(expect, got, sizeof got);
    for (int k = 0, j = 0; k < K; k++)
        for (int b = 0; b < 8; b++)
            if (b < 2 || b >= 5)
                expect[8 * k + b] = left * 7 + j++;
    void *dflat = to_device(flat, sizeof flat), *dgot = to_device(got, sizeof got);
    MPI_CHECK(MPI_Isend(dflat, 5 * K, MPI_INT, right, 51, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Recv(dgot, K, idx_t, left, 51, MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_status(&st, idx_t, K, left, 51, "indexed recv");
    from_device(got, dgot, sizeof got);
    check_ints(got, expect, 8 * K, "indexed recv");
    MPI_CHECK(MPI_Type_free(&blocks));
    MPI_CHECK(MPI_Type_free(&idx_t));
    MPI_CHECK(MPI_Type_free(&rec_t));
    device_free(dout);
    device_free(din);
    device_free(dflat);
    device_free(dgot);
}

/* A short message into a device buffer (status count), then messages too
   long for the buffer: MPI_ERR_TRUNCATE, and nothing past the buffer
   written. */
static void test_status_truncate(void)
{
    enum { N = 64, SHORT = 10, LONG = N + 8 };
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int out[LONG], in[LONG], want[LONG];
    for (int i = 0; i < LONG; i++)
        out[i] = rank * 50 + i;
    fill_ints(in, LONG, -2);
    void *dout = to_device(out, sizeof out), *din = to_device(in, sizeof in);
    MPI_Request sreq, rreq;
    MPI_Status st;
    MPI_CHECK(MPI_Isend(dout, SHORT, MPI_INT, right, 60, comm, &sreq));
    MPI_CHECK(MPI_Recv(din, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
    MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    check_status(&st, MPI_INT, SHORT, left, 60, "short recv");
    from_device(in, din, sizeof in);
    for (int i = 0; i < LONG; i++)
        want[i] = i < SHORT ? left * 50 + i : -2;
    check_ints(in, want, LONG, "short recv");

    /* Blocking, then non-blocking; the device buffer holds N ints of the
       LONG allocated, the tail must stay -2. */
    for (int k = 0; k < 2; k++) {
        MPI_CHECK(MPI_Isend(dout, LONG, MPI_INT, right, 61 + k, comm, &sreq));
        int rc;
        if (k == 0) {
            rc = MPI_Recv(din, N, MPI_INT, left, 61, comm, &st);
        } else {
            MPI_CHECK(MPI_Irecv(din, N, MPI_INT, left, 62, comm, &rreq));
            rc = MPI_Wait(&rreq, &st);
        }
        CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_TRUNCATE,
              "truncated receive %d returned %d", k, rc);
        MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        from_device(in, din, sizeof in);
        for (int i = N; i < LONG; i++)
            CHECK(in[i] == -2, "truncated receive %d wrote past the buffer: [%d] = %d", k, i,
                  in[i]);
    }
    MPI_CHECK(MPI_Comm_free(&comm));
    device_free(dout);
    device_free(din);
}

static void test_ibcast(void)
{
    enum { N = 40000 };
    static double buf[N];
    int root = size - 1;
    for (int i = 0; i < N; i++)
        buf[i] = rank == root ? i * 0.5 + 3 : -1.0;
    void *d = to_device(buf, sizeof buf);
    MPI_Request req;
    MPI_CHECK(MPI_Ibcast(d, N, MPI_DOUBLE, root, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    from_device(buf, d, sizeof buf);
    for (int i = 0; i < N; i++)
        CHECK(buf[i] == i * 0.5 + 3, "ibcast[%d] = %g", i, buf[i]);
    device_free(d);
}

/* counts[r] = r + extra, displs[r] = r * stride + lead. */
static void layout(int *counts, int *displs, int extra, int stride, int lead)
{
    for (int r = 0; r < size; r++) {
        counts[r] = r + extra;
        displs[r] = r * stride + lead;
    }
}

/* Igather; Gatherv with gaps between the blocks (-7 must stay). */
static void test_gather(void)
{
    enum { N = 50 };
    int mine[N], counts[32], displs[32];
    for (int i = 0; i < N; i++)
        mine[i] = rank * 100 + i;
    int span = size * (size + 2) + 1;
    int total = N * size > span ? N * size : span;
    int *all = abicheck_malloc(total * sizeof *all), *want = abicheck_malloc(total * sizeof *want);
    fill_ints(all, total, -7);
    void *dmine = to_device(mine, sizeof mine), *dall = to_device(all, total * sizeof *all);
    MPI_Request req;
    MPI_CHECK(MPI_Igather(dmine, N, MPI_INT, dall, N, MPI_INT, 0, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank == 0) {
        from_device(all, dall, N * size * sizeof *all);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < N; i++)
                want[r * N + i] = r * 100 + i;
        check_ints(all, want, N * size, "igather");
    }

    int root = size - 1;
    layout(counts, displs, 1, size + 2, 1);
    fill_ints(all, span, -7);
    set_device(dall, all, span * sizeof *all);
    MPI_CHECK(MPI_Gatherv(dmine, rank + 1, MPI_INT, dall, counts, displs, MPI_INT, root,
                          MPI_COMM_WORLD));
    if (rank == root) {
        from_device(all, dall, span * sizeof *all);
        fill_ints(want, span, -7);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < counts[r]; i++)
                want[displs[r] + i] = r * 100 + i;
        check_ints(all, want, span, "gatherv");
    }
    device_free(dmine);
    device_free(dall);
    free(all);
    free(want);
}

/* Scatter; Scatterv from blocks with gaps into a longer buffer (-6 after
   the block must stay). */
static void test_scatter(void)
{
    enum { N = 60 };
    int counts[32], displs[32], got[N], want[N];
    int span = size * (size + 4) + 2;
    int total = N * size > span ? N * size : span;
    int *all = abicheck_malloc(total * sizeof *all);
    for (int i = 0; i < total; i++)
        all[i] = 5000 + i;
    void *dall = to_device(all, total * sizeof *all);
    fill_ints(got, N, -6);
    void *dgot = to_device(got, sizeof got);
    int root = 1 % size;
    MPI_CHECK(MPI_Scatter(dall, N, MPI_INT, dgot, N, MPI_INT, root, MPI_COMM_WORLD));
    from_device(got, dgot, sizeof got);
    for (int i = 0; i < N; i++)
        want[i] = 5000 + rank * N + i;
    check_ints(got, want, N, "scatter");

    layout(counts, displs, 2, size + 4, 2);
    fill_ints(got, N, -6);
    set_device(dgot, got, sizeof got);
    MPI_CHECK(MPI_Scatterv(dall, counts, displs, MPI_INT, dgot, rank + 2, MPI_INT, 0,
                           MPI_COMM_WORLD));
    from_device(got, dgot, sizeof got);
    for (int i = 0; i < N; i++)
        want[i] = i < rank + 2 ? 5000 + displs[rank] + i : -6;
    check_ints(got, want, N, "scatterv");
    device_free(dall);
    device_free(dgot);
    free(all);
}

static void test_allgatherv(void)
{
    int counts[32], displs[32], mine[40], span = size * (size + 2) + 2;
    for (int i = 0; i < 40; i++)
        mine[i] = rank * 1000 + i;
    layout(counts, displs, 1, size + 2, 0);
    for (int r = 0; r < size; r++)
        displs[r] += r % 2; /* gaps of one and two ints */
    int *all = abicheck_malloc(span * sizeof *all), *want = abicheck_malloc(span * sizeof *want);
    fill_ints(all, span, -5);
    fill_ints(want, span, -5);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            want[displs[r] + i] = r * 1000 + i;
    void *dmine = to_device(mine, sizeof mine), *dall = to_device(all, span * sizeof *all);
    MPI_CHECK(MPI_Allgatherv(dmine, rank + 1, MPI_INT, dall, counts, displs, MPI_INT,
                             MPI_COMM_WORLD));
    from_device(all, dall, span * sizeof *all);
    check_ints(all, want, span, "allgatherv");
    device_free(dmine);
    device_free(dall);
    free(all);
    free(want);
}

/* Alltoallv with uneven counts and gaps on both sides; Alltoallw with a
   vector type for odd peers (its gaps and the tails keep -3). */
static void test_alltoallvw(void)
{
    int scounts[32], sdispls[32], rcounts[32], rdispls[32];
    int sspan = size * (size + 1), rspan = size * (rank + 3) + 1;
    int *s = abicheck_malloc(sspan * sizeof *s), *r = abicheck_malloc(rspan * sizeof *r);
    int *want = abicheck_malloc(rspan * sizeof *want);
    fill_ints(s, sspan, -1);
    for (int q = 0; q < size; q++) {
        scounts[q] = q + 1;
        sdispls[q] = q * (size + 1);
        rcounts[q] = rank + 1;
        rdispls[q] = q * (rank + 3) + 1;
        for (int i = 0; i < scounts[q]; i++)
            s[sdispls[q] + i] = rank * 1000 + q * 10 + i;
    }
    fill_ints(r, rspan, -8);
    fill_ints(want, rspan, -8);
    for (int q = 0; q < size; q++)
        for (int i = 0; i < rcounts[q]; i++)
            want[rdispls[q] + i] = q * 1000 + rank * 10 + i;
    void *ds = to_device(s, sspan * sizeof *s), *dr = to_device(r, rspan * sizeof *r);
    MPI_CHECK(MPI_Alltoallv(ds, scounts, sdispls, MPI_INT, dr, rcounts, rdispls, MPI_INT,
                            MPI_COMM_WORLD));
    from_device(r, dr, rspan * sizeof *r);
    check_ints(r, want, rspan, "alltoallv");
    device_free(ds);
    device_free(dr);

    /* Two ints to every peer; received as 2 x MPI_INT or one vector(2,1,2)
       into a 4-int slot per peer. */
    MPI_Datatype vec, stypes[32], rtypes[32];
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    int w[64], wr[128], wwant[128];
    fill_ints(wr, 4 * size, -3);
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
    void *dw = to_device(w, 2 * size * sizeof(int)), *dwr = to_device(wr, 4 * size * sizeof(int));
    MPI_CHECK(MPI_Alltoallw(dw, scounts, sdispls, stypes, dwr, rcounts, rdispls, rtypes,
                            MPI_COMM_WORLD));
    from_device(wr, dwr, 4 * size * sizeof(int));
    check_ints(wr, wwant, 4 * size, "alltoallw");
    MPI_CHECK(MPI_Type_free(&vec));
    device_free(dw);
    device_free(dwr);
    free(s);
    free(r);
    free(want);
}

/* Uneven blocks (rank r gets r + 1 elements) of a MIN on long longs; the
   element after this rank's block stays. */
static void test_reduce_scatter(void)
{
    int counts[32], total = size * (size + 1) / 2, first = rank * (rank + 1) / 2;
    long long *in = abicheck_malloc(total * sizeof *in), out[33];
    for (int i = 0; i < total; i++)
        in[i] = (rank * 7 + i * 3) % 11 - 5;
    for (int r = 0; r < size; r++)
        counts[r] = r + 1;
    for (int i = 0; i < 33; i++)
        out[i] = 99;
    void *din = to_device(in, total * sizeof *in), *dout = to_device(out, sizeof out);
    MPI_CHECK(MPI_Reduce_scatter(din, dout, counts, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD));
    from_device(out, dout, sizeof out);
    for (int i = 0; i <= rank + 1; i++) {
        long long want = 99;
        if (i <= rank) {
            want = (0 * 7 + (first + i) * 3) % 11 - 5;
            for (int r = 1; r < size; r++) {
                long long v = (r * 7 + (first + i) * 3) % 11 - 5;
                want = v < want ? v : want;
            }
        }
        CHECK(out[i] == want, "reduce_scatter[%d] = %lld, expected %lld", i, out[i], want);
    }
    device_free(din);
    device_free(dout);
    free(in);
}

static int scan_value(int r, int i) { return (r * 5 + i) % 7 - 3; }

/* Scan and Exscan, SUM and MAX on ints (the only int SUM/MAX here: the
   kernel log tells these ran on the device). */
static void test_scans(void)
{
    enum { N = 300 };
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = scan_value(rank, i);
    void *din = to_device(in, sizeof in);
    MPI_Op ops[2] = {MPI_SUM, MPI_MAX};
    for (int k = 0; k < 4; k++) {
        MPI_Op op = ops[k % 2];
        int exclusive = k >= 2;
        fill_ints(out, N, -100);
        void *dout = to_device(out, sizeof out);
        if (exclusive)
            MPI_CHECK(MPI_Exscan(din, dout, N, MPI_INT, op, MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Scan(din, dout, N, MPI_INT, op, MPI_COMM_WORLD));
        from_device(out, dout, sizeof out);
        int last = exclusive ? rank - 1 : rank;
        for (int i = 0; i < N && last >= 0; i++) {
            int want = scan_value(0, i);
            for (int r = 1; r <= last; r++) {
                int v = scan_value(r, i);
                want = op == MPI_SUM ? want + v : (v > want ? v : want);
            }
            CHECK(out[i] == want, "%s %s[%d] = %d, expected %d", exclusive ? "exscan" : "scan",
                  op == MPI_SUM ? "sum" : "max", i, out[i], want);
        }
        device_free(dout);
    }
    device_free(din);
}

/* 1 + k/16: products of up to 4 are exact in double. */
static double small_value(int r, int i) { return 1.0 + 0.0625 * ((r * 3 + i) % 16); }

static void test_reduce_in_place(void)
{
    enum { N = 1000 };
    double buf[N];
    int root = size - 1;
    for (int i = 0; i < N; i++)
        buf[i] = small_value(rank, i);
    void *d = to_device(buf, sizeof buf);
    if (rank == root)
        MPI_CHECK(MPI_Reduce(MPI_IN_PLACE, d, N, MPI_DOUBLE, MPI_PROD, root, MPI_COMM_WORLD));
    else
        MPI_CHECK(MPI_Reduce(d, NULL, N, MPI_DOUBLE, MPI_PROD, root, MPI_COMM_WORLD));
    if (rank == root) {
        from_device(buf, d, sizeof buf);
        for (int i = 0; i < N; i++) {
            double want = 1.0;
            for (int r = 0; r < size; r++)
                want *= small_value(r, i);
            CHECK(buf[i] == want, "reduce in place[%d] = %g, expected %g", i, buf[i], want);
        }
    }
    device_free(d);
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

/* The user op over all ranks, serially. */
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

static void test_user_op_minloc(void)
{
    enum { N = 500 };
    static int in[2 * N], out[2 * N];
    for (int i = 0; i < N; i++)
        affine(rank, i, &in[2 * i]);
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(compose, 0, &op));
    void *din = to_device(in, sizeof in), *dout = to_device(out, sizeof out);
    MPI_CHECK(MPI_Allreduce(din, dout, N, MPI_2INT, op, MPI_COMM_WORLD));
    from_device(out, dout, sizeof out);
    for (int i = 0; i < N; i++) {
        int want[2];
        affine_all(i, want);
        CHECK(out[2 * i] == want[0] && out[2 * i + 1] == want[1],
              "user op[%d] = (%d, %d), expected (%d, %d)", i, out[2 * i], out[2 * i + 1],
              want[0], want[1]);
    }
    MPI_CHECK(MPI_Op_free(&op));
    device_free(din);
    device_free(dout);

    /* MINLOC: ties between ranks go to the lowest rank. */
    struct { double v; int at; } mine[N], got[N];
    for (int i = 0; i < N; i++) {
        mine[i].v = (double)((rank * 3 + i) % 4) - 0.5;
        mine[i].at = rank;
    }
    void *dm = to_device(mine, sizeof mine), *dg = to_device(got, sizeof got);
    MPI_CHECK(MPI_Allreduce(dm, dg, N, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
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
        CHECK(got[i].v == v && got[i].at == at, "minloc[%d] = (%g, %d), expected (%g, %d)", i,
              got[i].v, got[i].at, v, at);
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

/* 1 + k/4 for k < 8: sums of 4 are exact in both 16-bit formats. */
static float f16_value(int r, int i) { return 1.0f + 0.25f * (float)((r + i) % 8); }

static void allreduce_16(MPI_Datatype t, uint16_t (*bits)(float), const char *what)
{
    enum { N = 1000 };
    uint16_t in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = bits(f16_value(rank, i));
    void *din = to_device(in, sizeof in), *dout = to_device(out, sizeof out);
    MPI_CHECK(MPI_Allreduce(din, dout, N, t, MPI_SUM, MPI_COMM_WORLD));
    from_device(out, dout, sizeof out);
    for (int i = 0; i < N; i++) {
        float sum = 0;
        for (int r = 0; r < size; r++)
            sum += f16_value(r, i);
        CHECK(out[i] == bits(sum), "%s sum[%d] = %#06x, expected %#06x (%g)", what, i, out[i],
              bits(sum), sum);
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

/* Allreduce_init and Bcast_init, each started twice with new contents. */
static void test_persistent_coll(void)
{
    enum { N = 2000 };
    static double in[N], out[N];
    void *din = to_device(in, sizeof in), *dout = to_device(out, sizeof out);
    int root = size / 2;
    MPI_Request ar, bc;
    MPI_CHECK(MPI_Allreduce_init(din, dout, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &ar));
    MPI_CHECK(MPI_Bcast_init(din, N, MPI_DOUBLE, root, MPI_COMM_WORLD, MPI_INFO_NULL, &bc));
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

/* A periodic 1-D ring: neighbours are (left, right) in that order. */
static void test_neighbors(void)
{
    enum { N = 30 };
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int mine[2 * N], got[2 * N], want[2 * N];
    for (int i = 0; i < 2 * N; i++)
        mine[i] = rank * 100 + i;
    fill_ints(got, 2 * N, -1);
    void *dm = to_device(mine, sizeof mine), *dg = to_device(got, sizeof got);
    MPI_CHECK(MPI_Neighbor_allgather(dm, N, MPI_INT, dg, N, MPI_INT, ring));
    from_device(got, dg, sizeof got);
    for (int i = 0; i < N; i++) {
        want[i] = left * 100 + i;
        want[N + i] = right * 100 + i;
    }
    check_ints(got, want, 2 * N, "neighbor_allgather");

    /* Block 0 goes left, block 1 right: from the left comes its block 1. */
    MPI_CHECK(MPI_Neighbor_alltoall(dm, N, MPI_INT, dg, N, MPI_INT, ring));
    from_device(got, dg, sizeof got);
    for (int i = 0; i < N; i++) {
        want[i] = left * 100 + N + i;
        want[N + i] = right * 100 + i;
    }
    check_ints(got, want, 2 * N, "neighbor_alltoall");
    MPI_CHECK(MPI_Comm_free(&ring));
    device_free(dm);
    device_free(dg);
}

/* Reduce_local on device operands: a built-in op and the user op. */
static void test_reduce_local(void)
{
    enum { N = 256 };
    double a[N], b[N];
    int f[2 * N], g[2 * N];
    for (int i = 0; i < N; i++) {
        a[i] = i * 0.5;
        b[i] = 100.0 - i;
        affine(1, i, &f[2 * i]);
        affine(2, i, &g[2 * i]);
    }
    void *da = to_device(a, sizeof a), *db = to_device(b, sizeof b);
    MPI_CHECK(MPI_Reduce_local(da, db, N, MPI_DOUBLE, MPI_SUM));
    from_device(b, db, sizeof b);
    for (int i = 0; i < N; i++)
        CHECK(b[i] == 100.0 - i + i * 0.5, "reduce_local sum[%d] = %g", i, b[i]);
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(compose, 0, &op));
    void *df = to_device(f, sizeof f), *dg = to_device(g, sizeof g);
    MPI_CHECK(MPI_Reduce_local(df, dg, N, MPI_2INT, op));
    from_device(g, dg, sizeof g);
    for (int i = 0; i < N; i++) {
        int want[2], len = 1;
        affine(1, i, f);
        affine(2, i, want);
        compose(f, want, &len, NULL);
        CHECK(g[2 * i] == want[0] && g[2 * i + 1] == want[1], "reduce_local user op[%d]", i);
    }
    MPI_CHECK(MPI_Op_free(&op));
    device_free(da);
    device_free(db);
    device_free(df);
    device_free(dg);
}

static void gpu_collectives(void)
{
    test_ibcast();
    test_gather();
    test_scatter();
    test_allgatherv();
    test_alltoallvw();
    test_reduce_scatter();
    test_scans();
    test_reduce_in_place();
    test_user_op_minloc();
    test_16bit_floats();
    test_persistent_coll();
    test_neighbors();
    test_reduce_local();
}

int main(int argc, char **argv)
{
    cuda_start();
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    CHECK(size <= 32, "at most 32 ranks (fixed-size arrays), not %d", size);
    CHECK(MPIX_Query_cuda_support() == 1, "MPIX_Query_cuda_support() = %d",
          MPIX_Query_cuda_support());
    test_send_recv_kinds();
    test_sendrecv_replace();
    test_persistent_p2p();
    test_derived_p2p();
    test_status_truncate();
    gpu_collectives();
    abicheck_pass("gpu_calls");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
