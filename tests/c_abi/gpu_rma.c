/*
 * One-sided communication with CUDA device memory through the C ABI, on
 * three kinds of window: MPI_Win_create over device memory, MPI_Win_allocate
 * (host memory) and a dynamic window with device memory attached; origin,
 * result and compare buffers on the device (and, on device windows, on the
 * host too). Under fence: a ring of MPI_Put and MPI_Get, derived datatypes
 * on the origin and the target side (gaps must keep their bytes),
 * MPI_PROC_NULL targets (the device buffer is left alone). Under
 * lock_all / flush: MPI_Accumulate counters from every rank (exact final
 * sums), MPI_Fetch_and_op tickets (every value handed out exactly once),
 * MPI_Compare_and_swap (one winner), MPI_Get_accumulate with SUM, NO_OP
 * and REPLACE, and the request forms Rput, Rget, Raccumulate,
 * Rget_accumulate. Under exclusive locks: MAX and MIN on doubles. Under
 * PSCW: a ring of puts and accumulates. Every result is copied back to the host and
 * checked against a serial computation. Prints "PASS gpu_rma" from rank 0.
 */
#include "abicheck.h"
#include "cudacheck.h"

#define N 32
#define ITERS 20

enum { DEV_CREATE, HOST_ALLOCATE, DEV_DYNAMIC, KINDS };
static const char *kind_names[] = {"Win_create(device)", "Win_allocate(host)",
                                   "Win_create_dynamic+attach(device)"};

static int rank, size, right, left;

/* A window of `n` ints per rank and how to name element i of rank r. */
struct win {
    int kind;
    MPI_Win win;
    int *local; /* this rank's memory (device for DEV_*) */
    MPI_Aint *base; /* per rank: displacement of element 0 */
    MPI_Aint scale; /* displacement units per element */
    int n;
};

static MPI_Aint disp(const struct win *w, int r, int i)
{
    return w->base[r] + (MPI_Aint)i * w->scale;
}

static int on_device(const struct win *w)
{
    return w->kind != HOST_ALLOCATE;
}

static void make(struct win *w, int kind, int n)
{
    w->kind = kind;
    w->n = n;
    w->base = abicheck_malloc(size * sizeof(MPI_Aint));
    MPI_Aint bytes = (MPI_Aint)n * sizeof(int);
    switch (kind) {
    case DEV_CREATE:
        w->local = device_ints(n, 0);
        MPI_CHECK(MPI_Win_create(w->local, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                 &w->win));
        break;
    case HOST_ALLOCATE:
        MPI_CHECK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->local,
                                   &w->win));
        break;
    default: {
        w->local = device_ints(n, 0);
        MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        MPI_CHECK(MPI_Win_attach(w->win, w->local, bytes));
        MPI_Aint mine;
        MPI_CHECK(MPI_Get_address(w->local, &mine));
        MPI_CHECK(MPI_Allgather(&mine, 1, MPI_AINT, w->base, 1, MPI_AINT, MPI_COMM_WORLD));
        w->scale = sizeof(int);
        return;
    }
    }
    for (int r = 0; r < size; r++)
        w->base[r] = 0;
    w->scale = 1;
}

static void destroy(struct win *w)
{
    if (w->kind == DEV_DYNAMIC)
        MPI_CHECK(MPI_Win_detach(w->win, w->local));
    MPI_CHECK(MPI_Win_free(&w->win));
    if (on_device(w))
        device_free(w->local);
    free(w->base);
}

/* Sets this rank's window memory (between epochs: a barrier follows). */
static void set_local(struct win *w, const int *v)
{
    if (on_device(w))
        set_device(w->local, v, w->n * sizeof(int));
    else
        memcpy(w->local, v, w->n * sizeof(int));
}

static void get_local(struct win *w, int *v)
{
    if (on_device(w))
        from_device(v, w->local, w->n * sizeof(int));
    else
        memcpy(v, w->local, w->n * sizeof(int));
}

