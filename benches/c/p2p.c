/* Point-to-point benchmark, C against an MPI library (MPICH or Open MPI).
 *
 * The same logic as benches/src/bin/p2p_bench.rs (the OxMPI Rust API);
 * keep the two in step. Built and run by the `p2p` runner:
 *
 *     mpicc.mpich -O2 -Wall -Wextra benches/c/p2p.c -o p2p_c_mpich
 *     mpiexec.hydra -n 2 ./p2p_c_mpich latency [quick]
 *
 * Usage: p2p MODE [quick] [sizes=N,...], MODE one of
 *
 *   latency    ping-pong between ranks 0 and 1; each message size in
 *              0, 1, 2, 4, ..., 16 MiB gets one untimed warm-up round and
 *              then ROUNDS timed rounds of lat_iters(size) round trips.
 *              Every round starts with an untimed zero-byte round trip
 *              that lines the two ranks up. Reported per size: half the
 *              round-trip time (min and median over rounds, in us) and
 *              size / median half round trip (MB/s, 1 MB = 1e6 bytes).
 *              Ranks beyond 0 and 1 only wait in one MPI_Barrier that ends
 *              the run (all ranks also pass one MPI_Barrier before it
 *              starts), so `-n 8` measures a ping-pong between two of
 *              eight ranks. Before the first size, ranks 0 and 1 exchange
 *              4-byte messages for SETTLE_S seconds (rank 0's clock,
 *              untimed), so the other ranks have settled into their wait.
 *   bandwidth  streaming from rank 0 to rank 1 for sizes 1 B .. 16 MiB:
 *              rank 0 posts a window of non-blocking sends (64, fewer for
 *              large sizes so that a window holds at most 64 MiB), waits
 *              for all of them, then receives a 4-byte ack that rank 1 sends
 *              once it has waited for its window of non-blocking receives.
 *              Rank 0 sends every message of a window from one buffer;
 *              rank 1 receives each message of a window into its own slot.
 *              One warm-up round, then ROUNDS rounds of bw_iters(size)
 *              windows, each round lined up by a zero-byte round trip.
 *              Reported: bytes / time (max and median over rounds, MB/s).
 *              Other ranks only wait in the closing barrier.
 *   multipair  ranks 2k and 2k+1 (k < nranks/2) stream as in `bandwidth`
 *              at the same time; a round runs from an MPI_Barrier to the
 *              MPI_Barrier after every pair is done (timed on rank 0).
 *              Reported: aggregate bytes / time (max and median, MB/s).
 *   memcpy     no MPI: one memcpy of each size 1 B .. 16 MiB. "cold":
 *              a single copy into a freshly allocated, never touched
 *              destination (page faults included); "warm": ROUNDS rounds
 *              of lat_iters(size) copies between the same two buffers
 *              after a warm-up round (median per copy).
 *
 * `quick` uses fewer rounds and iterations; `sizes=N,N,...` (after
 * `quick` or in its place) measures only those sizes of latency and
 * bandwidth, with the same iterations as in the whole sweep (the Rust twin
 * has no such filter). Output: one CSV line per
 * figure on rank 0's stdout, `impl,mode,ranks,size,metric,value`, flushed
 * as soon as it is measured, so a run killed by a timeout still leaves the
 * sizes it finished. impl is `mpich` or `openmpi` (from
 * MPI_Get_library_version), `c` for memcpy.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB ((size_t)1 << 20)
#define MAX_SIZE (16 * MIB)
#define WINDOW 64
#define WINDOW_BYTES (64 * MIB)
#define TAG_DATA 1
#define TAG_ACK 2
#define TAG_SYNC 3
#define SETTLE_S 0.1

/* Rounds and iteration budgets; `quick` divides them. */
struct params {
    int rounds;
    size_t lat_bytes, lat_max, lat_min;
    size_t bw_bytes, bw_max, bw_min;
};

static struct params params_for(int quick)
{
    struct params full = {7, 128 * MIB, 10000, 4, 256 * MIB, 200, 2};
    struct params fast = {3, 32 * MIB, 2000, 2, 64 * MIB, 50, 1};
    return quick ? fast : full;
}

