/*
 * Shared helpers for the self-checking MPI test programs in this directory.
 *
 * Every program reports a wrong result with FAIL(...), which prints the rank,
 * the source line and a description on stderr and then calls MPI_Abort with
 * exit code 1, so a broken run can never look like a passing one.
 */
#ifndef OXCHECK_H
#define OXCHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Exit code used by MPI_Abort when a check fails. */
#define OXCHECK_FAIL_CODE 1

static inline int oxcheck_world_rank(void)
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
                oxcheck_world_rank());                                         \
        fprintf(stderr, __VA_ARGS__);                                          \
        fprintf(stderr, "\n");                                                 \
        fflush(stderr);                                                        \
        MPI_Abort(MPI_COMM_WORLD, OXCHECK_FAIL_CODE);                          \
        exit(OXCHECK_FAIL_CODE);                                               \
    } while (0)

/* Fail unless `cond` holds; the message says what was expected. */
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond))                                                           \
            FAIL(__VA_ARGS__);                                                 \
    } while (0)

/* Fail unless an MPI call returned MPI_SUCCESS. */
#define MPI_CHECK(call)                                                        \
    do {                                                                       \
        int oxcheck_rc_ = (call);                                              \
        if (oxcheck_rc_ != MPI_SUCCESS)                                        \
            FAIL("%s returned %d", #call, oxcheck_rc_);                        \
    } while (0)

static inline void *oxcheck_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        FAIL("malloc(%zu) failed", bytes);
    return p;
}

/* Rank 0 prints the success line once everyone got there. */
static inline void oxcheck_pass(const char *name)
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
