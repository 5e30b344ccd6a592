/*
 * Windows the program never frees: one of each flavor is used (a put to
 * the right neighbour under fence, checked) and left open at MPI_Finalize,
 * which must still end every process cleanly (across hosts: with each
 * window's service thread stopped, none left waiting). A window with a
 * passive-target lock released but not freed, too.
 * Prints "PASS rma_unfreed" from rank 0.
 */
#include "abicheck.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    MPI_Win wins[4];
    int *mem[3];
    MPI_CHECK(MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &mem[0], &wins[0]));
    mem[1] = abicheck_malloc(16 * sizeof(int));
    MPI_CHECK(MPI_Win_create(mem[1], 16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &wins[1]));
    MPI_CHECK(MPI_Alloc_mem(sizeof(int), MPI_INFO_NULL, &mem[2]));
    MPI_CHECK(MPI_Win_create(mem[2], sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &wins[2]));
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wins[3]));
    for (int w = 0; w < 3; w++) {
        *mem[w] = -1;
        int v = 1000 * w + rank;
        MPI_CHECK(MPI_Win_fence(0, wins[w]));
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, wins[w]));
        MPI_CHECK(MPI_Win_fence(0, wins[w]));
        CHECK(*mem[w] == 1000 * w + left, "window %d holds %d, expected %d", w, *mem[w],
              1000 * w + left);
    }
    /* A passive-target epoch, closed; the window stays. */
    int got = -1;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, wins[0]));
    MPI_CHECK(MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, wins[0]));
    MPI_CHECK(MPI_Win_unlock(right, wins[0]));
    CHECK(got == rank, "read back %d from rank %d, expected %d", got, right, rank);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    abicheck_pass("rma_unfreed");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
