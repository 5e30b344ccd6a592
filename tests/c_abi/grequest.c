/*
 * Generalized requests (MPI 4.0, 13.2): MPI_Grequest_start /
 * MPI_Grequest_complete, and when MPI calls the program's callbacks:
 * query_fn when a wait or test completes the request (and at each
 * MPI_Request_get_status once complete), free_fn after it; MPI_Request_free
 * runs free_fn alone (in MPI_Grequest_complete when freed before it);
 * MPI_Cancel runs cancel_fn with whether it completed. The status is what
 * query_fn set (count, cancelled, source, tag). Wait, Test, Waitall,
 * Waitany, Waitsome, Testall, Testany, Testsome, mixed with a point-to-point
 * request; completion by another thread during MPI_Wait (when
 * MPI_THREAD_MULTIPLE is provided); and callback errors: returned by the
 * call that ran the callback, MPI_ERR_IN_STATUS with the code in the
 * status for the multiple completions. MPICH 4.0.2 reports a callback's
 * error as a new code of class MPI_ERR_OTHER; OxMPI (told by
 * MPI_Get_library_version) returns the callback's code itself, so the
 * callbacks fail with a code of class MPI_ERR_OTHER and the code is
 * compared exactly on OxMPI. Prints "PASS grequest" from rank 0.
 */
#include "abicheck.h"

#include <pthread.h>
#include <time.h>

static int oxmpi;
/* Counts callback calls, to order them. */
static int events;
/* An error code of class MPI_ERR_OTHER for the callbacks to return. */
static int user_code;

typedef struct {
    int id;
    int count;     /* elements (MPI_INT) query_fn reports */
    int cancelled; /* what query_fn reports */
    int queries, frees, cancels;
    int query_at, free_at; /* event numbers of the last calls */
    int cancel_complete;   /* `complete` of the last cancel_fn call */
    int query_rc, free_rc, cancel_rc;
} greq_t;

static int query_fn(void *extra, MPI_Status *status)
{
    greq_t *g = extra;
    g->queries++;
    g->query_at = ++events;
    CHECK(status != NULL && status != MPI_STATUS_IGNORE, "query_fn got no status to fill");
    MPI_CHECK(MPI_Status_set_elements(status, MPI_INT, g->count));
    MPI_CHECK(MPI_Status_set_cancelled(status, g->cancelled));
    status->MPI_SOURCE = g->id;
    status->MPI_TAG = 100 + g->id;
    return g->query_rc;
}

static int free_fn(void *extra)
{
    greq_t *g = extra;
    g->frees++;
    g->free_at = ++events;
    return g->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
    greq_t *g = extra;
    g->cancels++;
    g->cancel_complete = complete;
    if (!complete)
        g->cancelled = 1;
    return g->cancel_rc;
}

static MPI_Request start(greq_t *g, int id, int count)
{
    memset(g, 0, sizeof *g);
    g->id = id;
    g->count = count;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, g, &req));
    CHECK(req != MPI_REQUEST_NULL, "Grequest_start gave MPI_REQUEST_NULL");
    return req;
}

/* The status query_fn of `g` set. */
static void check_status(const MPI_Status *st, const greq_t *g, const char *what)
{
    int count = -1, cancelled = -1;
    MPI_CHECK(MPI_Get_count(st, MPI_INT, &count));
    MPI_CHECK(MPI_Test_cancelled(st, &cancelled));
    CHECK(st->MPI_SOURCE == g->id && st->MPI_TAG == 100 + g->id && count == g->count &&
              cancelled == g->cancelled,
          "%s: status source %d tag %d count %d cancelled %d, query_fn set %d %d %d %d", what,
          st->MPI_SOURCE, st->MPI_TAG, count, cancelled, g->id, 100 + g->id, g->count,
          g->cancelled);
}

/* query_fn then free_fn once: a wait or test completed `g` (MPI lets
   query_fn run more than once: MPICH 4.0.2's MPI_Testall also runs it for
   the complete requests when some are not). */
