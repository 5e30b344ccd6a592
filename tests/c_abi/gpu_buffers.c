/*
 * CUDA device buffers through the C ABI, as a CUDA-aware program passes
 * them: device memory from the driver API (libcuda.so.1 through dlopen, so
 * the program builds without CUDA) handed straight to MPI calls. Every
 * result is copied back to the host and checked against a serial
 * computation. Calls: Sendrecv, Isend/Irecv, Bcast with a vector datatype
 * (the gaps must keep their bytes), Allreduce (SUM/MAX/MIN/PROD, also in
 * place), Iallreduce, Reduce, Allgather, Alltoall, Reduce_scatter_block, a
 * host-to-device mix, CUDA IPC of a freed and reallocated buffer, and
 * MPIX_Query_cuda_support() == 1.
 * Prints "PASS gpu_buffers" from rank 0.
 */
#include "abicheck.h"
#include "cudacheck.h"

static int rank, size;

static double value(int r, int i) { return r * 1000.0 + i * 0.5; }

static void check_doubles(const double *got, const double *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s[%d] = %g, expected %g", what, i, got[i], want[i]);
}

static void test_sendrecv(void)
{
    enum { N = 1000 };
    double out[N], in[N], want[N];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < N; i++) {
        out[i] = value(rank, i);
        want[i] = value(left, i);
    }
    void *dout = to_device(out, sizeof out), *din = to_device(in, sizeof in);
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(dout, N, MPI_DOUBLE, right, 1, din, N, MPI_DOUBLE, left, 1,
                           MPI_COMM_WORLD, &st));
    int count = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &count));
    CHECK(count == N && st.MPI_SOURCE == left, "sendrecv status: count %d source %d", count,
          st.MPI_SOURCE);
    from_device(in, din, sizeof in);
    check_doubles(in, want, N, "sendrecv");
    device_free(dout);
    device_free(din);
}

/* Large enough for the rendezvous path, plus a short message into a longer
   buffer whose tail must keep its bytes. */
static void test_isend_irecv(void)
{
    enum { N = 300000, SHORT = 10 };
    double *out = malloc(N * sizeof *out), *in = malloc(N * sizeof *in);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < N; i++) {
        out[i] = value(rank, i);
        in[i] = -1.0;
    }
    void *dout = to_device(out, N * sizeof *out), *din = to_device(in, N * sizeof *in);
    MPI_Request reqs[4];
    MPI_Status sts[2];
    MPI_CHECK(MPI_Irecv(din, N, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Isend(dout, N, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &reqs[1]));
    MPI_CHECK(MPI_Waitall(2, reqs, sts));
    from_device(in, din, N * sizeof *in);
    for (int i = 0; i < N; i++)
        CHECK(in[i] == value(left, i), "isend/irecv[%d] = %g", i, in[i]);

    void *dshort = to_device(in, N * sizeof *in); /* holds the left values */
    MPI_Status st;
    MPI_CHECK(MPI_Irecv(dshort, N, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &reqs[2]));
    MPI_CHECK(MPI_Isend(dout, SHORT, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &reqs[3]));
    MPI_CHECK(MPI_Wait(&reqs[3], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&reqs[2], &st));
    int count = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &count));
    CHECK(count == SHORT, "short message count %d", count);
    from_device(in, dshort, N * sizeof *in);
    for (int i = 0; i < N; i++)
        CHECK(in[i] == value(left, i), "short receive touched [%d] = %g", i, in[i]);
    device_free(dout);
    device_free(din);
    device_free(dshort);
    free(out);
    free(in);
}

