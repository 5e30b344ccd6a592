/*
 * Derived datatypes in collectives. A matrix of R rows and C columns of
 * doubles (row-major); a column is MPI_Type_vector(R, 1, C, MPI_DOUBLE), and
 * the same resized to the extent of one double steps from column to column.
 *
 * - MPI_Bcast of one column (elements outside it untouched);
 * - MPI_Allreduce (MPI_SUM) of a column into a column, also MPI_IN_PLACE,
 *   and MPI_Iallreduce;
 * - MPI_Gather of each rank's vector into column `rank` of the root's
 *   matrix (resized column type), and of each rank's column into rows;
 * - MPI_Scatter of the root's columns (resized column type) to vectors;
 * - MPI_Allgatherv of columns, MPI_Alltoallw with a column type per peer;
 * - MPI_Reduce (MPI_MAX) over MPI_Type_contiguous(3, MPI_INT), and a user
 *   operation on it;
 * - a struct of an int and a double under MPI_SUM is MPI_ERR_OP.
 *
 * Built-in operations on derived types: MPI defines them for predefined
 * types only, and MPICH 4.0.2 rejects derived ones with MPI_ERR_OP. OxMPI
 * reduces a derived type made of one predefined type (the columns, the
 * triples) by its basic elements; under MPICH (told by
 * MPI_Get_library_version) those calls are checked to fail with MPI_ERR_OP.
 *
 * Prints "PASS coll_types" from rank 0.
 */
#include "abicheck.h"
#include <stddef.h>

#define R 5
#define C 7

static int rank, size;
/* Whether built-in operations accept derived types made of one basic type. */
static int derived_ops;

/* `call` either works (OxMPI) or is MPI_ERR_OP (MPICH); then `checks`. */
#define DERIVED_OP(call, checks)                                               \
    do {                                                                       \
        if (derived_ops) {                                                     \
            MPI_CHECK(call);                                                   \
            checks;                                                            \
        } else {                                                               \
            MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)); \
            EXPECT_CLASS(call, MPI_ERR_OP);                                    \
            MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)); \
        }                                                                      \
    } while (0)

static double *matrix(double fill)
{
    double *m = abicheck_malloc(sizeof(double) * R * C);
    for (int i = 0; i < R * C; i++)
        m[i] = fill;
    return m;
}

static MPI_Datatype column, column1; /* column1: extent of one double */

static void make_types(void)
{
    MPI_CHECK(MPI_Type_vector(R, 1, C, MPI_DOUBLE, &column));
    MPI_CHECK(MPI_Type_commit(&column));
    MPI_CHECK(MPI_Type_create_resized(column, 0, sizeof(double), &column1));
    MPI_CHECK(MPI_Type_commit(&column1));
}

static void bcast(void)
{
    double *m = matrix(-1.0);
    if (rank == 0)
        for (int r = 0; r < R; r++)
            m[r * C + 1] = 10.0 * r + 1;
    MPI_CHECK(MPI_Bcast(&m[1], 1, column, 0, MPI_COMM_WORLD));
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            double want = c == 1 ? 10.0 * r + 1 : -1.0;
            CHECK(m[r * C + c] == want, "bcast: m[%d][%d] = %g, expected %g", r, c,
                  m[r * C + c], want);
        }
    free(m);
}

