/* Built by CMake against the MPI that find_package(MPI) found. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (sum != size * (size - 1) / 2 || strstr(lib, "OxMPI") == NULL) {
        fprintf(stderr, "FAIL rank %d: sum %d, library %s\n", rank, sum, lib);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0)
        printf("PASS cmake\n");
    MPI_Finalize();
    return 0;
}
