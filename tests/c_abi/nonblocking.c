/*
 * Requests through the C ABI: Isend/Irecv/Issend/Ibsend/Irsend with
 * Waitall statuses, Waitany and Waitsome until all done, Testall / Testany /
 * Testsome polling, MPI_REQUEST_NULL and inactive persistent requests (empty
 * statuses), Request_free of a running send, Cancel + Test_cancelled of an
 * unmatched receive, persistent Send_init / Recv_init with Startall, Start
 * and Waitall repeated. Prints "PASS nonblocking" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

/* MPI_STATUSES_IGNORE through a variable: gcc 12 warns when it sees the
   constant (MPI_Status *)1 passed as an array parameter. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

/* Each rank exchanges one message with every rank (itself included). */
static void exchange(int test, int how)
{
    enum { N = 16 };
    int *out = abicheck_malloc(sizeof(int) * N * size), *in = abicheck_malloc(sizeof(int) * N * size);
    MPI_Request *reqs = abicheck_malloc(sizeof(MPI_Request) * 2 * size);
    MPI_Status *sts = abicheck_malloc(sizeof(MPI_Status) * 2 * size);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++) {
            out[p * N + i] = (test * 100 + rank) * 1000 + p * N + i;
            in[p * N + i] = -1;
        }
    for (int p = 0; p < size; p++)
        MPI_CHECK(MPI_Irecv(in + p * N, N, MPI_INT, p, test, MPI_COMM_WORLD, &reqs[p]));
    for (int p = 0; p < size; p++) {
        MPI_Request *r = &reqs[size + p];
        switch ((p + test) % 3) {
        case 0: MPI_CHECK(MPI_Isend(out + p * N, N, MPI_INT, p, test, MPI_COMM_WORLD, r)); break;
        case 1: MPI_CHECK(MPI_Issend(out + p * N, N, MPI_INT, p, test, MPI_COMM_WORLD, r)); break;
        default: MPI_CHECK(MPI_Irsend(out + p * N, N, MPI_INT, p, test, MPI_COMM_WORLD, r)); break;
        }
    }
    int n = 2 * size, done = 0;
    switch (how) {
    case 0:
        MPI_CHECK(MPI_Waitall(n, reqs, sts));
        for (int p = 0; p < size; p++) {
            int count = -1;
            MPI_CHECK(MPI_Get_count(&sts[p], MPI_INT, &count));
            CHECK(sts[p].MPI_SOURCE == p && sts[p].MPI_TAG == test && count == N,
                  "waitall status %d: source %d tag %d count %d", p, sts[p].MPI_SOURCE,
                  sts[p].MPI_TAG, count);
        }
        break;
    case 1:
        for (;;) {
            int idx = -5;
            MPI_Status st;
            MPI_CHECK(MPI_Waitany(n, reqs, &idx, &st));
            if (idx == MPI_UNDEFINED)
                break;
            CHECK(idx >= 0 && idx < n && reqs[idx] == MPI_REQUEST_NULL, "waitany index %d", idx);
            if (idx < size)
                CHECK(st.MPI_SOURCE == idx, "waitany: receive %d from %d", idx, st.MPI_SOURCE);
            done++;
        }
        CHECK(done == n, "waitany completed %d of %d", done, n);
        break;
    case 2: {
        int *idx = abicheck_malloc(sizeof(int) * n);
        for (;;) {
            int outcount = -5;
            MPI_CHECK(MPI_Waitsome(n, reqs, &outcount, idx, sts));
            if (outcount == MPI_UNDEFINED)
                break;
            CHECK(outcount >= 1 && outcount <= n, "waitsome outcount %d", outcount);
            for (int k = 0; k < outcount; k++) {
                CHECK(reqs[idx[k]] == MPI_REQUEST_NULL, "waitsome left %d active", idx[k]);
                if (idx[k] < size)
                    CHECK(sts[k].MPI_SOURCE == idx[k], "waitsome: receive %d from %d", idx[k],
                          sts[k].MPI_SOURCE);
            }
            done += outcount;
        }
        CHECK(done == n, "waitsome completed %d of %d", done, n);
        free(idx);
        break;
    }
    case 3: {
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Testall(n, reqs, &flag, statuses_ignore));
        for (int k = 0; k < n; k++)
            CHECK(reqs[k] == MPI_REQUEST_NULL, "testall left request %d", k);
        break;
    }
    case 4:
        for (;;) {
            int idx = -5, flag = 0;
            MPI_Status st;
            MPI_CHECK(MPI_Testany(n, reqs, &idx, &flag, &st));
            if (flag && idx == MPI_UNDEFINED)
                break;
            if (flag)
                done++;
        }
        CHECK(done == n, "testany completed %d of %d", done, n);
        break;
    default: {
        int *idx = abicheck_malloc(sizeof(int) * n);
        for (;;) {
            int outcount = -5;
            MPI_CHECK(MPI_Testsome(n, reqs, &outcount, idx, statuses_ignore));
            if (outcount == MPI_UNDEFINED)
                break;
            done += outcount;
        }
        CHECK(done == n, "testsome completed %d of %d", done, n);
        free(idx);
        break;
    }
    }
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
            CHECK(in[p * N + i] == (test * 100 + p) * 1000 + rank * N + i,
                  "test %d: element %d from %d is %d", test, i, p, in[p * N + i]);
    free(out);
    free(in);
    free(reqs);
    free(sts);
}

