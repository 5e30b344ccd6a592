/*
 * Built-in reductions on the long double types compute in long double:
 * MPI_LONG_DOUBLE (SUM, PROD, MAX, MIN), MPI_C_LONG_DOUBLE_COMPLEX (SUM,
 * PROD) and MPI_LONG_DOUBLE_INT (MINLOC, MAXLOC), through Allreduce,
 * Reduce, Iallreduce, Scan and Reduce_local, and a contiguous derived type
 * of long doubles. The values differ below double's precision and every
 * partial result is exact in long double, so the result has the same bits
 * as the serial computation in any order (and would differ in double).
 * Undefined combinations (MPI_BAND on MPI_LONG_DOUBLE) are MPI_ERR_OP.
 * Prints "PASS long_double" from rank 0.
 */
#include "abicheck.h"
#include <complex.h>
#include <math.h>

#define N 5

static int rank, size;

/* 2^-55: below double's precision next to 1, and sums of up to 8 values
   below 64 stay exact in long double's 64-bit mantissa. */
static long double tiny(void)
{
    return ldexpl(1.0L, -55);
}

/* Rank r's i-th value: 1 on rank 0, r * 2^-55 (+ i) elsewhere. */
static long double value(int r, int i)
{
    return (r == 0 ? 1.0L : (long double)r * tiny()) + (long double)i;
}

static int same_bits(long double a, long double b)
{
    /* The 80 bits that carry the value (the rest is padding). */
    return memcmp(&a, &b, 10) == 0;
}

static void check_real(const long double *got, const char *what, int op_sum)
{
    for (int i = 0; i < N; i++) {
        long double want = op_sum ? 0.0L : value(size - 1, i);
        if (op_sum)
            for (int r = 0; r < size; r++)
                want += value(r, i);
        CHECK(same_bits(got[i], want), "%s[%d] = %.25Lg, expected %.25Lg", what, i, got[i],
              want);
    }
}

