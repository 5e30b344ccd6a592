/*
 * Error handlers and error checks beyond errors.c. Without arguments (prints "PASS errhandlers"):
 *
 * - MPI_ERRORS_RETURN: a null status where MPI needs one (MPI_STATUS_IGNORE
 *   is the way to ignore it) is MPI_ERR_ARG in MPI_Recv, MPI_Wait, MPI_Test,
 *   MPI_Waitall, MPI_Probe, MPI_Sendrecv and MPI_Get_count, and nothing
 *   happens (the message is still there afterwards); MPI_IN_PLACE where the
 *   call does not allow it is MPI_ERR_BUFFER (MPI_Allreduce, MPI_Alltoall and
 *   MPI_Reduce_scatter_block receive buffers, MPI_Gather's receive and
 *   MPI_Scatter's send buffer at the root, MPI_Reduce_local's input);
 * - classes, codes and strings the program adds: MPI_Add_error_class /
 *   code / string, then MPI_Error_class and MPI_Error_string give them back,
 *   and MPI_LASTUSEDCODE (the largest class) follows;
 * - the MPI-1 names MPI_Errhandler_create / set / get;
 * - a user handler is called with the communicator and the code, for an
 *   error of a call, for MPI_Comm_call_errhandler with a predefined class
 *   and with an added code; MPI_ERRORS_RETURN comes back through get.
 *
 * With an argument the program ends through a handler (the harness checks
 * the exit status and OxMPI's message); reaching the end prints "NOT FATAL":
 *
 *   fatal    MPI_ERRORS_ARE_FATAL set on a duplicate of MPI_COMM_WORLD:
 *            MPI_Bcast with root = size ends the job with MPI_ERR_ROOT (7);
 *   added    MPI_Comm_call_errhandler on MPI_COMM_WORLD (fatal by default)
 *            with a code of an added class whose string is "errhandlers added";
 *   abort    MPI_ERRORS_ABORT on MPI_COMM_WORLD, then MPI_Send to rank = size
 *            (MPI_ERR_RANK, 6). MPICH 4.0.2 does not know MPI_ERRORS_ABORT
 *            (MPI_Comm_set_errhandler asserts): OxMPI only.
 */
#include "abicheck.h"

