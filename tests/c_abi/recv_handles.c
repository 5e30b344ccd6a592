/*
 * Non-blocking receives on MPI_COMM_WORLD and MPI_COMM_SELF through every
 * call that takes a request handle (OxMPI keeps such a receive's runtime
 * request in the handle itself until a call other than a wait or test
 * needs a table entry): one Waitall over late receives of WORLD, SELF and
 * a dup'ed communicator together; Request_get_status on a copy of a
 * pending handle, then Wait on the original (status intact); a truncated
 * receive's error through Waitall (MPI_ERR_IN_STATUS) and through Wait;
 * Waitany / Testsome / Testany / Waitsome over late receives; Cancel of a
 * pending receive (Test_cancelled); Request_free of a pending receive,
 * which still takes the first message (2+ ranks); on OxMPI, MPI_Grequest_complete
 * and MPI_Start of a receive's handle fail with MPI_ERR_REQUEST (MPICH
 * does not check the kind); 1,000 receives at once. Prints
 * "PASS recv_handles" from rank 0.
 */
#include "abicheck.h"

enum { N = 4, MANY = 1000 };

static int rank, size, left, right, oxmpi;

/* MPI_STATUSES_IGNORE through a variable: gcc 12 warns when it sees the
   constant (MPI_Status *)1 passed as an array parameter. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

/* Receives posted before the messages are sent (the neighbours send after
   a barrier), completed together in one Waitall. */
static void late_mixed_waitall(void)
{
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int in[3] = {-1, -1, -1}, out = rank * 10, self_out = 7 + rank;
    MPI_Request reqs[3];
    MPI_Status sts[3];
    MPI_CHECK(MPI_Irecv(&in[0], 1, MPI_INT, left, 1, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Irecv(&in[1], 1, MPI_INT, 0, 2, MPI_COMM_SELF, &reqs[1]));
    MPI_CHECK(MPI_Irecv(&in[2], 1, MPI_INT, left, 3, dup, &reqs[2]));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, right, 3, dup));
    MPI_CHECK(MPI_Send(&self_out, 1, MPI_INT, 0, 2, MPI_COMM_SELF));
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, right, 1, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Waitall(3, reqs, sts));
    CHECK(in[0] == left * 10 && in[1] == 7 + rank && in[2] == left * 10,
          "late receives got %d %d %d", in[0], in[1], in[2]);
    CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 1, "WORLD receive's status");
    CHECK(sts[1].MPI_SOURCE == 0 && sts[1].MPI_TAG == 2, "SELF receive's status");
    CHECK(sts[2].MPI_SOURCE == left && sts[2].MPI_TAG == 3, "dup receive's status");
    for (int i = 0; i < 3; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not null after Waitall", i);
    MPI_CHECK(MPI_Comm_free(&dup));
}

/* Request_get_status through a copy of the handle, then Wait on it. */
static void status_of_a_copy(void)
{
    int in = -1, out = 100 + rank, flag = 1;
    MPI_Request r, copy;
    MPI_Status st;
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &r));
    copy = r;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (size == 1) {
        MPI_CHECK(MPI_Request_get_status(copy, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "Request_get_status of an unmatched receive: flag %d", flag);
    }
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, right, 4, MPI_COMM_WORLD));
    do {
        MPI_CHECK(MPI_Request_get_status(copy, &flag, &st));
    } while (!flag);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 4, "Request_get_status's status");
    CHECK(r == copy, "Request_get_status changed the handle");
    MPI_CHECK(MPI_Wait(&r, &st));
    CHECK(in == 100 + left && st.MPI_SOURCE == left && st.MPI_TAG == 4,
          "Wait after Request_get_status: %d from %d tag %d", in, st.MPI_SOURCE, st.MPI_TAG);
    CHECK(r == MPI_REQUEST_NULL, "Wait left the handle set");
}

