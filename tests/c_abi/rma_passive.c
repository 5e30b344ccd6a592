/*
 * Passive-target one-sided communication, on an allocated window (mapped)
 * and on one over plain memory (CMA): distributed counters with
 * MPI_Fetch_and_op under shared locks (exact final value, every ticket
 * handed out once), read-modify-write with Get + flush + Put under an
 * exclusive lock (exact: the lock excludes), a spin lock made of
 * MPI_Compare_and_swap, lock_all with request-based MPI_Rput / MPI_Rget
 * and the flushes, and a target that computes without calling MPI while
 * the others lock, update and unlock its memory.
 * Prints "PASS rma_passive" from rank 0.
 */
#include "abicheck.h"
#include <time.h>

#define ITER 200

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void run(int plain, int rank, int size)
{
    MPI_Win win;
    long *mem;
    const int words = 8;
    if (plain) {
        mem = abicheck_malloc(words * sizeof(long));
        MPI_CHECK(MPI_Win_create(mem, words * sizeof(long), sizeof(long), MPI_INFO_NULL,
                                 MPI_COMM_WORLD, &win));
    } else {
        MPI_CHECK(MPI_Win_allocate(words * sizeof(long), sizeof(long), MPI_INFO_NULL,
                                   MPI_COMM_WORLD, &mem, &win));
    }
    for (int i = 0; i < words; i++)
        mem[i] = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* Fetch_and_op tickets from word 0 of rank 0. */
    long *tickets = abicheck_malloc(ITER * sizeof(long));
    long one = 1;
    for (int i = 0; i < ITER; i++) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MPI_CHECK(MPI_Fetch_and_op(&one, &tickets[i], MPI_LONG, 0, 0, MPI_SUM, win));
        MPI_CHECK(MPI_Win_unlock(0, win));
    }
    long *all = NULL;
    if (rank == 0)
        all = abicheck_malloc((size_t)size * ITER * sizeof(long));
    MPI_CHECK(MPI_Gather(tickets, ITER, MPI_LONG, all, ITER, MPI_LONG, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        char *seen = calloc((size_t)size * ITER, 1);
        for (int i = 0; i < size * ITER; i++) {
            CHECK(all[i] >= 0 && all[i] < size * ITER && !seen[all[i]], "ticket %ld twice",
                  all[i]);
            seen[all[i]] = 1;
        }
        free(seen);
        free(all);
    }
    free(tickets);

    /* Get, flush, add, put under an exclusive lock on word 1 of the last
       rank. Rank 0 computes meanwhile without calling MPI if it is not
       the target. */
    int target = size - 1;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0 && size > 1) {
        double until = now() + 0.2;
        volatile double x = 0;
        while (now() < until)
            x += 1;
    }
    for (int i = 0; i < ITER; i++) {
        long v = -1;
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        MPI_CHECK(MPI_Get(&v, 1, MPI_LONG, target, 1, 1, MPI_LONG, win));
        MPI_CHECK(MPI_Win_flush(target, win));
        v += 1;
        MPI_CHECK(MPI_Put(&v, 1, MPI_LONG, target, 1, 1, MPI_LONG, win));
        MPI_CHECK(MPI_Win_unlock(target, win));
    }

    /* A spin lock of Compare_and_swap on word 2 of rank 0 guarding a
       non-atomic increment of word 3 of the last rank. */
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ITER / 4; i++) {
        long zero = 0, mine = rank + 1, prev = -1;
        do {
            MPI_CHECK(MPI_Compare_and_swap(&mine, &zero, &prev, MPI_LONG, 0, 2, win));
            MPI_CHECK(MPI_Win_flush(0, win));
        } while (prev != 0);
        long v = -1;
        MPI_CHECK(MPI_Get(&v, 1, MPI_LONG, target, 3, 1, MPI_LONG, win));
        MPI_CHECK(MPI_Win_flush(target, win));
        v += 1;
        MPI_CHECK(MPI_Put(&v, 1, MPI_LONG, target, 3, 1, MPI_LONG, win));
        MPI_CHECK(MPI_Win_flush(target, win));
        MPI_CHECK(MPI_Compare_and_swap(&zero, &mine, &prev, MPI_LONG, 0, 2, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        CHECK(prev == mine, "the CAS lock held %ld, expected %ld", prev, mine);
    }

    /* Request-based operations: each rank writes 100 + its rank into word
       4 of its right neighbour, reads it back, and adds 1 to word 5 of rank 0. */
    int right = (rank + 1) % size;
    long val = 100 + rank, back = -1;
    MPI_Request reqs[2];
    MPI_CHECK(MPI_Rput(&val, 1, MPI_LONG, right, 4, 1, MPI_LONG, win, &reqs[0]));
    MPI_CHECK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_flush_all(win));
    MPI_CHECK(MPI_Rget(&back, 1, MPI_LONG, right, 4, 1, MPI_LONG, win, &reqs[1]));
    MPI_CHECK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_flush_local(right, win));
    MPI_CHECK(MPI_Win_flush_local_all(win));
    CHECK(back == val, "Rget read %ld, expected %ld", back, val);
    MPI_Request racc;
    MPI_CHECK(MPI_Raccumulate(&one, 1, MPI_LONG, 0, 5, 1, MPI_LONG, MPI_SUM, win, &racc));
    MPI_CHECK(MPI_Wait(&racc, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_unlock_all(win));

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    MPI_CHECK(MPI_Win_sync(win));
    if (rank == 0) {
        CHECK(mem[0] == (long)size * ITER, "counter %ld, expected %ld", mem[0],
              (long)size * ITER);
        CHECK(mem[2] == 0, "CAS lock word left at %ld", mem[2]);
        CHECK(mem[5] == size, "Raccumulate counter %ld", mem[5]);
    }
    if (rank == target) {
        CHECK(mem[1] == (long)size * ITER, "exclusive counter %ld, expected %ld", mem[1],
              (long)size * ITER);
        CHECK(mem[3] == (long)size * (ITER / 4), "CAS-guarded counter %ld, expected %ld",
              mem[3], (long)size * (ITER / 4));
    }
    int left = (rank + size - 1) % size;
    CHECK(mem[4] == 100 + left, "Rput stored %ld", mem[4]);
    MPI_CHECK(MPI_Win_unlock(rank, win));
    MPI_CHECK(MPI_Win_free(&win));
    if (plain)
        free(mem);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    run(0, rank, size);
    run(1, rank, size);
    abicheck_pass("rma_passive");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
