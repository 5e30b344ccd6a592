/*
 * Communicators through the C ABI: dup (and with info, idup), split with
 * keys and MPI_UNDEFINED, split_type shared, create and create_group,
 * compare, free (handle set to MPI_COMM_NULL), disconnect, names, groups,
 * inherited error handlers, many dup/split/free cycles (more than the
 * context ids there are, so freed ones must be recycled), traffic kept
 * apart between a communicator and its dup, and the error classes of
 * bad input under MPI_ERRORS_RETURN.
 * Prints "PASS comm" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

static int sum_over(MPI_Comm comm, int v)
{
    int out = -1;
    MPI_CHECK(MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_SUM, comm));
    return out;
}

static void test_dup(void)
{
    MPI_Comm dup, dup2, idup;
    int result = -1, r = -1, n = -1;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(dup != MPI_COMM_WORLD && dup != MPI_COMM_NULL, "dup handle %d", (int)dup);
    MPI_CHECK(MPI_Comm_rank(dup, &r));
    MPI_CHECK(MPI_Comm_size(dup, &n));
    CHECK(r == rank && n == size, "dup rank %d size %d", r, n);
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    CHECK(result == MPI_CONGRUENT, "compare(world, dup) = %d", result);
    MPI_CHECK(MPI_Comm_compare(dup, dup, &result));
    CHECK(result == MPI_IDENT, "compare(dup, dup) = %d", result);
    MPI_CHECK(MPI_Comm_dup_with_info(dup, MPI_INFO_NULL, &dup2));
    MPI_CHECK(MPI_Comm_compare(dup2, dup, &result));
    CHECK(result == MPI_CONGRUENT, "compare(dup2, dup) = %d", result);
    MPI_Request req;
    MPI_CHECK(MPI_Comm_idup(dup2, &idup, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(sum_over(idup, 1) == size, "allreduce on an idup");
    MPI_Comm idup2;
    MPI_CHECK(MPI_Comm_idup_with_info(idup, MPI_INFO_NULL, &idup2, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(sum_over(idup2, 2) == 2 * size, "allreduce on an idup_with_info");
    MPI_CHECK(MPI_Comm_free(&idup2));

    /* Traffic on the dup does not match receives on the original. */
    if (size > 1) {
        int token = 42, got = -1, flag = 1;
        if (rank == 0)
            MPI_CHECK(MPI_Send(&token, 1, MPI_INT, 1, 5, dup));
        if (rank == 1) {
            MPI_Status st;
            MPI_CHECK(MPI_Probe(0, 5, dup, &st));
            MPI_CHECK(MPI_Iprobe(0, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "a message sent on the dup matched on MPI_COMM_WORLD");
            MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, 0, 5, dup, MPI_STATUS_IGNORE));
            CHECK(got == 42, "got %d", got);
        }
    }

    /* Names: predefined ones, set and get; a dup does not inherit it. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world's name '%s'", name);
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "self's name '%s'", name);
    MPI_CHECK(MPI_Comm_set_name(dup, "library comm"));
    MPI_CHECK(MPI_Comm_get_name(dup, name, &len));
    CHECK(strcmp(name, "library comm") == 0 && len == 12, "dup's name '%s'", name);
    MPI_Comm dup3;
    MPI_CHECK(MPI_Comm_dup(dup, &dup3));
    MPI_CHECK(MPI_Comm_get_name(dup3, name, &len));
    CHECK(strcmp(name, "library comm") != 0, "the name was copied by dup");

    /* Groups of a communicator. */
    MPI_Group g, wg;
    MPI_CHECK(MPI_Comm_group(dup, &g));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_CHECK(MPI_Group_compare(g, wg, &result));
    CHECK(result == MPI_IDENT, "group compare = %d", result);
    MPI_CHECK(MPI_Group_free(&g));
    MPI_CHECK(MPI_Group_free(&wg));

    int inter = -1;
    MPI_CHECK(MPI_Comm_test_inter(dup, &inter));
    CHECK(inter == 0, "test_inter = %d", inter);
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_CHECK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "a parent without spawn");

    MPI_CHECK(MPI_Comm_free(&dup3));
    MPI_CHECK(MPI_Comm_free(&idup));
    MPI_CHECK(MPI_Comm_disconnect(&dup2));
    CHECK(dup2 == MPI_COMM_NULL, "disconnect left the handle");
    MPI_CHECK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "free left the handle");
}