static size_t clamp(size_t v, size_t lo, size_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Round trips per latency round (also copies per memcpy round). */
static size_t lat_iters(const struct params *p, size_t size)
{
    return clamp(p->lat_bytes / (size ? size : 1), p->lat_min, p->lat_max);
}

/* Messages per streaming window. */
static size_t window_of(size_t size)
{
    return clamp(WINDOW_BYTES / size, 1, WINDOW);
}

/* Windows per streaming round. */
static size_t bw_iters(const struct params *p, size_t size)
{
    return clamp(p->bw_bytes / (size * window_of(size)), p->bw_min, p->bw_max);
}

/* The sizes `sizes=` asks for (none: every size). */
#define MAX_ONLY 32
static size_t only[MAX_ONLY];
static int n_only;

/* Parses "sizes=N,N,..."; returns 0, or -1 when malformed. */
static int parse_only(const char *arg)
{
    const char *s = arg + 6;
    while (*s && n_only < MAX_ONLY) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || (*end && *end != ','))
            return -1;
        only[n_only++] = (size_t)v;
        s = *end ? end + 1 : end;
    }
    return *s ? -1 : 0;
}

/* Whether `size` is measured. */
static int wanted(size_t size)
{
    if (n_only == 0)
        return 1;
    for (int i = 0; i < n_only; i++)
        if (only[i] == size)
            return 1;
    return 0;
}

