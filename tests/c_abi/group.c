/*
 * Groups through the C ABI: size and rank, incl/excl, range_incl/excl
 * with strides, union/intersection/difference, translate_ranks (with
 * MPI_PROC_NULL and MPI_UNDEFINED), compare, MPI_GROUP_EMPTY, free, a
 * communicator made from a group, and the error classes of bad input.
 * Prints "PASS group" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

static int gsize(MPI_Group g)
{
    int n = -1;
    MPI_CHECK(MPI_Group_size(g, &n));
    return n;
}

static int grank(MPI_Group g)
{
    int r = -2;
    MPI_CHECK(MPI_Group_rank(g, &r));
    return r;
}

static int gcompare(MPI_Group a, MPI_Group b)
{
    int r = -1;
    MPI_CHECK(MPI_Group_compare(a, b, &r));
    return r;
}

/* The world rank of group rank r of g. */
static int world_of(MPI_Group g, MPI_Group world, int r)
{
    int w = -5;
    MPI_CHECK(MPI_Group_translate_ranks(g, 1, &r, world, &w));
    return w;
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Group world;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK(gsize(world) == size && grank(world) == rank, "world group");

    /* Reverse order. */
    int *ranks = abicheck_malloc(size * sizeof(int));
    for (int i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_Group rev;
    MPI_CHECK(MPI_Group_incl(world, size, ranks, &rev));
    CHECK(gsize(rev) == size && grank(rev) == size - 1 - rank, "reversed group rank %d",
          grank(rev));
    CHECK(gcompare(rev, world) == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "compare(rev, world)");
    CHECK(gcompare(world, world) == MPI_IDENT, "compare(world, world)");
    for (int r = 0; r < size; r++)
        CHECK(world_of(rev, world, r) == size - 1 - r, "translate rev %d", r);

    /* Evens by range (stride 2) and odds by exclusion. */
    int range[1][3] = {{0, size - 1, 2}};
    MPI_Group evens, odds;
    MPI_CHECK(MPI_Group_range_incl(world, 1, range, &evens));
    MPI_CHECK(MPI_Group_range_excl(world, 1, range, &odds));
    CHECK(gsize(evens) == (size + 1) / 2 && gsize(odds) == size / 2, "evens %d odds %d",
          gsize(evens), gsize(odds));
    CHECK(grank(evens) == (rank % 2 ? MPI_UNDEFINED : rank / 2), "rank in evens %d",
          grank(evens));
    CHECK(grank(odds) == (rank % 2 ? rank / 2 : MPI_UNDEFINED), "rank in odds %d", grank(odds));
    for (int r = 0; r < gsize(odds); r++)
        CHECK(world_of(odds, world, r) == 2 * r + 1, "odd %d is world %d", r,
              world_of(odds, world, r));
    /* A descending range. */
    int down[1][3] = {{size - 1, 0, -1}};
    MPI_Group rev2;
    MPI_CHECK(MPI_Group_range_incl(world, 1, down, &rev2));
    CHECK(gcompare(rev2, rev) == MPI_IDENT, "descending range != reversed incl");

    /* Set operations. */
    MPI_Group u, i, d, e2;
    MPI_CHECK(MPI_Group_union(odds, evens, &u));
    CHECK(gsize(u) == size, "union size %d", gsize(u));
    if (size > 1)
        CHECK(world_of(u, world, 0) == 1, "the union starts with the first group's members");
    CHECK(gcompare(u, world) == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "union vs world");
    MPI_CHECK(MPI_Group_intersection(evens, world, &i));
    CHECK(gcompare(i, evens) == MPI_IDENT, "intersection");
    MPI_CHECK(MPI_Group_difference(world, evens, &d));
    CHECK(gcompare(d, odds) == MPI_IDENT, "difference");
    MPI_CHECK(MPI_Group_intersection(evens, odds, &e2));
    CHECK(gsize(e2) == 0 && grank(e2) == MPI_UNDEFINED, "empty intersection");
    CHECK(gcompare(e2, MPI_GROUP_EMPTY) == MPI_IDENT, "empty intersection vs MPI_GROUP_EMPTY");
    CHECK(gsize(MPI_GROUP_EMPTY) == 0 && grank(MPI_GROUP_EMPTY) == MPI_UNDEFINED,
          "MPI_GROUP_EMPTY");
    if (size > 1)
        CHECK(gcompare(evens, odds) == MPI_UNEQUAL, "evens vs odds");

    /* translate_ranks: MPI_PROC_NULL stays, non-members are MPI_UNDEFINED. */
    int in[3] = {0, MPI_PROC_NULL, size - 1}, out[3] = {-9, -9, -9};
    MPI_CHECK(MPI_Group_translate_ranks(world, 3, in, evens, out));
    CHECK(out[0] == 0 && out[1] == MPI_PROC_NULL &&
              out[2] == ((size - 1) % 2 ? MPI_UNDEFINED : (size - 1) / 2),
          "translate: %d %d %d", out[0], out[1], out[2]);

    /* A communicator of the odd ranks, in reverse order. */
    MPI_Group odds_rev;
    int nodd = size / 2;
    for (int k = 0; k < nodd; k++)
        ranks[k] = nodd - 1 - k;
    MPI_CHECK(MPI_Group_incl(odds, nodd, ranks, &odds_rev));
    MPI_Comm oc;
    MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, odds_rev, &oc));
    if (rank % 2) {
        int r;
        MPI_CHECK(MPI_Comm_rank(oc, &r));
        CHECK(r == nodd - 1 - rank / 2, "rank %d in the odd communicator", r);
        MPI_Group og;
        MPI_CHECK(MPI_Comm_group(oc, &og));
        CHECK(gcompare(og, odds_rev) == MPI_IDENT, "the communicator's group");
        MPI_CHECK(MPI_Group_free(&og));
        MPI_CHECK(MPI_Comm_free(&oc));
    } else {
        CHECK(oc == MPI_COMM_NULL, "an even rank got the odd communicator");
    }

    /* Errors. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Group bad = MPI_GROUP_NULL;
    int n = 0, bad_rank = size;
    EXPECT_CLASS(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_incl(world, 1, &bad_rank, &bad), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Group_union(world, MPI_GROUP_NULL, &bad), MPI_ERR_GROUP);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    /* Free sets MPI_GROUP_NULL. */
    MPI_Group *all[] = {&world, &rev, &evens, &odds, &rev2, &u, &i, &d, &e2, &odds_rev};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        MPI_CHECK(MPI_Group_free(all[k]));
        CHECK(*all[k] == MPI_GROUP_NULL, "free left group %zu", k);
    }
    /* Many groups made and freed. */
    for (int k = 0; k < 1000; k++) {
        MPI_Group g;
        MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &g));
        MPI_CHECK(MPI_Group_free(&g));
    }
    free(ranks);
    abicheck_pass("group");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
