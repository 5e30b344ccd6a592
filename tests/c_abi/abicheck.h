/*
 * Helpers for the self-checking C ABI test programs in this directory. The
 * same sources are built with OxMPI's mpicc and with MPICH's mpicc.mpich:
 * they use only the MPI standard's C interface.
 *
 * A wrong result is reported by FAIL(...): rank, source line and what was
 * wrong on stderr, then MPI_Abort with exit code 1, so a broken run can
 * never look like a passing one.
 */
#ifndef ABICHECK_H
#define ABICHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int abicheck_rank(void)
{
    int initialized = 0, finalized = 0, rank = -1;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, "FAIL %s:%d rank %d: ", __FILE__, __LINE__,            \
                abicheck_rank());                                              \
        fprintf(stderr, __VA_ARGS__);                                          \
        fprintf(stderr, "\n");                                                 \
        fflush(stderr);                                                        \
        MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        exit(1);                                                               \
    } while (0)

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond))                                                           \
            FAIL(__VA_ARGS__);                                                 \
    } while (0)

/* Fail unless an MPI call returned MPI_SUCCESS (with the error's text). */
#define MPI_CHECK(call)                                                        \
    do {                                                                       \
        int abicheck_rc_ = (call);                                             \
        if (abicheck_rc_ != MPI_SUCCESS) {                                     \
            char abicheck_msg_[MPI_MAX_ERROR_STRING];                          \
            int abicheck_len_ = 0;                                             \
            MPI_Error_string(abicheck_rc_, abicheck_msg_, &abicheck_len_);     \
            FAIL("%s returned %d: %s", #call, abicheck_rc_, abicheck_msg_);    \
        }                                                                      \
    } while (0)

/* The error class of an MPI return code. */
static inline int abicheck_class(int code)
{
    int cls = -1;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS)
        FAIL("MPI_Error_class(%d) failed", code);
    return cls;
}

/* Fail unless `call` returned an error of class `cls`. */
#define EXPECT_CLASS(call, cls)                                                \
    do {                                                                       \
        int abicheck_rc_ = (call);                                             \
        CHECK(abicheck_rc_ != MPI_SUCCESS && abicheck_class(abicheck_rc_) == (cls), \
              "%s returned %d (class %d), expected class %s (%d)", #call,      \
              abicheck_rc_, abicheck_rc_ == MPI_SUCCESS ? 0 : abicheck_class(abicheck_rc_), \
              #cls, (cls));                                                    \
    } while (0)

static inline void *abicheck_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        FAIL("malloc(%zu) failed", bytes);
    return p;
}

/* Whether the library running the program is OxMPI (for checks of what
   OxMPI does beyond MPICH 4.0.2, the reference). */
static inline int abicheck_is_oxmpi(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    return strncmp(lib, "OxMPI", 5) == 0;
}

/* Rank 0 prints the success line once everyone got there. */
static inline void abicheck_pass(const char *name)
{
    int rank;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 0) {
        printf("PASS %s\n", name);
        fflush(stdout);
    }
}

#endif
