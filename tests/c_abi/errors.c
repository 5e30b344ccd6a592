/*
 * Error handling through the C ABI: with MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD, invalid ranks, tags, counts, datatypes, communicators
 * (MPI_COMM_NULL and garbage) and requests return errors of the right class
 * (never a crash); truncation gives MPI_ERR_TRUNCATE; MPI_Error_class /
 * MPI_Error_string describe codes; MPI_Comm_get_errhandler; a user handler
 * from MPI_Comm_create_errhandler is called with the communicator and the
 * code (also by MPI_Comm_call_errhandler); MPI_Errhandler_free.
 * Prints "PASS errors" from rank 0.
 */
#include "abicheck.h"

static int rank, size;
static int handler_calls, handler_class;
static MPI_Comm handler_comm;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_comm = *comm;
    MPI_Error_class(*code, &handler_class);
}

static void returned_errors(void)
{
    int x = 1;
    MPI_Status st;
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Recv(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, (MPI_Comm)12345), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_rank(MPI_COMM_NULL, &x), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    MPI_Request bad = (MPI_Request)12345;
    EXPECT_CLASS(MPI_Wait(&bad, &st), MPI_ERR_REQUEST);

    /* Truncation: 8 ints into room for 4. */
    int out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[4] = {0};
    MPI_Request r;
    MPI_CHECK(MPI_Isend(out, 8, MPI_INT, rank, 70, MPI_COMM_WORLD, &r));
    int rc = MPI_Recv(in, 4, MPI_INT, rank, 70, MPI_COMM_WORLD, &st);
    CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_TRUNCATE,
          "truncated receive returned %d", rc);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_CHECK(MPI_Error_string(rc, text, &len));
    CHECK(len > 0 && (size_t)len == strlen(text), "error string '%s' (%d)", text, len);
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* Error classes are valid codes, with descriptions. */
    int cls = -1;
    MPI_CHECK(MPI_Error_class(MPI_ERR_RANK, &cls));
    CHECK(cls == MPI_ERR_RANK, "class of MPI_ERR_RANK is %d", cls);
    MPI_CHECK(MPI_Error_string(MPI_ERR_COMM, text, &len));
    CHECK(len > 0, "no text for MPI_ERR_COMM");
    MPI_CHECK(MPI_Error_class(MPI_SUCCESS, &cls));
    CHECK(cls == MPI_SUCCESS, "class of MPI_SUCCESS is %d", cls);
}

static void handlers(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_SELF is %#x", (unsigned)eh);
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "handler of MPI_COMM_WORLD is %#x", (unsigned)eh);
    MPI_CHECK(MPI_Errhandler_free(&eh));

    MPI_Errhandler mine;
    MPI_CHECK(MPI_Comm_create_errhandler(count_errors, &mine));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, mine));
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_SELF); /* rank 1 of 1 */
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_class == MPI_ERR_RANK &&
              handler_comm == MPI_COMM_SELF,
          "user handler: rc %d, %d calls, class %d", rc, handler_calls, handler_class);
    MPI_CHECK(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_class == MPI_ERR_OTHER, "call_errhandler: %d calls, class %d",
          handler_calls, handler_class);
    MPI_Errhandler got;
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &got));
    CHECK(got == mine, "get_errhandler gave %#x, set %#x", (unsigned)got, (unsigned)mine);
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_CHECK(MPI_Errhandler_free(&mine));
    CHECK(mine == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free left the handle set");
    /* Still attached: still called. */
    rc = MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    CHECK(rc != MPI_SUCCESS && handler_calls == 3, "freed but attached handler: %d calls",
          handler_calls);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_WORLD is %#x", (unsigned)eh);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    returned_errors();
    handlers();
    abicheck_pass("errors");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
