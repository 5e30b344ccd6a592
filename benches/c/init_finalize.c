/* The trivial MPI program timed by the `startup` runner: MPI_Init then
 * MPI_Finalize. Built at run time with `mpicc.mpich -O2`, so the table
 * shows each launcher's cost with a real MPI library (MPICH) on top. */
#include <mpi.h>

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
