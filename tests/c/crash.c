/*
 * A rank dying by a signal. After MPI_Init and a barrier, rank 1 (rank 0
 * when alone) restores the default SIGSEGV action (the MPI library may have
 * installed its own handler) and raises SIGSEGV; the others block in
 * MPI_Recv from it, then in a barrier. Expected: the launcher notices and
 * ends the job quickly with a non-zero status.
 *
 * Just before dying, the victim prints on stdout
 *   CRASH rank=R realtime_ns=T
 * (T from CLOCK_REALTIME) so a test can measure how long the launcher took.
 * A rank that gets past the blocking calls exits with 3.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
    int rank, size, buf = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int victim = size > 1 ? 1 : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        printf("CRASH rank=%d realtime_ns=%lld\n", rank,
               (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
        fflush(stdout);
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        fprintf(stderr, "crash: rank %d survived SIGSEGV\n", rank);
        return 3;
    }
    MPI_Recv(&buf, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    fprintf(stderr, "crash: rank %d got past a receive from dead rank %d\n", rank, victim);
    return 3;
}
