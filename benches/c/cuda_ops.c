/*
 * What the driver operations under OxMPI's device path cost on this
 * machine, measured by every rank at once (so `-n 2` shows what two
 * processes sharing one GPU pay): pointer classification, context
 * push/pop, small and 1 MiB copies each way from pageable memory with the
 * stream synchronisation the device path does, and a device-to-device
 * copy. Best of 5 rounds of 200 (20 for 1 MiB) calls, in microseconds.
 *
 *   oxrun -n 1 ./cuda_ops ; oxrun -n 2 ./cuda_ops
 *
 * Output: `rank op bytes us_per_call`.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long dev_ptr;
typedef int (*fn0)(void);

static void *lib;
static void *need(const char *name)
{
    void *f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr, "cuda_ops: libcuda.so.1 has no %s\n", name);
        exit(1);
    }
    return f;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "cuda_ops: %s\n", dlerror());
        return 1;
    }
    int (*init)(unsigned) = need("cuInit");
    int (*device_get)(int *, int) = need("cuDeviceGet");
    int (*retain)(void **, int) = need("cuDevicePrimaryCtxRetain");
    int (*set_current)(void *) = need("cuCtxSetCurrent");
    int (*push)(void *) = need("cuCtxPushCurrent_v2");
    int (*pop)(void **) = need("cuCtxPopCurrent_v2");
    int (*alloc)(dev_ptr *, size_t) = need("cuMemAlloc_v2");
    int (*memcpy_)(dev_ptr, dev_ptr, size_t) = need("cuMemcpy");
    int (*sync)(void *) = need("cuStreamSynchronize");
    int (*attrs)(unsigned, int *, void **, dev_ptr) = need("cuPointerGetAttributes");
    int dev;
    void *ctx;
    init(0);
    device_get(&dev, 0);
    retain(&ctx, dev);
    set_current(ctx);
    size_t big = 1 << 20;
    dev_ptr d1, d2;
    alloc(&d1, big);
    alloc(&d2, big);
    char *host = malloc(big);
    memset(host, 1, big);
    const char *names[] = {"classify", "push_pop", "dtoh", "htod", "dtod"};
    size_t sizes[] = {8, 1 << 20};
    for (int op = 0; op < 5; op++)
        for (int s = 0; s < 2; s++) {
            if (op < 2 && s == 1)
                continue;
            size_t n = sizes[s];
            int iters = s ? 20 : 200;
            double best = 1e30;
            for (int round = 0; round < 5; round++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++) {
                    int a[2] = {2 /* MEMORY_TYPE */, 7 /* BUFFER_ID */};
                    unsigned type = 0;
                    unsigned long long id = 0;
                    void *data[2] = {&type, &id};
                    void *popped;
                    switch (op) {
                    case 0:
                        attrs(2, a, data, (dev_ptr)(uintptr_t)host);
                        attrs(2, a, data, d1);
                        break;
                    case 1:
                        push(ctx);
                        pop(&popped);
                        break;
                    case 2:
                        memcpy_((dev_ptr)(uintptr_t)host, d1, n);
                        sync(NULL);
                        break;
                    case 3:
                        memcpy_(d1, (dev_ptr)(uintptr_t)host, n);
                        sync(NULL);
                        break;
                    default:
                        memcpy_(d2, d1, n);
                        sync(NULL);
                    }
                }
                double t = (MPI_Wtime() - t0) / iters * 1e6;
                best = t < best ? t : best;
            }
            printf("%d %s %zu %.2f\n", rank, names[op], op < 2 ? (size_t)0 : n, best);
        }
    MPI_Finalize();
    return 0;
}