static void check_completed(const greq_t *g, const char *what)
{
    CHECK(g->queries >= 1 && g->frees == 1 && g->query_at < g->free_at,
          "%s: %d query_fn and %d free_fn calls (query at %d, free at %d)", what, g->queries,
          g->frees, g->query_at, g->free_at);
}

static void test_wait_and_status(void)
{
    greq_t g;
    MPI_Request req = start(&g, 3, 7);
    int flag = -1;
    MPI_Status st;
    MPI_CHECK(MPI_Test(&req, &flag, &st));
    CHECK(!flag && req != MPI_REQUEST_NULL, "Test completed a pending generalized request");
    MPI_CHECK(MPI_Request_get_status(req, &flag, &st));
    CHECK(!flag && g.queries == 0, "Request_get_status of a pending generalized request");
    MPI_CHECK(MPI_Grequest_complete(req));
    CHECK(g.queries == 0 && g.frees == 0, "Grequest_complete ran callbacks");
    MPI_CHECK(MPI_Request_get_status(req, &flag, &st));
    CHECK(flag && g.queries == 1 && g.frees == 0 && req != MPI_REQUEST_NULL,
          "Request_get_status of a complete one: flag %d, %d queries, %d frees", flag, g.queries,
          g.frees);
    check_status(&st, &g, "Request_get_status");
    g.queries = 0;
    MPI_CHECK(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "Wait left the request");
    check_completed(&g, "Wait");
    check_status(&st, &g, "Wait");

    /* Test completes it too; a status may be ignored (query_fn still runs). */
    req = start(&g, 4, 0);
    MPI_CHECK(MPI_Grequest_complete(req));
    MPI_CHECK(MPI_Test(&req, &flag, &st));
    CHECK(flag && req == MPI_REQUEST_NULL, "Test of a complete generalized request");
    check_completed(&g, "Test");
    check_status(&st, &g, "Test");
    req = start(&g, 5, 2);
    MPI_CHECK(MPI_Grequest_complete(req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_completed(&g, "Wait with MPI_STATUS_IGNORE");
}

static void test_free(void)
{
    /* Freed before it completes: free_fn runs in Grequest_complete (MPI
       4.0, 13.2: "free_fn is not called until after MPI_GREQUEST_COMPLETE";
       MPICH 4.0.2 runs it in MPI_Request_free, so checked on OxMPI only). */
    greq_t g;
    MPI_Request req = start(&g, 1, 1), copy = req;
    MPI_CHECK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL && (!oxmpi || g.frees == 0),
          "Request_free of a pending one: %d frees", g.frees);
    MPI_CHECK(MPI_Grequest_complete(copy));
    CHECK(g.frees == 1 && g.queries == 0, "Grequest_complete of a freed one: %d frees %d queries",
          g.frees, g.queries);
    /* Freed once complete: free_fn runs in Request_free, query_fn never. */
    req = start(&g, 2, 1);
    MPI_CHECK(MPI_Grequest_complete(req));
    MPI_CHECK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL && g.frees == 1 && g.queries == 0,
          "Request_free of a complete one: %d frees %d queries", g.frees, g.queries);
}

static void test_cancel(void)
{
    greq_t g;
    MPI_Request req = start(&g, 6, 0);
    MPI_CHECK(MPI_Cancel(&req));
    CHECK(g.cancels == 1 && g.cancel_complete == 0, "Cancel of a pending one: %d calls, complete %d",
          g.cancels, g.cancel_complete);
    MPI_CHECK(MPI_Grequest_complete(req));
    MPI_CHECK(MPI_Cancel(&req));
    CHECK(g.cancels == 2 && g.cancel_complete == 1, "Cancel of a complete one: %d calls, complete %d",
          g.cancels, g.cancel_complete);
    MPI_Status st;
    MPI_CHECK(MPI_Wait(&req, &st));
    check_status(&st, &g, "Wait of a cancelled one");
    check_completed(&g, "Wait of a cancelled one");
}

