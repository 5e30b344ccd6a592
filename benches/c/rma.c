/*
 * One-sided communication benchmark (same source for every library):
 * rank 0 is the origin, rank 1 the target, 2 ranks, an MPI_Win_allocate
 * window of 1 MiB.
 *
 *   put_lock  SIZE: MPI_Put + MPI_Win_flush inside one MPI_Win_lock epoch
 *   get_lock  SIZE: MPI_Get + MPI_Win_flush
 *   put_fence SIZE: MPI_Put + MPI_Win_fence (both ranks fence)
 *   put_bw    SIZE: 64 MPI_Puts, then one flush (MB/s)
 *   acc_lock  8:    MPI_Accumulate of one double (SUM) + flush
 *   fop_lock  8:    MPI_Fetch_and_op of one long (SUM) + flush
 *   cas_lock  8:    MPI_Compare_and_swap of one long + flush
 *
 * Prints "rma <test> <size> <us per op | MB/s>" from rank 0: the best of
 * 5 rounds of `iters` operations each.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX (1 << 20)

typedef void (*op_fn)(void *buf, int size, MPI_Win win);

static void put_flush(void *buf, int size, MPI_Win win)
{
    MPI_Put(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
    MPI_Win_flush(1, win);
}

static void get_flush(void *buf, int size, MPI_Win win)
{
    MPI_Get(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
    MPI_Win_flush(1, win);
}

static void acc_flush(void *buf, int size, MPI_Win win)
{
    (void)size;
    MPI_Accumulate(buf, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_flush(1, win);
}

static void fop_flush(void *buf, int size, MPI_Win win)
{
    (void)size;
    long one = 1;
    MPI_Fetch_and_op(&one, buf, MPI_LONG, 1, 0, MPI_SUM, win);
    MPI_Win_flush(1, win);
}

static void cas_flush(void *buf, int size, MPI_Win win)
{
    (void)size;
    long cmp = 0, val = 0;
    MPI_Compare_and_swap(&val, &cmp, buf, MPI_LONG, 1, 0, win);
    MPI_Win_flush(1, win);
}

static void put_burst(void *buf, int size, MPI_Win win)
{
    for (int i = 0; i < 64; i++)
        MPI_Put(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
    MPI_Win_flush(1, win);
}

/* Passive target: only rank 0 works; rank 1 waits in a barrier. */
static double passive(int rank, op_fn f, void *buf, int size, int iters, MPI_Win win)
{
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            f(buf, size, win); /* warm-up */
            double t = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                f(buf, size, win);
            t = MPI_Wtime() - t;
            MPI_Win_unlock(1, win);
            if (t < best)
                best = t;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return best / iters;
}

static double fence(int rank, void *buf, int size, int iters, MPI_Win win)
{
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        MPI_Win_fence(0, win);
        double t = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0)
                MPI_Put(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
            MPI_Win_fence(0, win);
        }
        t = MPI_Wtime() - t;
        if (t < best)
            best = t;
    }
    return best / iters;
}

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2) {
        if (rank == 0)
            fprintf(stderr, "rma: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *only = argc > 1 ? argv[1] : NULL;
    char *mem;
    MPI_Win win;
    MPI_Win_allocate(MAX, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, MAX);
    char *buf = malloc(MAX);
    memset(buf, 1, MAX);
    struct {
        const char *name;
        op_fn f;
        int bw;
    } tests[] = {{"put_lock", put_flush, 0}, {"get_lock", get_flush, 0}, {"put_bw", put_burst, 1}};
    for (unsigned t = 0; t < sizeof tests / sizeof tests[0]; t++) {
        if (only && strcmp(only, tests[t].name))
            continue;
        for (int size = 4; size <= MAX; size *= 4) {
            int iters = size >= 65536 ? 100 : 2000;
            if (tests[t].bw)
                iters /= 20;
            double per = passive(rank, tests[t].f, buf, size, iters, win);
            if (rank == 0) {
                if (tests[t].bw)
                    printf("rma %s %d %.1f\n", tests[t].name, size, 64.0 * size / per / 1e6);
                else
                    printf("rma %s %d %.3f\n", tests[t].name, size, per * 1e6);
            }
        }
    }
    if (!only || !strcmp(only, "put_fence"))
        for (int size = 4; size <= MAX; size *= 4) {
            double per = fence(rank, buf, size, size >= 65536 ? 100 : 1000, win);
            if (rank == 0)
                printf("rma put_fence %d %.3f\n", size, per * 1e6);
        }
    struct {
        const char *name;
        op_fn f;
    } atomics[] = {{"acc_lock", acc_flush}, {"fop_lock", fop_flush}, {"cas_lock", cas_flush}};
    for (unsigned t = 0; t < 3; t++) {
        if (only && strcmp(only, atomics[t].name))
            continue;
        double per = passive(rank, atomics[t].f, buf, 8, 2000, win);
        if (rank == 0)
            printf("rma %s 8 %.3f\n", atomics[t].name, per * 1e6);
    }
    fflush(stdout);
    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return 0;
}