static void test_split(void)
{
    /* Even and odd ranks, each in reverse order. */
    MPI_Comm half;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    int hr, hn, members = (size + 1 - rank % 2) / 2;
    MPI_CHECK(MPI_Comm_rank(half, &hr));
    MPI_CHECK(MPI_Comm_size(half, &hn));
    CHECK(hn == members, "split size %d, expected %d", hn, members);
    CHECK(hr == members - 1 - rank / 2, "split rank %d", hr);
    int want = 0;
    for (int r = rank % 2; r < size; r += 2)
        want += r;
    CHECK(sum_over(half, rank) == want, "allreduce on the split");
    int result;
    MPI_CHECK(MPI_Comm_compare(half, MPI_COMM_WORLD, &result));
    int expect = size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL;
    CHECK(result == expect, "compare(split, world) = %d", result);
    MPI_CHECK(MPI_Comm_free(&half));

    /* Same members, reverse order: similar. */
    MPI_Comm rev;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 7, size - rank, &rev));
    MPI_CHECK(MPI_Comm_compare(rev, MPI_COMM_WORLD, &result));
    CHECK(result == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare(rev, world) = %d",
          result);
    MPI_CHECK(MPI_Comm_free(&rev));

    /* Rank 0 opts out. */
    MPI_Comm rest;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &rest));
    if (rank == 0) {
        CHECK(rest == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    } else {
        int n;
        MPI_CHECK(MPI_Comm_size(rest, &n));
        CHECK(n == size - 1, "rest size %d", n);
        MPI_CHECK(MPI_Comm_free(&rest));
    }

    /* Shared memory: every rank runs on this node. */
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                  &node));
    MPI_CHECK(MPI_Comm_compare(node, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT, "split_type shared vs world = %d", result);
    MPI_CHECK(MPI_Comm_free(&node));
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &node));
    CHECK(node == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
}

static void test_create(void)
{
    MPI_Group world, evens;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int range[1][3] = {{0, size - 1, 2}};
    MPI_CHECK(MPI_Group_range_incl(world, 1, range, &evens));
    MPI_Comm ec;
    MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, evens, &ec));
    if (rank % 2) {
        CHECK(ec == MPI_COMM_NULL, "odd rank got a communicator");
    } else {
        int r, n;
        MPI_CHECK(MPI_Comm_rank(ec, &r));
        MPI_CHECK(MPI_Comm_size(ec, &n));
        CHECK(r == rank / 2 && n == (size + 1) / 2, "create: rank %d size %d", r, n);
        MPI_CHECK(MPI_Comm_free(&ec));
    }
    /* create_group over every rank, in reverse order. */
    int *ranks = abicheck_malloc(size * sizeof(int));
    for (int i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_Group rev;
    MPI_CHECK(MPI_Group_incl(world, size, ranks, &rev));
    MPI_Comm rc;
    MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, rev, 3, &rc));
    int r;
    MPI_CHECK(MPI_Comm_rank(rc, &r));
    CHECK(r == size - 1 - rank, "create_group rank %d", r);
    CHECK(sum_over(rc, 1) == size, "allreduce on create_group's communicator");
    MPI_CHECK(MPI_Comm_free(&rc));
    /* create_group over a subgroup: only the even ranks call it. */
    if (rank % 2 == 0) {
        MPI_Comm sub = MPI_COMM_NULL;
        MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 9, &sub));
        CHECK(sum_over(sub, 1) == (size + 1) / 2, "allreduce on a create_group subgroup");
        MPI_CHECK(MPI_Comm_free(&sub));
    }
    free(ranks);
    MPI_CHECK(MPI_Group_free(&rev));
    MPI_CHECK(MPI_Group_free(&evens));
    MPI_CHECK(MPI_Group_free(&world));
}

static void test_cycles(void)
{
    /* On OxMPI: more communicators over time than there are context ids
       (2048), so freed ones must be recycled. MPICH busy-polls, which makes
       thousands of collectives slow on oversubscribed cores: fewer there. */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    int cycles = strncmp(lib, "OxMPI", 5) == 0 ? 2100 : 60;
    for (int i = 0; i < cycles; i++) {
        MPI_Comm c;
        if (i % 2)
            MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        else
            MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 3, rank, &c));
        if (i % 100 == 0)
            MPI_CHECK(MPI_Barrier(c));
        MPI_CHECK(MPI_Comm_free(&c));
        CHECK(c == MPI_COMM_NULL, "free left the handle");
    }
    /* Many alive at once, freed in another order. */
    enum { K = 40 };
    MPI_Comm cs[K];
    for (int i = 0; i < K; i++)
        MPI_CHECK(MPI_Comm_dup(i ? cs[i - 1] : MPI_COMM_WORLD, &cs[i]));
    CHECK(sum_over(cs[K - 1], rank) == size * (size - 1) / 2, "allreduce on a deep dup");
    for (int i = 0; i < K; i += 2)
        MPI_CHECK(MPI_Comm_free(&cs[i]));
    for (int i = 1; i < K; i += 2)
        MPI_CHECK(MPI_Comm_free(&cs[i]));
}

static void test_errors(void)
{
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm c = MPI_COMM_NULL, w = MPI_COMM_WORLD;
    int x = 0;
    EXPECT_CLASS(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_split(MPI_COMM_NULL, 0, 0, &c), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_size(MPI_COMM_NULL, &x), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_free(&c), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_free(&w), MPI_ERR_COMM);
    CHECK(w == MPI_COMM_WORLD, "a failed free changed the handle");
    /* A dup inherits the error handler: errors on it return. */
    MPI_Comm d;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, size, 0, d), MPI_ERR_RANK);
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_get_errhandler(d, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the dup's error handler is %d", (int)eh);
    MPI_CHECK(MPI_Comm_free(&d));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    test_dup();
    test_split();
    test_create();
    test_cycles();
    test_errors();
    abicheck_pass("comm");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
