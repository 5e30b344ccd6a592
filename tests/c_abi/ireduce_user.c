/*
 * Reductions with a user operation on non-contiguous datatypes (a vector
 * of ints with gaps, and a resized struct of a double and an int): the
 * function gets the data in the type's layout, with the type's handle and
 * the element count; Ireduce, Reduce, Iallreduce, Allreduce and
 * Reduce_scatter_block give the serial result (the operation appends
 * digits: associative, not commutative, so ranks' digits come in rank
 * order), and the gaps of the result buffer keep their values.
 * Prints "PASS ireduce_user" from rank 0.
 */
#include "abicheck.h"

#define COUNT 4
#define K 2 /* ints per vector element, every other int: value, power of 10 */

static int rank, size;
static MPI_Datatype vec, pair;

/* (value, 10^digits): inout = in's digits then inout's. */
static void append_vec(void *in, void *inout, int *len, MPI_Datatype *t)
{
    if (*t != vec)
        FAIL("vector op called with datatype %#x", (unsigned)*t);
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        int *x = a + i * 2 * K, *y = b + i * 2 * K;
        y[0] = x[0] * y[2] + y[0];
        y[2] = x[2] * y[2];
    }
}

struct di {
    double d;
    int i;
    int pad[3]; /* the resized extent: 24 bytes */
};

static void append_pair(void *in, void *inout, int *len, MPI_Datatype *t)
{
    if (*t != pair)
        FAIL("pair op called with datatype %#x", (unsigned)*t);
    struct di *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        double scale = 1;
        for (int k = 0; k < b[i].i; k++)
            scale *= 10;
        b[i].d = a[i].d * scale + b[i].d;
        b[i].i = a[i].i + b[i].i;
    }
}

/* The serial result: digits 1..size, each rank's value r + 1 (+ i). */
static int digits(int plus)
{
    int v = 0;
    for (int r = 0; r < size; r++)
        v = v * 10 + (r + 1 + plus) % 10;
    return v;
}

static int pow10i(int n)
{
    int p = 1;
    while (n-- > 0)
        p *= 10;
    return p;
}

static void check_vec(const int *buf, const char *what)
{
    for (int j = 0; j < COUNT * 2 * K; j++) {
        int e = j / (2 * K), at = j % (2 * K);
        int want = at % 2 ? -7 : at == 0 ? digits(e) : pow10i(size);
        CHECK(buf[j] == want, "%s: int %d is %d, expected %d", what, j, buf[j], want);
    }
}

static void vectors(MPI_Op op)
{
    int in[COUNT * 2 * K], out[COUNT * 2 * K];
    /* Rank r's digit in element e: (r + 1 + e) mod 10. */
    for (int j = 0; j < COUNT * 2 * K; j++) {
        int e = j / (2 * K), at = j % (2 * K);
        in[j] = at % 2 ? -7 : at == 0 ? (rank + 1 + e) % 10 : 10;
        out[j] = at % 2 ? -7 : -1;
    }
    MPI_Request req;
    MPI_CHECK(MPI_Ireduce(in, out, COUNT, vec, op, 0, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank == 0)
        check_vec(out, "ireduce");
    MPI_CHECK(MPI_Reduce(in, out, COUNT, vec, op, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1)
        check_vec(out, "reduce");
    MPI_CHECK(MPI_Iallreduce(in, out, COUNT, vec, op, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_vec(out, "iallreduce");
    MPI_CHECK(MPI_Allreduce(in, out, COUNT, vec, op, MPI_COMM_WORLD));
    check_vec(out, "allreduce");
}

static void pairs(MPI_Op op)
{
    struct di in[COUNT], out[COUNT];
    for (int i = 0; i < COUNT; i++) {
        in[i].d = (rank + 1 + i) % 10;
        in[i].i = 1;
        out[i].d = -1;
        out[i].i = -1;
        in[i].pad[0] = out[i].pad[0] = -9;
    }
    MPI_Request req;
    MPI_CHECK(MPI_Ireduce(in, out, COUNT, pair, op, 0, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank == 0)
        for (int i = 0; i < COUNT; i++)
            CHECK(out[i].d == digits(i) && out[i].i == size && out[i].pad[0] == -9,
                  "pair ireduce [%d] = (%g, %d, pad %d)", i, out[i].d, out[i].i, out[i].pad[0]);
    /* Reduce_scatter_block: one pair each (MPICH 4.0.2 gets this one wrong
       for a non-commutative operation on this type). */
    struct di *all = abicheck_malloc(size * sizeof *all);
    for (int r = 0; r < size; r++) {
        all[r].d = (rank + 1 + r) % 10;
        all[r].i = 1;
    }
    struct di mine = {-1, -1, {-9, -9, -9}};
    if (abicheck_is_oxmpi()) {
        MPI_CHECK(MPI_Reduce_scatter_block(all, &mine, 1, pair, op, MPI_COMM_WORLD));
        CHECK(mine.d == digits(rank) && mine.i == size && mine.pad[0] == -9,
              "reduce_scatter_block (%g, %d)", mine.d, mine.i);
    }
    free(all);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector(K, 1, 2, MPI_INT, &v));
    /* Element extent 2K ints: the last gap belongs to the element. */
    MPI_CHECK(MPI_Type_create_resized(v, 0, 2 * K * sizeof(int), &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    MPI_Datatype s;
    MPI_CHECK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                                     (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &s));
    MPI_CHECK(MPI_Type_create_resized(s, 0, sizeof(struct di), &pair));
    MPI_CHECK(MPI_Type_commit(&pair));
    MPI_Op op_vec, op_pair;
    MPI_CHECK(MPI_Op_create(append_vec, 0, &op_vec));
    MPI_CHECK(MPI_Op_create(append_pair, 0, &op_pair));
    vectors(op_vec);
    pairs(op_pair);
    MPI_CHECK(MPI_Op_free(&op_vec));
    MPI_CHECK(MPI_Op_free(&op_pair));
    MPI_Datatype types[4] = {v, vec, s, pair};
    for (int i = 0; i < 4; i++)
        MPI_CHECK(MPI_Type_free(&types[i]));
    abicheck_pass("ireduce_user");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
