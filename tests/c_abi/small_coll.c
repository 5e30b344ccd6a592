/*
 * Small collectives back to back, as OxMPI runs them through a
 * communicator's shared-memory area: barrier, bcast, reduce, allreduce
 * (built-in and non-commutative user operations, MPI_IN_PLACE; reduce
 * with separate buffers and in place at the root; allgather from its own
 * buffer and in place; alltoall in place),
 * allgather, alltoall and reduce_scatter_block, blocking and
 * non-blocking mixed (several non-blocking calls outstanding at once),
 * many iterations (reuse of the area's slots), on MPI_COMM_WORLD, a
 * duplicate and a split. Every result is checked against a serial
 * computation from the inputs, which every rank can compute. Prints
 * "PASS small_coll" from rank 0.
 */
#include "abicheck.h"

#define ITERS 300
#define N 5 /* odd element count */

static int rank, size;

/* Rank r's i-th value in iteration it. */
static int val(int r, int it, int i) { return (r + 1) * 1000 + it * 7 + i * 13; }

/* An affine map x -> a x + b; (f . g) composed in rank order: associative,
 * not commutative. */
typedef struct {
    int a, b;
} affine;

static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    affine *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        affine r = {x[i].a * y[i].a, y[i].a * x[i].b + y[i].b};
        y[i] = r;
    }
}

static affine map_of(int r, int it, int i) { return (affine){(r + it + i) % 3 + 1, val(r, it, i) % 17}; }

static affine folded(int p, int it, int i)
{
    affine acc = map_of(p - 1, it, i);
    for (int r = p - 2; r >= 0; r--) {
        affine x = map_of(r, it, i);
        int len = 1;
        compose(&x, &acc, &len, NULL);
    }
    return acc;
}

/* Built-in reduce (separate buffers, NULL receive buffer at the leaves;
 * in place at the root), allgather from its own buffer, alltoall in place. */
static void extra_round(MPI_Comm comm, int it, int me, int p, int root)
{
    int rin[N], rout[N], rip[N];
    for (int i = 0; i < N; i++) {
        rin[i] = val(me, it, i);
        rout[i] = -1;
        rip[i] = val(me, it, i) % 97;
    }
    MPI_CHECK(MPI_Reduce(rin, me == root ? rout : NULL, N, MPI_INT, MPI_SUM, root, comm));
    MPI_CHECK(MPI_Reduce(me == root ? MPI_IN_PLACE : rip, rip, N, MPI_INT, MPI_MIN, root, comm));
    if (me == root)
        for (int i = 0; i < N; i++) {
            int sum = 0, min = 1 << 30;
            for (int r = 0; r < p; r++) {
                sum += val(r, it, i);
                min = val(r, it, i) % 97 < min ? val(r, it, i) % 97 : min;
            }
            CHECK(rout[i] == sum, "it %d reduce[%d] = %d, expected %d", it, i, rout[i], sum);
            CHECK(rip[i] == min, "it %d in-place reduce[%d] = %d, expected %d", it, i, rip[i], min);
        }

    int gin[2], gout[2 * 64], a2a_ip[64];
    for (int i = 0; i < 2; i++)
        gin[i] = val(me, it, i);
    for (int r = 0; r < p; r++)
        a2a_ip[r] = val(me, it, r) + 1;
    MPI_CHECK(MPI_Allgather(gin, 2, MPI_INT, gout, 2, MPI_INT, comm));
    MPI_CHECK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a2a_ip, 1, MPI_INT, comm));
    for (int r = 0; r < p; r++) {
        for (int i = 0; i < 2; i++)
            CHECK(gout[2 * r + i] == val(r, it, i), "it %d allgather (own input)[%d][%d]", it, r, i);
        CHECK(a2a_ip[r] == val(r, it, me) + 1, "it %d in-place alltoall from %d", it, r);
    }
}

