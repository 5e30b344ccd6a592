/*
 * The wait and test families on mixed request arrays: Waitall over a
 * finished eager send, a pending receive, a large (rendezvous) send still
 * running, MPI_REQUEST_NULL, an inactive and an active persistent request
 * and a complete generalized request; an error in one request under
 * MPI_ERRORS_RETURN (MPI_ERR_IN_STATUS, the truncation's code in its
 * status; on OxMPI the others completed with MPI_SUCCESS, MPICH may leave
 * them MPI_ERR_PENDING); Testall completing nothing until all
 * are done; Waitany / Testsome / Waitsome over finished sends;
 * Request_get_status, Cancel and Request_free of a finished send; a
 * finished send (OxMPI's one builtin handle for those) in Testall, Testany,
 * Test and MPI_Start beside MPI_REQUEST_NULL, pending receives, an
 * inactive persistent request and a generalized request. Prints
 * "PASS completion" from rank 0.
 */
#include "abicheck.h"

enum { BIG = 1 << 20 };

static int rank, size, left, right, oxmpi;

/* MPI_STATUSES_IGNORE through a variable: gcc 12 warns when it sees the
   constant (MPI_Status *)1 passed as an array parameter. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

static int query_fn(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 3);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = 77;
    st->MPI_TAG = 78;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void check_empty(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: not an empty status (source %d tag %d count %d)", what, st->MPI_SOURCE,
          st->MPI_TAG, count);
}

static void waitall_mix(void)
{
    enum { N = 8 };
    int small_out = rank, small_in = -1, pers_in = -1, pers_out = 100 + rank;
    char *big_out = abicheck_malloc(BIG), *big_in = abicheck_malloc(BIG);
    for (int i = 0; i < BIG; i++)
        big_out[i] = (char)(rank + i);
    MPI_Request reqs[N], idle, greq;
    MPI_Status sts[N];
    MPI_CHECK(MPI_Send_init(&pers_out, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &idle));
    MPI_CHECK(MPI_Recv_init(&pers_in, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &reqs[5]));
    MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &greq));
    MPI_CHECK(MPI_Grequest_complete(greq));

    MPI_CHECK(MPI_Irecv(&small_in, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Irecv(big_in, BIG, MPI_CHAR, left, 2, MPI_COMM_WORLD, &reqs[1]));
    MPI_CHECK(MPI_Start(&reqs[5]));
    MPI_CHECK(MPI_Isend(&small_out, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &reqs[2]));
    MPI_CHECK(MPI_Isend(big_out, BIG, MPI_CHAR, right, 2, MPI_COMM_WORLD, &reqs[3]));
    reqs[4] = MPI_REQUEST_NULL;
    reqs[6] = idle;
    reqs[7] = greq;
    /* The persistent receive's message comes from a plain send (buffered
       eagerly: a one-int message). */
    MPI_CHECK(MPI_Send(&pers_out, 1, MPI_INT, right, 4, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Waitall(N, reqs, sts));

    CHECK(small_in == left, "small receive got %d", small_in);
    CHECK(pers_in == 100 + left, "persistent receive got %d", pers_in);
    for (int i = 0; i < BIG; i++)
        CHECK(big_in[i] == (char)(left + i), "big receive byte %d", i);
    int count = -1;
    MPI_CHECK(MPI_Get_count(&sts[0], MPI_INT, &count));
    CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 1 && count == 1, "small receive status");
    MPI_CHECK(MPI_Get_count(&sts[1], MPI_CHAR, &count));
    CHECK(sts[1].MPI_SOURCE == left && sts[1].MPI_TAG == 2 && count == BIG, "big receive status");
    MPI_CHECK(MPI_Get_count(&sts[5], MPI_INT, &count));
    CHECK(sts[5].MPI_SOURCE == left && sts[5].MPI_TAG == 4 && count == 1,
          "persistent receive status");
    check_empty(&sts[4], "MPI_REQUEST_NULL");
    check_empty(&sts[6], "inactive persistent request");
    MPI_CHECK(MPI_Get_count(&sts[7], MPI_BYTE, &count));
    CHECK(sts[7].MPI_SOURCE == 77 && sts[7].MPI_TAG == 78 && count == 3,
          "generalized request status: source %d tag %d count %d", sts[7].MPI_SOURCE,
          sts[7].MPI_TAG, count);
    for (int i = 0; i < N; i++) {
        int persistent = i == 5 || i == 6;
        CHECK((reqs[i] == MPI_REQUEST_NULL) == !persistent, "Waitall left request %d %s", i,
              persistent ? "null" : "live");
    }
    /* The persistent requests are inactive again: a Wait returns at once. */
    MPI_CHECK(MPI_Wait(&reqs[5], &sts[0]));
    check_empty(&sts[0], "completed persistent request");
    MPI_CHECK(MPI_Request_free(&reqs[5]));
    MPI_CHECK(MPI_Request_free(&reqs[6]));
    free(big_out);
    free(big_in);
}

