/*
 * MPI_Comm_idup is non-blocking: ranks start idups of two communicators in
 * opposite orders and complete them together; a rank completes its idup
 * only after a synchronous send that its peer receives after starting its
 * own idup; attributes are copied; the new communicators work. Then
 * MPI_Comm_dup from several threads at once (MPI_THREAD_MULTIPLE), each on
 * its own communicator, in a different thread order on each rank.
 * Prints "PASS idup" from rank 0.
 */
#include "abicheck.h"
#include <pthread.h>

static int rank, size;

static int sum_over(MPI_Comm comm, int v)
{
    int out = -1;
    MPI_CHECK(MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_SUM, comm));
    return out;
}

static void opposite_orders(void)
{
    MPI_Comm a, b, na = MPI_COMM_NULL, nb = MPI_COMM_NULL;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    MPI_Request reqs[2];
    if (rank % 2 == 0) {
        MPI_CHECK(MPI_Comm_idup(a, &na, &reqs[0]));
        MPI_CHECK(MPI_Comm_idup(b, &nb, &reqs[1]));
    } else {
        MPI_CHECK(MPI_Comm_idup(b, &nb, &reqs[1]));
        MPI_CHECK(MPI_Comm_idup(a, &na, &reqs[0]));
    }
    MPI_Status sts[2];
    MPI_CHECK(MPI_Waitall(2, reqs, sts));
    CHECK(na != MPI_COMM_NULL && nb != MPI_COMM_NULL && na != nb, "idup handles %d %d",
          (int)na, (int)nb);
    int result = -1;
    MPI_CHECK(MPI_Comm_compare(na, a, &result));
    CHECK(result == MPI_CONGRUENT, "compare(idup, a) = %d", result);
    CHECK(sum_over(na, rank) == size * (size - 1) / 2, "allreduce on idup of a");
    CHECK(sum_over(nb, 1) == size, "allreduce on idup of b");
    MPI_Comm comms[4] = {a, b, na, nb};
    for (int i = 0; i < 4; i++)
        MPI_CHECK(MPI_Comm_free(&comms[i]));
}

/* Rank 1 Ssends to rank 0 before it starts its idup; rank 0 starts its
 * idup first and receives afterwards, before waiting. */
static void p2p_dependency(void)
{
    if (size < 2)
        return;
    MPI_Comm n = MPI_COMM_NULL;
    MPI_Request req;
    int v = 7, got = -1;
    if (rank == 1)
        MPI_CHECK(MPI_Ssend(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &n, &req));
    if (rank == 0)
        MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int flag = 0;
    while (!flag)
        MPI_CHECK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "request not freed by MPI_Test");
    CHECK(rank != 0 || got == 7, "rank 0 got %d", got);
    CHECK(sum_over(n, 2) == 2 * size, "allreduce on the idup");
    MPI_CHECK(MPI_Comm_free(&n));
}

static int copies;

static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)k;
    (void)extra;
    copies++;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static void attributes(void)
{
    int key;
    MPI_CHECK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    MPI_Comm a, n;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_CHECK(MPI_Comm_set_attr(a, key, (void *)(size_t)100));
    MPI_Request req;
    MPI_CHECK(MPI_Comm_idup(a, &n, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    void *v = NULL;
    int flag = 0;
    MPI_CHECK(MPI_Comm_get_attr(n, key, &v, &flag));
    CHECK(flag && v == (void *)(size_t)101, "idup's attribute %p (flag %d)", v, flag);
    CHECK(copies == 1, "copy callback ran %d times", copies);
    MPI_CHECK(MPI_Comm_free(&n));
    MPI_CHECK(MPI_Comm_free(&a));
    MPI_CHECK(MPI_Comm_free_keyval(&key));
}

#define THREADS 4
#define ROUNDS 25

static MPI_Comm thread_comm[THREADS];

static void *dup_loop(void *arg)
{
    int t = (int)(size_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Comm d;
        MPI_CHECK(MPI_Comm_dup(thread_comm[t], &d));
        int s = sum_over(d, t + 1);
        CHECK(s == (t + 1) * size, "thread %d: allreduce %d", t, s);
        MPI_CHECK(MPI_Comm_free(&d));
    }
    return NULL;
}

static void threads(void)
{
    for (int t = 0; t < THREADS; t++)
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm[t]));
    pthread_t th[THREADS];
    /* Odd ranks start their threads in the opposite order. */
    for (int i = 0; i < THREADS; i++) {
        int t = rank % 2 ? THREADS - 1 - i : i;
        CHECK(pthread_create(&th[t], NULL, dup_loop, (void *)(size_t)t) == 0,
              "pthread_create failed");
    }
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_join(th[t], NULL) == 0, "pthread_join failed");
    for (int t = 0; t < THREADS; t++)
        MPI_CHECK(MPI_Comm_free(&thread_comm[t]));
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int i = 0; i < 10; i++)
        opposite_orders();
    p2p_dependency();
    attributes();
    if (provided == MPI_THREAD_MULTIPLE)
        threads();
    else
        CHECK(0, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    abicheck_pass("idup");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