static void sums(void)
{
    long double in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = value(rank, i);
    MPI_CHECK(MPI_Allreduce(in, out, N, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    check_real(out, "allreduce sum", 1);
    /* In double the small terms would vanish next to 1. */
    if (size > 1) {
        double d = 1.0;
        for (int r = 1; r < size; r++)
            d += (double)value(r, 0);
        CHECK((long double)d != out[0], "the sum %.25Lg is what double gives", out[0]);
    }
    MPI_CHECK(MPI_Allreduce(in, out, N, MPI_LONG_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    /* Max: rank 0's 1 + i is the largest. */
    for (int i = 0; i < N; i++)
        CHECK(same_bits(out[i], value(0, i)), "max[%d] = %.25Lg", i, out[i]);
    MPI_CHECK(MPI_Allreduce(in, out, N, MPI_LONG_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        long double want = size == 1 ? value(0, i) : value(1, i);
        CHECK(same_bits(out[i], want), "min[%d] = %.25Lg, expected %.25Lg", i, out[i], want);
    }
    /* Product: ranks 0 and 1 give 1 + 2^-30, the others 2. */
    long double p = rank < 2 ? 1.0L + ldexpl(1.0L, -30) : 2.0L, prod = 0;
    MPI_CHECK(MPI_Allreduce(&p, &prod, 1, MPI_LONG_DOUBLE, MPI_PROD, MPI_COMM_WORLD));
    long double want = 1.0L;
    for (int r = 0; r < size; r++)
        want *= r < 2 ? 1.0L + ldexpl(1.0L, -30) : 2.0L;
    CHECK(same_bits(prod, want), "prod %.25Lg, expected %.25Lg", prod, want);
    /* Reduce to the last rank, non-blocking, scan. */
    for (int i = 0; i < N; i++)
        out[i] = -1;
    MPI_CHECK(MPI_Reduce(in, out, N, MPI_LONG_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1)
        check_real(out, "reduce sum", 1);
    MPI_Request req;
    MPI_CHECK(MPI_Iallreduce(in, out, N, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_real(out, "iallreduce sum", 1);
    MPI_CHECK(MPI_Scan(in, out, N, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        long double w = 0;
        for (int r = 0; r <= rank; r++)
            w += value(r, i);
        CHECK(same_bits(out[i], w), "scan[%d] = %.25Lg, expected %.25Lg", i, out[i], w);
    }
    /* A contiguous derived type of N long doubles (MPICH 4.0.2 refuses
       built-in operations on derived types). */
    if (abicheck_is_oxmpi()) {
        MPI_Datatype block;
        MPI_CHECK(MPI_Type_contiguous(N, MPI_LONG_DOUBLE, &block));
        MPI_CHECK(MPI_Type_commit(&block));
        MPI_CHECK(MPI_Allreduce(in, out, 1, block, MPI_SUM, MPI_COMM_WORLD));
        check_real(out, "derived sum", 1);
        MPI_CHECK(MPI_Type_free(&block));
    }
    /* Reduce_local. */
    long double a[2] = {1.0L, 2.0L}, b[2] = {tiny(), tiny()};
    MPI_CHECK(MPI_Reduce_local(a, b, 2, MPI_LONG_DOUBLE, MPI_SUM));
    CHECK(same_bits(b[0], 1.0L + tiny()) && same_bits(b[1], 2.0L + tiny()),
          "reduce_local %.25Lg %.25Lg", b[0], b[1]);
}

static void complexes(void)
{
    long double _Complex in = rank == 0 ? 1.0L + 1.0L * I : (long double)rank * tiny() * (1 - I);
    long double _Complex out = 0, want = 0;
    for (int r = 0; r < size; r++)
        want += r == 0 ? 1.0L + 1.0L * I : (long double)r * tiny() * (1 - I);
    MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(same_bits(creall(out), creall(want)) && same_bits(cimagl(out), cimagl(want)),
          "complex sum (%.25Lg, %.25Lg)", creall(out), cimagl(out));
    /* Product of (1 + 2^-30 i) on ranks 0 and 1 and 1 elsewhere: exact. */
    long double _Complex f = rank < 2 ? 1.0L + ldexpl(1.0L, -30) * I : 1.0L;
    MPI_CHECK(MPI_Allreduce(&f, &out, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
    want = 1.0L;
    for (int r = 0; r < size; r++)
        want *= r < 2 ? 1.0L + ldexpl(1.0L, -30) * I : 1.0L;
    CHECK(same_bits(creall(out), creall(want)) && same_bits(cimagl(out), cimagl(want)),
          "complex prod (%.25Lg, %.25Lg), expected (%.25Lg, %.25Lg)", creall(out),
          cimagl(out), creall(want), cimagl(want));
}

static void pairs(void)
{
    struct {
        long double v;
        int i;
    } in[2], out[2];
    /* Values 1 + r * 2^-55: equal in double, distinct in long double. The
       minimum is rank 0's; the maximum the last rank's. Element 1 ties. */
    in[0].v = 1.0L + (long double)rank * tiny();
    in[0].i = rank;
    in[1].v = 3.0L;
    in[1].i = rank;
    MPI_CHECK(MPI_Allreduce(in, out, 2, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(out[0].i == 0 && same_bits(out[0].v, 1.0L), "minloc (%.25Lg, %d)", out[0].v,
          out[0].i);
    CHECK(out[1].i == 0 && out[1].v == 3.0L, "minloc tie index %d", out[1].i);
    MPI_CHECK(MPI_Allreduce(in, out, 2, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(out[0].i == size - 1 && same_bits(out[0].v, 1.0L + (long double)(size - 1) * tiny()),
          "maxloc (%.25Lg, %d)", out[0].v, out[0].i);
    CHECK(out[1].i == 0, "maxloc tie index %d", out[1].i);
}

static void undefined(void)
{
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    long double x = 1, y = 0;
    EXPECT_CLASS(MPI_Allreduce(&x, &y, 1, MPI_LONG_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    long double _Complex c = 1, d = 0;
    EXPECT_CLASS(MPI_Allreduce(&c, &d, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD),
                 MPI_ERR_OP);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    sums();
    complexes();
    pairs();
    undefined();
    abicheck_pass("long_double");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
