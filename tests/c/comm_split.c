/*
 * Communicator construction: MPI_Comm_split by parity (key = world rank),
 * by reversed key (one color, key = -rank), with MPI_UNDEFINED for some
 * ranks; collectives and point-to-point inside the new communicators;
 * MPI_Comm_dup (congruent, and isolated from its parent) and MPI_Comm_free.
 * Prints "PASS comm_split" from rank 0.
 */
#include "oxcheck.h"

static int rank, size;

/* Check rank/size of `comm` and that its members are exactly `members`. */
static void check_members(MPI_Comm comm, const int *members, int n, const char *what)
{
    int crank = -1, csize = -1;
    MPI_CHECK(MPI_Comm_rank(comm, &crank));
    MPI_CHECK(MPI_Comm_size(comm, &csize));
    CHECK(csize == n, "%s: size %d, expected %d", what, csize, n);
    CHECK(crank >= 0 && crank < n && members[crank] == rank,
          "%s: world rank %d got rank %d, expected world rank %d there", what, rank, crank,
          crank >= 0 && crank < n ? members[crank] : -1);

    /* Allgather the world ranks: must list the members in rank order. */
    int *got = oxcheck_malloc(sizeof(int) * n);
    MPI_CHECK(MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        CHECK(got[i] == members[i], "%s: rank %d is world rank %d, expected %d", what, i, got[i],
              members[i]);
    free(got);

    /* Allreduce of the world ranks against a serial sum. */
    int sum = -1, want = 0;
    for (int i = 0; i < n; i++)
        want += members[i];
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == want, "%s: Allreduce sum %d, expected %d", what, sum, want);

    /* Bcast from the last member. */
    int v = crank == n - 1 ? 4242 + members[n - 1] : -1;
    MPI_CHECK(MPI_Bcast(&v, 1, MPI_INT, n - 1, comm));
    CHECK(v == 4242 + members[n - 1], "%s: Bcast got %d, expected %d", what, v,
          4242 + members[n - 1]);

    /* Ring shift inside the communicator: ranks are the communicator's. */
    int next = (crank + 1) % n, prev = (crank + n - 1) % n, in = -1;
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 9, &in, 1, MPI_INT, prev, 9, comm, &st));
    CHECK(in == members[prev] && st.MPI_SOURCE == prev,
          "%s: Sendrecv from %d got %d (status source %d), expected %d", what, prev, in,
          st.MPI_SOURCE, members[prev]);
    MPI_CHECK(MPI_Barrier(comm));
}

static void split_parity(void)
{
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comm));
    int *members = oxcheck_malloc(sizeof(int) * size);
    int n = 0;
    for (int r = rank % 2; r < size; r += 2)
        members[n++] = r;
    check_members(comm, members, n, "split by parity");
    MPI_CHECK(MPI_Comm_free(&comm));
    CHECK(comm == MPI_COMM_NULL, "Comm_free did not set the handle to MPI_COMM_NULL");
    free(members);
}

static void split_reversed(void)
{
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &comm));
    int *members = oxcheck_malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++)
        members[i] = size - 1 - i;
    check_members(comm, members, size, "split by reversed key");

    /* A split of the split: thirds, ranks 2 mod 3 (world) opt out. */
    MPI_Comm sub;
    int color = rank % 3 == 2 ? MPI_UNDEFINED : rank % 3;
    MPI_CHECK(MPI_Comm_split(comm, color, rank, &sub));
    if (color == MPI_UNDEFINED) {
        CHECK(sub == MPI_COMM_NULL, "MPI_UNDEFINED color did not give MPI_COMM_NULL");
    } else {
        int n = 0;
        for (int r = 0; r < size; r++)
            if (r % 3 == color)
                members[n++] = r;
        check_members(sub, members, n, "split of split");
        MPI_CHECK(MPI_Comm_free(&sub));
    }
    MPI_CHECK(MPI_Comm_free(&comm));
    free(members);
}

static void dup_and_free(void)
{
    MPI_Comm dup;
    int result = -1;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    CHECK(result == MPI_CONGRUENT, "Comm_compare(world, dup) = %d, expected MPI_CONGRUENT",
          result);
    int *members = oxcheck_malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++)
        members[i] = i;
    check_members(dup, members, size, "dup of world");
    free(members);

    /*
     * Same source, same tag on both communicators, sent world-first but
     * received dup-first: each receive must match its own communicator.
     */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out_world = 1000 + rank, out_dup = 2000 + rank, in_world = -1, in_dup = -1;
    MPI_Request reqs[2];
    MPI_Status stats[2];
    MPI_CHECK(MPI_Isend(&out_world, 1, MPI_INT, next, 5, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Isend(&out_dup, 1, MPI_INT, next, 5, dup, &reqs[1]));
    MPI_CHECK(MPI_Recv(&in_dup, 1, MPI_INT, prev, 5, dup, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Recv(&in_world, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Waitall(2, reqs, stats));
    CHECK(in_dup == 2000 + prev, "receive on dup got %d, expected %d", in_dup, 2000 + prev);
    CHECK(in_world == 1000 + prev, "receive on world got %d, expected %d", in_world,
          1000 + prev);

    /* A dup of a dup, then free both in creation order. */
    MPI_Comm dup2;
    MPI_CHECK(MPI_Comm_dup(dup, &dup2));
    MPI_CHECK(MPI_Comm_compare(dup, dup2, &result));
    CHECK(result == MPI_CONGRUENT, "Comm_compare(dup, dup2) = %d, expected MPI_CONGRUENT",
          result);
    MPI_CHECK(MPI_Comm_free(&dup));
    int sum = -1;
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup2));
    CHECK(sum == size * (size - 1) / 2, "Allreduce on dup2 after freeing dup: %d, expected %d",
          sum, size * (size - 1) / 2);
    MPI_CHECK(MPI_Comm_free(&dup2));
    CHECK(dup == MPI_COMM_NULL && dup2 == MPI_COMM_NULL,
          "Comm_free did not set the handles to MPI_COMM_NULL");
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int round = 0; round < 3; round++) {
        split_parity();
        split_reversed();
        dup_and_free();
    }
    oxcheck_pass("comm_split");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