/* A truncated receive among good ones: MPI_ERR_IN_STATUS, per-request codes. */
static void waitall_error(void)
{
    int out[2] = {1, 2}, in_ok = -1, in_short = -1, in_ok2 = -1;
    MPI_Request reqs[4];
    MPI_Status sts[4];
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Irecv(&in_ok, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Irecv(&in_short, 1, MPI_INT, left, 12, MPI_COMM_WORLD, &reqs[1]));
    MPI_CHECK(MPI_Irecv(&in_ok2, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &reqs[2]));
    MPI_CHECK(MPI_Isend(out, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &reqs[3]));
    MPI_CHECK(MPI_Send(out, 2, MPI_INT, right, 12, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Send(out + 1, 1, MPI_INT, right, 13, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        sts[i].MPI_ERROR = -12345;
    int rc = MPI_Waitall(4, reqs, sts);
    CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_IN_STATUS,
          "Waitall with a truncated receive returned %d", rc);
    CHECK(sts[1].MPI_ERROR != MPI_SUCCESS && abicheck_class(sts[1].MPI_ERROR) == MPI_ERR_TRUNCATE,
          "truncated receive's error %d", sts[1].MPI_ERROR);
    CHECK(reqs[1] == MPI_REQUEST_NULL, "failed Waitall left the failed request");
    /* The others completed (MPI_SUCCESS; OxMPI completes every request) or
       are left pending (MPI_ERR_PENDING; MPICH stops at the error). */
    for (int i = 0; i < 4; i++) {
        if (i == 1)
            continue;
        int e = sts[i].MPI_ERROR;
        CHECK(e == MPI_SUCCESS || e == MPI_ERR_PENDING, "request %d's error %d", i, e);
        CHECK(!oxmpi || e == MPI_SUCCESS, "OxMPI left request %d pending", i);
        CHECK((reqs[i] == MPI_REQUEST_NULL) == (e == MPI_SUCCESS), "request %d: error %d, %s", i,
              e, reqs[i] == MPI_REQUEST_NULL ? "null" : "live");
        if (e == MPI_ERR_PENDING)
            MPI_CHECK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
    }
    /* What a truncated receive stores is the implementation's (OxMPI: what fits). */
    CHECK(in_ok == 1 && in_ok2 == 2 && (!oxmpi || in_short == 1), "received %d %d %d", in_ok,
          in_short, in_ok2);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Testall completes nothing while one request is pending. */
static void testall_all_or_none(void)
{
    int out = 5, in = -1, got = -1, flag = 1;
    MPI_Request reqs[3], sreq;
    MPI_Status sts[3];
    MPI_CHECK(MPI_Irecv(&got, 1, MPI_INT, left, 21, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, left, 22, MPI_COMM_WORLD, &reqs[1]));
    reqs[2] = MPI_REQUEST_NULL;
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, right, 21, MPI_COMM_WORLD, &sreq));
    MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    /* Tag 22 is sent only after the barrier: the receive is pending. */
    MPI_CHECK(MPI_Testall(3, reqs, &flag, sts));
    CHECK(!flag && reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
          "Testall with a pending receive: flag %d", flag);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, right, 22, MPI_COMM_WORLD));
    do
        MPI_CHECK(MPI_Testall(3, reqs, &flag, sts));
    while (!flag);
    CHECK(in == 5 && got == 5 && reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL,
          "Testall: got %d in %d", got, in);
    CHECK(sts[1].MPI_SOURCE == left && sts[1].MPI_TAG == 22, "Testall's receive status");
    check_empty(&sts[2], "Testall's null request");
}