/* A receive of 1 int for a message of 2: the error class in the status. */
static void truncation(void)
{
    int in[2] = {-1, -1}, out[2] = {rank, rank}, count = -1;
    MPI_Request reqs[2];
    MPI_Status sts[2];
    MPI_CHECK(MPI_Irecv(&in[0], 1, MPI_INT, left, 5, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Irecv(&in[1], 1, MPI_INT, left, 6, MPI_COMM_WORLD, &reqs[1]));
    MPI_CHECK(MPI_Send(out, 2, MPI_INT, right, 5, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Send(out, 1, MPI_INT, right, 6, MPI_COMM_WORLD));
    int rc = MPI_Waitall(2, reqs, sts);
    CHECK(abicheck_class(rc) == MPI_ERR_IN_STATUS, "Waitall over a truncated receive returned %d", rc);
    CHECK(abicheck_class(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE,
          "the truncated receive's status error %d", sts[0].MPI_ERROR);
    CHECK(in[1] == left, "the other receive got %d", in[1]);

    MPI_Request r;
    MPI_Status st;
    MPI_CHECK(MPI_Irecv(&in[0], 1, MPI_INT, left, 7, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Send(out, 2, MPI_INT, right, 7, MPI_COMM_WORLD));
    rc = MPI_Wait(&r, &st);
    CHECK(abicheck_class(rc) == MPI_ERR_TRUNCATE, "Wait on a truncated receive returned %d", rc);
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "truncated receive's status");
}

/* Waitany, Testsome, Testany and Waitsome over receives that match late. */
static void any_and_some(void)
{
    int in[N], out[N];
    MPI_Request reqs[N];
    for (int i = 0; i < N; i++) {
        in[i] = -1;
        out[i] = 1000 * rank + i;
        MPI_CHECK(MPI_Irecv(&in[i], 1, MPI_INT, left, 10 + i, MPI_COMM_WORLD, &reqs[i]));
    }
    int flag = 1, indx = -2, outcount = -2, indices[N];
    MPI_Status sts[N];
    if (size == 1) {
        MPI_CHECK(MPI_Testany(N, reqs, &indx, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag && indx == MPI_UNDEFINED, "Testany before any send: flag %d index %d",
              flag, indx);
        MPI_CHECK(MPI_Testsome(N, reqs, &outcount, indices, sts));
        CHECK(outcount == 0, "Testsome before any send: %d", outcount);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    /* In reverse order: Waitany finds the last one first. */
    MPI_CHECK(MPI_Send(&out[N - 1], 1, MPI_INT, right, 10 + N - 1, MPI_COMM_WORLD));
    MPI_Status st;
    MPI_CHECK(MPI_Waitany(N, reqs, &indx, &st));
    CHECK(indx == N - 1 && st.MPI_TAG == 10 + N - 1 && in[N - 1] == 1000 * left + N - 1,
          "Waitany: index %d tag %d value %d", indx, st.MPI_TAG, in[N - 1]);
    /* Nobody sends the others before every Waitany returned. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N - 1; i++)
        MPI_CHECK(MPI_Send(&out[i], 1, MPI_INT, right, 10 + i, MPI_COMM_WORLD));
    int done = 1;
    while (done < N) {
        MPI_CHECK(MPI_Waitsome(N, reqs, &outcount, indices, sts));
        CHECK(outcount >= 1 && outcount != MPI_UNDEFINED, "Waitsome outcount %d", outcount);
        for (int k = 0; k < outcount; k++) {
            int i = indices[k];
            CHECK(sts[k].MPI_TAG == 10 + i && in[i] == 1000 * left + i,
                  "Waitsome: index %d tag %d value %d", i, sts[k].MPI_TAG, in[i]);
        }
        done += outcount;
    }
    MPI_CHECK(MPI_Testany(N, reqs, &indx, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && indx == MPI_UNDEFINED, "Testany after all: flag %d index %d", flag, indx);
}

/* Cancel of a receive nobody sends to; Request_free of a pending receive
   that still takes the first message of its tag. */
static void cancel_and_free(void)
{
    int in = -1, cancelled = 0;
    MPI_Request r;
    MPI_Status st;
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, left, 20, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Cancel(&r));
    MPI_CHECK(MPI_Wait(&r, &st));
    MPI_CHECK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled && r == MPI_REQUEST_NULL, "cancelled %d", cancelled);

    /* MPICH 4.0.2 hangs sending to itself into a freed receive. */
    if (size == 1)
        return;
    int freed_into = -1, second = -1, out[2] = {rank, -rank - 1};
    MPI_CHECK(MPI_Irecv(&freed_into, 1, MPI_INT, left, 21, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle set");
    MPI_CHECK(MPI_Irecv(&second, 1, MPI_INT, left, 21, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Send(&out[0], 1, MPI_INT, right, 21, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Send(&out[1], 1, MPI_INT, right, 21, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(second == -left - 1, "the receive after a freed one got %d", second);
    /* The freed receive finished before the later one matched (order). */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(freed_into == left, "the freed receive got %d", freed_into);
}

/* Calls for other kinds of requests refuse a receive's handle. */
static void wrong_kind(void)
{
    if (!oxmpi)
        return;
    int in = -1, out = rank;
    MPI_Request r;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &r));
    int rc = MPI_Grequest_complete(r);
    CHECK(abicheck_class(rc) == MPI_ERR_REQUEST, "Grequest_complete of a receive: %d", rc);
    rc = MPI_Start(&r);
    CHECK(abicheck_class(rc) == MPI_ERR_REQUEST, "Start of a receive: %d", rc);
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, right, 30, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(in == left, "the receive after the refused calls got %d", in);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Many receives in flight at once, completed by one Waitall. */
static void many(void)
{
    int *in = malloc(sizeof(int) * MANY), *out = malloc(sizeof(int) * MANY);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * MANY);
    for (int i = 0; i < MANY; i++) {
        in[i] = -1;
        out[i] = rank * MANY + i;
        MPI_CHECK(MPI_Irecv(&in[i], 1, MPI_INT, left, 40, MPI_COMM_WORLD, &reqs[i]));
    }
    for (int i = 0; i < MANY; i++)
        MPI_CHECK(MPI_Send(&out[i], 1, MPI_INT, right, 40, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Waitall(MANY, reqs, statuses_ignore));
    for (int i = 0; i < MANY; i++)
        CHECK(in[i] == left * MANY + i, "receive %d of many got %d", i, in[i]);
    free(in);
    free(out);
    free(reqs);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    oxmpi = strncmp(lib, "OxMPI", 5) == 0;
    late_mixed_waitall();
    status_of_a_copy();
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    truncation();
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    any_and_some();
    cancel_and_free();
    wrong_kind();
    many();
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("PASS recv_handles\n");
    return 0;
}