static void set_all(struct win *w, int v)
{
    int *h = abicheck_malloc(w->n * sizeof(int));
    fill_ints(h, w->n, v);
    set_local(w, h);
    free(h);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Fence: ring put, get from the left, derived types, PROC_NULL. */
static void fence_ring(struct win *w, int dev_origin)
{
    char what[128];
    snprintf(what, sizeof what, "%s fence, %s origin", kind_names[w->kind],
             dev_origin ? "device" : "host");
    int src[N], got[4 * N], want[4 * N];
    for (int i = 0; i < N; i++)
        src[i] = rank * 1000 + i;
    set_all(w, -1);
    int *o = dev_origin ? to_device(src, sizeof src) : src;

    /* My N ints into the right neighbour's first N; the odd ones of mine
       (origin vector) into its ints N+1, N+3, ... (target vector). */
    MPI_Datatype every2;
    MPI_CHECK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every2));
    MPI_CHECK(MPI_Type_commit(&every2));
    MPI_CHECK(MPI_Win_fence(0, w->win));
    MPI_CHECK(MPI_Put(o, N, MPI_INT, right, disp(w, right, 0), N, MPI_INT, w->win));
    MPI_CHECK(MPI_Put(o + 1, 1, every2, right, disp(w, right, N + 1), 1, every2, w->win));
    MPI_CHECK(MPI_Put(o, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, w->win));
    MPI_CHECK(MPI_Win_fence(0, w->win));
    get_local(w, got);
    for (int i = 0; i < 2 * N; i++)
        want[i] = i < N ? left * 1000 + i : (i % 2 ? left * 1000 + (i - N) : -1);
    check_ints(got, want, 2 * N, what);

    /* Get the left neighbour's first N ints into my (device) buffer; then
       its first N/2 into every other int of a buffer of -7s. */
    int back[N];
    fill_ints(back, N, -7);
    int *b = dev_origin ? to_device(back, sizeof back) : back;
    int *g = dev_origin ? device_ints(N, -7) : abicheck_malloc(sizeof back);
    if (!dev_origin)
        fill_ints(g, N, -7);
    MPI_CHECK(MPI_Get(b, N, MPI_INT, left, disp(w, left, 0), N, MPI_INT, w->win));
    MPI_CHECK(MPI_Get(g, 1, every2, left, disp(w, left, 0), N / 2, MPI_INT, w->win));
    MPI_CHECK(MPI_Get(g, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, w->win));
    /* The left neighbour's odd ints N+1, N+3, ... (a target vector: runs
       read in one span) into the first N/2 of a buffer; my N/2 first ints
       added to the right neighbour's ints 2N, 2N+2, ... */
    int *v = dev_origin ? device_ints(N, -7) : abicheck_malloc(sizeof back);
    if (!dev_origin)
        fill_ints(v, N, -7);
    MPI_CHECK(MPI_Get(v, N / 2, MPI_INT, left, disp(w, left, N + 1), 1, every2, w->win));
    MPI_CHECK(MPI_Accumulate(o, N / 2, MPI_INT, right, disp(w, right, 2 * N), 1, every2, MPI_SUM,
                             w->win));
    MPI_CHECK(MPI_Win_fence(0, w->win));
    int two = (left + size - 1) % size;
    int odd[N];
    if (dev_origin)
        from_device(odd, v, sizeof odd);
    else
        memcpy(odd, v, sizeof odd);
    get_local(w, want);
    for (int k = 0; k < N; k++) {
        int w1 = k < N / 2 ? two * 1000 + 1 + 2 * k : -7;
        CHECK(odd[k] == w1, "%s: vector-target get [%d] = %d, expected %d", what, k, odd[k], w1);
        int w2 = k % 2 ? -1 : left * 1000 + k / 2 - 1;
        CHECK(want[2 * N + k] == w2, "%s: vector-target accumulate [%d] = %d, expected %d", what,
              2 * N + k, want[2 * N + k], w2);
    }
    if (dev_origin) {
        from_device(back, b, sizeof back);
        from_device(got, g, sizeof back);
    } else {
        memcpy(got, g, sizeof back);
    }
    for (int i = 0; i < N; i++) {
        CHECK(back[i] == two * 1000 + i, "%s: get [%d] = %d, expected %d", what, i, back[i],
              two * 1000 + i);
        int w2 = i % 2 ? -7 : two * 1000 + i / 2;
        CHECK(got[i] == w2, "%s: vector get [%d] = %d, expected %d", what, i, got[i], w2);
    }
    MPI_CHECK(MPI_Type_free(&every2));
    if (dev_origin) {
        device_free(o);
        device_free(b);
        device_free(g);
        device_free(v);
    } else {
        free(g);
        free(v);
    }
}

