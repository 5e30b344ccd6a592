/*
 * Datatypes with no data (a contiguous of 0 ints, and one resized to an
 * extent of 8) in every kind of call: point-to-point, the collectives
 * (rooted, all-to-all, v and w variants, reductions with a user
 * operation, non-blocking),
 * pack / unpack and the status queries. Nothing moves, nothing fails.
 * Prints "PASS zero_size" from rank 0.
 */
#include "abicheck.h"

static int rank, size;
static int op_calls;

static void count_calls(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)t;
    op_calls++;
}

static void with_type(MPI_Datatype t, const char *what)
{
    int buf[64], buf2[64];
    for (int i = 0; i < 64; i++)
        buf[i] = buf2[i] = 1000 + i;
    int *counts = abicheck_malloc(size * sizeof(int));
    int *displs = abicheck_malloc(size * sizeof(int));
    MPI_Datatype *types = abicheck_malloc(size * sizeof(MPI_Datatype));
    for (int i = 0; i < size; i++) {
        counts[i] = 3;
        displs[i] = 0;
        types[i] = t;
    }
    MPI_Request req;
    MPI_Status st;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_CHECK(MPI_Sendrecv(buf, 5, t, right, 1, buf2, 5, t, left, 1, MPI_COMM_WORLD, &st));
    int n = -1;
    MPI_CHECK(MPI_Get_count(&st, t, &n));
    CHECK(n == 0, "%s: Get_count %d", what, n);
    MPI_CHECK(MPI_Get_elements(&st, t, &n));
    CHECK(n == 0, "%s: Get_elements %d", what, n);
    MPI_CHECK(MPI_Isend(buf, 2, t, right, 2, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Recv(buf2, 2, t, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Bcast(buf, 4, t, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Ibcast(buf, 4, t, size - 1, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Gather(buf, 3, t, buf2, 3, t, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Scatter(buf, 3, t, buf2, 3, t, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Allgather(buf, 3, t, buf2, 3, t, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Allgatherv(buf, 3, t, buf2, counts, displs, t, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Alltoall(buf, 3, t, buf2, 3, t, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Alltoallv(buf, counts, displs, t, buf2, counts, displs, t, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Alltoallw(buf, counts, displs, types, buf2, counts, displs, types,
                            MPI_COMM_WORLD));
    MPI_CHECK(MPI_Ialltoall(buf, 3, t, buf2, 3, t, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(count_calls, 1, &op));
    MPI_CHECK(MPI_Allreduce(buf, buf2, 3, t, op, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(buf, buf2, 3, t, op, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Scan(buf, buf2, 3, t, op, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce_scatter_block(buf, buf2, 1, t, op, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Iallreduce(buf, buf2, 3, t, op, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Op_free(&op));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 64; i++)
        CHECK(buf[i] == 1000 + i && buf2[i] == 1000 + i, "%s: byte %d changed", what, i);
    /* Pack and unpack of no data. */
    int psize = -1, pos = 0;
    MPI_CHECK(MPI_Pack_size(7, t, MPI_COMM_WORLD, &psize));
    CHECK(psize >= 0, "%s: pack size %d", what, psize);
    char packed[64];
    MPI_CHECK(MPI_Pack(buf, 7, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 0, "%s: packed %d bytes", what, pos);
    pos = 0;
    /* MPICH 4.0.2 divides by zero here. */
    if (abicheck_is_oxmpi()) {
        MPI_CHECK(MPI_Unpack(packed, sizeof packed, &pos, buf2, 7, t, MPI_COMM_WORLD));
        CHECK(pos == 0, "%s: unpacked %d bytes", what, pos);
    }
    free(counts);
    free(displs);
    free(types);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Datatype empty, wide;
    MPI_CHECK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPI_CHECK(MPI_Type_commit(&empty));
    MPI_CHECK(MPI_Type_create_resized(empty, 0, 8, &wide));
    MPI_CHECK(MPI_Type_commit(&wide));
    MPI_Count sz = -1, lb = -1, ext = -1;
    MPI_CHECK(MPI_Type_size_c(wide, &sz));
    MPI_CHECK(MPI_Type_get_extent_c(wide, &lb, &ext));
    CHECK(sz == 0 && ext == 8, "resized empty type: size %lld extent %lld", (long long)sz,
          (long long)ext);
    with_type(empty, "contiguous(0)");
    with_type(wide, "resized empty");
    MPI_CHECK(MPI_Type_free(&empty));
    MPI_CHECK(MPI_Type_free(&wide));
    abicheck_pass("zero_size");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