/* The next size after `size` in 0, 1, 2, 4, ...  */
static size_t next_size(size_t size)
{
    return size ? size * 2 : 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v and returns its median (mean of the middle two for even n). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *impl_name = "c";
static int nranks = 1;

static void emit(const char *mode, size_t size, const char *metric, double value)
{
    printf("%s,%s,%d,%zu,%s,%.6g\n", impl_name, mode, nranks, size, metric, value);
    fflush(stdout);
}

static void *alloc_filled(size_t size, int byte)
{
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "p2p: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    memset(p, byte, size);
    return p;
}

/* Untimed zero-byte round trip between ranks `a` (starts) and `b`. */
static void line_up(int me, int a, int b)
{
    if (me == a) {
        MPI_Send(NULL, 0, MPI_BYTE, b, TAG_SYNC, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, b, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (me == b) {
        MPI_Recv(NULL, 0, MPI_BYTE, a, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, a, TAG_SYNC, MPI_COMM_WORLD);
    }
}

/* Ranks 0 and 1 exchange 4-byte messages for SETTLE_S seconds; rank 0
 * decides when to stop (a zero in the message). */
static void settle(int me)
{
    int go = 1;
    if (me == 0) {
        double t0 = MPI_Wtime();
        while (go) {
            go = MPI_Wtime() - t0 < SETTLE_S;
            MPI_Send(&go, 1, MPI_INT, 1, TAG_SYNC, MPI_COMM_WORLD);
            MPI_Recv(&go, 1, MPI_INT, 1, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (me == 1) {
        while (go) {
            MPI_Recv(&go, 1, MPI_INT, 0, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&go, 1, MPI_INT, 0, TAG_SYNC, MPI_COMM_WORLD);
        }
    }
}

static void latency(int me, const struct params *p)
{
    char *buf = alloc_filled(MAX_SIZE, 1);
    double *t = malloc(sizeof(double) * (size_t)p->rounds);
    if (me < 2) {
        settle(me);
        for (size_t size = 0; size <= MAX_SIZE; size = next_size(size)) {
            if (!wanted(size))
                continue;
            size_t iters = lat_iters(p, size);
            int peer = 1 - me;
            for (int round = -1; round < p->rounds; round++) {
                line_up(me, 0, 1);
                double t0 = MPI_Wtime();
                for (size_t i = 0; i < iters; i++) {
                    if (me == 0) {
                        MPI_Send(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
                        MPI_Recv(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE);
                    } else {
                        MPI_Recv(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE);
                        MPI_Send(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
                    }
                }
                if (round >= 0)
                    t[round] = (MPI_Wtime() - t0) / (2.0 * (double)iters);
            }
            if (me == 0) {
                double med = median(t, p->rounds);
                emit("latency", size, "lat_us_min", t[0] * 1e6);
                emit("latency", size, "lat_us_median", med * 1e6);
                emit("latency", size, "bw_MBps_median", (double)size / med / 1e6);
            }
        }
    }
    free(t);
    free(buf);
}

/* One streaming round from `src` to `dst`: `iters` windows of `win`
 * messages of `size` bytes. Returns nothing; the caller times it. */
static void stream(int me, int src, int dst, size_t size, size_t win, size_t iters,
                   char *sbuf, char *rslots, MPI_Request *reqs, MPI_Status *stats)
{
    int ack = 0;
    for (size_t i = 0; i < iters; i++) {
        if (me == src) {
            for (size_t w = 0; w < win; w++)
                MPI_Isend(sbuf, (int)size, MPI_BYTE, dst, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
            MPI_Waitall((int)win, reqs, stats);
            MPI_Recv(&ack, 1, MPI_INT, dst, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (me == dst) {
            for (size_t w = 0; w < win; w++)
                MPI_Irecv(rslots + w * size, (int)size, MPI_BYTE, src, TAG_DATA,
                          MPI_COMM_WORLD, &reqs[w]);
            MPI_Waitall((int)win, reqs, stats);
            MPI_Send(&ack, 1, MPI_INT, src, TAG_ACK, MPI_COMM_WORLD);
        }
    }
}

/* `bandwidth` (pairs == 1, rounds lined up by a round trip) and
 * `multipair` (pairs == nranks / 2, rounds between barriers). */
static void bandwidth(int me, const struct params *p, int multipair)
{
    const char *mode = multipair ? "multipair" : "bandwidth";
    int pairs = multipair ? nranks / 2 : 1;
    int active = me < 2 * pairs;
    int src = me & ~1, dst = src + 1;
    char *sbuf = alloc_filled(active ? MAX_SIZE : 0, 1);
    char *rslots = alloc_filled(active ? WINDOW_BYTES : 0, 0);
    MPI_Request reqs[WINDOW];
    MPI_Status stats[WINDOW];
    double *rate = malloc(sizeof(double) * (size_t)p->rounds);
    if (multipair || active) {
        for (size_t size = 1; size <= MAX_SIZE; size *= 2) {
            if (!wanted(size))
                continue;
            size_t win = window_of(size), iters = bw_iters(p, size);
            double bytes = (double)pairs * (double)size * (double)win * (double)iters;
            for (int round = -1; round < p->rounds; round++) {
                if (multipair)
                    MPI_Barrier(MPI_COMM_WORLD);
                else
                    line_up(me, 0, 1);
                double t0 = MPI_Wtime();
                if (active)
                    stream(me, src, dst, size, win, iters, sbuf, rslots, reqs, stats);
                if (multipair)
                    MPI_Barrier(MPI_COMM_WORLD);
                if (round >= 0)
                    rate[round] = bytes / (MPI_Wtime() - t0) / 1e6;
            }
            if (me == 0) {
                double med = median(rate, p->rounds);
                emit(mode, size, "bw_MBps_max", rate[p->rounds - 1]);
                emit(mode, size, "bw_MBps_median", med);
            }
        }
    }
    free(rate);
    free(rslots);
    free(sbuf);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void memcpy_bench(const struct params *p)
{
    char *src = alloc_filled(MAX_SIZE, 1);
    char *dst = alloc_filled(MAX_SIZE, 0);
    double *t = malloc(sizeof(double) * (size_t)p->rounds);
    for (size_t size = 1; size <= MAX_SIZE; size *= 2) {
        char *fresh = malloc(size);
        double t0 = now();
        memcpy(fresh, src, size);
        __asm__ volatile("" : : "r"(fresh) : "memory");
        double cold = now() - t0;
        free(fresh);
        size_t iters = lat_iters(p, size);
        for (int round = -1; round < p->rounds; round++) {
            t0 = now();
            for (size_t i = 0; i < iters; i++) {
                memcpy(dst, src, size);
                __asm__ volatile("" : : "r"(dst), "r"(src) : "memory");
            }
            if (round >= 0)
                t[round] = (now() - t0) / (double)iters;
        }
        double med = median(t, p->rounds);
        emit("memcpy", size, "cold_us", cold * 1e6);
        emit("memcpy", size, "cold_MBps", (double)size / cold / 1e6);
        emit("memcpy", size, "warm_us_median", med * 1e6);
        emit("memcpy", size, "warm_MBps_median", (double)size / med / 1e6);
    }
    free(t);
    free(dst);
    free(src);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int quick = argc > 2 && strcmp(argv[2], "quick") == 0;
    struct params p = params_for(quick);
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], "sizes=", 6) == 0 && parse_only(argv[i]) != 0) {
            fprintf(stderr, "p2p: bad %s\n", argv[i]);
            return 2;
        }
    if (strcmp(mode, "memcpy") == 0) {
        memcpy_bench(&p);
        return 0;
    }
    if (strcmp(mode, "latency") && strcmp(mode, "bandwidth") && strcmp(mode, "multipair")) {
        fprintf(stderr, "usage: p2p latency|bandwidth|multipair|memcpy [quick] [sizes=N,...]\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    impl_name = strstr(version, "Open MPI") ? "openmpi" : strstr(version, "MPICH") ? "mpich" : "unknown";
    if (nranks < 2) {
        if (me == 0)
            fprintf(stderr, "p2p: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "latency") == 0)
        latency(me, &p);
    else
        bandwidth(me, &p, strcmp(mode, "multipair") == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
