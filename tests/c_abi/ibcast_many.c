/*
 * MPI_Ibcast hard: many broadcasts outstanding at once from several roots,
 * sizes from one element to past the eager limit, completed in an order
 * that differs per rank (MPI_Wait, MPI_Waitany, MPI_Testall, MPI_Waitsome,
 * MPI_Request_get_status); on MPI_COMM_WORLD and on a duplicate, with
 * ranks mixing the datatype they describe the buffer with (MPI_INT x n
 * at some, one contiguous type of n ints at others); interleaved with
 * blocking MPI_Bcast; then back-to-back MPI_Ibcast + MPI_Wait, so that a
 * root runs ahead of its leaves. Every value is checked. Prints
 * "PASS ibcast_many" from rank 0.
 */
#include "abicheck.h"

#define K 40       /* broadcasts outstanding at once */
#define BIG 17000  /* ints: 68 KB, past the 64 KiB eager limit */
#define ROUNDS 3
#define BACK_TO_BACK 3000

static int rank, size;

static int len_of(int k) { return (int[]){1, 3, 200, BIG, 2}[k % 5]; }
static int root_of(int k, int round) { return (k * 7 + round) % size; }
static int val(int k, int round, int i) { return k * 100003 + round * 7919 + i; }

/* One round of K outstanding broadcasts on `comm`, completed out of order. */
static void round_on(MPI_Comm comm, int round)
{
    int *bufs[K];
    MPI_Request req[K];
    MPI_Datatype types[K];
    for (int k = 0; k < K; k++) {
        int n = len_of(k), root = root_of(k, round);
        bufs[k] = malloc(sizeof(int) * (size_t)n);
        CHECK(bufs[k] != NULL, "malloc");
        for (int i = 0; i < n; i++)
            bufs[k][i] = rank == root ? val(k, round, i) : -1;
        types[k] = MPI_DATATYPE_NULL;
        /* The same bytes described another way at odd ranks. */
        if (rank % 2 == 1 && k % 3 == 0) {
            MPI_CHECK(MPI_Type_contiguous(n, MPI_INT, &types[k]));
            MPI_CHECK(MPI_Type_commit(&types[k]));
            MPI_CHECK(MPI_Ibcast(bufs[k], 1, types[k], root, comm, &req[k]));
        } else {
            MPI_CHECK(MPI_Ibcast(bufs[k], n, MPI_INT, root, comm, &req[k]));
        }
        if (k == K / 2) {
            /* A blocking broadcast among the outstanding ones. */
            int x = rank == size - 1 ? round + 17 : -1;
            MPI_CHECK(MPI_Bcast(&x, 1, MPI_INT, size - 1, comm));
            CHECK(x == round + 17, "round %d blocking bcast got %d", round, x);
        }
    }
    /* Completion order differs per rank: a stride coprime with K. */
    int stride = (int[]){3, 7, 11, 13, 17, 19, 23}[rank % 7];
    int start = (rank * 5) % K;
    int done = 0;
    for (int j = 0; j < K / 4; j++, done++) {
        int k = (start + j * stride) % K;
        if (j % 2 == 0) {
            MPI_CHECK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
        } else {
            int flag = 0;
            while (!flag)
                MPI_CHECK(MPI_Request_get_status(req[k], &flag, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
        }
        CHECK(req[k] == MPI_REQUEST_NULL, "request %d not freed", k);
    }
    for (int j = 0; j < K / 4; j++, done++) {
        int idx;
        MPI_CHECK(MPI_Waitany(K, req, &idx, MPI_STATUS_IGNORE));
        CHECK(idx != MPI_UNDEFINED, "waitany found nothing with %d left", K - done);
    }
    for (int j = 0; j < K / 4 && done < K;) {
        int outcount, idx[K];
        MPI_Status sts[K];
        MPI_CHECK(MPI_Waitsome(K, req, &outcount, idx, sts));
        CHECK(outcount != MPI_UNDEFINED && outcount > 0, "waitsome");
        done += outcount;
        j += outcount;
    }
    int all = 0;
    MPI_Status sts[K];
    while (!all)
        MPI_CHECK(MPI_Testall(K, req, &all, sts));
    for (int k = 0; k < K; k++) {
        CHECK(req[k] == MPI_REQUEST_NULL, "request %d left", k);
        for (int i = 0; i < len_of(k); i++)
            CHECK(bufs[k][i] == val(k, round, i), "round %d ibcast %d [%d]: %d, not %d", round,
                  k, i, bufs[k][i], val(k, round, i));
        if (types[k] != MPI_DATATYPE_NULL)
            MPI_CHECK(MPI_Type_free(&types[k]));
        free(bufs[k]);
    }
}

/* Back-to-back MPI_Ibcast + MPI_Wait, roots taking turns in runs. */
static void back_to_back(MPI_Comm comm)
{
    for (int it = 0; it < BACK_TO_BACK; it++) {
        int root = (it / 500) % size;
        long long x[2] = {-1, -1};
        if (rank == root) {
            x[0] = it;
            x[1] = -(long long)it * 3;
        }
        MPI_Request r;
        MPI_CHECK(MPI_Ibcast(x, 2, MPI_LONG_LONG, root, comm, &r));
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(x[0] == it && x[1] == -(long long)it * 3, "back to back %d: %lld %lld", it, x[0],
              x[1]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int round = 0; round < ROUNDS; round++) {
        round_on(MPI_COMM_WORLD, round);
        round_on(dup, round);
    }
    back_to_back(MPI_COMM_WORLD);
    back_to_back(dup);
    /* An MPI_Ibcast complete as it started is still a request to wait on. */
    int x = rank == 0 ? 42 : 0;
    MPI_Request r;
    MPI_CHECK(MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &r));
    CHECK(r != MPI_REQUEST_NULL, "a started ibcast's request is not null");
    MPI_Status st;
    MPI_CHECK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && x == 42, "ibcast 42: %d", x);
    MPI_CHECK(MPI_Comm_free(&dup));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("PASS ibcast_many\n");
    MPI_Finalize();
    return 0;
}