/* Passive target: counters, tickets, compare-and-swap, request forms. */
static void counters(struct win *w, int dev_origin)
{
    char what[128];
    snprintf(what, sizeof what, "%s lock_all, %s origin", kind_names[w->kind],
             dev_origin ? "device" : "host");
    set_all(w, 0);
    int one[N], mine = rank + 1;
    fill_ints(one, N, mine);
    int *o = dev_origin ? to_device(one, sizeof one) : one;
    int tickets[ITERS], *t = dev_origin ? device_ints(ITERS, -1) : tickets;
    int ones = 1, *inc = dev_origin ? to_device(&ones, sizeof ones) : &ones;

    MPI_CHECK(MPI_Win_lock_all(0, w->win));
    for (int it = 0; it < ITERS; it++) {
        /* Ints 0..N-1 of every rank: += rank + 1. */
        for (int r = 0; r < size; r++)
            MPI_CHECK(MPI_Accumulate(o, N, MPI_INT, r, disp(w, r, 0), N, MPI_INT, MPI_SUM, w->win));
        /* Int N of rank 0: a ticket counter. */
        MPI_CHECK(MPI_Fetch_and_op(inc, t + it, MPI_INT, 0, disp(w, 0, N), MPI_SUM, w->win));
        MPI_CHECK(MPI_Win_flush(0, w->win));
    }
    /* Int N+1 of the last rank: -1 -> a rank, once. */
    MPI_CHECK(MPI_Win_unlock_all(w->win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int last = size - 1, minus1 = -1, old = -5;
    if (rank == last) {
        int h[4 * N];
        get_local(w, h);
        h[N + 1] = -1;
        set_local(w, h);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int *cmp = dev_origin ? to_device(&minus1, sizeof minus1) : &minus1;
    int *me = dev_origin ? to_device(&rank, sizeof rank) : &rank;
    int *res = dev_origin ? device_ints(1, -5) : &old;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, last, 0, w->win));
    MPI_CHECK(MPI_Compare_and_swap(me, cmp, res, MPI_INT, last, disp(w, last, N + 1), w->win));
    MPI_CHECK(MPI_Win_unlock(last, w->win));
    if (dev_origin) {
        from_device(tickets, t, sizeof tickets);
        from_device(&old, res, sizeof old);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    int got[4 * N];
    get_local(w, got);
    int sum = size * (size + 1) / 2 * ITERS;
    for (int i = 0; i < N; i++)
        CHECK(got[i] == sum, "%s: counter %d = %d, expected %d", what, i, got[i], sum);
    /* Tickets: rising on each rank, all distinct 0 .. size*ITERS-1. */
    int *all = abicheck_malloc(size * ITERS * sizeof(int));
    MPI_CHECK(MPI_Allgather(tickets, ITERS, MPI_INT, all, ITERS, MPI_INT, MPI_COMM_WORLD));
    char *seen = calloc(size * ITERS, 1);
    for (int i = 0; i < size * ITERS; i++) {
        CHECK(all[i] >= 0 && all[i] < size * ITERS && !seen[all[i]],
              "%s: ticket %d handed out twice or out of range", what, all[i]);
        seen[all[i]] = 1;
    }
    if (rank == 0)
        CHECK(got[N] == size * ITERS, "%s: ticket counter %d, expected %d", what, got[N],
              size * ITERS);
    /* Compare-and-swap: exactly one rank saw -1, and the slot is its rank. */
    int olds[64];
    MPI_CHECK(MPI_Allgather(&old, 1, MPI_INT, olds, 1, MPI_INT, MPI_COMM_WORLD));
    int winners = 0, winner = -1;
    for (int r = 0; r < size; r++) {
        if (olds[r] == -1) {
            winners++;
            winner = r;
        }
    }
    CHECK(winners == 1, "%s: %d ranks won the compare-and-swap", what, winners);
    for (int r = 0; r < size; r++)
        CHECK(r == winner || olds[r] == winner, "%s: rank %d saw %d, expected %d", what, r,
              olds[r], winner);
    if (rank == last)
        CHECK(got[N + 1] == winner, "%s: swapped slot %d, expected %d", what, got[N + 1], winner);
    free(all);
    free(seen);
    if (dev_origin) {
        device_free(o);
        device_free(t);
        device_free(inc);
        device_free(cmp);
        device_free(me);
        device_free(res);
    }
}

/* Get_accumulate (SUM, NO_OP, REPLACE) and the request forms, to the
   right neighbour, with device result buffers. */
static void fetching(struct win *w, int dev_origin)
{
    char what[128];
    snprintf(what, sizeof what, "%s get_accumulate, %s origin", kind_names[w->kind],
             dev_origin ? "device" : "host");
    int init[4 * N];
    for (int i = 0; i < 4 * N; i++)
        init[i] = rank * 100 + i;
    set_local(w, init);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int add[N], before[N], now[N], repl[N], back[N];
    for (int i = 0; i < N; i++) {
        add[i] = i + 1;
        repl[i] = -i;
    }
    int *a = dev_origin ? to_device(add, sizeof add) : add;
    int *p = dev_origin ? to_device(repl, sizeof repl) : repl;
    int *r1 = dev_origin ? device_ints(N, 0) : before;
    int *r2 = dev_origin ? device_ints(N, 0) : now;
    int *r3 = dev_origin ? device_ints(N, 0) : back;
    MPI_Request q[4];
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w->win));
    MPI_CHECK(MPI_Get_accumulate(a, N, MPI_INT, r1, N, MPI_INT, right, disp(w, right, 0), N,
                                 MPI_INT, MPI_SUM, w->win));
    MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_INT, r2, N, MPI_INT, right, disp(w, right, 0), N,
                                 MPI_INT, MPI_NO_OP, w->win));
    MPI_CHECK(MPI_Rget_accumulate(p, N, MPI_INT, r3, N, MPI_INT, right, disp(w, right, N), N,
                                  MPI_INT, MPI_REPLACE, w->win, &q[0]));
    MPI_CHECK(MPI_Raccumulate(a, N, MPI_INT, right, disp(w, right, 2 * N), N, MPI_INT, MPI_SUM,
                              w->win, &q[1]));
    MPI_CHECK(MPI_Rput(p, N, MPI_INT, right, disp(w, right, 3 * N), N, MPI_INT, w->win, &q[2]));
    MPI_CHECK(MPI_Win_flush(right, w->win));
    MPI_CHECK(MPI_Rget(r1, N, MPI_INT, right, disp(w, right, 3 * N), N,
                       MPI_INT, w->win, &q[3]));
    MPI_Status st[4];
    MPI_CHECK(MPI_Waitall(4, q, st));
    MPI_CHECK(MPI_Win_unlock(right, w->win));
    int rput_back[N];
    if (dev_origin) {
        from_device(rput_back, r1, sizeof rput_back);
        from_device(now, r2, sizeof now);
        from_device(back, r3, sizeof back);
    } else {
        memcpy(rput_back, before, sizeof rput_back);
    }
    for (int i = 0; i < N; i++) {
        int r0 = right * 100 + i;
        CHECK(now[i] == r0 + i + 1, "%s: NO_OP fetched %d at %d, expected %d", what, now[i], i,
              r0 + i + 1);
        CHECK(back[i] == r0 + N, "%s: REPLACE fetched %d at %d, expected %d", what, back[i], i,
              r0 + N);
        CHECK(rput_back[i] == -i, "%s: Rget after Rput %d at %d", what, rput_back[i], i);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int got[4 * N];
    get_local(w, got);
    for (int i = 0; i < N; i++) {
        int m = rank * 100;
        CHECK(got[i] == m + i + (i + 1), "%s: sum %d at %d", what, got[i], i);
        CHECK(got[N + i] == -i, "%s: replaced %d at %d", what, got[N + i], i);
        CHECK(got[2 * N + i] == m + 2 * N + i + i + 1, "%s: raccumulate %d at %d", what,
              got[2 * N + i], i);
        CHECK(got[3 * N + i] == -i, "%s: rput %d at %d", what, got[3 * N + i], i);
    }
    if (dev_origin) {
        device_free(a);
        device_free(p);
        device_free(r1);
        device_free(r2);
        device_free(r3);
    }
}