static void allreduce(void)
{
    double *a = matrix(-1.0), *b = matrix(-2.0);
    for (int r = 0; r < R; r++)
        a[r * C + 2] = rank + r;
    /* Column 2 of a into column 3 of b. */
    double ranks = size * (size - 1) / 2.0;
    DERIVED_OP(MPI_Allreduce(&a[2], &b[3], 1, column, MPI_SUM, MPI_COMM_WORLD), {
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++) {
                double want = c == 3 ? ranks + (double)size * r : -2.0;
                CHECK(b[r * C + c] == want, "allreduce: b[%d][%d] = %g, expected %g", r, c,
                      b[r * C + c], want);
            }
    });
    /* In place, on column 2 of a. */
    DERIVED_OP(MPI_Allreduce(MPI_IN_PLACE, &a[2], 1, column, MPI_SUM, MPI_COMM_WORLD), {
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++) {
                double want = c == 2 ? ranks + (double)size * r : -1.0;
                CHECK(a[r * C + c] == want, "in-place allreduce: a[%d][%d] = %g, expected %g",
                      r, c, a[r * C + c], want);
            }
    });
    /* Non-blocking: two columns (count 2 of the resized type). */
    for (int r = 0; r < R; r++) {
        a[r * C + 4] = 1.0;
        a[r * C + 5] = r;
    }
    if (derived_ops) {
        MPI_Request req;
        MPI_CHECK(MPI_Iallreduce(&a[4], &b[4], 2, column1, MPI_SUM, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int r = 0; r < R; r++) {
            CHECK(b[r * C + 4] == size && b[r * C + 5] == (double)size * r,
                  "iallreduce row %d: %g %g", r, b[r * C + 4], b[r * C + 5]);
            CHECK(b[r * C + 6] == -2.0, "iallreduce wrote outside its columns");
        }
    }
    free(a);
    free(b);
}

/* Rank i's vector of R values goes to column i of the root's matrix of
 * `size` columns. */
