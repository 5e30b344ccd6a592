/*
 * One-sided communication under MPI_Win_fence, on windows of three
 * flavors (create over plain memory: CMA; create over MPI_Alloc_mem
 * memory and allocate: mapped): a ring of MPI_Put, MPI_Get from the
 * left neighbour, derived datatypes on the origin side, the target side
 * and both (vector / indexed / resized), MPI_Accumulate with SUM, PROD,
 * MAX, MIN, BAND, BOR, BXOR, LAND, REPLACE and MINLOC on MPI_2INT from
 * every rank into rank 0 (exact results), MPI_Get_accumulate with
 * MPI_NO_OP and SUM, MPI_PROC_NULL targets, large-count _c forms.
 * Prints "PASS rma_fence" from rank 0.
 */
#include "abicheck.h"
#include <math.h>

#define N 64

enum { PLAIN, ALLOC_MEM, ALLOCATE };

static int *make_window(int kind, MPI_Aint bytes, MPI_Win *win)
{
    int *base = NULL;
    switch (kind) {
    case PLAIN:
        base = abicheck_malloc(bytes);
        MPI_CHECK(MPI_Win_create(base, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, win));
        break;
    case ALLOC_MEM:
        MPI_CHECK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &base));
        MPI_CHECK(MPI_Win_create(base, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, win));
        break;
    default:
        MPI_CHECK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, win));
    }
    return base;
}

static void free_window(int kind, int *base, MPI_Win *win)
{
    MPI_CHECK(MPI_Win_free(win));
    if (kind == PLAIN)
        free(base);
    else if (kind == ALLOC_MEM)
        MPI_CHECK(MPI_Free_mem(base));
}

