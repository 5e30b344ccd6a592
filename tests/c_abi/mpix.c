/*
 * "Which MPI is this": mpi.h says MPICH (MPICH, MPICH_VERSION,
 * MPICH_NUMVERSION, MPICH_CALC_VERSION), and the MPIX_ functions MPICH
 * 4.0.2 exports work: MPIX_Comm_agree (the AND of the flags),
 * MPIX_Comm_shrink (every rank: no process failed), MPIX_Comm_failure_ack
 * and _get_acked (an empty group), the GPU queries, MPIX_Delete_error_*,
 * and extended generalized requests whose poll function completes them
 * (MPIX_Grequest_start, MPIX_Grequest_class_create / _allocate; OxMPI
 * polls where MPICH may call the wait function).
 * MPIX_Comm_revoke says OxMPI does not support it.
 * Prints "PASS mpix" from rank 0.
 */
#include "abicheck.h"

#if !defined(MPICH) || !defined(MPICH_VERSION) || !defined(MPICH_NUMVERSION) ||            \
    !defined(MPICH_CALC_VERSION)
#error "mpi.h does not say it is MPICH (MPICH, MPICH_VERSION, MPICH_NUMVERSION)"
#endif
#if MPICH_NUMVERSION < MPICH_CALC_VERSION(4, 0, 0, MPICH_RELEASE_TYPE_PATCH, 0)
#error "MPICH_NUMVERSION is older than 4.0.0"
#endif

static int rank, size;

/* Completes its request on the third poll. */
static int polls;
static MPI_Request *polled;

static int poll_fn(void *extra, MPI_Status *status)
{
    (void)status;
    int *count = extra;
    if (++*count == 3)
        MPI_CHECK(MPI_Grequest_complete(*polled));
    polls++;
    return MPI_SUCCESS;
}

/* Polls each request until it completes (MPICH calls this to wait). */
static int wait_fn(int count, void **states, double timeout, MPI_Status *status)
{
    (void)timeout;
    for (int i = 0; i < count; i++)
        while (*(int *)states[i] < 3)
            poll_fn(states[i], status);
    return MPI_SUCCESS;
}

static int query_fn(void *extra, MPI_Status *status)
{
    (void)extra;
    MPI_CHECK(MPI_Status_set_elements(status, MPI_BYTE, 5));
    MPI_CHECK(MPI_Status_set_cancelled(status, 0));
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
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

static void grequests(void)
{
    MPI_Request req;
    int count = 0;
    polled = &req;
    MPI_CHECK(MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &count, &req));
    MPI_Status st;
    MPI_CHECK(MPI_Wait(&req, &st));
    int n = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(count == 3 && n == 5 && req == MPI_REQUEST_NULL, "poll count %d, status count %d",
          count, n);
    /* By tests, through a class. */
    MPIX_Grequest_class cls;
    MPI_CHECK(MPIX_Grequest_class_create(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &cls));
    count = 0;
    MPI_CHECK(MPIX_Grequest_class_allocate(cls, &count, &req));
    int flag = 0, tests = 0;
    while (!flag && tests < 100) {
        MPI_CHECK(MPI_Test(&req, &flag, &st));
        tests++;
    }
    CHECK(flag && count == 3, "class request: flag %d after %d tests, %d polls", flag, tests,
          count);
}

static void errors(void)
{
    int cls, code;
    MPI_CHECK(MPI_Add_error_class(&cls));
    MPI_CHECK(MPI_Add_error_code(cls, &code));
    MPI_CHECK(MPI_Add_error_string(code, "mpix test code"));
    MPI_CHECK(MPIX_Delete_error_string(code));
    MPI_CHECK(MPIX_Delete_error_code(code));
    MPI_CHECK(MPIX_Delete_error_class(cls));
}

/* No process has failed: agree is the AND, shrink keeps every rank. */
static void fault_tolerance(void)
{
    /* Agree: bit r cleared by rank r. */
    int flag = ~(1 << rank), want = ~0;
    for (int r = 0; r < size; r++)
        want &= ~(1 << r);
    MPI_CHECK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    CHECK(flag == want, "agree gave %#x, expected %#x", flag, want);

    MPI_Comm shrunk;
    MPI_CHECK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    int result;
    MPI_CHECK(MPI_Comm_compare(shrunk, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT, "shrink: compare %d", result);
    int sum = 0, one = 1;
    MPI_CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK(sum == size, "allreduce on the shrunk communicator: %d", sum);
    MPI_CHECK(MPI_Comm_free(&shrunk));

    MPI_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MPI_Group failed;
    MPI_CHECK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &failed));
    int gsize = -1;
    MPI_CHECK(MPI_Group_size(failed, &gsize));
    CHECK(gsize == 0, "%d failed processes acknowledged", gsize);
    if (failed != MPI_GROUP_EMPTY)
        MPI_CHECK(MPI_Group_free(&failed));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(strlen(MPICH_VERSION) > 0, "empty MPICH_VERSION");
    if (abicheck_is_oxmpi())
        CHECK(strcmp(MPICH_VERSION, "4.0.2") == 0 &&
                  MPICH_NUMVERSION == MPICH_CALC_VERSION(4, 0, 2, MPICH_RELEASE_TYPE_PATCH, 0),
              "MPICH_VERSION %s, MPICH_NUMVERSION %d", MPICH_VERSION, MPICH_NUMVERSION);

    /* MPICH 4.0.2's ch4 device asserts in the fault-tolerance calls. */
    if (abicheck_is_oxmpi())
        fault_tolerance();

    int yes = -1;
    MPI_CHECK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &yes));
    CHECK(yes == 0, "HIP support %d", yes);
    CHECK(MPIX_Query_hip_support() == 0 && MPIX_Query_ze_support() == 0, "HIP / ZE support");
    CHECK(MPIX_Query_cuda_support() == 0 || MPIX_Query_cuda_support() == 1, "CUDA support");

    errors();
    grequests();

    if (abicheck_is_oxmpi()) {
        MPI_Comm c;
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        int rc = MPIX_Comm_revoke(c);
        CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION,
              "MPIX_Comm_revoke returned %d", rc);
        char text[MPI_MAX_ERROR_STRING];
        int len;
        MPI_CHECK(MPI_Error_string(rc, text, &len));
        CHECK(strstr(text, "MPIX_Comm_revoke") != NULL, "revoke's error: %s", text);
        MPI_CHECK(MPI_Comm_free(&c));
    }
    abicheck_pass("mpix");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
