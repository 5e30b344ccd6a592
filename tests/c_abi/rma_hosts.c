/*
 * One-sided communication meant for jobs across hosts (it passes on one
 * host too): for each flavor (create over malloc, create over
 * MPI_Alloc_mem, allocate, allocate_shared, dynamic) each rank puts a
 * vector type into its right neighbour's window and gets its left
 * neighbour's through a vector origin type under fence, and everyone
 * accumulates into rank 0; then a fetch_and_op counter under lock_all
 * with exact tickets, compare_and_swap, request-based Rput / Rget /
 * Rget_accumulate under an exclusive lock with flush, and a target that
 * computes without calling MPI until every remote origin has locked,
 * put and flushed (it watches its own memory). Errors: a put outside a
 * remote window or past a dynamic window's region (MPI_ERR_RMA_RANGE,
 * checked on OxMPI only), a put without an epoch (MPI_ERR_RMA_SYNC). Prints "PASS rma_hosts" from rank 0.
 */
#include "abicheck.h"

#include <stdint.h>
#include <time.h>

enum { N = 8, FLAVORS = 5, TICKETS = 100 };

/* A window of N ints of flavor f; *mem is this rank's memory, disp[r] the
 * displacement of rank r's first int. */
static MPI_Win make(int f, int **mem, MPI_Aint *disp, int size)
{
    MPI_Win win;
    MPI_Aint bytes = N * sizeof(int);
    switch (f) {
    case 0:
        *mem = abicheck_malloc(bytes);
        MPI_CHECK(MPI_Win_create(*mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        break;
    case 1:
        MPI_CHECK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, mem));
        MPI_CHECK(MPI_Win_create(*mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        break;
    case 2:
        MPI_CHECK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, mem, &win));
        break;
    case 3:
        MPI_CHECK(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, mem,
                                          &win));
        break;
    default:
        *mem = abicheck_malloc(bytes);
        MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        MPI_CHECK(MPI_Win_attach(win, *mem, bytes));
        break;
    }
    for (int i = 0; i < N; i++)
        (*mem)[i] = -1;
    MPI_Aint mine = 0;
    if (f == 4)
        MPI_CHECK(MPI_Get_address(*mem, &mine));
    MPI_CHECK(MPI_Allgather(&mine, 1, MPI_AINT, disp, 1, MPI_AINT, MPI_COMM_WORLD));
    (void)size;
    return win;
}

/* Displacement of int i of rank r. */
static MPI_Aint at(int f, const MPI_Aint *disp, int r, int i)
{
    return f == 4 ? disp[r] + i * (MPI_Aint)sizeof(int) : i;
}

