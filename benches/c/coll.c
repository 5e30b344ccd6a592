/* Collective benchmark, C against an MPI library (MPICH or Open MPI).
 *
 * The same logic as benches/src/bin/coll_bench.rs (the OxMPI Rust API);
 * keep the two in step. Built and run by the `coll` runner:
 *
 *     mpicc.mpich -O2 -Wall -Wextra benches/c/coll.c -o coll_c_mpich
 *     mpiexec.hydra -n 4 ./coll_c_mpich [quick] [COLL...] [sizes=N,N,...]
 *
 * COLL is any of allreduce (f32 sum), bcast (bytes, root 0), allgather
 * (bytes), alltoall (bytes), reduce_scatter (MPI_Reduce_scatter_block, f32
 * sum); none named means these five, in that order. Two more run only
 * when named: reduce (f32 sum to root 0) and ibcast (MPI_Ibcast +
 * MPI_Wait, bytes, root 0), issue 18's small figures; the Rust twin has
 * no such two. Sizes default to
 * 8 B, 32 B, 128 B, ... (x4) ... 32 MiB, then 64 MiB. A size is the
 * per-rank buffer as nccl-tests counts it: the buffer for allreduce and
 * bcast, the whole receive buffer for allgather (each rank contributes
 * size/p), the whole send buffer for alltoall (size/p to each peer) and
 * for reduce_scatter (size/p of the result per rank). Counts round down
 * (at least one element per block), so the bytes really moved (`bytes`)
 * can differ a little from the nominal size.
 *
 * Per collective and size: fill the buffers; an MPI_Barrier; warm_iters
 * warm-up calls, timed together; the largest per-call warm-up time over
 * the ranks (MPI_Allreduce, MPI_MAX) sets the iterations per round so
 * that a round takes about `target` seconds (clamped to [min_iters,
 * max_iters]); then `rounds` rounds, each an MPI_Barrier and `iters` timed
 * calls. A round's time is the largest average per call over the ranks
 * (MPI_Allreduce, MPI_MAX); the reported time is the smallest round's:
 * many short rounds, so that on a shared machine some of them run
 * undisturbed.
 * Afterwards a few elements of the result are checked (a failed check
 * aborts the job).
 *
 * Reported per size, one CSV line per figure on rank 0's stdout,
 * `impl,coll,ranks,size,metric,value`, flushed as soon as it is measured
 * (so a run killed by a timeout keeps the sizes it finished): bytes,
 * iters, time_us, algbw_GBps = bytes / time and busbw_GBps = algbw times
 * the nccl-tests factor (allreduce 2(p-1)/p; bcast 1; allgather,
 * alltoall, reduce_scatter (p-1)/p); GB = 1e9 bytes. impl is `mpich` or
 * `openmpi` (from MPI_Get_library_version). `quick` uses fewer rounds and
 * shorter rounds.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)
#define MAX_SIZES 64

/* Rounds and iteration budgets; `quick` shrinks them. */
struct params {
    int rounds;
    double target;
    size_t min_iters, max_iters;
    size_t warm_bytes, warm_min, warm_max;
};

static struct params params_for(int quick)
{
    struct params full = {15, 0.01, 1, 2000, 32 * MIB, 2, 20};
    struct params fast = {7, 0.003, 1, 500, 8 * MIB, 1, 10};
    return quick ? fast : full;
}