/* With a point-to-point request in the same arrays. */
static void test_multiple(void)
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size, out = rank, in = -1;
    greq_t g[3];
    MPI_Request reqs[4];
    MPI_Status sts[4];

    /* Waitall. */
    for (int i = 0; i < 3; i++)
        reqs[i] = start(&g[i], 10 + i, i + 1);
    MPI_CHECK(MPI_Isendrecv_replace(&in, 0, MPI_INT, right, 1, left, 1, MPI_COMM_WORLD, &reqs[3]));
    for (int i = 2; i >= 0; i--)
        MPI_CHECK(MPI_Grequest_complete(reqs[i]));
    MPI_CHECK(MPI_Waitall(4, reqs, sts));
    for (int i = 0; i < 3; i++) {
        CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
        check_completed(&g[i], "Waitall");
        check_status(&sts[i], &g[i], "Waitall");
    }

    /* Testall completes none until all are complete. */
    for (int i = 0; i < 3; i++)
        reqs[i] = start(&g[i], 20 + i, 2);
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &reqs[3]));
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, right, 2, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Grequest_complete(reqs[0]));
    MPI_CHECK(MPI_Grequest_complete(reqs[2]));
    int flag = -1;
    MPI_CHECK(MPI_Testall(4, reqs, &flag, sts));
    CHECK(!flag && g[0].frees == 0 && reqs[0] != MPI_REQUEST_NULL,
          "Testall with one pending: flag %d, %d frees", flag, g[0].frees);
    MPI_CHECK(MPI_Grequest_complete(reqs[1]));
    for (flag = 0; !flag;)
        MPI_CHECK(MPI_Testall(4, reqs, &flag, sts));
    for (int i = 0; i < 3; i++) {
        check_completed(&g[i], "Testall");
        check_status(&sts[i], &g[i], "Testall");
    }
    CHECK(in == left && sts[3].MPI_SOURCE == left, "Testall: received %d from %d", in,
          sts[3].MPI_SOURCE);

    /* Waitany / Testany take what is complete. */
    for (int i = 0; i < 3; i++)
        reqs[i] = start(&g[i], 30 + i, i);
    MPI_CHECK(MPI_Grequest_complete(reqs[1]));
    int idx = -1;
    MPI_Status st;
    MPI_CHECK(MPI_Waitany(3, reqs, &idx, &st));
    CHECK(idx == 1 && reqs[1] == MPI_REQUEST_NULL, "Waitany index %d", idx);
    check_completed(&g[1], "Waitany");
    check_status(&st, &g[1], "Waitany");
    MPI_CHECK(MPI_Testany(3, reqs, &idx, &flag, &st));
    CHECK(!flag && idx == MPI_UNDEFINED && g[0].queries == 0 && g[2].queries == 0,
          "Testany with none complete: flag %d index %d", flag, idx);
    MPI_CHECK(MPI_Grequest_complete(reqs[2]));
    MPI_CHECK(MPI_Testany(3, reqs, &idx, &flag, &st));
    CHECK(flag && idx == 2, "Testany: flag %d index %d", flag, idx);
    check_completed(&g[2], "Testany");
    check_status(&st, &g[2], "Testany");

    /* Testsome / Waitsome. */
    int outcount = -1, indices[3];
    MPI_CHECK(MPI_Testsome(3, reqs, &outcount, indices, sts));
    CHECK(outcount == 0, "Testsome with none complete: outcount %d", outcount);
    MPI_CHECK(MPI_Grequest_complete(reqs[0]));
    MPI_CHECK(MPI_Waitsome(3, reqs, &outcount, indices, sts));
    CHECK(outcount == 1 && indices[0] == 0, "Waitsome: outcount %d index %d", outcount,
          indices[0]);
    check_completed(&g[0], "Waitsome");
    check_status(&sts[0], &g[0], "Waitsome");
    MPI_CHECK(MPI_Waitsome(3, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome of null requests: outcount %d", outcount);
}

static void *complete_later(void *arg)
{
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    MPI_CHECK(MPI_Grequest_complete(*(MPI_Request *)arg));
    return NULL;
}

/* Another thread completes the request while MPI_Wait waits. */
static void test_thread(int provided)
{
    if (provided < MPI_THREAD_MULTIPLE)
        return;
    greq_t g;
    MPI_Request req = start(&g, 40, 5), copy = req;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, complete_later, &copy) == 0, "pthread_create failed");
    MPI_Status st;
    MPI_CHECK(MPI_Wait(&req, &st));
    CHECK(pthread_join(t, NULL) == 0, "pthread_join failed");
    check_completed(&g, "Wait for another thread");
    check_status(&st, &g, "Wait for another thread");
}

