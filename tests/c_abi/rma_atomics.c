/*
 * Element-wise atomicity of the accumulate family when every rank updates
 * the same elements at once (under MPI_Win_lock_all), on an allocated
 * window (OxMPI: hardware atomics on aligned 4- and 8-byte elements), on
 * an MPI_Win_allocate_shared window, and on a window over plain memory
 * (the accumulate lock): exact final values for
 *   - MPI_Fetch_and_op SUM on one long and MPI_Accumulate SUM of 4 longs
 *     over it at once (one element and many, same op),
 *   - MPI_Accumulate SUM through a strided target datatype on the same
 *     longs,
 *   - MPI_DOUBLE and MPI_FLOAT SUM, MPI_INT MAX / MIN, MPI_UNSIGNED BOR,
 *     MPI_LONG PROD, MPI_2INT MAXLOC,
 *   - MPI_Fetch_and_op MPI_REPLACE as an exchange (every value handed on
 *     exactly once) and MPI_NO_OP reads that never go backwards,
 *   - MPI_Compare_and_swap increments (retry until the swap took),
 *   - misaligned longs (displacement unit 1, odd offset: the lock's way).
 * Prints "PASS rma_atomics" from rank 0.
 */
#include "abicheck.h"
#include <stdint.h>
#include <string.h>

#define ITER 300
#define BYTES 256

/* Byte offsets of the counters in rank 0's window. */
enum {
    SUMS = 0,      /* 4 longs: fetch_and_op on [0], accumulate of 4, strided */
    DSUM = 64,     /* double */
    FSUM = 72,     /* float */
    IMAX = 76,     /* int */
    IMIN = 80,     /* int */
    UBOR = 84,     /* unsigned */
    LPROD = 88,    /* long */
    SWAP = 96,     /* long: replace chain */
    CAS = 104,     /* long: compare-and-swap counter */
    PAIR = 112,    /* 2int: maxloc */
    ODD = 121,     /* long at an odd offset */
};