static void null_and_free(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    st.MPI_SOURCE = 77;
    MPI_CHECK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "empty status: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    int flag = 0, count = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0, "empty status count %d", count);
    MPI_CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 1, "MPI_Test on MPI_REQUEST_NULL gave flag %d", flag);

    /* A freed send still delivers. */
    int x = rank + 7, y = -1;
    MPI_CHECK(MPI_Isend(&x, 1, MPI_INT, (rank + 1) % size, 50, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
    MPI_CHECK(MPI_Recv(&y, 1, MPI_INT, (rank + size - 1) % size, 50, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    CHECK(y == (rank + size - 1) % size + 7, "freed send delivered %d", y);

    /* Ibsend completes locally. */
    int bsize = 1024 + MPI_BSEND_OVERHEAD;
    void *buffer = abicheck_malloc((size_t)bsize), *b;
    MPI_CHECK(MPI_Buffer_attach(buffer, bsize));
    MPI_CHECK(MPI_Ibsend(&x, 1, MPI_INT, (rank + 1) % size, 51, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Recv(&y, 1, MPI_INT, (rank + size - 1) % size, 51, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Buffer_detach(&b, &bsize));
    free(buffer);
}

static void cancel(void)
{
    int x = 0;
    MPI_Request r;
    MPI_Status st;
    MPI_CHECK(MPI_Irecv(&x, 1, MPI_INT, 0, 9999, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Cancel(&r));
    MPI_CHECK(MPI_Wait(&r, &st));
    int flag = 0;
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "unmatched receive was not cancelled");
    CHECK(r == MPI_REQUEST_NULL, "cancelled request not freed by MPI_Wait");
}

static void persistent(void)
{
    int out[3], in[3];
    MPI_Request reqs[2];
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_CHECK(MPI_Recv_init(in, 3, MPI_INT, from, 60, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Send_init(out, 3, MPI_INT, to, 60, MPI_COMM_WORLD, &reqs[1]));
    MPI_Status st;
    MPI_CHECK(MPI_Wait(&reqs[0], &st)); /* inactive: returns at once */
    CHECK(reqs[0] != MPI_REQUEST_NULL, "waiting on an inactive persistent request freed it");
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 3; i++) {
            out[i] = rank * 100 + round * 10 + i;
            in[i] = -1;
        }
        if (round % 2 == 0) {
            MPI_CHECK(MPI_Startall(2, reqs));
        } else {
            MPI_CHECK(MPI_Start(&reqs[0]));
            MPI_CHECK(MPI_Start(&reqs[1]));
        }
        MPI_Status sts[2];
        MPI_CHECK(MPI_Waitall(2, reqs, sts));
        CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
              "persistent requests were freed by MPI_Waitall");
        CHECK(sts[0].MPI_SOURCE == from, "persistent receive from %d", sts[0].MPI_SOURCE);
        for (int i = 0; i < 3; i++)
            CHECK(in[i] == from * 100 + round * 10 + i, "round %d element %d is %d", round, i,
                  in[i]);
    }
    MPI_CHECK(MPI_Request_free(&reqs[0]));
    MPI_CHECK(MPI_Request_free(&reqs[1]));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int how = 0; how < 6; how++)
        exchange(10 + how, how);
    null_and_free();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    cancel();
    persistent();
    abicheck_pass("nonblocking");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
