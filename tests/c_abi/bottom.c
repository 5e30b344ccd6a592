/*
 * MPI_BOTTOM with datatypes of absolute addresses (MPI_Get_address and
 * MPI_Type_create_struct) as the buffer of collectives: Alltoallw and
 * Ialltoallw (both sides), Neighbor_alltoallw on a ring, Bcast, Gather
 * and Scatter (one side), Allreduce in place (OxMPI only); each result is compared with
 * the serial computation.
 * Prints "PASS bottom" from rank 0.
 */
#include "abicheck.h"

#define K 3

static int rank, size;

/* A datatype of `n` ints at the absolute address of `p`. */
static MPI_Datatype at(void *p, int n)
{
    MPI_Aint addr;
    MPI_Datatype t;
    MPI_CHECK(MPI_Get_address(p, &addr));
    MPI_CHECK(MPI_Type_create_struct(1, &n, &addr, (MPI_Datatype[]){MPI_INT}, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
}

static void alltoallw(int nonblocking)
{
    int(*out)[K] = abicheck_malloc(size * sizeof *out);
    int(*in)[K] = abicheck_malloc(size * sizeof *in);
    MPI_Datatype *st = abicheck_malloc(size * sizeof *st), *rt = abicheck_malloc(size * sizeof *rt);
    int *counts = abicheck_malloc(size * sizeof(int)), *displs = abicheck_malloc(size * sizeof(int));
    for (int j = 0; j < size; j++) {
        for (int k = 0; k < K; k++) {
            out[j][k] = 1000 * rank + 10 * j + k;
            in[j][k] = -1;
        }
        st[j] = at(out[j], K);
        rt[j] = at(in[j], K);
        counts[j] = 1;
        displs[j] = 0;
    }
    if (nonblocking) {
        MPI_Request req;
        MPI_CHECK(MPI_Ialltoallw(MPI_BOTTOM, counts, displs, st, MPI_BOTTOM, counts, displs, rt,
                                 MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Alltoallw(MPI_BOTTOM, counts, displs, st, MPI_BOTTOM, counts, displs, rt,
                                MPI_COMM_WORLD));
    }
    for (int j = 0; j < size; j++)
        for (int k = 0; k < K; k++)
            CHECK(in[j][k] == 1000 * j + 10 * rank + k, "alltoallw%s: in[%d][%d] = %d",
                  nonblocking ? " (non-blocking)" : "", j, k, in[j][k]);
    for (int j = 0; j < size; j++) {
        MPI_CHECK(MPI_Type_free(&st[j]));
        MPI_CHECK(MPI_Type_free(&rt[j]));
    }
    free(out);
    free(in);
    free(st);
    free(rt);
    free(counts);
    free(displs);
}

static void neighbor(void)
{
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int left, right;
    MPI_CHECK(MPI_Cart_shift(ring, 0, 1, &left, &right));
    /* Neighbor order: left, then right. */
    int out[2][K], in[2][K];
    MPI_Datatype st[2], rt[2];
    int counts[2] = {1, 1};
    MPI_Aint displs[2] = {0, 0};
    for (int j = 0; j < 2; j++) {
        for (int k = 0; k < K; k++) {
            out[j][k] = 100 * rank + 10 * j + k;
            in[j][k] = -1;
        }
        st[j] = at(out[j], K);
        rt[j] = at(in[j], K);
    }
    MPI_CHECK(MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, displs, st, MPI_BOTTOM, counts, displs,
                                     rt, ring));
    /* From the left neighbour: what it sent to its right (j = 1), and back
       (with fewer than 3 ranks both neighbours are one process, and which
       block meets which is not the point here). */
    for (int k = 0; k < K && size > 2; k++) {
        CHECK(in[0][k] == 100 * left + 10 + k, "neighbor from left: %d", in[0][k]);
        CHECK(in[1][k] == 100 * right + k, "neighbor from right: %d", in[1][k]);
    }
    for (int j = 0; j < 2; j++) {
        MPI_CHECK(MPI_Type_free(&st[j]));
        MPI_CHECK(MPI_Type_free(&rt[j]));
    }
    MPI_CHECK(MPI_Comm_free(&ring));
}

static void rooted(void)
{
    int root = size - 1;
    int v[K];
    for (int k = 0; k < K; k++)
        v[k] = rank == root ? 7 * k + 1 : -1;
    MPI_Datatype t = at(v, K);
    MPI_CHECK(MPI_Bcast(MPI_BOTTOM, 1, t, root, MPI_COMM_WORLD));
    for (int k = 0; k < K; k++)
        CHECK(v[k] == 7 * k + 1, "bcast v[%d] = %d", k, v[k]);
    /* Gather: every rank sends from MPI_BOTTOM; the root gathers ints. */
    for (int k = 0; k < K; k++)
        v[k] = 10 * rank + k;
    int *all = abicheck_malloc(size * K * sizeof(int));
    MPI_CHECK(MPI_Gather(MPI_BOTTOM, 1, t, all, K, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int i = 0; i < size * K; i++)
            CHECK(all[i] == 10 * (i / K) + i % K, "gather all[%d] = %d", i, all[i]);
    /* Scatter into MPI_BOTTOM. */
    for (int i = 0; i < size * K; i++)
        all[i] = 3 * i;
    MPI_CHECK(MPI_Scatter(all, K, MPI_INT, MPI_BOTTOM, 1, t, root, MPI_COMM_WORLD));
    for (int k = 0; k < K; k++)
        CHECK(v[k] == 3 * (rank * K + k), "scatter v[%d] = %d", k, v[k]);
    /* Allreduce in place on MPI_BOTTOM (MPICH 4.0.2 refuses built-in
       operations on derived types). */
    for (int k = 0; k < K; k++)
        v[k] = rank + k;
    if (abicheck_is_oxmpi()) {
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, t, MPI_SUM, MPI_COMM_WORLD));
        for (int k = 0; k < K; k++)
            CHECK(v[k] == size * (size - 1) / 2 + size * k, "allreduce v[%d] = %d", k, v[k]);
    }
    MPI_CHECK(MPI_Type_free(&t));
    free(all);
}

/* MPI_BOTTOM with a predefined type: the displacements (MPI_Aint in the
   neighborhood form) are the absolute addresses, as mpi4py's tests use it. */
static void neighbor_absolute_displacements(void)
{
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int left, right;
    MPI_CHECK(MPI_Cart_shift(ring, 0, 1, &left, &right));
    int out[2][K], in[2][K];
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    int counts[2] = {K, K};
    MPI_Aint sdispls[2], rdispls[2];
    for (int j = 0; j < 2; j++) {
        for (int k = 0; k < K; k++) {
            out[j][k] = 1000 * rank + 10 * j + k;
            in[j][k] = -1;
        }
        MPI_CHECK(MPI_Get_address(out[j], &sdispls[j]));
        MPI_CHECK(MPI_Get_address(in[j], &rdispls[j]));
    }
    MPI_CHECK(MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, sdispls, types, MPI_BOTTOM, counts,
                                     rdispls, types, ring));
    for (int k = 0; k < K && size > 2; k++) {
        CHECK(in[0][k] == 1000 * left + 10 + k, "absolute: from left: %d", in[0][k]);
        CHECK(in[1][k] == 1000 * right + k, "absolute: from right: %d", in[1][k]);
    }
    for (int j = 0; j < 2 && size <= 2; j++)
        for (int k = 0; k < K; k++)
            CHECK(in[j][k] >= 0 && in[j][k] % 10 == k, "absolute: block %d: %d", j, in[j][k]);
    MPI_CHECK(MPI_Comm_free(&ring));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    alltoallw(0);
    alltoallw(1);
    neighbor();
    neighbor_absolute_displacements();
    rooted();
    abicheck_pass("bottom");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
