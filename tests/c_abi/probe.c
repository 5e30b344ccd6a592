/*
 * Probes through the C ABI: Probe + Get_count to size a receive, Iprobe
 * polling, matched probes (Mprobe + Mrecv, Improbe + Imrecv + Wait), and
 * MPI_PROC_NULL giving MPI_MESSAGE_NO_PROC. Prints "PASS probe" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int to = (rank + 1) % size, from = (rank + size - 1) % size;

    for (int kind = 0; kind < 4; kind++) {
        /* Each rank sends (rank + kind + 1) doubles to the next rank. */
        int n = rank + kind + 1;
        double *out = abicheck_malloc(sizeof(double) * (size_t)n);
        for (int i = 0; i < n; i++)
            out[i] = rank * 1000 + kind * 100 + i;
        MPI_Request sreq;
        MPI_CHECK(MPI_Isend(out, n, MPI_DOUBLE, to, 20 + kind, MPI_COMM_WORLD, &sreq));

        MPI_Status st;
        MPI_Message msg = MPI_MESSAGE_NULL;
        int flag = 0;
        switch (kind) {
        case 0:
            MPI_CHECK(MPI_Probe(from, 20, MPI_COMM_WORLD, &st));
            break;
        case 1:
            while (!flag)
                MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &flag, &st));
            break;
        case 2:
            MPI_CHECK(MPI_Mprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
            CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "Mprobe message %d", msg);
            break;
        default:
            while (!flag)
                MPI_CHECK(MPI_Improbe(from, 23, MPI_COMM_WORLD, &flag, &msg, &st));
            break;
        }
        int count = -1;
        MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &count));
        int expect = from + kind + 1;
        CHECK(count == expect && st.MPI_SOURCE == from && st.MPI_TAG == 20 + kind,
              "kind %d: probe says %d from %d tag %d, expected %d from %d", kind, count,
              st.MPI_SOURCE, st.MPI_TAG, expect, from);
        double *in = abicheck_malloc(sizeof(double) * (size_t)count);
        if (kind < 2) {
            MPI_CHECK(MPI_Recv(in, count, MPI_DOUBLE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                               &st));
        } else if (kind == 2) {
            MPI_CHECK(MPI_Mrecv(in, count, MPI_DOUBLE, &msg, &st));
            CHECK(msg == MPI_MESSAGE_NULL, "Mrecv left the message handle set");
        } else {
            MPI_Request r;
            MPI_CHECK(MPI_Imrecv(in, count, MPI_DOUBLE, &msg, &r));
            CHECK(msg == MPI_MESSAGE_NULL, "Imrecv left the message handle set");
            MPI_CHECK(MPI_Wait(&r, &st));
        }
        for (int i = 0; i < count; i++)
            CHECK(in[i] == from * 1000 + kind * 100 + i, "kind %d: element %d is %f", kind, i,
                  in[i]);
        MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        free(in);
        free(out);
    }

    /* MPI_PROC_NULL */
    MPI_Status st;
    MPI_Message msg;
    MPI_CHECK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "probe of PROC_NULL: source %d", st.MPI_SOURCE);
    MPI_CHECK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe of PROC_NULL gave message %#x", (unsigned)msg);
    int x = 5;
    MPI_CHECK(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
    int count = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(x == 5 && msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && count == 0,
          "Mrecv of NO_PROC: x %d source %d count %d", x, st.MPI_SOURCE, count);

    abicheck_pass("probe");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
