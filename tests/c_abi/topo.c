/*
 * Cartesian topologies through the C ABI: Dims_create, Cart_create (with
 * ranks left out of a smaller grid), Topo_test, Cartdim_get, Cart_get,
 * Cart_coords / Cart_rank round trips (periodic wrap-around), Cart_shift
 * with MPI_PROC_NULL at open edges, a halo exchange over a periodic 2-D
 * grid and an open 1-D line checked against the neighbours' values,
 * Cart_sub rows and columns, Cart_map, and errors.
 * Prints "PASS topo" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

static void dims_case(int nnodes, int ndims, const int *in, const int *want)
{
    int dims[4];
    memcpy(dims, in, ndims * sizeof(int));
    MPI_CHECK(MPI_Dims_create(nnodes, ndims, dims));
    for (int i = 0; i < ndims; i++)
        CHECK(dims[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes,
              ndims, i, dims[i], want[i]);
}

/* The value rank r exchanges: a function of its grid rank. */
static int halo_value(int r) { return 100 + r * 3; }

static void test_dims(void)
{
    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_case(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    dims_case(16, 2, (int[]){0, 0}, (int[]){4, 4});
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_case(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    dims_case(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims_case(8, 2, (int[]){2, 4}, (int[]){2, 4});
}

static void test_grid(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_CHECK(MPI_Dims_create(size, 2, dims));
    MPI_Comm grid;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
    CHECK(grid != MPI_COMM_NULL, "every rank belongs to a full grid");
    int status = -1, nd = -1;
    MPI_CHECK(MPI_Topo_test(grid, &status));
    CHECK(status == MPI_CART, "Topo_test(grid) = %d", status);
    MPI_CHECK(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED, "Topo_test(world) = %d", status);
    MPI_CHECK(MPI_Cartdim_get(grid, &nd));
    CHECK(nd == 2, "Cartdim_get = %d", nd);
    int gd[2], gp[2], gc[2], gr;
    MPI_CHECK(MPI_Comm_rank(grid, &gr));
    MPI_CHECK(MPI_Cart_get(grid, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 1, "Cart_get");
    CHECK(gc[0] == gr / dims[1] && gc[1] == gr % dims[1], "row-major coords (%d, %d) of %d",
          gc[0], gc[1], gr);
    /* Coordinates and ranks round trip; periodic dimensions wrap. */
    for (int r = 0; r < size; r++) {
        int c[2], back = -1;
        MPI_CHECK(MPI_Cart_coords(grid, r, 2, c));
        MPI_CHECK(MPI_Cart_rank(grid, c, &back));
        CHECK(back == r, "coords of %d -> rank %d", r, back);
        int wrapped[2] = {c[0] - dims[0], c[1] + 2 * dims[1]};
        MPI_CHECK(MPI_Cart_rank(grid, wrapped, &back));
        CHECK(back == r, "wrapped coords of %d -> rank %d", r, back);
    }
    /* Halo exchange: each rank sends its value to both neighbours in both
       dimensions and checks what arrives against the neighbours' ranks. */
    for (int dim = 0; dim < 2; dim++) {
        int src, dst;
        MPI_CHECK(MPI_Cart_shift(grid, dim, 1, &src, &dst));
        int c[2];
        memcpy(c, gc, sizeof c);
        c[dim] = (gc[dim] + 1) % dims[dim];
        int want_dst, want_src;
        MPI_CHECK(MPI_Cart_rank(grid, c, &want_dst));
        c[dim] = (gc[dim] - 1 + dims[dim]) % dims[dim];
        MPI_CHECK(MPI_Cart_rank(grid, c, &want_src));
        CHECK(src == want_src && dst == want_dst, "shift dim %d: (%d, %d), expected (%d, %d)",
              dim, src, dst, want_src, want_dst);
        int mine = halo_value(gr), from_src = -1, from_dst = -1;
        MPI_CHECK(MPI_Sendrecv(&mine, 1, MPI_INT, dst, 10 + dim, &from_src, 1, MPI_INT, src,
                               10 + dim, grid, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Sendrecv(&mine, 1, MPI_INT, src, 20 + dim, &from_dst, 1, MPI_INT, dst,
                               20 + dim, grid, MPI_STATUS_IGNORE));
        CHECK(from_src == halo_value(src) && from_dst == halo_value(dst),
              "halo dim %d: got %d and %d", dim, from_src, from_dst);
    }
    /* Rows and columns. */
    MPI_Comm row, col;
    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
    MPI_CHECK(MPI_Cart_sub(grid, keep_row, &row));
    MPI_CHECK(MPI_Cart_sub(grid, keep_col, &col));
    int rn, cn, rr, sum = 0;
    MPI_CHECK(MPI_Comm_size(row, &rn));
    MPI_CHECK(MPI_Comm_size(col, &cn));
    MPI_CHECK(MPI_Comm_rank(row, &rr));
    CHECK(rn == dims[1] && cn == dims[0] && rr == gc[1], "sub sizes %d %d rank %d", rn, cn, rr);
    MPI_CHECK(MPI_Cartdim_get(row, &nd));
    CHECK(nd == 1, "a row has %d dimensions", nd);
    MPI_CHECK(MPI_Allreduce(&gr, &sum, 1, MPI_INT, MPI_SUM, row));
    int want = 0;
    for (int k = 0; k < dims[1]; k++)
        want += gc[0] * dims[1] + k;
    CHECK(sum == want, "row sum %d, expected %d", sum, want);
    MPI_CHECK(MPI_Comm_free(&row));
    MPI_CHECK(MPI_Comm_free(&col));
    MPI_CHECK(MPI_Comm_free(&grid));
}

static void test_line(void)
{
    /* An open line of size - 1 ranks (the last rank is left out when size > 1). */
    int n = size > 1 ? size - 1 : 1, periods = 0, newrank = -2;
    MPI_CHECK(MPI_Cart_map(MPI_COMM_WORLD, 1, &n, &periods, &newrank));
    CHECK(newrank == (rank < n ? rank : MPI_UNDEFINED), "Cart_map gave %d", newrank);
    MPI_Comm line;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, &n, &periods, 0, &line));
    if (rank >= n) {
        CHECK(line == MPI_COMM_NULL, "rank %d is outside the line", rank);
        return;
    }
    int src, dst;
    MPI_CHECK(MPI_Cart_shift(line, 0, 1, &src, &dst));
    CHECK(src == (rank == 0 ? MPI_PROC_NULL : rank - 1), "line source %d", src);
    CHECK(dst == (rank == n - 1 ? MPI_PROC_NULL : rank + 1), "line dest %d", dst);
    int mine = halo_value(rank), left = -1, right = -1;
    MPI_CHECK(MPI_Sendrecv(&mine, 1, MPI_INT, dst, 1, &left, 1, MPI_INT, src, 1, line,
                           MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Sendrecv(&mine, 1, MPI_INT, src, 2, &right, 1, MPI_INT, dst, 2, line,
                           MPI_STATUS_IGNORE));
    CHECK(left == (src == MPI_PROC_NULL ? -1 : halo_value(src)), "left halo %d", left);
    CHECK(right == (dst == MPI_PROC_NULL ? -1 : halo_value(dst)), "right halo %d", right);
    int far_src, far_dst;
    MPI_CHECK(MPI_Cart_shift(line, 0, 2, &far_src, &far_dst));
    CHECK(far_dst == (rank + 2 < n ? rank + 2 : MPI_PROC_NULL), "shift by 2: %d", far_dst);
    /* Errors on the line. */
    MPI_CHECK(MPI_Comm_set_errhandler(line, MPI_ERRORS_RETURN));
    int c = n + 5, r;
    EXPECT_CLASS(MPI_Cart_rank(line, &c, &r), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Cart_coords(line, n, 1, &c), MPI_ERR_RANK);
    MPI_CHECK(MPI_Comm_free(&line));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    test_dims();
    test_grid();
    test_line();
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int c[2];
    EXPECT_CLASS(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c), MPI_ERR_TOPOLOGY);
    int dims[2] = {size + 1, 1}, periods[2] = {0, 0};
    MPI_Comm too_big;
    EXPECT_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &too_big), MPI_ERR_ARG);
    int d3[2] = {5, 0};
    EXPECT_CLASS(MPI_Dims_create(7, 2, d3), MPI_ERR_DIMS);
    EXPECT_CLASS(MPI_Dims_create(size, -1, d3), MPI_ERR_ARG);
    abicheck_pass("topo");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
