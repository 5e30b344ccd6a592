/*
 * MPI 4.0's non-blocking send-receive and the large-count buffer calls:
 * MPI_Isendrecv / MPI_Isendrecv_c and MPI_Isendrecv_replace /
 * MPI_Isendrecv_replace_c around a ring (contiguous and vector types,
 * completed by Wait, Test loops, Waitall, Waitany, after
 * Request_get_status), statuses are the receive's, the replace forms
 * overwrite the buffer only with what arrived, MPI_PROC_NULL halves,
 * truncation reported at completion, argument errors (MPI_ERRORS_RETURN),
 * and MPI_Buffer_attach_c / MPI_Buffer_detach_c with buffered sends.
 * Prints "PASS p2p_ext" from rank 0.
 */
#include "abicheck.h"

#define N 12

static int rank, size, right, left;

/* MPICH 4.0.2's MPI_Isendrecv (a schedule) has bugs: its request drops
   the receive's status (source 0, tag 0, count 0 come back) and error
   (no MPI_ERR_TRUNCATE), it releases a
   derived send type once too often (an assertion fails), and a send to
   MPI_PROC_NULL crashes. Those are checked on OxMPI (told by
   MPI_Get_library_version) only. */
static int oxmpi;

static int value(int from, int i, int round) { return from * 1000 + round * 100 + i; }

/* Completes `req` the way `how` says and returns its status. */
static MPI_Status complete(MPI_Request *req, int how)
{
    MPI_Status st;
    memset(&st, 0x55, sizeof st);
    switch (how % 4) {
    case 0:
        MPI_CHECK(MPI_Wait(req, &st));
        break;
    case 1: {
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Test(req, &flag, &st));
        break;
    }
    case 2: {
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Request_get_status(*req, &flag, &st));
        CHECK(*req != MPI_REQUEST_NULL, "Request_get_status freed the request");
        MPI_Status again;
        MPI_CHECK(MPI_Wait(req, &again));
        CHECK(!oxmpi ||
                  (again.MPI_SOURCE == st.MPI_SOURCE && again.MPI_TAG == st.MPI_TAG),
              "Request_get_status and Wait statuses differ");
        break;
    }
    default: {
        int idx = -1;
        MPI_Request reqs[2] = {MPI_REQUEST_NULL, *req};
        MPI_CHECK(MPI_Waitany(2, reqs, &idx, &st));
        CHECK(idx == 1, "Waitany index %d", idx);
        *req = reqs[1];
        break;
    }
    }
    CHECK(*req == MPI_REQUEST_NULL, "completed request not freed");
    return st;
}

static void check_status(MPI_Status *st, int source, int tag, MPI_Datatype type, int count,
                         const char *what)
{
    if (!oxmpi)
        return;
    int got = -1;
    MPI_CHECK(MPI_Get_count(st, type, &got));
    CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && got == count,
          "%s: status source %d tag %d count %d, expected %d %d %d", what, st->MPI_SOURCE,
          st->MPI_TAG, got, source, tag, count);
}