static size_t clamp(size_t v, size_t lo, size_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Warm-up calls at `size` bytes. */
static size_t warm_iters(const struct params *p, size_t size)
{
    return clamp(p->warm_bytes / (size ? size : 1), p->warm_min, p->warm_max);
}

/* Timed calls per round, from the slowest rank's warm-up time per call. */
static size_t round_iters(const struct params *p, double per_call)
{
    double want = per_call > 0 ? p->target / per_call : (double)p->max_iters;
    if (want >= (double)p->max_iters)
        return p->max_iters;
    return clamp((size_t)want, p->min_iters, p->max_iters);
}

enum coll { ALLREDUCE, BCAST, ALLGATHER, ALLTOALL, REDUCE_SCATTER, REDUCE, IBCAST, NCOLLS };

/* The collectives that run when none is named. */
#define NDEFAULT 5

static const char *const coll_names[NCOLLS] = {"allreduce",      "bcast",  "allgather", "alltoall",
                                               "reduce_scatter", "reduce", "ibcast"};

/* Elements per block and bytes moved for `coll` at nominal `size` on `p`
 * ranks: the whole buffer for allreduce and bcast, one rank's block for
 * the others. */
static size_t block_elems(enum coll c, size_t size, size_t p)
{
    size_t e;
    switch (c) {
    case ALLREDUCE:
    case REDUCE: e = size / 4; break;
    case BCAST:
    case IBCAST: e = size; break;
    case ALLGATHER:
    case ALLTOALL: e = size / p; break;
    default: e = size / (4 * p); break;
    }
    return e ? e : 1;
}

static size_t elem_size(enum coll c)
{
    return c == ALLREDUCE || c == REDUCE_SCATTER || c == REDUCE ? 4 : 1;
}

static size_t bytes_of(enum coll c, size_t size, size_t p)
{
    size_t whole = block_elems(c, size, p) * elem_size(c);
    return c == ALLREDUCE || c == BCAST || c == REDUCE || c == IBCAST ? whole : whole * p;
}

/* The nccl-tests bus bandwidth factor. */
static double bus_factor(enum coll c, size_t p)
{
    double n = (double)p;
    switch (c) {
    case ALLREDUCE: return 2 * (n - 1) / n;
    case BCAST:
    case IBCAST:
    case REDUCE: return 1;
    default: return (n - 1) / n;
    }
}

static const char *impl_name = "c";
static int nranks = 1, me = 0;

static void emit(const char *coll, size_t size, const char *metric, double value)
{
    printf("%s,%s,%d,%zu,%s,%.10g\n", impl_name, coll, nranks, size, metric, value);
    fflush(stdout);
}

static void *alloc_zeroed(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "coll: out of memory (%zu bytes)\n", size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(p, 0, size);
    return p;
}

static void check(int ok, const char *coll, size_t size)
{
    if (!ok) {
        fprintf(stderr, "coll: rank %d: wrong result for %s at %zu bytes\n", me, coll, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Buffers for one collective. */
struct bufs {
    unsigned char *send, *recv;
};

/* Fills the inputs of `c` at `size`. */
static void fill(enum coll c, size_t size, struct bufs *b)
{
    size_t p = (size_t)nranks, n = block_elems(c, size, p);
    float *fs = (float *)b->send;
    switch (c) {
    case ALLREDUCE:
    case REDUCE:
        for (size_t i = 0; i < n; i++)
            fs[i] = 1.0f;
        break;
    case REDUCE_SCATTER:
        for (size_t i = 0; i < n * p; i++)
            fs[i] = 1.0f;
        break;
    case BCAST:
    case IBCAST: memset(b->recv, me == 0 ? 0x5a : 0, n); break;
    case ALLGATHER: memset(b->send, me + 1, n); break;
    case ALLTOALL: memset(b->send, me + 1, n * p); break;
    default: break;
    }
}

/* One call of `c` at `size`. */
static void call(enum coll c, size_t size, struct bufs *b)
{
    int n = (int)block_elems(c, size, (size_t)nranks);
    switch (c) {
    case ALLREDUCE:
        MPI_Allreduce(b->send, b->recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case BCAST: MPI_Bcast(b->recv, n, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case ALLGATHER:
        MPI_Allgather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case REDUCE:
        MPI_Reduce(b->send, b->recv, n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case IBCAST: {
        MPI_Request r;
        MPI_Ibcast(b->recv, n, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
    }
    default:
        MPI_Reduce_scatter_block(b->send, b->recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
}

/* Checks the first and last element of the result (and of the first and
 * last block where there are blocks). */
static void verify(enum coll c, size_t size, const struct bufs *b)
{
    size_t p = (size_t)nranks, n = block_elems(c, size, p);
    const float *fr = (const float *)b->recv;
    const unsigned char *r = b->recv;
    const char *name = coll_names[c];
    switch (c) {
    case ALLREDUCE:
    case REDUCE_SCATTER:
        check(fr[0] == (float)p && fr[n - 1] == (float)p, name, size);
        break;
    case REDUCE:
        check(me != 0 || (fr[0] == (float)p && fr[n - 1] == (float)p), name, size);
        break;
    case BCAST:
    case IBCAST: check(r[0] == 0x5a && r[n - 1] == 0x5a, name, size); break;
    default:
        check(r[0] == 1 && r[n - 1] == 1 && r[(p - 1) * n] == (unsigned char)p &&
                  r[p * n - 1] == (unsigned char)p,
              name, size);
        break;
    }
}

static double max_over_ranks(double v)
{
    double m = 0;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static void bench(enum coll c, const size_t *sizes, int nsizes, const struct params *prm)
{
    size_t p = (size_t)nranks, most = 0;
    for (int i = 0; i < nsizes; i++) {
        size_t b = bytes_of(c, sizes[i], p);
        most = b > most ? b : most;
    }
    struct bufs b = {alloc_zeroed(most), alloc_zeroed(most)};
    const char *name = coll_names[c];
    for (int i = 0; i < nsizes; i++) {
        size_t size = sizes[i], warm = warm_iters(prm, size);
        fill(c, size, &b);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (size_t k = 0; k < warm; k++)
            call(c, size, &b);
        double per_call = max_over_ranks((MPI_Wtime() - t0) / (double)warm);
        size_t iters = round_iters(prm, per_call);
        double best = 0;
        for (int round = 0; round < prm->rounds; round++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (size_t k = 0; k < iters; k++)
                call(c, size, &b);
            double t = max_over_ranks((MPI_Wtime() - t0) / (double)iters);
            if (round == 0 || t < best)
                best = t;
        }
        verify(c, size, &b);
        if (me == 0) {
            double bytes = (double)bytes_of(c, size, p), algbw = bytes / best / 1e9;
            emit(name, size, "bytes", bytes);
            emit(name, size, "iters", (double)iters);
            emit(name, size, "time_us", best * 1e6);
            emit(name, size, "algbw_GBps", algbw);
            emit(name, size, "busbw_GBps", algbw * bus_factor(c, p));
        }
    }
    free(b.send);
    free(b.recv);
}

/* 8, 32, ..., 32 MiB, 64 MiB; returns how many. */
static int default_sizes(size_t *sizes)
{
    int n = 0;
    for (size_t s = 8; s <= 32 * MIB; s *= 4)
        sizes[n++] = s;
    sizes[n++] = 64 * MIB;
    return n;
}

/* Parses "sizes=N,N,..."; returns how many, or -1 when malformed. */
static int parse_sizes(const char *list, size_t *sizes)
{
    int n = 0;
    while (*list) {
        char *end;
        unsigned long long v = strtoull(list, &end, 10);
        if (end == list || v == 0 || n == MAX_SIZES || (*end && *end != ','))
            return -1;
        sizes[n++] = (size_t)v;
        list = *end ? end + 1 : end;
    }
    return n ? n : -1;
}

static void usage(void)
{
    if (me == 0)
        fprintf(stderr, "usage: coll [quick] [allreduce|bcast|allgather|alltoall|"
                        "reduce_scatter|reduce|ibcast ...] [sizes=N,N,...]\n");
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    impl_name = strstr(version, "Open MPI") ? "openmpi" : "mpich";

    int quick = 0, chosen[NCOLLS] = {0}, any = 0;
    size_t sizes[MAX_SIZES];
    int nsizes = default_sizes(sizes);
    for (int i = 1; i < argc; i++) {
        int known = 0;
        if (strcmp(argv[i], "quick") == 0) {
            quick = known = 1;
        } else if (strncmp(argv[i], "sizes=", 6) == 0) {
            nsizes = parse_sizes(argv[i] + 6, sizes);
            known = nsizes > 0;
        } else {
            for (int c = 0; c < NCOLLS; c++)
                if (strcmp(argv[i], coll_names[c]) == 0)
                    chosen[c] = any = known = 1;
        }
        if (!known)
            usage();
    }
    struct params prm = params_for(quick);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int c = 0; c < NCOLLS; c++)
        if (any ? chosen[c] : c < NDEFAULT)
            bench((enum coll)c, sizes, nsizes, &prm);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
