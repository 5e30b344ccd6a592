/*
 * MPI_Comm_create_group on subgroups (collective over the group only):
 * disjoint groups (even and odd ranks) create at the same time, with the
 * same tag and with different tags, while the ranks outside a group are
 * blocked elsewhere; overlapping groups one after the other; the new
 * communicators carry point-to-point traffic and collectives, checked
 * against serial results; a process outside the group (MPI_GROUP_EMPTY,
 * or a group without it) gets MPI_COMM_NULL.
 * Prints "PASS create_group" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

/* The communicator's ranks in world terms. */
static void check_comm(MPI_Comm c, const int *members, int n, const char *what)
{
    int r = -1, s = -1;
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Comm_size(c, &s));
    CHECK(s == n, "%s: size %d, expected %d", what, s, n);
    CHECK(r >= 0 && r < n && members[r] == rank, "%s: rank %d is not world rank %d", what,
          r, rank);
    /* Collectives: sum of world ranks, and a broadcast from the last rank. */
    int sum = -1, expect = 0;
    for (int i = 0; i < n; i++)
        expect += members[i];
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == expect, "%s: allreduce %d, expected %d", what, sum, expect);
    int root_val = r == n - 1 ? 1000 + rank : -1;
    MPI_CHECK(MPI_Bcast(&root_val, 1, MPI_INT, n - 1, c));
    CHECK(root_val == 1000 + members[n - 1], "%s: bcast %d", what, root_val);
    /* A ring of point-to-point messages. */
    int right = (r + 1) % n, left = (r + n - 1) % n, got = -1;
    MPI_CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 4, &got, 1, MPI_INT, left, 4, c,
                           MPI_STATUS_IGNORE));
    CHECK(got == members[left], "%s: ring got %d, expected %d", what, got, members[left]);
    int *all = abicheck_malloc(n * sizeof(int));
    MPI_CHECK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c));
    for (int i = 0; i < n; i++)
        CHECK(all[i] == members[i], "%s: allgather[%d] = %d", what, i, all[i]);
    free(all);
}

/* Ranks first, first + step, ... below size. */
static int strided(int first, int step, int *out)
{
    int n = 0;
    for (int i = first; i < size; i += step)
        out[n++] = i;
    return n;
}

static MPI_Group group_of(const int *members, int n)
{
    MPI_Group world, g;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_CHECK(MPI_Group_incl(world, n, members, &g));
    MPI_CHECK(MPI_Group_free(&world));
    return g;
}

static void disjoint(int same_tag)
{
    int *members = abicheck_malloc(size * sizeof(int));
    int n = strided(rank % 2, 2, members);
    MPI_Group g = group_of(members, n);
    int tag = same_tag ? 11 : 20 + rank % 2;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, tag, &c));
    CHECK(c != MPI_COMM_NULL, "disjoint: no communicator");
    check_comm(c, members, n, same_tag ? "disjoint, same tag" : "disjoint, own tags");
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Group_free(&g));
    free(members);
}

/* Only ranks 1.. create (in reverse order) while rank 0 waits for a message
 * that rank 1 sends once its communicator works. */
static void others_blocked(void)
{
    if (size < 2)
        return;
    int *members = abicheck_malloc(size * sizeof(int));
    int n = 0;
    for (int i = size - 1; i >= 1; i--)
        members[n++] = i;
    if (rank == 0) {
        int got = -1;
        MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == 1234, "rank 0 got %d", got);
    } else {
        MPI_Group g = group_of(members, n);
        MPI_Comm c = MPI_COMM_NULL;
        MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 5, &c));
        check_comm(c, members, n, "without rank 0");
        if (rank == 1) {
            int v = 1234;
            MPI_CHECK(MPI_Send(&v, 1, MPI_INT, 0, 77, MPI_COMM_WORLD));
        }
        MPI_CHECK(MPI_Comm_free(&c));
        MPI_CHECK(MPI_Group_free(&g));
    }
    free(members);
}

/* Overlapping groups, one after the other, same tag: 0..size-2 then 1..size-1. */
static void overlapping(void)
{
    if (size < 3)
        return;
    int *a = abicheck_malloc(size * sizeof(int)), *b = abicheck_malloc(size * sizeof(int));
    for (int i = 0; i < size - 1; i++) {
        a[i] = i;
        b[i] = i + 1;
    }
    MPI_Comm ca = MPI_COMM_NULL, cb = MPI_COMM_NULL;
    MPI_Group ga = group_of(a, size - 1), gb = group_of(b, size - 1);
    if (rank < size - 1)
        MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, ga, 3, &ca));
    if (rank > 0)
        MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, gb, 3, &cb));
    if (ca != MPI_COMM_NULL)
        check_comm(ca, a, size - 1, "overlapping a");
    if (cb != MPI_COMM_NULL)
        check_comm(cb, b, size - 1, "overlapping b");
    /* A communicator made from a create_group communicator. */
    if (cb != MPI_COMM_NULL) {
        MPI_Group all;
        MPI_CHECK(MPI_Comm_group(cb, &all));
        int first = 0;
        MPI_Group one;
        MPI_CHECK(MPI_Group_incl(all, 1, &first, &one));
        MPI_Comm solo = MPI_COMM_NULL;
        MPI_CHECK(MPI_Comm_create_group(cb, one, 0, &solo));
        CHECK((solo != MPI_COMM_NULL) == (rank == 1), "solo on rank %d", rank);
        if (solo != MPI_COMM_NULL)
            MPI_CHECK(MPI_Comm_free(&solo));
        MPI_CHECK(MPI_Group_free(&one));
        MPI_CHECK(MPI_Group_free(&all));
    }
    if (ca != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&ca));
    if (cb != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&cb));
    MPI_CHECK(MPI_Group_free(&ga));
    MPI_CHECK(MPI_Group_free(&gb));
    free(a);
    free(b);
}

static void non_members(void)
{
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 1, &c));
    CHECK(c == MPI_COMM_NULL, "MPI_GROUP_EMPTY gave %d", (int)c);
    if (size > 1) {
        int other = (rank + 1) % size;
        MPI_Group g = group_of(&other, 1);
        if (rank == 0) {
            /* Rank 1 makes its own communicator of one; rank 0 is outside. */
            c = MPI_COMM_WORLD;
            MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 1, &c));
            CHECK(c == MPI_COMM_NULL, "a group without the caller gave %d", (int)c);
        }
        MPI_CHECK(MPI_Group_free(&g));
    }
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int i = 0; i < 20; i++) {
        disjoint(1);
        disjoint(0);
    }
    others_blocked();
    overlapping();
    non_members();
    abicheck_pass("create_group");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
