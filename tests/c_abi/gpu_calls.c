/*
 * Point-to-point and packing calls on CUDA device buffers through the C
 * ABI (gpu_buffers.c has the first few, gpu_colls.c the collectives).
 * Every result is copied back to the host and checked against a serial
 * computation; bytes a call must not write (gaps of datatypes, the rest of
 * a buffer) are checked too. Calls: every send mode (blocking,
 * non-blocking, persistent, partitioned) into an Irecv and every receive
 * kind (Recv, Probe, Iprobe, Mprobe, Improbe, Recv_init, Precv_init), at
 * an eager and a rendezvous size, persistent requests restarted with new
 * contents (Start, Startall); Sendrecv, Isendrecv, (I)Sendrecv_replace;
 * derived types (struct, indexed, vector); statuses, MPI_Get_count /
 * MPI_Get_elements and MPI_ERR_TRUNCATE; Test, Testall, Waitany,
 * Waitsome, Request_free and Cancel on device requests; Pack/Unpack and
 * Pack_external/Unpack_external with device memory on either side.
 * Prints "PASS gpu_calls" from rank 0.
 */
#include "abicheck.h"
#include "cudacheck.h"

#include <stddef.h>

static int rank, size, right, left;

static void check_status(const MPI_Status *st, MPI_Datatype t, int count, int source, int tag,
                         const char *what)
{
    int got = -1;
    MPI_CHECK(MPI_Get_count(st, t, &got));
    CHECK(got == count && st->MPI_SOURCE == source && st->MPI_TAG == tag,
          "%s status: count %d source %d tag %d, expected %d %d %d", what, got, st->MPI_SOURCE,
          st->MPI_TAG, count, source, tag);
}

/* The element of ring messages: an int, or an int every 2 ints (a
   resized type: the gaps must keep their bytes). */
static MPI_Datatype ring_t;
static int stride;

/* How a ring message is sent: every send mode, blocking, non-blocking,
   persistent, partitioned. */
