/*
 * CUDA device memory for the GPU test programs, as a CUDA-aware program
 * gets it: the driver API through dlopen("libcuda.so.1"), so the programs
 * build without CUDA; and the checks they share. Include after abicheck.h.
 */
#ifndef CUDACHECK_H
#define CUDACHECK_H

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

/* Declared by Open MPI's mpi-ext.h and by OxMPI's mpi.h; MPICH exports it
   without declaring it. */
int MPIX_Query_cuda_support(void);

typedef unsigned long long dev_ptr;
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_ctx_retain_fn)(void **, int);
typedef int (*cu_ctx_set_fn)(void *);
typedef int (*cu_mem_alloc_fn)(dev_ptr *, size_t);
typedef int (*cu_mem_free_fn)(dev_ptr);
typedef int (*cu_htod_fn)(dev_ptr, const void *, size_t);
typedef int (*cu_dtoh_fn)(void *, dev_ptr, size_t);
typedef int (*cu_sync_fn)(void);

static struct {
    cu_mem_alloc_fn alloc;
    cu_mem_free_fn free;
    cu_htod_fn htod;
    cu_dtoh_fn dtoh;
    cu_sync_fn sync;
} cu;

#define CU_CHECK(call)                                                         \
    do {                                                                       \
        int cu_rc_ = (call);                                                   \
        CHECK(cu_rc_ == 0, "%s returned CUDA error %d", #call, cu_rc_);        \
    } while (0)

static void *cu_sym(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    CHECK(f != NULL, "libcuda.so.1 has no %s", name);
    return f;
}

/* Loads the driver and makes device 0's primary context current. */
static void cuda_start(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    CHECK(lib != NULL, "cannot load libcuda.so.1: %s", dlerror());
    cu_init_fn init = (cu_init_fn)cu_sym(lib, "cuInit");
    cu_device_get_fn device_get = (cu_device_get_fn)cu_sym(lib, "cuDeviceGet");
    cu_ctx_retain_fn retain = (cu_ctx_retain_fn)cu_sym(lib, "cuDevicePrimaryCtxRetain");
    cu_ctx_set_fn set_current = (cu_ctx_set_fn)cu_sym(lib, "cuCtxSetCurrent");
    cu.alloc = (cu_mem_alloc_fn)cu_sym(lib, "cuMemAlloc_v2");
    cu.free = (cu_mem_free_fn)cu_sym(lib, "cuMemFree_v2");
    cu.htod = (cu_htod_fn)cu_sym(lib, "cuMemcpyHtoD_v2");
    cu.dtoh = (cu_dtoh_fn)cu_sym(lib, "cuMemcpyDtoH_v2");
    cu.sync = (cu_sync_fn)cu_sym(lib, "cuCtxSynchronize");
    int dev = 0;
    void *ctx = NULL;
    CU_CHECK(init(0));
    CU_CHECK(device_get(&dev, 0));
    CU_CHECK(retain(&ctx, dev));
    CU_CHECK(set_current(ctx));
}

/* Copies `n` bytes of `host` into device memory at `dev`, and waits until
   the device has them: a copy from pageable memory may return before, and
   another process (a peer reaching this memory by CUDA IPC) is not
   ordered after this context's copies. */
static void set_device(void *dev, const void *host, size_t n)
{
    if (n) {
        CU_CHECK(cu.htod((dev_ptr)(uintptr_t)dev, host, n));
        CU_CHECK(cu.sync());
    }
}

/* A device copy of `n` bytes of `host`. */
static void *to_device(const void *host, size_t n)
{
    dev_ptr d = 0;
    CU_CHECK(cu.alloc(&d, n ? n : 1));
    set_device((void *)(uintptr_t)d, host, n);
    return (void *)(uintptr_t)d;
}

static void from_device(void *host, const void *dev, size_t n)
{
    if (n)
        CU_CHECK(cu.dtoh(host, (dev_ptr)(uintptr_t)dev, n));
}

static void device_free(void *dev)
{
    CU_CHECK(cu.free((dev_ptr)(uintptr_t)dev));
}

/* Sets n ints of `a` to `v`. */
static inline void fill_ints(int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        a[i] = v;
}

/* n ints of device memory, each `v`. */
static inline void *device_ints(int n, int v)
{
    int *host = abicheck_malloc(n * sizeof *host);
    fill_ints(host, n, v);
    void *d = to_device(host, n * sizeof *host);
    free(host);
    return d;
}

static inline void check_ints(const int *got, const int *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s[%d] = %d, expected %d", what, i, got[i], want[i]);
}

#endif