static int rank, size;
/* MPI_STATUSES_IGNORE through a variable: gcc 12 warns when it sees the
 * constant (MPI_Status *)1 passed as an array. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;
static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void record(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_comm = *comm;
    handler_code = *code;
}

/* A null status is an error and leaves the message in place. */
static void null_statuses(void)
{
    int out = 42, in = 0, flag = 0, count = 0;
    MPI_Request r;
    MPI_Status st;

    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &r));
    EXPECT_CLASS(MPI_Probe(rank, 11, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Recv(&in, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK(in == 0, "a failed MPI_Recv received %d", in);
    MPI_CHECK(MPI_Recv(&in, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &st));
    CHECK(in == 42 && st.MPI_TAG == 11, "received %d tag %d", in, st.MPI_TAG);
    EXPECT_CLASS(MPI_Get_count(NULL, MPI_INT, &count), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Wait(&r, NULL), MPI_ERR_ARG);
    CHECK(r != MPI_REQUEST_NULL, "a failed MPI_Wait freed the request");
    EXPECT_CLASS(MPI_Test(&r, &flag, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Waitall(1, &r, NULL), MPI_ERR_ARG);
    CHECK(r != MPI_REQUEST_NULL, "a failed MPI_Waitall freed the request");
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the request");

    EXPECT_CLASS(MPI_Sendrecv(&out, 1, MPI_INT, rank, 12, &in, 1, MPI_INT, rank, 12,
                              MPI_COMM_WORLD, NULL),
                 MPI_ERR_ARG);
    /* MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are fine. */
    in = 0;
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, rank, 12, &in, 1, MPI_INT, rank, 12,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in == 42, "MPI_Sendrecv received %d", in);
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, rank, 13, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Recv(&in, 1, MPI_INT, rank, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Waitall(1, &r, statuses_ignore));
}

/* MPI_IN_PLACE where the call does not allow it: MPI_ERR_BUFFER (on
 * MPI_COMM_SELF, so that no other rank waits for a failed collective). */
static void in_place_misuse(void)
{
    int a[2] = {1, 2}, b[2] = {0, 0};
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Allreduce(MPI_IN_PLACE, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Alltoall(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_SELF),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Gather(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_SELF),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Scatter(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_SELF),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Reduce_scatter_block(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Reduce_local(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    /* Where MPI allows it, it works. */
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, a, 2, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(a[0] == 1 && a[1] == 2, "in-place allreduce on one rank gave %d %d", a[0], a[1]);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

static void expect_string(int code, const char *want)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = -1;
    MPI_CHECK(MPI_Error_string(code, text, &len));
    CHECK(len == (int)strlen(want) && strcmp(text, want) == 0,
          "MPI_Error_string(%d) is '%s' (%d), expected '%s'", code, text, len, want);
}

static int last_used_code(void)
{
    int *value = NULL, flag = 0;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &value, &flag));
    CHECK(flag && value != NULL, "MPI_LASTUSEDCODE is not set");
    return *value;
}

static void added_codes(void)
{
    int before = last_used_code();
    CHECK(before >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d < MPI_ERR_LASTCODE", before);

    int c1 = -1, c2 = -1, code1 = -1, code2 = -1, code3 = -1, cls = -1;
    MPI_CHECK(MPI_Add_error_class(&c1));
    MPI_CHECK(MPI_Add_error_class(&c2));
    CHECK(c1 > MPI_ERR_LASTCODE && c2 > MPI_ERR_LASTCODE && c1 != c2,
          "added classes %d, %d (MPI_ERR_LASTCODE %d)", c1, c2, MPI_ERR_LASTCODE);
    MPI_CHECK(MPI_Add_error_code(c1, &code1));
    MPI_CHECK(MPI_Add_error_code(c1, &code2));
    MPI_CHECK(MPI_Add_error_code(MPI_ERR_ARG, &code3));
    CHECK(code1 != code2 && code1 != c1 && code1 != c2 && code2 != c2 && code3 != MPI_ERR_ARG,
          "added codes %d %d %d of classes %d %d", code1, code2, code3, c1, c2);
    /* The largest class (MPI 4.0, 9.5; MPICH does not count codes). */
    int largest = c1 > c2 ? c1 : c2;
    CHECK(last_used_code() >= largest, "MPI_LASTUSEDCODE %d < %d", last_used_code(), largest);

    MPI_CHECK(MPI_Error_class(c1, &cls));
    CHECK(cls == c1, "class of added class %d is %d", c1, cls);
    MPI_CHECK(MPI_Error_class(code1, &cls));
    CHECK(cls == c1, "class of added code %d is %d, expected %d", code1, cls, c1);
    MPI_CHECK(MPI_Error_class(code2, &cls));
    CHECK(cls == c1, "class of added code %d is %d, expected %d", code2, cls, c1);
    MPI_CHECK(MPI_Error_class(code3, &cls));
    CHECK(cls == MPI_ERR_ARG, "class of code %d added to MPI_ERR_ARG is %d", code3, cls);

    MPI_CHECK(MPI_Add_error_string(c1, "errhandlers class one"));
    MPI_CHECK(MPI_Add_error_string(code1, "errhandlers code one"));
    /* (Not the string of code3: MPICH 4.0.2 answers with another code's.) */
    expect_string(c1, "errhandlers class one");
    expect_string(code1, "errhandlers code one");
    /* A string can be replaced. */
    MPI_CHECK(MPI_Add_error_string(code1, "errhandlers code one, again"));
    expect_string(code1, "errhandlers code one, again");

    /* A user handler sees the added code. */
    MPI_Comm dup;
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_CHECK(MPI_Comm_create_errhandler(record, &eh));
    MPI_CHECK(MPI_Comm_set_errhandler(dup, eh));
    handler_calls = 0;
    MPI_CHECK(MPI_Comm_call_errhandler(dup, code2));
    CHECK(handler_calls == 1 && handler_code == code2 && handler_comm == dup,
          "handler calls %d, code %d (expected %d)", handler_calls, handler_code, code2);
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Comm_free(&dup));
}

static void mpi1_names_and_user_handlers(void)
{
    MPI_Comm dup;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));

    /* ERRORS_RETURN (inherited from MPI_COMM_WORLD by the duplicate). */
    MPI_CHECK(MPI_Errhandler_get(dup, &got));
    CHECK(got == MPI_ERRORS_RETURN, "the duplicate's handler is %#x", (unsigned)got);
    MPI_CHECK(MPI_Errhandler_free(&got));

    MPI_CHECK(MPI_Errhandler_create(record, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL, "MPI_Errhandler_create gave MPI_ERRHANDLER_NULL");
    MPI_CHECK(MPI_Errhandler_set(dup, eh));
    MPI_CHECK(MPI_Errhandler_get(dup, &got));
    CHECK(got == eh, "MPI_Errhandler_get gave %#x, set %#x", (unsigned)got, (unsigned)eh);
    MPI_CHECK(MPI_Errhandler_free(&got));

    /* An error of a call: the handler gets the communicator and the code
     * the call returns. */
    int x = 0;
    handler_calls = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, dup);
    CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_RANK, "MPI_Send returned %d", rc);
    CHECK(handler_calls == 1 && handler_comm == dup && handler_code == rc,
          "handler calls %d, code %d (the call returned %d)", handler_calls, handler_code, rc);

    handler_calls = 0;
    MPI_CHECK(MPI_Comm_call_errhandler(dup, MPI_ERR_TAG));
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_TAG && handler_comm == dup,
          "MPI_Comm_call_errhandler: calls %d, code %d", handler_calls, handler_code);

    /* Back to ERRORS_RETURN: no more calls. */
    MPI_CHECK(MPI_Errhandler_set(dup, MPI_ERRORS_RETURN));
    handler_calls = 0;
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, size, 0, dup), MPI_ERR_RANK);
    MPI_CHECK(MPI_Comm_call_errhandler(dup, MPI_ERR_TAG));
    CHECK(handler_calls == 0, "the user handler ran after it was replaced");
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Comm_free(&dup));
}

static void end_through_handler(const char *how)
{
    int x = 0;
    if (strcmp(how, "fatal") == 0) {
        MPI_Comm dup;
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        MPI_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_ARE_FATAL));
        MPI_Bcast(&x, 1, MPI_INT, size, dup);
    } else if (strcmp(how, "added") == 0) {
        int cls, code;
        MPI_CHECK(MPI_Add_error_class(&cls));
        MPI_CHECK(MPI_Add_error_code(cls, &code));
        MPI_CHECK(MPI_Add_error_string(code, "errhandlers added"));
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    } else if (strcmp(how, "abort") == 0) {
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT));
        MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    } else {
        FAIL("unknown mode %s", how);
    }
    printf("NOT FATAL\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (argc > 1) {
        end_through_handler(argv[1]);
        MPI_Finalize();
        return 0;
    }
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    null_statuses();
    in_place_misuse();
    added_codes();
    mpi1_names_and_user_handlers();
    abicheck_pass("errhandlers");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