enum send_kind {
    SEND, SSEND, BSEND, RSEND, ISEND, ISSEND, IBSEND, IRSEND,
    SEND_INIT, SSEND_INIT, BSEND_INIT, RSEND_INIT, PSEND
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

/* Starts sending n elements of ring_t at `buf` to the right; the request
   to wait for. A persistent kind creates `*p` on first use and starts it. */
static MPI_Request send_as(int kind, void *buf, int n, int tag, MPI_Request *p)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request r = MPI_REQUEST_NULL;
    int fresh = *p == MPI_REQUEST_NULL;
    switch (kind) {
    case SEND: MPI_CHECK(MPI_Send(buf, n, ring_t, right, tag, w)); break;
    case SSEND: MPI_CHECK(MPI_Ssend(buf, n, ring_t, right, tag, w)); break;
    case BSEND: MPI_CHECK(MPI_Bsend(buf, n, ring_t, right, tag, w)); break;
    case RSEND: MPI_CHECK(MPI_Rsend(buf, n, ring_t, right, tag, w)); break;
    case ISEND: MPI_CHECK(MPI_Isend(buf, n, ring_t, right, tag, w, &r)); break;
    case ISSEND: MPI_CHECK(MPI_Issend(buf, n, ring_t, right, tag, w, &r)); break;
    case IBSEND: MPI_CHECK(MPI_Ibsend(buf, n, ring_t, right, tag, w, &r)); break;
    case IRSEND: MPI_CHECK(MPI_Irsend(buf, n, ring_t, right, tag, w, &r)); break;
    case SEND_INIT:
        if (fresh)
            MPI_CHECK(MPI_Send_init(buf, n, ring_t, right, tag, w, p));
        break;
    case SSEND_INIT:
        if (fresh)
            MPI_CHECK(MPI_Ssend_init(buf, n, ring_t, right, tag, w, p));
        break;
    case BSEND_INIT:
        if (fresh)
            MPI_CHECK(MPI_Bsend_init(buf, n, ring_t, right, tag, w, p));
        break;
    case RSEND_INIT:
        if (fresh)
            MPI_CHECK(MPI_Rsend_init(buf, n, ring_t, right, tag, w, p));
        break;
    case PSEND:
        if (fresh)
            MPI_CHECK(MPI_Psend_init(buf, PARTS, n / PARTS, ring_t, right, tag, w,
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

/* Posts a receive of n elements from the left into `buf` (the pre-posted
   kinds); the request to wait for. */
static MPI_Request post_recv(int kind, void *buf, int n, int tag, MPI_Request *p)
{
    MPI_Request r = MPI_REQUEST_NULL;
    if (kind == IRECV) {
        MPI_CHECK(MPI_Irecv(buf, n, ring_t, left, tag, MPI_COMM_WORLD, &r));
        return r;
    }
    if (*p == MPI_REQUEST_NULL && kind == RECV_INIT)
        MPI_CHECK(MPI_Recv_init(buf, n, ring_t, left, tag, MPI_COMM_WORLD, p));
    if (*p == MPI_REQUEST_NULL && kind == PRECV)
        MPI_CHECK(MPI_Precv_init(buf, PARTS, n / PARTS, ring_t, left, tag, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, p));
    r = *p;
    MPI_CHECK(MPI_Start(&r));
    return r;
}

/* Receives n elements from the left into `buf` (the other kinds),
   checking the probe's status too. */
static void recv_now(int kind, void *buf, int n, int tag, MPI_Status *st)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Message msg;
    MPI_Request r;
    int flag = 0;
    switch (kind) {
    case RECV: MPI_CHECK(MPI_Recv(buf, n, ring_t, left, tag, w, st)); return;
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
    check_status(st, ring_t, n, left, tag, recv_names[kind]);
    if (kind == PROBE || kind == IPROBE) {
        MPI_CHECK(MPI_Recv(buf, n, ring_t, st->MPI_SOURCE, st->MPI_TAG, w, st));
    } else if (kind == MPROBE) {
        MPI_CHECK(MPI_Mrecv(buf, n, ring_t, &msg, st));
    } else {
        MPI_CHECK(MPI_Imrecv(buf, n, ring_t, &msg, &r));
        MPI_CHECK(MPI_Wait(&r, st));
    }
}

/* n elements of ring_t around the ring from device to device, sent `s`
   and received `rk`, twice with new contents (persistent requests
   restarted); the gaps of the receive buffer keep -1. */
static void ring_case(int s, int rk, int n, int tag)
{
    int len = n * stride;
    int *out = abicheck_malloc(len * sizeof *out), *in = abicheck_malloc(len * sizeof *in);
    fill_ints(in, len, -1);
    void *dout = to_device(in, len * sizeof *out), *din = to_device(in, len * sizeof *in);
    MPI_Request sp = MPI_REQUEST_NULL, rp = MPI_REQUEST_NULL;
    for (int round = 0; round < 2; round++) {
        fill_ints(out, len, -9);
        for (int i = 0; i < n; i++)
            out[i * stride] = rank * 10000 + round * 77 + i;
        set_device(dout, out, len * sizeof *out);
        set_device(din, (fill_ints(in, len, -1), in), len * sizeof *in);
        MPI_Request sr, rr = MPI_REQUEST_NULL;
        MPI_Status st;
        if (rk <= PRECV) {
            rr = post_recv(rk, din, n, tag, &rp);
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* posted everywhere: Rsend may go */
            sr = send_as(s, dout, n, tag, &sp);
            /* A buffered send took its copy: the buffer may change now. */
            if (s == BSEND || s == IBSEND)
                set_device(dout, in, len * sizeof *in);
            MPI_CHECK(MPI_Wait(&rr, &st));
        } else {
            sr = send_as(s, dout, n, tag, &sp);
            recv_now(rk, din, n, tag, &st);
        }
        MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        if (rk != PRECV)
            check_status(&st, ring_t, n, left, tag, recv_names[rk]);
        from_device(in, din, len * sizeof *in);
        for (int i = 0; i < len; i++) {
            int want = i % stride ? -1 : left * 10000 + round * 77 + i / stride;
            CHECK(in[i] == want, "%s -> %s of %d elements (stride %d), round %d: [%d] = %d",
                  send_names[s], recv_names[rk], n, stride, round, i, in[i]);
        }
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
   Send_init into Recv_init, partitioned into partitioned): ints at an
   eager and a rendezvous size, and strided ints (a non-contiguous type). */
static void test_send_recv_kinds(void)
{
    enum { BIG = 300000 };
    int bytes = 2 * (BIG * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *attached = abicheck_malloc(bytes), *detached;
    MPI_CHECK(MPI_Buffer_attach(attached, bytes));
    MPI_Datatype strided;
    MPI_CHECK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided));
    MPI_CHECK(MPI_Type_commit(&strided));
    int sizes[3] = {1000, BIG, 4000}, tag = 100;
    for (int k = 0; k < 3; k++) {
        ring_t = k < 2 ? MPI_INT : strided;
        stride = k < 2 ? 1 : 2;
        for (int s = SEND; s < PSEND; s++)
            ring_case(s, IRECV, sizes[k], tag++);
        for (int rk = RECV; rk < RECV_KINDS; rk++)
            ring_case(ISEND, rk, sizes[k], tag++);
        ring_case(SEND_INIT, RECV_INIT, sizes[k], tag++);
        ring_case(BSEND_INIT, RECV_INIT, sizes[k], tag++);
        ring_case(PSEND, PRECV, sizes[k], tag++);
    }
    MPI_CHECK(MPI_Type_free(&strided));
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

/* Sendrecv and Isendrecv between device buffers with a vector type on the
   receive side (its gaps keep -4), and the two replace calls with it. */
static void test_sendrecv_kinds(void)
{
    enum { N = 2000 };
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    static int out[2 * N], want[2 * N];
    for (int i = 0; i < 2 * N; i++)
        out[i] = rank * 10000 + i;
    void *dout = to_device(out, sizeof out), *din = to_device(out, sizeof out);
    MPI_Status st;
    for (int k = 0; k < 4; k++) {
        fill_ints(want, 2 * N, -4);
        set_device(din, want, sizeof want);
        int tag = 30 + k;
        MPI_Request req;
        if (k == 0) {
            MPI_CHECK(MPI_Sendrecv(dout, N, MPI_INT, right, tag, din, 1, vec, left, tag,
                                   MPI_COMM_WORLD, &st));
        } else if (k == 1) {
            MPI_CHECK(MPI_Isendrecv(dout, N, MPI_INT, right, tag, din, 1, vec, left, tag,
                                    MPI_COMM_WORLD, &req));
            MPI_CHECK(MPI_Wait(&req, &st));
        } else {
            /* Replace: every other int goes out and is replaced. */
            for (int i = 0; i < 2 * N; i++)
                want[i] = i % 2 ? -4 : rank * 10000 + i / 2;
            set_device(din, want, sizeof want);
            if (k == 2) {
                MPI_CHECK(MPI_Sendrecv_replace(din, 1, vec, right, tag, left, tag,
                                               MPI_COMM_WORLD, &st));
            } else {
                MPI_CHECK(MPI_Isendrecv_replace(din, 1, vec, right, tag, left, tag,
                                                MPI_COMM_WORLD, &req));
                MPI_CHECK(MPI_Wait(&req, &st));
            }
        }
        check_status(&st, MPI_INT, N, left, tag, "sendrecv");
        for (int i = 0; i < N; i++)
            want[2 * i] = left * 10000 + i;
        int *got = abicheck_malloc(sizeof want);
        from_device(got, din, sizeof want);
        check_ints(got, want, 2 * N, k == 0 ? "sendrecv" : k == 1 ? "isendrecv"
                                     : k == 2 ? "sendrecv_replace" : "isendrecv_replace");
        free(got);
    }
    MPI_CHECK(MPI_Type_free(&vec));
    device_free(dout);
    device_free(din);
}

/* A big-endian int as external32 stores it. */
static int big_endian(int v)
{
    const unsigned char *b = (const unsigned char *)&v;
    return (int)((unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3]);
}

/* MPI_Pack / MPI_Unpack and their external32 forms with device memory on
   either side: 3 ints, then every other int of 2*N (a vector), packed
   after them; unpacked into a device buffer whose gaps keep -4. */
static void test_pack(void)
{
    enum { N = 100 };
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    int src[2 * N], want[3 + N], got[2 * N], three[3] = {7, 8, 9};
    for (int i = 0; i < 2 * N; i++)
        src[i] = i % 2 ? -9 : i * 5 - 3;
    memcpy(want, three, sizeof three);
    for (int i = 0; i < N; i++)
        want[3 + i] = src[2 * i];
    void *dsrc = to_device(src, sizeof src), *dthree = to_device(three, sizeof three);
    int bytes = (int)sizeof want;
    for (int external = 0; external < 2; external++) {
        for (int on_device = 0; on_device < 2; on_device++) {
            int host[3 + N];
            fill_ints(host, 3 + N, -1);
            void *packed = on_device ? to_device(host, sizeof host) : (void *)host;
            MPI_Aint apos = 0;
            int pos = 0;
            if (external) {
                MPI_CHECK(MPI_Pack_external("external32", dthree, 3, MPI_INT, packed, bytes,
                                            &apos));
                MPI_CHECK(MPI_Pack_external("external32", dsrc, 1, vec, packed, bytes, &apos));
                pos = (int)apos;
            } else {
                MPI_CHECK(MPI_Pack(dthree, 3, MPI_INT, packed, bytes, &pos, MPI_COMM_WORLD));
                MPI_CHECK(MPI_Pack(dsrc, 1, vec, packed, bytes, &pos, MPI_COMM_WORLD));
            }
            CHECK(pos == bytes, "pack (external %d, device %d) ended at %d", external,
                  on_device, pos);
            if (on_device)
                from_device(host, packed, sizeof host);
            for (int i = 0; i < 3 + N; i++) {
                int w = external ? big_endian(want[i]) : want[i];
                CHECK(host[i] == w, "pack (external %d, device %d)[%d] = %d, expected %d",
                      external, on_device, i, host[i], w);
            }

            /* Back: the 3 ints skipped, the vector unpacked to the device. */
            void *ddst = to_device((fill_ints(got, 2 * N, -4), got), sizeof got);
            pos = 3 * (int)sizeof(int);
            apos = pos;
            if (external)
                MPI_CHECK(MPI_Unpack_external("external32", packed, bytes, &apos, ddst, 1, vec));
            else
                MPI_CHECK(MPI_Unpack(packed, bytes, &pos, ddst, 1, vec, MPI_COMM_WORLD));
            from_device(got, ddst, sizeof got);
            for (int i = 0; i < 2 * N; i++)
                CHECK(got[i] == (i % 2 ? -4 : src[i]),
                      "unpack (external %d, device %d)[%d] = %d", external, on_device, i, got[i]);
            device_free(ddst);
            if (on_device)
                device_free(packed);
        }
    }
    MPI_CHECK(MPI_Type_free(&vec));
    device_free(dsrc);
    device_free(dthree);
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

/* Device receives completed by every kind of completion call (Test,
   Testall, Waitany, Waitsome), a send freed while it runs, and a
   cancelled receive (its buffer untouched). */
static void test_completions(void)
{
    enum { N = 3000, K = 4 };
    static int out[K][N], in[N];
    void *dout[K], *din[K];
    MPI_Request sends[K], recvs[K];
    for (int way = 0; way < 4; way++) {
        for (int k = 0; k < K; k++) {
            for (int i = 0; i < N; i++)
                out[k][i] = rank * 1000 + way * 100 + k * 10 + i;
            dout[k] = to_device(out[k], sizeof out[k]);
            din[k] = device_ints(N, -1);
            MPI_CHECK(MPI_Irecv(din[k], N, MPI_INT, left, 70 + k, MPI_COMM_WORLD, &recvs[k]));
        }
        for (int k = 0; k < K; k++)
            MPI_CHECK(MPI_Isend(dout[k], N, MPI_INT, right, 70 + k, MPI_COMM_WORLD, &sends[k]));
        int flag = 0, done = 0, idx, outcount, idxs[K];
        MPI_Status st, sts[K];
        if (way == 0) {
            for (int k = 0; k < K; k++)
                for (flag = 0; !flag;)
                    MPI_CHECK(MPI_Test(&recvs[k], &flag, &st));
        } else if (way == 1) {
            while (!flag)
                MPI_CHECK(MPI_Testall(K, recvs, &flag, sts));
        } else if (way == 2) {
            for (; done < K; done++)
                MPI_CHECK(MPI_Waitany(K, recvs, &idx, &st));
        } else {
            for (; done < K; done += outcount)
                MPI_CHECK(MPI_Waitsome(K, recvs, &outcount, idxs, sts));
        }
        /* The sends are freed, not waited for: they finish on their own
           (the receives completed, so the data left). */
        for (int k = 0; k < K; k++)
            MPI_CHECK(MPI_Request_free(&sends[k]));
        for (int k = 0; k < K; k++) {
            int want[N];
            for (int i = 0; i < N; i++)
                want[i] = left * 1000 + way * 100 + k * 10 + i;
            from_device(in, din[k], sizeof in);
            check_ints(in, want, N, "completion");
            device_free(din[k]);
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (int k = 0; k < K; k++)
            device_free(dout[k]);
    }

    void *d = device_ints(N, -3);
    MPI_Request r;
    MPI_Status st;
    int cancelled = 0, want[N];
    MPI_CHECK(MPI_Irecv(d, N, MPI_INT, left, 79, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Cancel(&r));
    MPI_CHECK(MPI_Wait(&r, &st));
    MPI_CHECK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled, "a device receive nobody sends to was not cancelled");
    from_device(in, d, sizeof in);
    check_ints(in, (fill_ints(want, N, -3), want), N, "cancelled receive");
    device_free(d);
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
    test_sendrecv_kinds();
    test_persistent_p2p();
    test_derived_p2p();
    test_status_truncate();
    test_completions();
    test_pack();
    abicheck_pass("gpu_calls");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