/* PSCW: each rank exposes to its left, accesses its right. */
static void pscw_ring(struct win *w)
{
    char what[128];
    snprintf(what, sizeof what, "%s PSCW", kind_names[w->kind]);
    set_all(w, -1);
    MPI_Group world, to_right, from_left;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_CHECK(MPI_Group_incl(world, 1, &right, &to_right));
    MPI_CHECK(MPI_Group_incl(world, 1, &left, &from_left));
    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = 7 * rank + i;
    int *o = to_device(src, sizeof src);
    MPI_CHECK(MPI_Win_post(from_left, 0, w->win));
    MPI_CHECK(MPI_Win_start(to_right, 0, w->win));
    MPI_CHECK(MPI_Put(o, N, MPI_INT, right, disp(w, right, N), N, MPI_INT, w->win));
    MPI_CHECK(MPI_Accumulate(o, N, MPI_INT, right, disp(w, right, 2 * N), N, MPI_INT, MPI_SUM,
                             w->win));
    MPI_CHECK(MPI_Win_complete(w->win));
    MPI_CHECK(MPI_Win_wait(w->win));
    int got[4 * N];
    get_local(w, got);
    for (int i = 0; i < N; i++) {
        CHECK(got[N + i] == 7 * left + i, "%s: put [%d] = %d, expected %d", what, N + i,
              got[N + i], 7 * left + i);
        CHECK(got[2 * N + i] == 7 * left + i - 1, "%s: accumulate [%d] = %d, expected %d", what,
              2 * N + i, got[2 * N + i], 7 * left + i - 1);
        CHECK(got[i] == -1 && got[3 * N + i] == -1, "%s: ints outside the epoch's changed", what);
    }
    MPI_CHECK(MPI_Group_free(&world));
    MPI_CHECK(MPI_Group_free(&to_right));
    MPI_CHECK(MPI_Group_free(&from_left));
    device_free(o);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Exclusive locks: MAX and MIN of doubles from every rank into rank 0. */
static void extremes(void)
{
    double h[2] = {-1e300, 1e300};
    double *mem = to_device(h, sizeof h);
    MPI_Win win;
    MPI_CHECK(MPI_Win_create(mem, sizeof h, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    double v = 1.5 * rank - 3, *d = to_device(&v, sizeof v);
    for (int it = 0; it < ITERS; it++) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_CHECK(MPI_Accumulate(d, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_MAX, win));
        MPI_CHECK(MPI_Accumulate(d, 1, MPI_DOUBLE, 0, 1, 1, MPI_DOUBLE, MPI_MIN, win));
        MPI_CHECK(MPI_Win_unlock(0, win));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        from_device(h, mem, sizeof h);
        CHECK(h[0] == 1.5 * (size - 1) - 3 && h[1] == -3, "MAX/MIN on a device window: %g %g",
              h[0], h[1]);
    }
    MPI_CHECK(MPI_Win_free(&win));
    device_free(mem);
    device_free(d);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    cuda_start();
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size <= 64, "at most 64 ranks");
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    for (int kind = 0; kind < KINDS; kind++) {
        struct win w;
        make(&w, kind, 4 * N);
        for (int dev_origin = 1; dev_origin >= 0; dev_origin--) {
            if (!dev_origin && kind == HOST_ALLOCATE)
                continue; /* host to host: the rma_* programs */
            fence_ring(&w, dev_origin);
            counters(&w, dev_origin);
            fetching(&w, dev_origin);
        }
        pscw_ring(&w);
        destroy(&w);
    }
    extremes();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("PASS gpu_rma\n");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