static void flavors(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype even4, even8;
    MPI_CHECK(MPI_Type_vector(4, 1, 2, MPI_INT, &even4));
    MPI_CHECK(MPI_Type_commit(&even4));
    MPI_CHECK(MPI_Type_vector(N, 1, 2, MPI_INT, &even8));
    MPI_CHECK(MPI_Type_commit(&even8));
    MPI_Aint *disp = abicheck_malloc(size * sizeof(MPI_Aint));
    for (int f = 0; f < FLAVORS; f++) {
        int *mem;
        MPI_Win win = make(f, &mem, disp, size);
        int mine[4] = {rank * 100, rank * 100 + 1, rank * 100 + 2, rank * 100 + 3};
        MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        MPI_CHECK(MPI_Put(mine, 4, MPI_INT, right, at(f, disp, right, 0), 1, even4, win));
        MPI_CHECK(MPI_Win_fence(0, win));
        for (int i = 0; i < 4; i++)
            CHECK(mem[2 * i] == left * 100 + i && mem[2 * i + 1] == -1,
                  "flavor %d: slot %d = %d", f, 2 * i, mem[2 * i]);
        int wide[2 * N];
        for (int i = 0; i < 2 * N; i++)
            wide[i] = 7;
        MPI_CHECK(MPI_Get(wide, 1, even8, left, at(f, disp, left, 0), N, MPI_INT, win));
        MPI_CHECK(MPI_Win_fence(0, win));
        int ll = (left + size - 1) % size;
        for (int i = 0; i < N; i++) {
            int want = i % 2 ? -1 : ll * 100 + i / 2;
            CHECK(wide[2 * i] == want && wide[2 * i + 1] == 7, "flavor %d: got[%d] = %d, want %d",
                  f, i, wide[2 * i], want);
        }
        int add[4];
        for (int i = 0; i < 4; i++)
            add[i] = (rank + 1) * (i + 1);
        MPI_CHECK(MPI_Accumulate(add, 4, MPI_INT, 0, at(f, disp, 0, 1), 1, even4, MPI_SUM, win));
        MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        if (rank == 0) {
            int total = size * (size + 1) / 2;
            for (int i = 0; i < 4; i++)
                CHECK(mem[2 * i + 1] == total * (i + 1) - 1, "flavor %d: sum[%d] = %d", f, i,
                      mem[2 * i + 1]);
        }
        if (f == 4)
            MPI_CHECK(MPI_Win_detach(win, mem));
        MPI_CHECK(MPI_Win_free(&win));
        if (f == 0 || f == 4)
            free(mem);
        if (f == 1)
            MPI_CHECK(MPI_Free_mem(mem));
    }
    free(disp);
    MPI_CHECK(MPI_Type_free(&even4));
    MPI_CHECK(MPI_Type_free(&even8));
}

static void atomics(int rank, int size)
{
    int64_t *mem;
    MPI_Win win;
    int last = size - 1;
    MPI_CHECK(MPI_Win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < 4; i++)
        mem[i] = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int64_t one = 1, got[TICKETS];
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < TICKETS; i++) {
        MPI_CHECK(MPI_Fetch_and_op(&one, &got[i], MPI_INT64_T, last, 0, MPI_SUM, win));
        MPI_CHECK(MPI_Win_flush(last, win));
    }
    /* A compare-and-swap lock guarding a get-then-put of element 1. */
    for (int i = 0; i < 20; i++) {
        int64_t me = rank + 1, zero = 0, old;
        do {
            MPI_CHECK(MPI_Compare_and_swap(&me, &zero, &old, MPI_INT64_T, last, 2, win));
            MPI_CHECK(MPI_Win_flush(last, win));
        } while (old != 0);
        int64_t v;
        MPI_CHECK(MPI_Get(&v, 1, MPI_INT64_T, last, 1, 1, MPI_INT64_T, win));
        MPI_CHECK(MPI_Win_flush(last, win));
        v++;
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT64_T, last, 1, 1, MPI_INT64_T, win));
        MPI_CHECK(MPI_Win_flush_all(win));
        MPI_CHECK(MPI_Compare_and_swap(&zero, &me, &old, MPI_INT64_T, last, 2, win));
        MPI_CHECK(MPI_Win_flush_local(last, win));
        CHECK(old == me, "the lock word was %lld", (long long)old);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    int64_t *all = abicheck_malloc(size * TICKETS * sizeof(int64_t));
    MPI_CHECK(MPI_Allgather(got, TICKETS, MPI_INT64_T, all, TICKETS, MPI_INT64_T, MPI_COMM_WORLD));
    char *seen = calloc(size * TICKETS, 1);
    for (int i = 0; i < size * TICKETS; i++) {
        CHECK(all[i] >= 0 && all[i] < size * TICKETS && !seen[all[i]], "ticket %lld twice",
              (long long)all[i]);
        seen[all[i]] = 1;
    }
    free(seen);
    free(all);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == last)
        CHECK(mem[0] == size * TICKETS && mem[1] == 20 * size, "counters %lld %lld",
              (long long)mem[0], (long long)mem[1]);
    /* Request-based operations under an exclusive lock on rank 0. */
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MPI_Request req[3];
    int64_t mine = rank * 1000, back = -1, old = -1, plus = 5;
    MPI_CHECK(MPI_Rput(&mine, 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, win, &req[0]));
    MPI_CHECK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_flush(0, win));
    MPI_CHECK(MPI_Rget(&back, 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, win, &req[1]));
    MPI_CHECK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_flush(0, win));
    MPI_CHECK(MPI_Rget_accumulate(&plus, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, 0, 3, 1,
                                  MPI_INT64_T, MPI_SUM, win, &req[2]));
    MPI_CHECK(MPI_Wait(&req[2], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_unlock(0, win));
    CHECK(back == mine && old == mine, "rget %lld, rget_accumulate %lld", (long long)back,
          (long long)old);
    MPI_CHECK(MPI_Win_free(&win));
}