static void run(int kind, int rank, int size)
{
    MPI_Win win;
    char *mem;
    if (kind == 0) {
        MPI_CHECK(MPI_Win_allocate(BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    } else if (kind == 1) {
        MPI_CHECK(MPI_Win_allocate_shared(BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    } else {
        mem = abicheck_malloc(BYTES);
        MPI_CHECK(MPI_Win_create(mem, BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    memset(mem, 0, BYTES);
    if (rank == 0) {
        *(long *)(mem + LPROD) = 1;
        *(int *)(mem + IMIN) = 1 << 30;
        *(long *)(mem + SWAP) = -1;
        int init[2] = {-1, -1};
        memcpy(mem + PAIR, init, sizeof init);
    }
    MPI_Datatype strided; /* longs 1 and 3 of SUMS */
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_LONG, &strided));
    MPI_CHECK(MPI_Type_commit(&strided));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_CHECK(MPI_Win_lock_all(0, win));
    long one = 1, four[4] = {1, 1, 1, 1}, two[2] = {1, 1}, got = 0, last_seen = 0;
    long *swapped = abicheck_malloc(ITER * sizeof(long));
    double done = 1.0;
    float fone = 1.0f;
    unsigned bit = 1u << (rank % 32);
    long factor = rank == 1 ? 2 : 1;
    for (int i = 0; i < ITER; i++) {
        MPI_CHECK(MPI_Fetch_and_op(&one, &got, MPI_LONG, 0, SUMS, MPI_SUM, win));
        MPI_CHECK(MPI_Accumulate(four, 4, MPI_LONG, 0, SUMS, 4, MPI_LONG, MPI_SUM, win));
        MPI_CHECK(MPI_Accumulate(two, 2, MPI_LONG, 0, SUMS + 8, 1, strided, MPI_SUM, win));
        MPI_CHECK(MPI_Accumulate(&done, 1, MPI_DOUBLE, 0, DSUM, 1, MPI_DOUBLE, MPI_SUM, win));
        MPI_CHECK(MPI_Accumulate(&fone, 1, MPI_FLOAT, 0, FSUM, 1, MPI_FLOAT, MPI_SUM, win));
        int v = rank * ITER + i, old;
        MPI_CHECK(MPI_Fetch_and_op(&v, &old, MPI_INT, 0, IMAX, MPI_MAX, win));
        MPI_CHECK(MPI_Fetch_and_op(&v, &old, MPI_INT, 0, IMIN, MPI_MIN, win));
        MPI_CHECK(MPI_Accumulate(&bit, 1, MPI_UNSIGNED, 0, UBOR, 1, MPI_UNSIGNED, MPI_BOR, win));
        if (i < 20)
            MPI_CHECK(
                MPI_Accumulate(&factor, 1, MPI_LONG, 0, LPROD, 1, MPI_LONG, MPI_PROD, win));
        long mine = (long)rank * ITER + i;
        MPI_CHECK(MPI_Fetch_and_op(&mine, &swapped[i], MPI_LONG, 0, SWAP, MPI_REPLACE, win));
        long seen;
        MPI_CHECK(MPI_Fetch_and_op(NULL, &seen, MPI_LONG, 0, SUMS, MPI_NO_OP, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        CHECK(seen >= last_seen, "MPI_NO_OP read %ld after %ld", seen, last_seen);
        last_seen = seen;
        for (long cur = 0, prev = -1;; cur = prev) {
            long next = cur + 1;
            MPI_CHECK(MPI_Compare_and_swap(&next, &cur, &prev, MPI_LONG, 0, CAS, win));
            MPI_CHECK(MPI_Win_flush(0, win));
            if (prev == cur)
                break;
        }
        int pair[2] = {v, rank}, oldpair[2];
        MPI_CHECK(MPI_Get_accumulate(pair, 1, MPI_2INT, oldpair, 1, MPI_2INT, 0, PAIR, 1,
                                     MPI_2INT, MPI_MAXLOC, win));
        MPI_CHECK(MPI_Accumulate(&one, 1, MPI_LONG, 0, ODD, 1, MPI_LONG, MPI_SUM, win));
    }
    MPI_CHECK(MPI_Win_unlock_all(win));

    /* The exchange: every value put in comes out exactly once, once as the
       final value or once as what another swap returned. */
    long total = (long)size * ITER;
    long *all = NULL;
    if (rank == 0)
        all = abicheck_malloc((size_t)total * sizeof(long));
    MPI_CHECK(MPI_Gather(swapped, ITER, MPI_LONG, all, ITER, MPI_LONG, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    MPI_CHECK(MPI_Win_sync(win));
    if (rank == 0) {
        long s[4];
        memcpy(s, mem + SUMS, sizeof s);
        CHECK(s[0] == 2 * total, "fetch_and_op + accumulate sum %ld, expected %ld", s[0],
              2 * total);
        CHECK(s[1] == 2 * total && s[3] == 2 * total, "strided sums %ld %ld, expected %ld",
              s[1], s[3], 2 * total);
        CHECK(s[2] == total, "accumulate sum %ld, expected %ld", s[2], total);
        double d;
        memcpy(&d, mem + DSUM, sizeof d);
        CHECK(d == (double)total, "double sum %g, expected %ld", d, total);
        float f;
        memcpy(&f, mem + FSUM, sizeof f);
        CHECK(f == (float)total, "float sum %g, expected %ld", f, total);
        int imax, imin;
        memcpy(&imax, mem + IMAX, sizeof imax);
        memcpy(&imin, mem + IMIN, sizeof imin);
        CHECK(imax == size * ITER - 1, "max %d, expected %d", imax, size * ITER - 1);
        CHECK(imin == 0, "min %d, expected 0", imin);
        unsigned bits = 0, ubor;
        for (int r = 0; r < size; r++)
            bits |= 1u << (r % 32);
        memcpy(&ubor, mem + UBOR, sizeof ubor);
        CHECK(ubor == bits, "bor %#x, expected %#x", ubor, bits);
        long prod, cas, odd;
        memcpy(&prod, mem + LPROD, sizeof prod);
        memcpy(&cas, mem + CAS, sizeof cas);
        memcpy(&odd, mem + ODD, sizeof odd);
        CHECK(prod == (size > 1 ? 1L << 20 : 1), "product %ld", prod);
        CHECK(cas == total, "compare-and-swap counter %ld, expected %ld", cas, total);
        CHECK(odd == total, "misaligned counter %ld, expected %ld", odd, total);
        int pair[2];
        memcpy(pair, mem + PAIR, sizeof pair);
        CHECK(pair[0] == size * ITER - 1 && pair[1] == size - 1, "maxloc (%d, %d)", pair[0],
              pair[1]);
        long final;
        memcpy(&final, mem + SWAP, sizeof final);
        char *seen = calloc((size_t)total + 1, 1);
        for (long i = 0; i <= total; i++) {
            long x = i < total ? all[i] : final;
            CHECK(x >= -1 && x < total && !seen[x + 1], "exchange handed out %ld twice", x);
            seen[x + 1] = 1;
        }
        free(seen);
        free(all);
    }
    MPI_CHECK(MPI_Win_unlock(rank, win));
    free(swapped);
    MPI_CHECK(MPI_Type_free(&strided));
    MPI_CHECK(MPI_Win_free(&win));
    if (kind == 2)
        free(mem);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int kind = 0; kind < 3; kind++)
        run(kind, rank, size);
    abicheck_pass("rma_atomics");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