/* Fail unless `rc` is the callbacks' error (exactly, on OxMPI). */
static void expect_user_error(int rc, const char *what)
{
    CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_OTHER && (!oxmpi || rc == user_code),
          "%s returned %d (class %d), expected the callback's error %d", what, rc,
          rc == MPI_SUCCESS ? 0 : abicheck_class(rc), user_code);
}

static void test_errors(void)
{
    greq_t g[2];
    MPI_Status sts[2];
    /* query_fn fails: MPI_Wait returns its error. */
    MPI_Request req = start(&g[0], 50, 1);
    g[0].query_rc = user_code;
    MPI_CHECK(MPI_Grequest_complete(req));
    expect_user_error(MPI_Wait(&req, &sts[0]), "Wait with a failing query_fn");
    CHECK(req == MPI_REQUEST_NULL && g[0].frees == 1, "failed Wait: request %s, %d frees",
          req == MPI_REQUEST_NULL ? "null" : "live", g[0].frees);
    /* free_fn fails in Waitall: MPI_ERR_IN_STATUS, its code in the status. */
    MPI_Request reqs[2] = {start(&g[0], 51, 1), start(&g[1], 52, 2)};
    g[1].free_rc = user_code;
    MPI_CHECK(MPI_Grequest_complete(reqs[0]));
    MPI_CHECK(MPI_Grequest_complete(reqs[1]));
    EXPECT_CLASS(MPI_Waitall(2, reqs, sts), MPI_ERR_IN_STATUS);
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS, "Waitall: status 0 error %d", sts[0].MPI_ERROR);
    expect_user_error(sts[1].MPI_ERROR, "Waitall's status of a failing free_fn");
    check_completed(&g[0], "failed Waitall");
    check_completed(&g[1], "failed Waitall");
    /* Request_free returns free_fn's error; MPI_Cancel cancel_fn's. */
    req = start(&g[0], 53, 0);
    g[0].free_rc = user_code;
    g[0].cancel_rc = user_code;
    expect_user_error(MPI_Cancel(&req), "Cancel with a failing cancel_fn");
    MPI_CHECK(MPI_Grequest_complete(req));
    expect_user_error(MPI_Request_free(&req), "Request_free with a failing free_fn");
    CHECK(g[0].frees == 1, "failed Request_free: %d frees", g[0].frees);
    /* Argument errors. */
    if (oxmpi) {
        EXPECT_CLASS(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
        EXPECT_CLASS(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, NULL), MPI_ERR_ARG);
        int x;
        MPI_CHECK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
        EXPECT_CLASS(MPI_Grequest_complete(req), MPI_ERR_REQUEST);
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        req = start(&g[0], 54, 0);
        MPI_CHECK(MPI_Grequest_complete(req));
        EXPECT_CLASS(MPI_Grequest_complete(req), MPI_ERR_REQUEST);
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    oxmpi = strncmp(lib, "OxMPI", 5) == 0;
    test_wait_and_status();
    test_free();
    test_cancel();
    test_multiple();
    test_thread(provided);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Add_error_code(MPI_ERR_OTHER, &user_code));
    test_errors();
    abicheck_pass("grequest");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