static void gather_scatter(void)
{
    int cols = size;
    double *m = abicheck_malloc(sizeof(double) * R * cols);
    double v[R];
    MPI_Datatype col, col1;
    MPI_CHECK(MPI_Type_vector(R, 1, cols, MPI_DOUBLE, &col));
    MPI_CHECK(MPI_Type_create_resized(col, 0, sizeof(double), &col1));
    MPI_CHECK(MPI_Type_commit(&col1));
    for (int r = 0; r < R; r++)
        v[r] = 100.0 * rank + r;
    MPI_CHECK(MPI_Gather(v, R, MPI_DOUBLE, m, 1, col1, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < R; r++)
            for (int c = 0; c < cols; c++)
                CHECK(m[r * cols + c] == 100.0 * c + r, "gather: m[%d][%d] = %g", r, c,
                      m[r * cols + c]);

    /* And back: the root scatters column i to rank i (negated). */
    if (rank == 0)
        for (int i = 0; i < R * cols; i++)
            m[i] = -m[i];
    for (int r = 0; r < R; r++)
        v[r] = 0;
    MPI_CHECK(MPI_Scatter(m, 1, col1, v, R, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    for (int r = 0; r < R; r++)
        CHECK(v[r] == -(100.0 * rank + r), "scatter: v[%d] = %g", r, v[r]);

    /* Each rank's column 0 of a private matrix, received as rows. */
    double *own = matrix(0.0);
    for (int r = 0; r < R; r++)
        own[r * C] = rank + 0.5 * r;
    double *rows = abicheck_malloc(sizeof(double) * R * size);
    MPI_CHECK(MPI_Gather(own, 1, column, rows, R, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int i = 0; i < size; i++)
            for (int r = 0; r < R; r++)
                CHECK(rows[i * R + r] == i + 0.5 * r, "gather of columns: [%d][%d] = %g", i,
                      r, rows[i * R + r]);

    /* Allgatherv: rank i contributes its column to column i of everyone's
     * matrix (displacements in units of col1's extent, one double). */
    int *counts = abicheck_malloc(sizeof(int) * size), *displs = abicheck_malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    for (int i = 0; i < R * cols; i++)
        m[i] = -5.0;
    MPI_CHECK(MPI_Allgatherv(own, 1, column, m, counts, displs, col1, MPI_COMM_WORLD));
    for (int r = 0; r < R; r++)
        for (int c = 0; c < cols; c++)
            CHECK(m[r * cols + c] == c + 0.5 * r, "allgatherv: m[%d][%d] = %g", r, c,
                  m[r * cols + c]);

    /* Alltoallw: column j of my matrix goes to rank j as R doubles; from
     * rank i I receive into row i of a size x R matrix. */
    int *sc = abicheck_malloc(sizeof(int) * size), *sd = abicheck_malloc(sizeof(int) * size);
    int *rc = abicheck_malloc(sizeof(int) * size), *rd = abicheck_malloc(sizeof(int) * size);
    MPI_Datatype *stypes = abicheck_malloc(sizeof(MPI_Datatype) * size);
    MPI_Datatype *rtypes = abicheck_malloc(sizeof(MPI_Datatype) * size);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < cols; c++)
            m[r * cols + c] = 1000.0 * rank + 10.0 * c + r;
    for (int i = 0; i < size; i++) {
        sc[i] = 1;
        sd[i] = (int)(i * sizeof(double));
        stypes[i] = col1;
        rc[i] = R;
        rd[i] = (int)(i * R * sizeof(double));
        rtypes[i] = MPI_DOUBLE;
    }
    MPI_CHECK(MPI_Alltoallw(m, sc, sd, stypes, rows, rc, rd, rtypes, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        for (int r = 0; r < R; r++)
            CHECK(rows[i * R + r] == 1000.0 * i + 10.0 * rank + r, "alltoallw: [%d][%d] = %g",
                  i, r, rows[i * R + r]);

    free(stypes);
    free(rtypes);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(counts);
    free(displs);
    free(rows);
    free(own);
    MPI_CHECK(MPI_Type_free(&col));
    MPI_CHECK(MPI_Type_free(&col1));
    free(m);
}

static void add_triples(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    int *a = in, *b = inout;
    for (int i = 0; i < 3 * *len; i++)
        b[i] += a[i];
}

static void contiguous_types(void)
{
    MPI_Datatype triple;
    MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &triple));
    MPI_CHECK(MPI_Type_commit(&triple));
    int in[6], out[6] = {0};
    for (int i = 0; i < 6; i++)
        in[i] = (rank + i) % size;
    DERIVED_OP(MPI_Reduce(in, out, 2, triple, MPI_MAX, size - 1, MPI_COMM_WORLD), {
        if (rank == size - 1)
            for (int i = 0; i < 6; i++) /* some rank has (rank + i) % size == size - 1 */
                CHECK(out[i] == size - 1, "reduce max: out[%d] = %d, expected %d", i, out[i],
                      size - 1);
    });
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(add_triples, 1, &op));
    for (int i = 0; i < 6; i++)
        in[i] = i + 1;
    MPI_CHECK(MPI_Allreduce(in, out, 2, triple, op, MPI_COMM_WORLD));
    for (int i = 0; i < 6; i++)
        CHECK(out[i] == size * (i + 1), "user op: out[%d] = %d", i, out[i]);
    MPI_CHECK(MPI_Op_free(&op));
    MPI_CHECK(MPI_Type_free(&triple));
}

static void mixed_struct_is_not_reducible(void)
{
    struct pair {
        int i;
        double d;
    } x[2] = {{1, 1.0}, {2, 2.0}}, y[2];
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st;
    MPI_CHECK(MPI_Type_create_struct(2, lens, displs, types, &st));
    MPI_CHECK(MPI_Type_commit(&st));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Allreduce(x, y, 2, st, MPI_SUM, MPI_COMM_SELF), MPI_ERR_OP);
    /* Moving it is fine. */
    MPI_CHECK(MPI_Bcast(x, 2, st, 0, MPI_COMM_SELF));
    CHECK(x[1].i == 2 && x[1].d == 2.0, "bcast of a struct changed it");
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Type_free(&st));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_CHECK(MPI_Get_library_version(version, &len));
    derived_ops = strncmp(version, "MPICH", 5) != 0;
    make_types();
    bcast();
    allreduce();
    gather_scatter();
    contiguous_types();
    mixed_struct_is_not_reducible();
    MPI_CHECK(MPI_Type_free(&column));
    MPI_CHECK(MPI_Type_free(&column1));
    abicheck_pass("coll_types");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