static void run(int kind, int rank, int size)
{
    MPI_Win win;
    int *mem = make_window(kind, 4 * N * sizeof(int), &win);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < 4 * N; i++)
        mem[i] = -1;

    /* Ring put: my values into the right neighbour's first N ints. */
    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = rank * 1000 + i;
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_CHECK(MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win));
    MPI_CHECK(MPI_Put(src, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        CHECK(mem[i] == left * 1000 + i, "kind %d: mem[%d] = %d after the ring put", kind, i,
              mem[i]);

    /* Get the left neighbour's block back: it holds left-left's values. */
    int got[N];
    int ll = (left + size - 1) % size;
    MPI_CHECK(MPI_Get(got, N, MPI_INT, left, 0, N, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        CHECK(got[i] == ll * 1000 + i, "kind %d: got[%d] = %d", kind, i, got[i]);

    /* Derived types: a strided origin into a contiguous target (ints N..N+N/2),
       and a contiguous origin into a strided target (every other int of 2N..4N). */
    MPI_Datatype every_other;
    MPI_CHECK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other));
    MPI_CHECK(MPI_Type_commit(&every_other));
    MPI_CHECK(MPI_Put(src, 1, every_other, right, N, N / 2, MPI_INT, win));
    MPI_CHECK(MPI_Put(src, N / 2, MPI_INT, right, 2 * N, 1, every_other, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int i = 0; i < N / 2; i++) {
        CHECK(mem[N + i] == left * 1000 + 2 * i, "kind %d: strided origin [%d] = %d", kind, i,
              mem[N + i]);
        CHECK(mem[2 * N + 2 * i] == left * 1000 + i, "kind %d: strided target [%d] = %d", kind,
              i, mem[2 * N + 2 * i]);
        CHECK(mem[2 * N + 2 * i + 1] == -1, "kind %d: gap [%d] written", kind, i);
    }
    /* Strided on both sides, and a get into a strided origin. */
    int back[N];
    for (int i = 0; i < N; i++)
        back[i] = -7;
    MPI_CHECK(MPI_Get(back, 1, every_other, left, 2 * N, 1, every_other, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int i = 0; i < N / 2; i++) {
        CHECK(back[2 * i] == ll * 1000 + i, "kind %d: strided get [%d] = %d", kind, i,
              back[2 * i]);
        CHECK(back[2 * i + 1] == -7, "kind %d: strided get wrote a gap", kind);
    }
    MPI_CHECK(MPI_Type_free(&every_other));

    /* Accumulate from every rank into rank 0's ints 0..10. */
    if (rank == 0)
        for (int i = 0; i < 14; i++)
            mem[i] = (int[]){0, 1, -1000, 1000, 0xff, 0, 0x0f, 1, 0, 0, 99, 0, 0, 0}[i];
    MPI_CHECK(MPI_Win_fence(0, win));
    int me1 = rank + 1, bits = 1 << rank, one = 1, mask = ~(1 << rank) & 0xff;
    MPI_CHECK(MPI_Accumulate(&me1, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
    MPI_CHECK(MPI_Accumulate(&me1, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_PROD, win));
    MPI_CHECK(MPI_Accumulate(&rank, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_MAX, win));
    MPI_CHECK(MPI_Accumulate(&rank, 1, MPI_INT, 0, 3, 1, MPI_INT, MPI_MIN, win));
    MPI_CHECK(MPI_Accumulate(&mask, 1, MPI_INT, 0, 4, 1, MPI_INT, MPI_BAND, win));
    MPI_CHECK(MPI_Accumulate(&bits, 1, MPI_INT, 0, 5, 1, MPI_INT, MPI_BOR, win));
    MPI_CHECK(MPI_Accumulate(&bits, 1, MPI_INT, 0, 6, 1, MPI_INT, MPI_BXOR, win));
    MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT, 0, 7, 1, MPI_INT, MPI_LAND, win));
    MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT, 0, 8, 1, MPI_INT, MPI_LOR, win));
    if (rank == size - 1)
        MPI_CHECK(MPI_Accumulate(&rank, 1, MPI_INT, 0, 9, 1, MPI_INT, MPI_REPLACE, win));
    /* MINLOC over (value, index) pairs at ints 10..11: rank 0 holds (99, 0). */
    int pair[2] = {50 - rank, rank};
    MPI_CHECK(MPI_Accumulate(pair, 1, MPI_2INT, 0, 10, 1, MPI_2INT, MPI_MINLOC, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    if (rank == 0) {
        int sum = size * (size + 1) / 2, prod = 1, allbits = (1 << size) - 1;
        for (int r = 1; r <= size; r++)
            prod *= r;
        int want[12] = {sum, prod, size - 1, 0, 0xff & ~allbits, allbits,
                        0x0f ^ allbits, 1, 1, size - 1, 50 - (size - 1), size - 1};
        for (int i = 0; i < 12; i++)
            CHECK(mem[i] == want[i], "kind %d: accumulate result [%d] = %d, expected %d", kind,
                  i, mem[i], want[i]);
    }

    /* Get_accumulate: NO_OP reads, SUM returns the old values in order. */
    int old = -5, none = 0;
    MPI_CHECK(MPI_Win_fence(0, win));
    MPI_CHECK(MPI_Get_accumulate(&none, 1, MPI_INT, &old, 1, MPI_INT, 0, 9, 1, MPI_INT, MPI_NO_OP,
                                 win));
    MPI_CHECK(MPI_Win_fence(0, win));
    CHECK(old == size - 1, "kind %d: Get_accumulate NO_OP read %d", kind, old);
    long long add = 1, before = -1;
    MPI_Count n1 = 1;
    /* Ints 12..13 of rank 0 are one long long, 0: each rank adds 1 and gets
       the value before its addition, so the old values are 0..size-1. */
    MPI_CHECK(MPI_Get_accumulate_c(&add, n1, MPI_LONG_LONG, &before, n1, MPI_LONG_LONG, 0, 12,
                                   n1, MPI_LONG_LONG, MPI_SUM, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    int seen = (int)before;
    int *all = abicheck_malloc(size * sizeof(int));
    MPI_CHECK(MPI_Allgather(&seen, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int v = 0; v < size; v++) {
        int found = 0;
        for (int r = 0; r < size; r++)
            found += all[r] == v;
        CHECK(found == 1, "kind %d: old value %d seen %d times", kind, v, found);
    }
    if (rank == 0)
        CHECK(*(long long *)&mem[12] == size, "kind %d: counter %lld", kind,
              *(long long *)&mem[12]);
    free(all);
    MPI_CHECK(MPI_Put_c(src, n1, MPI_INT, right, 3 * N, n1, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(mem[3 * N] == left * 1000, "kind %d: MPI_Put_c stored %d", kind, mem[3 * N]);
    free_window(kind, mem, &win);
}

/* MPI_Accumulate on MPI_LONG_DOUBLE (C's arithmetic, not double's): every
   rank adds 1 + 2^-60 * (rank + 1) into rank 0's element; and a zero-count
   MPI_Get_accumulate of MPI_BYTE with MPI_SUM is no error (nothing moves). */
static void long_double_sum(int rank, int size)
{
    long double *mem;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(sizeof(long double), sizeof(long double), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &mem, &win));
    *mem = 0.0L;
    MPI_CHECK(MPI_Win_fence(0, win));
    long double mine = 1.0L + ldexpl(1.0L, -60) * (rank + 1);
    MPI_CHECK(MPI_Accumulate(&mine, 1, MPI_LONG_DOUBLE, 0, 0, 1, MPI_LONG_DOUBLE, MPI_SUM, win));
    char none = 0, got = 0;
    MPI_CHECK(MPI_Get_accumulate(&none, 0, MPI_BYTE, &got, 0, MPI_BYTE, 0, 0, 0, MPI_BYTE,
                                 MPI_SUM, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    if (rank == 0) {
        long double want = 0.0L;
        for (int r = 0; r < size; r++)
            want += 1.0L + ldexpl(1.0L, -60) * (r + 1);
        CHECK(*mem == want && (size == 1 || *mem != (long double)(double)*mem),
              "long double accumulate: %.25Lg, expected %.25Lg", *mem, want);
    }
    MPI_CHECK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int kind = PLAIN; kind <= ALLOCATE; kind++)
        run(kind, rank, size);
    long_double_sum(rank, size);
    abicheck_pass("rma_fence");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