/* Sends through Waitany, Testsome, Waitsome and the single calls (their
   receives posted first, so they finish whatever the implementation). */
static void finished_sends(void)
{
    int out[4] = {1, 2, 3, 4}, in[4], idx = -1, outcount = -1, flag = 0, indices[4];
    MPI_Request reqs[4], rreqs[3];
    MPI_Status st, sts[4];
    for (int i = 0; i < 3; i++)
        MPI_CHECK(MPI_Irecv(&in[i], 1, MPI_INT, left, 30 + i, MPI_COMM_WORLD, &rreqs[i]));
    for (int i = 0; i < 3; i++)
        MPI_CHECK(MPI_Isend(&out[i], 1, MPI_INT, right, 30 + i, MPI_COMM_WORLD, &reqs[i]));
    reqs[3] = MPI_REQUEST_NULL;
    MPI_CHECK(MPI_Waitany(4, reqs, &idx, &st));
    CHECK(idx >= 0 && idx < 3 && reqs[idx] == MPI_REQUEST_NULL, "Waitany index %d", idx);
    MPI_CHECK(MPI_Testsome(4, reqs, &outcount, indices, sts));
    CHECK(outcount >= 0 && outcount <= 2, "Testsome outcount %d", outcount);
    for (int k = 0; k < outcount; k++)
        CHECK(reqs[indices[k]] == MPI_REQUEST_NULL, "Testsome left request %d", indices[k]);
    if (outcount < 2) {
        MPI_CHECK(MPI_Waitsome(4, reqs, &outcount, indices, sts));
        CHECK(outcount >= 1, "Waitsome outcount %d", outcount);
    }
    MPI_CHECK(MPI_Waitall(4, reqs, statuses_ignore));
    MPI_CHECK(MPI_Waitany(4, reqs, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany over null requests gave %d", idx);
    MPI_CHECK(MPI_Testsome(4, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Testsome over null requests gave %d", outcount);
    MPI_CHECK(MPI_Testany(4, reqs, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany over null requests: flag %d index %d", flag, idx);
    MPI_CHECK(MPI_Waitall(3, rreqs, statuses_ignore));
    CHECK(in[0] == 1 && in[1] == 2 && in[2] == 3, "received %d %d %d", in[0], in[1], in[2]);

    /* A finished send: get_status, cancel (no effect), free; and wait. */
    MPI_Request r;
    MPI_CHECK(MPI_Isend(&out[3], 1, MPI_INT, right, 40, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Recv(&in[3], 1, MPI_INT, left, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    do
        MPI_CHECK(MPI_Request_get_status(r, &flag, &st));
    while (!flag);
    CHECK(r != MPI_REQUEST_NULL, "Request_get_status freed the request");
    MPI_CHECK(MPI_Cancel(&r));
    MPI_CHECK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "Wait left the request");
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "a finished send reads as cancelled");
    MPI_CHECK(MPI_Isend(&out[3], 1, MPI_INT, right, 41, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free left the request");
    MPI_CHECK(MPI_Recv(&in[3], 1, MPI_INT, left, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[3] == 4, "received %d", in[3]);
}

/* Sends that finished as they started beside other kinds of request. */
static void finished_send_mix(void)
{
    int out = 7, in = -1, pers_in = -1, flag = 1, idx = -1;
    MPI_Request reqs[5], greq;
    MPI_Status st, sts[5];
    /* Tag 51 is sent only after the barrier: the receive is pending. */
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, left, 51, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, right, 50, MPI_COMM_WORLD, &reqs[1]));
    reqs[2] = MPI_REQUEST_NULL;
    MPI_CHECK(MPI_Recv_init(&pers_in, 1, MPI_INT, left, 52, MPI_COMM_WORLD, &reqs[3]));
    MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &greq));
    reqs[4] = greq;
    MPI_CHECK(MPI_Recv(&pers_in, 1, MPI_INT, left, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(pers_in == 7, "received %d", pers_in);
    MPI_Request send = reqs[1];
    /* Testall completes nothing: the receive and the generalized request
       are pending; the finished send keeps its handle. */
    MPI_CHECK(MPI_Testall(5, reqs, &flag, sts));
    CHECK(!flag && reqs[1] == send && reqs[0] != MPI_REQUEST_NULL && reqs[4] == greq,
          "Testall with pending requests: flag %d", flag);
    /* The same with the finished send first. */
    MPI_Request two[2] = {reqs[1], reqs[0]};
    MPI_CHECK(MPI_Testall(2, two, &flag, sts));
    CHECK(!flag && two[0] == send && two[1] == reqs[0],
          "Testall with the finished send first: flag %d", flag);
    /* Request_get_status does not free it. */
    do
        MPI_CHECK(MPI_Request_get_status(reqs[1], &flag, &st));
    while (!flag);
    CHECK(reqs[1] == send, "Request_get_status changed the request");
    MPI_CHECK(MPI_Cancel(&reqs[1]));
    /* Testany finds the send (the only finished one). */
    do
        MPI_CHECK(MPI_Testany(5, reqs, &idx, &flag, &st));
    while (!flag);
    CHECK(idx == 1 && reqs[1] == MPI_REQUEST_NULL, "Testany gave index %d", idx);
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "a finished send reads as cancelled after Testany");
    /* Test on one: flag, null handle, not cancelled. */
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, right, 53, MPI_COMM_WORLD, &send));
    MPI_CHECK(MPI_Recv(&pers_in, 1, MPI_INT, left, 53, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    do
        MPI_CHECK(MPI_Test(&send, &flag, &st));
    while (!flag);
    CHECK(send == MPI_REQUEST_NULL, "Test left the request");
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "a finished send reads as cancelled after Test");
    /* MPI_Start of a send that is not persistent is an error (the handle
       stays). */
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, right, 54, MPI_COMM_WORLD, &send));
    MPI_CHECK(MPI_Recv(&pers_in, 1, MPI_INT, left, 54, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request before = send;
    int rc = MPI_Start(&send);
    CHECK(rc != MPI_SUCCESS && send == before, "MPI_Start of a finished send: %d", rc);
    if (oxmpi) {
        int class = -1;
        MPI_CHECK(MPI_Error_class(rc, &class));
        CHECK(class == MPI_ERR_REQUEST, "MPI_Start of a finished send: class %d", class);
    }
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Wait(&send, &st));
    CHECK(send == MPI_REQUEST_NULL, "Wait left the request");
    /* The rest: the persistent receive started, the generalized request
       completed, the receive's message sent; Waitall finishes them beside
       the null handles. */
    MPI_CHECK(MPI_Start(&reqs[3]));
    MPI_CHECK(MPI_Grequest_complete(greq));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, right, 51, MPI_COMM_WORLD, &send));
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, right, 52, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Waitall(5, reqs, sts));
    MPI_CHECK(MPI_Wait(&send, MPI_STATUS_IGNORE));
    CHECK(in == 7 && pers_in == 7, "Waitall received %d %d", in, pers_in);
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL &&
              reqs[2] == MPI_REQUEST_NULL && reqs[3] != MPI_REQUEST_NULL &&
              reqs[4] == MPI_REQUEST_NULL,
          "Waitall's handles");
    check_empty(&sts[1], "a send completed earlier");
    check_empty(&sts[2], "MPI_REQUEST_NULL");
    CHECK(sts[4].MPI_SOURCE == 77 && sts[4].MPI_TAG == 78, "generalized request's status");
    MPI_CHECK(MPI_Request_free(&reqs[3]));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    oxmpi = strncmp(lib, "OxMPI", 5) == 0;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    waitall_mix();
    waitall_error();
    testall_all_or_none();
    finished_sends();
    finished_send_mix();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("PASS completion\n");
    MPI_Finalize();
    return 0;
}