static void round_on(MPI_Comm comm, MPI_Datatype affine_t, MPI_Op op, int it)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int root = it % p;

    /* Bcast of an odd count from a moving root. */
    int b[N];
    for (int i = 0; i < N; i++)
        b[i] = me == root ? val(root, it, i) : -1;
    MPI_CHECK(MPI_Bcast(b, N, MPI_INT, root, comm));
    for (int i = 0; i < N; i++)
        CHECK(b[i] == val(root, it, i), "it %d bcast[%d] = %d", it, i, b[i]);

    /* Allreduce sum, then in place max on doubles. */
    int in[N], out[N];
    double d[N];
    for (int i = 0; i < N; i++) {
        in[i] = val(me, it, i);
        d[i] = (double)((me * 31 + it + i) % 11);
    }
    MPI_CHECK(MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, comm));
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, d, N, MPI_DOUBLE, MPI_MAX, comm));
    for (int i = 0; i < N; i++) {
        int sum = 0;
        double max = -1;
        for (int r = 0; r < p; r++) {
            sum += val(r, it, i);
            double x = (double)((r * 31 + it + i) % 11);
            max = x > max ? x : max;
        }
        CHECK(out[i] == sum, "it %d allreduce[%d] = %d, expected %d", it, i, out[i], sum);
        CHECK(d[i] == max, "it %d in-place max[%d] = %g, expected %g", it, i, d[i], max);
    }

    MPI_CHECK(MPI_Barrier(comm));

    /* Non-commutative user operation: allreduce and reduce to root. */
    affine m[3], r3[3];
    for (int i = 0; i < 3; i++)
        m[i] = map_of(me, it, i);
    MPI_CHECK(MPI_Allreduce(m, r3, 3, affine_t, op, comm));
    for (int i = 0; i < 3; i++) {
        affine want = folded(p, it, i);
        CHECK(r3[i].a == want.a && r3[i].b == want.b, "it %d user allreduce[%d]", it, i);
    }
    for (int i = 0; i < 3; i++)
        r3[i] = (affine){-1, -1};
    MPI_CHECK(MPI_Reduce(m, r3, 3, affine_t, op, root, comm));
    if (me == root)
        for (int i = 0; i < 3; i++) {
            affine want = folded(p, it, i);
            CHECK(r3[i].a == want.a && r3[i].b == want.b, "it %d user reduce[%d]", it, i);
        }

    /* Every fourth iteration (MPICH's busy polling makes the reference run
     * at 4 ranks on 2 cores slow): reduce with a built-in operation,
     * separate buffers (the leaves pass no receive buffer), then in place
     * at the root; allgather from a buffer of its own, alltoall in place. */
    if (it % 4 == 0)
        extra_round(comm, it, me, p, (it / 4) % p); /* every root in turn */

    /* Allgather of 3 ints, alltoall of 1 int each way, reduce_scatter_block
     * of 3 ints each. */
    int g[3 * 64], a2a_in[64], a2a_out[64], rs_in[3 * 64], rs_out[3];
    for (int i = 0; i < 3; i++)
        g[3 * me + i] = val(me, it, i);
    MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, 3, MPI_INT, comm));
    for (int r = 0; r < p; r++) {
        a2a_in[r] = val(me, it, r);
        for (int i = 0; i < 3; i++)
            rs_in[3 * r + i] = val(me, it, 3 * r + i);
    }
    MPI_CHECK(MPI_Alltoall(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, comm));
    MPI_CHECK(MPI_Reduce_scatter_block(rs_in, rs_out, 3, MPI_INT, MPI_SUM, comm));
    for (int r = 0; r < p; r++) {
        for (int i = 0; i < 3; i++)
            CHECK(g[3 * r + i] == val(r, it, i), "it %d allgather[%d][%d]", it, r, i);
        CHECK(a2a_out[r] == val(r, it, me), "it %d alltoall from %d", it, r);
    }
    for (int i = 0; i < 3; i++) {
        int sum = 0;
        for (int r = 0; r < p; r++)
            sum += val(r, it, 3 * me + i);
        CHECK(rs_out[i] == sum, "it %d reduce_scatter_block[%d]", it, i);
    }

    /* Non-blocking: several outstanding, interleaved with a blocking call. */
    MPI_Request req[4];
    int nb[N], nsum[N], na_in[64], na_out[64];
    for (int i = 0; i < N; i++)
        nb[i] = me == root ? val(root, it + 1, i) : -1;
    for (int r = 0; r < p; r++)
        na_in[r] = val(me, it + 2, r);
    MPI_CHECK(MPI_Ibcast(nb, N, MPI_INT, root, comm, &req[0]));
    MPI_CHECK(MPI_Iallreduce(in, nsum, N, MPI_INT, MPI_SUM, comm, &req[1]));
    MPI_CHECK(MPI_Ibarrier(comm, &req[2]));
    int blocking = 0, total = 0;
    MPI_CHECK(MPI_Allreduce(&blocking, &total, 1, MPI_INT, MPI_SUM, comm));
    MPI_CHECK(MPI_Ialltoall(na_in, 1, MPI_INT, na_out, 1, MPI_INT, comm, &req[3]));
    MPI_Status st[4];
    MPI_CHECK(MPI_Waitall(4, req, st));
    for (int i = 0; i < N; i++) {
        CHECK(nb[i] == val(root, it + 1, i), "it %d ibcast[%d]", it, i);
        CHECK(nsum[i] == out[i], "it %d iallreduce[%d]", it, i);
    }
    for (int r = 0; r < p; r++)
        CHECK(na_out[r] == val(r, it + 2, me), "it %d ialltoall from %d", it, r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "at most 64 ranks");

    MPI_Datatype affine_t;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &affine_t));
    MPI_CHECK(MPI_Type_commit(&affine_t));
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(compose, 0, &op));

    MPI_Comm dup, half;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
    for (int it = 0; it < ITERS; it++) {
        round_on(MPI_COMM_WORLD, affine_t, op, it);
        round_on(dup, affine_t, op, it);
        round_on(half, affine_t, op, it);
    }
    /* A communicator freed and made again gets a fresh area. */
    for (int k = 0; k < 5; k++) {
        MPI_Comm again;
        MPI_CHECK(MPI_Comm_dup(dup, &again));
        round_on(again, affine_t, op, k);
        MPI_CHECK(MPI_Comm_free(&again));
    }
    MPI_CHECK(MPI_Comm_free(&dup));
    MPI_CHECK(MPI_Comm_free(&half));
    MPI_CHECK(MPI_Op_free(&op));
    MPI_CHECK(MPI_Type_free(&affine_t));
    if (rank == 0)
        printf("PASS small_coll\n");
    MPI_Finalize();
    return 0;
}