/* Every other int of 2*N: the gaps (-7 everywhere) must stay as they were. */
static void test_bcast_vector(void)
{
    enum { N = 500 };
    int host[2 * N], got[2 * N];
    int root = size - 1;
    for (int i = 0; i < 2 * N; i++)
        host[i] = (i % 2 == 0 && rank == root) ? i * 3 + 1 : -7;
    void *d = to_device(host, sizeof host);
    MPI_Datatype every_other;
    MPI_CHECK(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    MPI_CHECK(MPI_Type_commit(&every_other));
    MPI_CHECK(MPI_Bcast(d, 1, every_other, root, MPI_COMM_WORLD));
    from_device(got, d, sizeof got);
    for (int i = 0; i < 2 * N; i++) {
        int want = i % 2 == 0 ? i * 3 + 1 : -7;
        CHECK(got[i] == want, "bcast vector[%d] = %d, expected %d", i, got[i], want);
    }
    MPI_CHECK(MPI_Type_free(&every_other));
    device_free(d);
}

/* Values with 5 significant bits: sums and products of up to 4 of them are
   exact in double, so every reduction order gives the serial result. */
static double small_value(int r, int i) { return 1.0 + 0.0625 * ((r * 3 + i) % 16); }

static double reduce_ref(MPI_Op op, int i)
{
    double acc = small_value(0, i);
    for (int r = 1; r < size; r++) {
        double v = small_value(r, i);
        if (op == MPI_SUM)
            acc += v;
        else if (op == MPI_MAX)
            acc = v > acc ? v : acc;
        else if (op == MPI_MIN)
            acc = v < acc ? v : acc;
        else
            acc *= v;
    }
    return acc;
}

static void test_allreduce(void)
{
    enum { N = 4096 };
    static double in[N], out[N], want[N];
    MPI_Op ops[4] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < N; i++) {
            in[i] = small_value(rank, i);
            want[i] = reduce_ref(ops[k], i);
        }
        void *din = to_device(in, sizeof in), *dout = to_device(out, sizeof out);
        MPI_CHECK(MPI_Allreduce(din, dout, N, MPI_DOUBLE, ops[k], MPI_COMM_WORLD));
        from_device(out, dout, sizeof out);
        check_doubles(out, want, N, "allreduce");
        /* In place: the result replaces the input. */
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, din, N, MPI_DOUBLE, ops[k], MPI_COMM_WORLD));
        from_device(out, din, sizeof out);
        check_doubles(out, want, N, "allreduce in place");
        device_free(din);
        device_free(dout);
    }
    /* Non-blocking, and a large float sum (many chunks). */
    enum { M = 1 << 18 };
    float *fin = malloc(M * sizeof *fin), *fout = malloc(M * sizeof *fout);
    for (int i = 0; i < M; i++)
        fin[i] = (float)(rank + 1) * (float)(i % 7);
    void *din = to_device(fin, M * sizeof *fin), *dout = to_device(fout, M * sizeof *fout);
    MPI_Request req;
    MPI_CHECK(MPI_Iallreduce(din, dout, M, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    from_device(fout, dout, M * sizeof *fout);
    float ranks_sum = (float)(size * (size + 1) / 2);
    for (int i = 0; i < M; i++)
        CHECK(fout[i] == ranks_sum * (float)(i % 7), "iallreduce[%d] = %g", i, fout[i]);
    device_free(din);
    device_free(dout);
    free(fin);
    free(fout);
}

static void test_reduce(void)
{
    enum { N = 777 };
    long long in[N], out[N];
    int root = size / 2;
    for (int i = 0; i < N; i++) {
        in[i] = (long long)rank * N + i;
        out[i] = -1;
    }
    void *din = to_device(in, sizeof in), *dout = to_device(out, sizeof out);
    MPI_CHECK(MPI_Reduce(din, dout, N, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD));
    from_device(out, dout, sizeof out);
    if (rank == root)
        for (int i = 0; i < N; i++) {
            long long want = (long long)N * size * (size - 1) / 2 + (long long)i * size;
            CHECK(out[i] == want, "reduce[%d] = %lld, expected %lld", i, out[i], want);
        }
    device_free(din);
    device_free(dout);
}

static void test_allgather_alltoall(void)
{
    enum { N = 64 };
    int mine[N], *all = malloc((size_t)N * size * sizeof *all);
    int *sendall = malloc((size_t)N * size * sizeof *sendall);
    for (int i = 0; i < N; i++)
        mine[i] = rank * 100 + i;
    void *dmine = to_device(mine, sizeof mine);
    void *dall = to_device(all, (size_t)N * size * sizeof *all);
    MPI_CHECK(MPI_Allgather(dmine, N, MPI_INT, dall, N, MPI_INT, MPI_COMM_WORLD));
    from_device(all, dall, (size_t)N * size * sizeof *all);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == r * 100 + i, "allgather[%d][%d] = %d", r, i, all[r * N + i]);

    /* Alltoall: block r of rank q's send buffer holds q*1000 + r*10 + i. */
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            sendall[r * N + i] = rank * 1000 + r * 10 + i;
    void *dsend = to_device(sendall, (size_t)N * size * sizeof *sendall);
    MPI_CHECK(MPI_Alltoall(dsend, N, MPI_INT, dall, N, MPI_INT, MPI_COMM_WORLD));
    from_device(all, dall, (size_t)N * size * sizeof *all);
    for (int q = 0; q < size; q++)
        for (int i = 0; i < N; i++) {
            int want = q * 1000 + rank * 10 + i;
            CHECK(all[q * N + i] == want, "alltoall[%d][%d] = %d, expected %d", q, i,
                  all[q * N + i], want);
        }
    device_free(dmine);
    device_free(dall);
    device_free(dsend);
    free(all);
    free(sendall);
}

