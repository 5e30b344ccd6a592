/*
 * The completion calls with no requests (count 0) and NULL arrays succeed:
 * Waitsome / Testsome give outcount MPI_UNDEFINED, Waitany / Testany give
 * index MPI_UNDEFINED (Testany with flag true), Waitall / Testall (flag
 * true) return at once; Startall with 0 does nothing. Also with a count of
 * inactive (MPI_REQUEST_NULL) requests.
 * Prints "PASS zero_requests" from rank 0.
 */
#include "abicheck.h"

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int outcount = 5, indx = 5, flag = 0;
    MPI_CHECK(MPI_Waitsome(0, NULL, &outcount, NULL, NULL));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome outcount %d", outcount);
    outcount = 5;
    MPI_CHECK(MPI_Testsome(0, NULL, &outcount, NULL, NULL));
    CHECK(outcount == MPI_UNDEFINED, "Testsome outcount %d", outcount);
    MPI_CHECK(MPI_Waitany(0, NULL, &indx, MPI_STATUS_IGNORE));
    CHECK(indx == MPI_UNDEFINED, "Waitany index %d", indx);
    indx = 5;
    MPI_CHECK(MPI_Testany(0, NULL, &indx, &flag, MPI_STATUS_IGNORE));
    CHECK(indx == MPI_UNDEFINED && flag, "Testany index %d flag %d", indx, flag);
    MPI_CHECK(MPI_Waitall(0, NULL, NULL));
    flag = 0;
    MPI_CHECK(MPI_Testall(0, NULL, &flag, NULL));
    CHECK(flag, "Testall flag %d", flag);
    MPI_CHECK(MPI_Startall(0, NULL));

    /* Only null requests: nothing active. */
    MPI_Request nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int indices[3];
    MPI_Status sts[3];
    outcount = 5;
    MPI_CHECK(MPI_Waitsome(3, nulls, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome on nulls: outcount %d", outcount);
    outcount = 5;
    MPI_CHECK(MPI_Testsome(3, nulls, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Testsome on nulls: outcount %d", outcount);
    indx = 5;
    MPI_Status st;
    MPI_CHECK(MPI_Waitany(3, nulls, &indx, &st));
    CHECK(indx == MPI_UNDEFINED, "Waitany on nulls: index %d", indx);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "Waitany on nulls: empty status has source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    abicheck_pass("zero_requests");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
