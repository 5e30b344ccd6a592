/*
 * Blocking point-to-point through the C ABI: ring with Send/Recv, every send
 * mode (Ssend, Rsend after a pre-posted receive, Bsend with an attached
 * buffer), Sendrecv and Sendrecv_replace shifts, wildcards with status
 * fields and MPI_Get_count / MPI_Get_elements, MPI_PROC_NULL, many
 * predefined datatypes, and a 8 MiB message (the rendezvous path).
 * Prints "PASS p2p" from rank 0.
 */
#include "abicheck.h"

#include <stdint.h>

static int rank, size;

static int next(void) { return (rank + 1) % size; }
static int prev(void) { return (rank + size - 1) % size; }

static void ring(void)
{
    int token = rank * 10, got = -1;
    MPI_Status st;
    if (size == 1) {
        /* A send to oneself may block until received: post the receive first. */
        MPI_Request req;
        MPI_CHECK(MPI_Irecv(&got, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Send(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&req, &st));
    } else if (rank % 2 == 0) {
        MPI_CHECK(MPI_Send(&token, 1, MPI_INT, next(), 1, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, prev(), 1, MPI_COMM_WORLD, &st));
    } else {
        MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, prev(), 1, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Send(&token, 1, MPI_INT, next(), 1, MPI_COMM_WORLD));
    }
    CHECK(got == prev() * 10, "ring: got %d from %d", got, prev());
    CHECK(st.MPI_SOURCE == prev() && st.MPI_TAG == 1, "ring status source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    int n = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 1, "ring: MPI_Get_count gave %d", n);
}

static void modes(void)
{
    /* Ssend: rank r sends to r+1 (a receive is posted first, so no deadlock). */
    double out[3] = {rank + 0.5, rank + 1.5, rank + 2.5}, in[3] = {0};
    MPI_Request req;
    MPI_CHECK(MPI_Irecv(in, 3, MPI_DOUBLE, prev(), 2, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Ssend(out, 3, MPI_DOUBLE, next(), 2, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "completed request not set to MPI_REQUEST_NULL");
    CHECK(in[0] == prev() + 0.5 && in[2] == prev() + 2.5, "ssend: got %g %g", in[0], in[2]);

    /* Rsend: the receive is posted before the barrier, the send after it. */
    short sin = -1, sout = (short)(rank + 100);
    MPI_CHECK(MPI_Irecv(&sin, 1, MPI_SHORT, prev(), 3, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Rsend(&sout, 1, MPI_SHORT, next(), 3, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(sin == prev() + 100, "rsend: got %d", sin);

    /* Bsend: completes locally even though the receive comes later. */
    int bsize = 4 * (1024 + MPI_BSEND_OVERHEAD);
    char *buffer = abicheck_malloc((size_t)bsize);
    MPI_CHECK(MPI_Buffer_attach(buffer, bsize));
    long long big[128], back[128];
    for (int i = 0; i < 128; i++)
        big[i] = (long long)rank * 1000000 + i;
    MPI_CHECK(MPI_Bsend(big, 128, MPI_LONG_LONG, next(), 4, MPI_COMM_WORLD));
    for (int i = 0; i < 128; i++)
        big[i] = -1; /* the data was copied */
    MPI_CHECK(MPI_Recv(back, 128, MPI_LONG_LONG, prev(), 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 128; i++)
        CHECK(back[i] == (long long)prev() * 1000000 + i, "bsend: element %d is %lld", i, back[i]);
    void *detached = NULL;
    int dsize = 0;
    MPI_CHECK(MPI_Buffer_detach(&detached, &dsize));
    CHECK(detached == buffer && dsize == bsize, "detach gave %p/%d, attached %p/%d", detached,
          dsize, (void *)buffer, bsize);
    free(buffer);
}

static void shifts(void)
{
    int out[4], in[4];
    for (int i = 0; i < 4; i++)
        out[i] = rank * 4 + i;
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(out, 4, MPI_INT, next(), 5, in, 4, MPI_INT, prev(), 5, MPI_COMM_WORLD,
                           &st));
    CHECK(in[3] == prev() * 4 + 3 && st.MPI_SOURCE == prev(), "sendrecv got %d from %d", in[3],
          st.MPI_SOURCE);

    uint16_t buf[5];
    for (int i = 0; i < 5; i++)
        buf[i] = (uint16_t)(rank * 5 + i);
    MPI_CHECK(MPI_Sendrecv_replace(buf, 5, MPI_UINT16_T, next(), 6, prev(), 6, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 5; i++)
        CHECK(buf[i] == prev() * 5 + i, "sendrecv_replace: element %d is %d", i, buf[i]);
    int n = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_UINT16_T, &n));
    CHECK(n == 5, "sendrecv_replace count %d", n);
}

static void wildcards(void)
{
    /* Everyone sends rank+1 chars with tag rank to rank 0. */
    char msg[64];
    memset(msg, 'a' + rank % 26, sizeof msg);
    if (rank != 0) {
        MPI_CHECK(MPI_Send(msg, rank + 1, MPI_CHAR, 0, rank, MPI_COMM_WORLD));
        return;
    }
    int seen = 0;
    for (int i = 1; i < size; i++) {
        char in[64];
        MPI_Status st;
        MPI_CHECK(MPI_Recv(in, 64, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int src = st.MPI_SOURCE, n = -1, e = -1;
        CHECK(src >= 1 && src < size && st.MPI_TAG == src, "wildcard status source %d tag %d", src,
              st.MPI_TAG);
        MPI_CHECK(MPI_Get_count(&st, MPI_CHAR, &n));
        MPI_CHECK(MPI_Get_elements(&st, MPI_CHAR, &e));
        CHECK(n == src + 1 && e == n, "from %d: count %d elements %d", src, n, e);
        CHECK(in[0] == 'a' + src % 26 && in[src] == 'a' + src % 26, "from %d: wrong bytes", src);
        int as_int = -2;
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &as_int));
        CHECK(((src + 1) % 4 == 0) ? as_int == (src + 1) / 4 : as_int == MPI_UNDEFINED,
              "%d chars as ints: %d", src + 1, as_int);
        seen |= 1 << src;
    }
    CHECK(seen == ((1 << size) - 2), "senders seen: %#x", seen);
}

static void proc_null(void)
{
    int x = 42;
    MPI_Status st;
    MPI_CHECK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    int n = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(x == 42 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0,
          "PROC_NULL receive: x %d source %d tag %d count %d", x, st.MPI_SOURCE, st.MPI_TAG, n);
}

static void datatypes(void)
{
    /* One message per type, shifted along the ring. */
    struct { float f; int i; } fi = {rank + 0.25f, rank}, fi_in;
    struct { double d; int i; } di = {rank + 0.5, -rank}, di_in;
    int two[2] = {rank, -rank}, two_in[2];
    unsigned char uc = (unsigned char)(200 + rank), uc_in;
    long l = 1L << 40 | rank, l_in;
    long double ld = rank + 0.125L, ld_in;
    int64_t i64 = INT64_MIN + rank, i64_in;
    MPI_Aint a = (MPI_Aint)rank << 33, a_in;
#define SHIFT(v, vin, type)                                                                        \
    MPI_CHECK(MPI_Sendrecv(&v, 1, type, next(), 7, &vin, 1, type, prev(), 7, MPI_COMM_WORLD,         \
                           MPI_STATUS_IGNORE))
    SHIFT(fi, fi_in, MPI_FLOAT_INT);
    SHIFT(di, di_in, MPI_DOUBLE_INT);
    SHIFT(two, two_in, MPI_2INT);
    SHIFT(uc, uc_in, MPI_UNSIGNED_CHAR);
    SHIFT(l, l_in, MPI_LONG);
    SHIFT(ld, ld_in, MPI_LONG_DOUBLE);
    SHIFT(i64, i64_in, MPI_INT64_T);
    SHIFT(a, a_in, MPI_AINT);
#undef SHIFT
    int p = prev();
    CHECK(fi_in.f == p + 0.25f && fi_in.i == p, "MPI_FLOAT_INT: %g %d", fi_in.f, fi_in.i);
    CHECK(di_in.d == p + 0.5 && di_in.i == -p, "MPI_DOUBLE_INT: %g %d", di_in.d, di_in.i);
    CHECK(two_in[0] == p && two_in[1] == -p, "MPI_2INT: %d %d", two_in[0], two_in[1]);
    CHECK(uc_in == 200 + p, "MPI_UNSIGNED_CHAR: %d", uc_in);
    CHECK(l_in == (1L << 40 | p), "MPI_LONG: %ld", l_in);
    CHECK(ld_in == p + 0.125L, "MPI_LONG_DOUBLE");
    CHECK(i64_in == INT64_MIN + p, "MPI_INT64_T");
    CHECK(a_in == (MPI_Aint)p << 33, "MPI_AINT");
}

static void large(void)
{
    enum { N = 1 << 20 }; /* 8 MiB of doubles */
    double *out = abicheck_malloc(N * sizeof(double)), *in = abicheck_malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        out[i] = rank * 1e7 + i;
        in[i] = -1;
    }
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(out, N, MPI_DOUBLE, next(), 8, in, N, MPI_DOUBLE, prev(), 8,
                           MPI_COMM_WORLD, &st));
    for (int i = 0; i < N; i++)
        if (in[i] != prev() * 1e7 + i)
            FAIL("large: element %d is %f", i, in[i]);
    int n = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &n));
    CHECK(n == N, "large count %d", n);
    int bytes = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &bytes));
    CHECK(bytes == N * 8, "large byte count %d", bytes);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    ring();
    modes();
    shifts();
    wildcards();
    /* Later messages must not be matched by rank 0's wildcard receives. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    proc_null();
    datatypes();
    large();
    abicheck_pass("p2p");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
