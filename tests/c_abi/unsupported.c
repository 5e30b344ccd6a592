/*
 * OxMPI only (MPICH implements these functions): every function of the
 * MPICH ABI exists, and one OxMPI does not implement yet raises
 * MPI_ERR_UNSUPPORTED_OPERATION with a message naming it, through the
 * right error handler (object-less calls use MPI_COMM_WORLD's); and file
 * errors return (MPI_FILE_NULL's default handler is MPI_ERRORS_RETURN).
 * Prints "PASS unsupported" from rank 0.
 */
#include "abicheck.h"

static void expect_unsupported(int rc, const char *name)
{
    CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION,
          "%s returned %d", name, rc);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_CHECK(MPI_Error_string(rc, text, &len));
    CHECK(strstr(text, name) != NULL, "the error string '%s' does not name %s", text, name);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    /* MPI_COMM_WORLD is still fatal: file errors return anyway. */
    int rc = MPI_File_sync(MPI_FILE_NULL);
    CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_FILE, "MPI_File_sync returned %d", rc);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    expect_unsupported(MPIX_Comm_revoke(dup), "MPIX_Comm_revoke");
    MPI_CHECK(MPI_Comm_free(&dup));
    abicheck_pass("unsupported");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