/* Rank 0 computes (no MPI calls) until every other rank has locked its
 * window, put its value and flushed, then added 1 to the count in slot 0. */
static void busy_target(int rank, int size)
{
    volatile int64_t *mem;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate((size + 1) * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                               MPI_COMM_WORLD, (void *)&mem, &win));
    for (int i = 0; i <= size; i++)
        mem[i] = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        /* MPICH needs the target's progress: there it polls with
           MPI_Iprobe; on OxMPI it calls nothing. */
        int oxmpi = abicheck_is_oxmpi(), flag;
        time_t give_up = time(NULL) + 60;
        while (__atomic_load_n(&mem[0], __ATOMIC_ACQUIRE) != size - 1) {
            CHECK(time(NULL) < give_up, "remote origins did not get through a busy target");
            if (!oxmpi)
                MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag,
                                     MPI_STATUS_IGNORE));
        }
        for (int r = 1; r < size; r++)
            CHECK(mem[r] == r * 11, "slot %d = %lld", r, (long long)mem[r]);
    } else {
        int64_t v = rank * 11, one = 1;
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_SUM, win));
        MPI_CHECK(MPI_Win_unlock(0, win));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_free(&win));
}

static void errors(int rank, int size)
{
    int *mem;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                               &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int v[2] = {1, 2}, target = (rank + 1) % size;
    EXPECT_CLASS(MPI_Put(v, 1, MPI_INT, target, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    /* Outside the target's 4 ints (MPICH 4.0.2 does not check: OxMPI only). */
    if (abicheck_is_oxmpi())
        EXPECT_CLASS(MPI_Put(v, 2, MPI_INT, target, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MPI_CHECK(MPI_Put(v, 2, MPI_INT, target, 2, 2, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock(target, win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[2] == 1 && mem[3] == 2, "after the put: %d %d", mem[2], mem[3]);
    MPI_CHECK(MPI_Win_free(&win));

    /* A dynamic window: past the attached region (only the target knows
       its regions) is a range error; inside works. */
    int region[4] = {0, 0, 0, 0};
    MPI_Aint mine, *addrs = abicheck_malloc(size * sizeof(MPI_Aint));
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Win_attach(win, region, sizeof(region)));
    MPI_CHECK(MPI_Get_address(region, &mine));
    MPI_CHECK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    if (abicheck_is_oxmpi())
        EXPECT_CLASS(MPI_Put(v, 1, MPI_INT, target, addrs[target] + 16, 1, MPI_INT, win),
                     MPI_ERR_RMA_RANGE);
    MPI_CHECK(MPI_Put(v, 2, MPI_INT, target, addrs[target] + 8, 2, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(region[2] == 1 && region[3] == 2, "dynamic: %d %d", region[2], region[3]);
    MPI_CHECK(MPI_Win_detach(win, region));
    MPI_CHECK(MPI_Win_free(&win));
    free(addrs);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    flavors(rank, size);
    atomics(rank, size);
    busy_target(rank, size);
    errors(rank, size);
    abicheck_pass("rma_hosts");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
