/*
 * Device-buffer benchmarks in the style of nccl-tests: for each size, the
 * best time of several runs of an operation on CUDA device buffers, with
 * its algorithm bandwidth (bytes / time) and bus bandwidth (algbw times the
 * operation's data-movement factor: allreduce 2(n-1)/n, allgather and
 * reduce_scatter (n-1)/n, bcast 1), plus a device-to-device ping-pong
 * between ranks 0 and 1. Device memory comes from the driver API through
 * dlopen of libcuda.so.1, so it builds without CUDA and runs on any MPI
 * that accepts device buffers.
 *
 *   mpirun -n 4 ./gpu_bench [max_bytes]        (default 64 MiB)
 *
 * Output: one line per (op, size): `op bytes time_us algbw_GBs busbw_GBs`,
 * after a header line starting with '#'. Results are checked once per size
 * (a wrong sum aborts).
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long dev_ptr;
static int (*cu_mem_alloc)(dev_ptr *, size_t);
static int (*cu_mem_free)(dev_ptr);
static int (*cu_htod)(dev_ptr, const void *, size_t);
static int (*cu_dtoh)(void *, dev_ptr, size_t);
static int rank, size;

static void die(const char *what)
{
    fprintf(stderr, "gpu_bench rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void *need(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    if (!f)
        die(name);
    return f;
}

static void cuda_start(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
        die(dlerror());
    int (*init)(unsigned) = (int (*)(unsigned))need(lib, "cuInit");
    int (*device_get)(int *, int) = (int (*)(int *, int))need(lib, "cuDeviceGet");
    int (*count)(int *) = (int (*)(int *))need(lib, "cuDeviceGetCount");
    int (*retain)(void **, int) = (int (*)(void **, int))need(lib, "cuDevicePrimaryCtxRetain");
    int (*set_current)(void *) = (int (*)(void *))need(lib, "cuCtxSetCurrent");
    cu_mem_alloc = (int (*)(dev_ptr *, size_t))need(lib, "cuMemAlloc_v2");
    cu_mem_free = (int (*)(dev_ptr))need(lib, "cuMemFree_v2");
    cu_htod = (int (*)(dev_ptr, const void *, size_t))need(lib, "cuMemcpyHtoD_v2");
    cu_dtoh = (int (*)(void *, dev_ptr, size_t))need(lib, "cuMemcpyDtoH_v2");
    int n = 0, dev = 0;
    void *ctx = NULL;
    if (init(0) || count(&n) || n < 1)
        die("no CUDA device");
    /* Ranks share the devices round robin (by local rank in practice;
       world rank is enough for one host). */
    if (device_get(&dev, rank % n) || retain(&ctx, dev) || set_current(ctx))
        die("cannot make a context current");
}

static void *dev_alloc(size_t n)
{
    dev_ptr d = 0;
    if (cu_mem_alloc(&d, n ? n : 1))
        die("cuMemAlloc failed");
    return (void *)(uintptr_t)d;
}

enum op { ALLREDUCE, BCAST, ALLGATHER, REDUCE_SCATTER, PINGPONG, OPS };
static const char *names[OPS] = {"allreduce", "bcast", "allgather", "reduce_scatter",
                                 "pingpong"};

/* One run of `op` on `bytes` (per-rank block for allgather/reduce_scatter
   is bytes/size) with float elements. */
static void run(enum op op, void *a, void *b, size_t bytes)
{
    int n = (int)(bytes / sizeof(float));
    int block = n / size;
    switch (op) {
    case ALLREDUCE:
        MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case BCAST:
        MPI_Bcast(a, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
        break;
    case ALLGATHER:
        MPI_Allgather(a, block, MPI_FLOAT, b, block, MPI_FLOAT, MPI_COMM_WORLD);
        break;
    case REDUCE_SCATTER:
        MPI_Reduce_scatter_block(a, b, block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case PINGPONG:
        if (rank == 0) {
            MPI_Send(a, n, MPI_FLOAT, 1, 9, MPI_COMM_WORLD);
            MPI_Recv(b, n, MPI_FLOAT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(b, n, MPI_FLOAT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(b, n, MPI_FLOAT, 0, 9, MPI_COMM_WORLD);
        }
        break;
    default:
        break;
    }
}

static double bus_factor(enum op op)
{
    switch (op) {
    case ALLREDUCE:
        return 2.0 * (size - 1) / size;
    case ALLGATHER:
    case REDUCE_SCATTER:
        return (double)(size - 1) / size;
    default:
        return 1.0;
    }
}

/* Allreduce of rank+1 everywhere gives size*(size+1)/2: checked once. */
static void check_allreduce(void *a, void *b, size_t bytes)
{
    size_t n = bytes / sizeof(float);
    float *h = malloc(bytes);
    for (size_t i = 0; i < n; i++)
        h[i] = (float)(rank + 1);
    cu_htod((dev_ptr)(uintptr_t)a, h, bytes);
    run(ALLREDUCE, a, b, bytes);
    cu_dtoh(h, (dev_ptr)(uintptr_t)b, bytes);
    float want = (float)(size * (size + 1) / 2);
    for (size_t i = 0; i < n; i++)
        if (h[i] != want)
            die("allreduce result is wrong");
    free(h);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cuda_start();
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : (64u << 20);
    void *a = dev_alloc(max), *b = dev_alloc(max);
    if (rank == 0)
        printf("# op bytes time_us algbw_GBs busbw_GBs (ranks %d, device buffers)\n", size);
    for (size_t bytes = 4 * (size_t)size; bytes <= max; bytes *= 4) {
        check_allreduce(a, b, bytes);
        for (int op = 0; op < OPS; op++) {
            if (op == PINGPONG && size < 2)
                continue;
            int iters = bytes < (1u << 20) ? 50 : 10;
            double best = 1e30;
            for (int rep = 0; rep < 5; rep++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++)
                    run((enum op)op, a, b, bytes);
                double t = (MPI_Wtime() - t0) / iters;
                MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                best = t < best ? t : best;
            }
            /* Ping-pong: one-way time of a round trip. */
            double time = op == PINGPONG ? best / 2 : best;
            double algbw = bytes / time / 1e9;
            if (rank == 0)
                printf("%s %zu %.2f %.3f %.3f\n", names[op], bytes, time * 1e6, algbw,
                       algbw * bus_factor((enum op)op));
        }
        fflush(stdout);
    }
    cu_mem_free((dev_ptr)(uintptr_t)a);
    cu_mem_free((dev_ptr)(uintptr_t)b);
    MPI_Finalize();
    return 0;
}
