/*
 * Collective checks against a serial computation of the exact result:
 * Barrier, Bcast (every root, small and 1 MiB), Reduce and Allreduce
 * (sum/max/min on int and double, every root), Gather, Gatherv (ragged
 * counts, gaps between blocks), Scatter, Allgather, Alltoall and Scan.
 * Inputs are small integers (as ints, and as multiples of 1/4 as doubles), so
 * every result is exact regardless of the order of reduction.
 * Prints "PASS collectives" from rank 0.
 */
#include "oxcheck.h"

#include <string.h>

static int rank, size;

enum { N = 257 }; /* elements per reduction: odd, so nothing lines up */

/* Input of `r` at element i for reductions: in [-50, 50]. */
static int ival(int r, int i)
{
    return (r * 37 + i * 11 + (r ^ i) * 5) % 101 - 50;
}

/* Same, as a double with a fractional part that still sums exactly. */
static double dval(int r, int i)
{
    return ival(r, i) / 4.0 + (double)((r + i) % 3) * 0.5;
}

static int other(int src, int dst, int i)
{
    return (src * 100 + dst) * 1000 + i;
}

static void barriers(void)
{
    for (int i = 0; i < 5; i++)
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void bcasts(void)
{
    int buf[N];
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? other(root, 0, i) : -1;
        MPI_CHECK(MPI_Bcast(buf, N, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(buf[i] == other(root, 0, i), "Bcast root %d: element %d is %d, expected %d",
                  root, i, buf[i], other(root, 0, i));
    }
    /* 1 MiB of doubles from the last rank. */
    const int n = (1 << 20) / sizeof(double);
    double *big = oxcheck_malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        big[i] = rank == size - 1 ? i * 0.25 - 7.0 : -1.0;
    MPI_CHECK(MPI_Bcast(big, n, MPI_DOUBLE, size - 1, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        CHECK(big[i] == i * 0.25 - 7.0, "1 MiB Bcast: element %d is %g, expected %g", i, big[i],
              i * 0.25 - 7.0);
    free(big);
}

struct op_case {
    MPI_Op op;
    const char *name;
};

static const struct op_case ops[] = {{MPI_SUM, "sum"}, {MPI_MAX, "max"}, {MPI_MIN, "min"}};

/* Serial result of `op` over ranks [0, upto] at element i. */
static int serial_int(int op_index, int upto, int i)
{
    int acc = ival(0, i);
    for (int r = 1; r <= upto; r++) {
        int v = ival(r, i);
        switch (op_index) {
        case 0: acc += v; break;
        case 1: acc = v > acc ? v : acc; break;
        default: acc = v < acc ? v : acc; break;
        }
    }
    return acc;
}

static double serial_double(int op_index, int upto, int i)
{
    double acc = dval(0, i);
    for (int r = 1; r <= upto; r++) {
        double v = dval(r, i);
        switch (op_index) {
        case 0: acc += v; break;
        case 1: acc = v > acc ? v : acc; break;
        default: acc = v < acc ? v : acc; break;
        }
    }
    return acc;
}

static void reductions(void)
{
    int iin[N], iout[N];
    double din[N], dout[N];
    for (int i = 0; i < N; i++) {
        iin[i] = ival(rank, i);
        din[i] = dval(rank, i);
    }
    for (int o = 0; o < 3; o++) {
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < N; i++) {
                iout[i] = -12345;
                dout[i] = -12345.0;
            }
            MPI_CHECK(MPI_Reduce(iin, iout, N, MPI_INT, ops[o].op, root, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Reduce(din, dout, N, MPI_DOUBLE, ops[o].op, root, MPI_COMM_WORLD));
            if (rank != root)
                continue;
            for (int i = 0; i < N; i++) {
                int wi = serial_int(o, size - 1, i);
                double wd = serial_double(o, size - 1, i);
                CHECK(iout[i] == wi, "Reduce %s int root %d: element %d is %d, expected %d",
                      ops[o].name, root, i, iout[i], wi);
                CHECK(dout[i] == wd, "Reduce %s double root %d: element %d is %g, expected %g",
                      ops[o].name, root, i, dout[i], wd);
            }
        }
        MPI_CHECK(MPI_Allreduce(iin, iout, N, MPI_INT, ops[o].op, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Allreduce(din, dout, N, MPI_DOUBLE, ops[o].op, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            int wi = serial_int(o, size - 1, i);
            double wd = serial_double(o, size - 1, i);
            CHECK(iout[i] == wi, "Allreduce %s int: element %d is %d, expected %d", ops[o].name,
                  i, iout[i], wi);
            CHECK(dout[i] == wd, "Allreduce %s double: element %d is %g, expected %g",
                  ops[o].name, i, dout[i], wd);
        }
        /* In place. */
        memcpy(iout, iin, sizeof iin);
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, iout, N, MPI_INT, ops[o].op, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(iout[i] == serial_int(o, size - 1, i),
                  "Allreduce in place %s int: element %d is %d, expected %d", ops[o].name, i,
                  iout[i], serial_int(o, size - 1, i));
        /* Scan: inclusive prefix over ranks 0..rank. */
        MPI_CHECK(MPI_Scan(iin, iout, N, MPI_INT, ops[o].op, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Scan(din, dout, N, MPI_DOUBLE, ops[o].op, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            int wi = serial_int(o, rank, i);
            double wd = serial_double(o, rank, i);
            CHECK(iout[i] == wi, "Scan %s int: element %d is %d, expected %d", ops[o].name, i,
                  iout[i], wi);
            CHECK(dout[i] == wd, "Scan %s double: element %d is %g, expected %g", ops[o].name, i,
                  dout[i], wd);
        }
    }
}

static void gathers(void)
{
    enum { K = 5 };
    int mine[K + 8];
    int *all = oxcheck_malloc(sizeof(int) * K * size);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < K; i++)
            mine[i] = other(rank, root, i);
        for (int i = 0; i < K * size; i++)
            all[i] = -1;
        MPI_CHECK(MPI_Gather(mine, K, MPI_INT, all, K, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < K; i++)
                    CHECK(all[r * K + i] == other(r, root, i),
                          "Gather root %d: block %d element %d is %d, expected %d", root, r, i,
                          all[r * K + i], other(r, root, i));
    }

    /* Gatherv: rank r contributes r % 7 + 1 ints; blocks are 2 apart. */
    int *counts = oxcheck_malloc(sizeof(int) * size);
    int *displs = oxcheck_malloc(sizeof(int) * size);
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r % 7 + 1;
        displs[r] = total;
        total += counts[r] + 2;
    }
    int *ragged = oxcheck_malloc(sizeof(int) * total);
    int root = size / 2;
    for (int i = 0; i < counts[rank]; i++)
        mine[i] = other(rank, root, 500 + i);
    for (int i = 0; i < total; i++)
        ragged[i] = -7;
    MPI_CHECK(MPI_Gatherv(mine, counts[rank], MPI_INT, ragged, counts, displs, MPI_INT, root,
                          MPI_COMM_WORLD));
    if (rank == root) {
        for (int r = 0; r < size; r++) {
            for (int i = 0; i < counts[r]; i++)
                CHECK(ragged[displs[r] + i] == other(r, root, 500 + i),
                      "Gatherv: block %d element %d is %d, expected %d", r, i,
                      ragged[displs[r] + i], other(r, root, 500 + i));
            for (int g = 0; g < 2; g++)
                CHECK(ragged[displs[r] + counts[r] + g] == -7,
                      "Gatherv wrote into the gap after block %d", r);
        }
    }

    /* Scatter from the last rank. */
    root = size - 1;
    if (rank == root)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < K; i++)
                all[r * K + i] = other(root, r, 700 + i);
    for (int i = 0; i < K; i++)
        mine[i] = -1;
    MPI_CHECK(MPI_Scatter(all, K, MPI_INT, mine, K, MPI_INT, root, MPI_COMM_WORLD));
    for (int i = 0; i < K; i++)
        CHECK(mine[i] == other(root, rank, 700 + i), "Scatter: element %d is %d, expected %d", i,
              mine[i], other(root, rank, 700 + i));

    /* Allgather. */
    for (int i = 0; i < K; i++)
        mine[i] = other(rank, 0, 900 + i);
    for (int i = 0; i < K * size; i++)
        all[i] = -1;
    MPI_CHECK(MPI_Allgather(mine, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++)
            CHECK(all[r * K + i] == other(r, 0, 900 + i),
                  "Allgather: block %d element %d is %d, expected %d", r, i, all[r * K + i],
                  other(r, 0, 900 + i));
    free(counts);
    free(displs);
    free(ragged);
    free(all);
}

static void alltoall(void)
{
    enum { K = 3 };
    int *out = oxcheck_malloc(sizeof(int) * K * size);
    int *in = oxcheck_malloc(sizeof(int) * K * size);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++) {
            out[r * K + i] = other(rank, r, 300 + i);
            in[r * K + i] = -1;
        }
    MPI_CHECK(MPI_Alltoall(out, K, MPI_INT, in, K, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++)
            CHECK(in[r * K + i] == other(r, rank, 300 + i),
                  "Alltoall: block from %d element %d is %d, expected %d", r, i, in[r * K + i],
                  other(r, rank, 300 + i));
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    barriers();
    bcasts();
    reductions();
    gathers();
    alltoall();
    oxcheck_pass("collectives");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