static void test_reduce_scatter_block(void)
{
    enum { N = 100 };
    int *in = malloc((size_t)N * size * sizeof *in), out[N];
    for (int i = 0; i < N * size; i++)
        in[i] = rank + i;
    void *din = to_device(in, (size_t)N * size * sizeof *in), *dout = to_device(out, sizeof out);
    MPI_CHECK(MPI_Reduce_scatter_block(din, dout, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    from_device(out, dout, sizeof out);
    for (int i = 0; i < N; i++) {
        int want = (size - 1) + rank * N + i;
        CHECK(out[i] == want, "reduce_scatter_block[%d] = %d, expected %d", i, out[i], want);
    }
    device_free(din);
    device_free(dout);
    free(in);
}

/* A host buffer sent into a device buffer and back. */
static void test_host_device_mix(void)
{
    enum { N = 5000 };
    int host_out[N], back[N];
    for (int i = 0; i < N; i++) {
        host_out[i] = rank * 7 + i;
        back[i] = -1;
    }
    void *din = to_device(back, sizeof back);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_CHECK(MPI_Sendrecv(host_out, N, MPI_INT, right, 4, din, N, MPI_INT, left, 4,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Sendrecv(din, N, MPI_INT, left, 5, back, N, MPI_INT, right, 5, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(back[i] == rank * 7 + i, "host/device round trip[%d] = %d", i, back[i]);
    device_free(din);
}

/* Large messages to a rank of the same host go by CUDA IPC: a buffer freed
   and allocated again (often at the same address) must be read anew, never
   through a mapping of the old allocation. */
static void test_ipc_reallocated(void)
{
    enum { N = 1 << 16 }; /* 256 KiB of ints: above OXMPI_CUDA_IPC_MIN */
    if (size < 2 || rank > 1)
        return;
    int *h = malloc(N * sizeof *h);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            h[i] = rank == 0 ? round * 1000000 + i : -1;
        void *d = to_device(h, N * sizeof *h);
        if (rank == 0) {
            MPI_CHECK(MPI_Send(d, N, MPI_INT, 1, 10 + round, MPI_COMM_WORLD));
        } else {
            MPI_CHECK(MPI_Recv(d, N, MPI_INT, 0, 10 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            from_device(h, d, N * sizeof *h);
            for (int i = 0; i < N; i++)
                CHECK(h[i] == round * 1000000 + i, "round %d: [%d] = %d", round, i, h[i]);
        }
        device_free(d);
    }
    free(h);
}

int main(int argc, char **argv)
{
    cuda_start();
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(MPIX_Query_cuda_support() == 1, "MPIX_Query_cuda_support() = %d",
          MPIX_Query_cuda_support());
    test_sendrecv();
    test_isend_irecv();
    test_bcast_vector();
    test_allreduce();
    test_reduce();
    test_allgather_alltoall();
    test_reduce_scatter_block();
    test_host_device_mix();
    test_ipc_reallocated();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("PASS gpu_buffers\n");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