static void test_isendrecv(void)
{
    for (int round = 0; round < 8; round++) {
        int out[N], in[N];
        for (int i = 0; i < N; i++) {
            out[i] = value(rank, i, round);
            in[i] = -1;
        }
        MPI_Request req;
        if (round % 2)
            MPI_CHECK(MPI_Isendrecv_c(out, N, MPI_INT, right, round, in, N, MPI_INT, left, round,
                                      MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Isendrecv(out, N, MPI_INT, right, round, in, N, MPI_INT, left, round,
                                    MPI_COMM_WORLD, &req));
        CHECK(req != MPI_REQUEST_NULL, "Isendrecv gave MPI_REQUEST_NULL");
        MPI_Status st = complete(&req, round);
        check_status(&st, left, round, MPI_INT, N, "Isendrecv");
        for (int i = 0; i < N; i++)
            CHECK(in[i] == value(left, i, round), "Isendrecv round %d: in[%d] = %d", round, i,
                  in[i]);
    }
}

static void test_replace(void)
{
    for (int round = 0; round < 8; round++) {
        int buf[N];
        for (int i = 0; i < N; i++)
            buf[i] = value(rank, i, round);
        MPI_Request req;
        if (round % 2)
            MPI_CHECK(MPI_Isendrecv_replace_c(buf, N, MPI_INT, right, 7, left, 7, MPI_COMM_WORLD,
                                              &req));
        else
            MPI_CHECK(MPI_Isendrecv_replace(buf, N, MPI_INT, right, 7, left, 7, MPI_COMM_WORLD,
                                            &req));
        MPI_Status st = complete(&req, round + 1);
        check_status(&st, left, 7, MPI_INT, N, "Isendrecv_replace");
        for (int i = 0; i < N; i++)
            CHECK(buf[i] == value(left, i, round), "Isendrecv_replace round %d: buf[%d] = %d",
                  round, i, buf[i]);
    }
}

/* Vector types (every other int of 2N), completed together by Waitall:
   received as a vector from N contiguous ints; sent as a vector and in
   place (OxMPI only, see above). */
static void test_derived(void)
{
    MPI_Datatype every_other;
    MPI_CHECK(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    MPI_CHECK(MPI_Type_commit(&every_other));
    int flat[N], out[2 * N], in[2 * N], back[2 * N], rep[2 * N];
    for (int i = 0; i < 2 * N; i++) {
        if (i < N)
            flat[i] = value(rank, i, 8);
        out[i] = value(rank, i, 9);
        in[i] = back[i] = -1;
        rep[i] = value(rank, i, 5);
    }
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[3];
    MPI_CHECK(MPI_Isendrecv(flat, N, MPI_INT, right, 3, in, 1, every_other, left, 3,
                            MPI_COMM_WORLD, &reqs[0]));
    if (oxmpi) {
        MPI_CHECK(MPI_Isendrecv(out, 1, every_other, right, 4, back, N, MPI_INT, left, 4,
                                MPI_COMM_WORLD, &reqs[1]));
        MPI_CHECK(MPI_Isendrecv_replace(rep, 1, every_other, right, 5, left, 5, MPI_COMM_WORLD,
                                        &reqs[2]));
    }
    MPI_CHECK(MPI_Waitall(3, reqs, sts));
    check_status(&sts[0], left, 3, every_other, 1, "Isendrecv into a vector");
    for (int i = 0; i < 2 * N; i++) {
        int want = i % 2 ? -1 : value(left, i / 2, 8);
        CHECK(in[i] == want, "Isendrecv into a vector: in[%d] = %d, expected %d", i, in[i], want);
    }
    if (!oxmpi) {
        MPI_CHECK(MPI_Type_free(&every_other));
        return;
    }
    check_status(&sts[1], left, 4, MPI_INT, N, "Isendrecv of a vector");
    check_status(&sts[2], left, 5, every_other, 1, "Isendrecv_replace of a vector");
    for (int i = 0; i < 2 * N; i++) {
        int want = i < N ? value(left, 2 * i, 9) : -1;
        CHECK(back[i] == want, "Isendrecv of a vector: back[%d] = %d, expected %d", i, back[i],
              want);
        want = i % 2 ? value(rank, i, 5) : value(left, i, 5);
        CHECK(rep[i] == want, "vector Isendrecv_replace: rep[%d] = %d, expected %d", i, rep[i],
              want);
    }
    MPI_CHECK(MPI_Type_free(&every_other));
}

/* MPI_PROC_NULL halves complete at once; the status is the empty one
   (both halves: OxMPI only, see above). */
static void test_proc_null(void)
{
    int out = rank, in = -7;
    MPI_Request req;
    MPI_Status st;
    if (oxmpi) {
    MPI_CHECK(MPI_Isendrecv(&out, 1, MPI_INT, MPI_PROC_NULL, 0, &in, 1, MPI_INT, MPI_PROC_NULL,
                            0, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, &st));
    int count = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && in == -7,
          "PROC_NULL Isendrecv: source %d tag %d count %d in %d", st.MPI_SOURCE, st.MPI_TAG,
          count, in);
    }
    /* Send to the right, receive from nobody: the send still happens. */
    MPI_CHECK(MPI_Isendrecv(&out, 1, MPI_INT, right, 11, &in, 1, MPI_INT, MPI_PROC_NULL, 0,
                            MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Recv(&in, 1, MPI_INT, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(in == left, "half-PROC_NULL Isendrecv delivered %d", in);
}

/* A message longer than the receive buffer: MPI_ERR_TRUNCATE at
   completion (OxMPI only, see above). */
static void test_truncate(void)
{
    if (!oxmpi)
        return;
    int out[4] = {1, 2, 3, 4}, in[2];
    MPI_Request req;
    MPI_CHECK(MPI_Isendrecv(out, 4, MPI_INT, right, 21, in, 2, MPI_INT, left, 21, MPI_COMM_WORLD,
                            &req));
    EXPECT_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    CHECK(req == MPI_REQUEST_NULL, "truncated Isendrecv left its request");
}

static void test_errors(void)
{
    int x = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Isendrecv(&x, 1, MPI_INT, size, 0, &x, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                               &req),
                 MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Isendrecv(&x, 1, MPI_INT, right, 0, &x, 1, MPI_INT, size + 3, 0,
                               MPI_COMM_WORLD, &req),
                 MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Isendrecv(&x, -1, MPI_INT, right, 0, &x, 1, MPI_INT, left, 0,
                               MPI_COMM_WORLD, &req),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Isendrecv(&x, 1, MPI_INT, right, -5, &x, 1, MPI_INT, left, 0,
                               MPI_COMM_WORLD, &req),
                 MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Isendrecv_replace(&x, 1, MPI_DATATYPE_NULL, right, 0, left, 0,
                                       MPI_COMM_WORLD, &req),
                 MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Isendrecv_replace_c(&x, 1, MPI_INT, right, 0, left, 0, MPI_COMM_NULL, &req),
                 MPI_ERR_COMM);
    /* The plain non-blocking calls' common case (a predefined communicator,
       a contiguous type) reports its errors as the general form does. */
    EXPECT_CLASS(MPI_Isend(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Issend(&x, 1, MPI_INT, right, -5, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Isend(&x, -1, MPI_INT, right, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Isend(&x, 1, MPI_INT, right, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Irecv(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Irecv(&x, 1, MPI_INT, left, -5, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Irecv(&x, 1, MPI_INT, left, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK(req == MPI_REQUEST_NULL, "a failed call wrote a request");
}

/* MPI_Buffer_attach_c / MPI_Buffer_detach_c hand back what was attached. */
static void test_buffer_c(void)
{
    MPI_Count bytes = 4 * (MPI_BSEND_OVERHEAD + (MPI_Count)sizeof(int) * N);
    char *space = abicheck_malloc((size_t)bytes);
    MPI_CHECK(MPI_Buffer_attach_c(space, bytes));
    int out[N], in[N];
    for (int i = 0; i < N; i++)
        out[i] = value(rank, i, 3);
    MPI_CHECK(MPI_Bsend(out, N, MPI_INT, right, 31, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Recv(in, N, MPI_INT, left, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(in[i] == value(left, i, 3), "Bsend with an attached buffer: in[%d] = %d", i, in[i]);
    void *addr = NULL;
    MPI_Count got = -1;
    MPI_CHECK(MPI_Buffer_detach_c(&addr, &got));
    CHECK(addr == space && got == bytes, "Buffer_detach_c gave %p, %lld (attached %p, %lld)", addr,
          (long long)got, (void *)space, (long long)bytes);
    /* The int forms see the same buffer. */
    MPI_CHECK(MPI_Buffer_attach(space, (int)bytes));
    MPI_CHECK(MPI_Buffer_detach_c(&addr, &got));
    CHECK(addr == space && got == bytes, "Buffer_detach_c after Buffer_attach: %p, %lld", addr,
          (long long)got);
    MPI_CHECK(MPI_Buffer_attach_c(space, bytes));
    int small = -1;
    MPI_CHECK(MPI_Buffer_detach(&addr, &small));
    CHECK(addr == space && small == (int)bytes, "Buffer_detach after Buffer_attach_c: %p, %d",
          addr, small);
    EXPECT_CLASS(MPI_Buffer_attach_c(space, -1), MPI_ERR_ARG);
    free(space);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    oxmpi = strncmp(lib, "OxMPI", 5) == 0;
    test_isendrecv();
    test_replace();
    test_derived();
    test_proc_null();
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_buffer_c();
    test_truncate();
    test_errors();
    abicheck_pass("p2p_ext");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
