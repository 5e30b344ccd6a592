/*
 * Intercommunicators: world split into two halves (even and odd world
 * ranks), MPI_Intercomm_create over MPI_COMM_WORLD, point-to-point across,
 * every collective with MPI_ROOT / MPI_PROC_NULL roots (blocking and
 * non-blocking), MPI_Intercomm_merge in both orders, dup / split / create /
 * free of the intercommunicator, MPI_Intercomm_create_from_groups, and the
 * calls that refuse an intercommunicator (MPI_ERR_COMM). Every result is
 * compared with what the standard's definitions give. At 1 rank there is
 * nothing to split: the program only passes.
 */
#include "abicheck.h"

static int wrank, wsize;

/* World rank of rank r of group `color` (0: even world ranks, 1: odd). */
static int world_of(int color, int r) { return 2 * r + color; }

static int group_size(int color) { return (wsize - color + 1) / 2; }

static void check_collectives(MPI_Comm inter, int color)
{
    int rank, size, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    int me = world_of(color, rank);

    MPI_CHECK(MPI_Barrier(inter));

    /* Bcast, root = rank 1 of group 0 if it has one, else rank 0. */
    for (int root_color = 0; root_color < 2; root_color++) {
        int root = group_size(root_color) > 1 ? 1 : 0;
        int v[3] = {-1, -1, -1};
        int r;
        if (color == root_color) {
            r = rank == root ? MPI_ROOT : MPI_PROC_NULL;
            if (rank == root)
                v[0] = 100, v[1] = 200, v[2] = 300 + root_color;
        } else {
            r = root;
        }
        MPI_CHECK(MPI_Bcast(v, 3, MPI_INT, r, inter));
        if (color != root_color)
            CHECK(v[0] == 100 && v[1] == 200 && v[2] == 300 + root_color,
                  "bcast got %d %d %d", v[0], v[1], v[2]);
        else if (rank != root)
            CHECK(v[0] == -1, "PROC_NULL bcast changed the buffer");

        /* Reduce (SUM of world ranks + 1) and non-commutative check via MAX. */
        int send = me + 1, recv = -7;
        MPI_CHECK(MPI_Reduce(&send, &recv, 1, MPI_INT, MPI_SUM, r, inter));
        if (color == root_color && rank == root) {
            int want = 0;
            for (int j = 0; j < rsize; j++)
                want += world_of(1 - color, j) + 1;
            CHECK(recv == want, "reduce got %d want %d", recv, want);
        } else {
            CHECK(recv == -7, "reduce wrote a non-root buffer");
        }

        /* Gather: the root gets each remote rank's world rank. */
        int *all = malloc(sizeof(int) * 8);
        for (int j = 0; j < 8; j++)
            all[j] = -1;
        MPI_CHECK(MPI_Gather(&me, 1, MPI_INT, all, 1, MPI_INT, r, inter));
        if (color == root_color && rank == root)
            for (int j = 0; j < rsize; j++)
                CHECK(all[j] == world_of(1 - color, j), "gather[%d] = %d", j, all[j]);

        /* Gatherv: remote rank j sends j+1 ints, placed in reverse order. */
        int gs[4], gcounts[4], gdispls[4], gbuf[16];
        for (int j = 0; j < rank + 1; j++)
            gs[j] = me * 10 + j;
        int off = 0;
        for (int j = rsize - 1; j >= 0; j--) {
            gcounts[j] = j + 1;
            gdispls[j] = off;
            off += j + 1;
        }
        for (int j = 0; j < 16; j++)
            gbuf[j] = -1;
        MPI_CHECK(MPI_Gatherv(gs, rank + 1, MPI_INT, gbuf, gcounts, gdispls, MPI_INT, r, inter));
        if (color == root_color && rank == root)
            for (int j = 0; j < rsize; j++)
                for (int k = 0; k <= j; k++)
                    CHECK(gbuf[gdispls[j] + k] == world_of(1 - color, j) * 10 + k,
                          "gatherv[%d][%d] = %d", j, k, gbuf[gdispls[j] + k]);

        /* Scatter and scatterv from the root. */
        int sc[8], got = -1;
        for (int j = 0; j < 8; j++)
            sc[j] = 1000 + j;
        MPI_CHECK(MPI_Scatter(sc, 1, MPI_INT, &got, 1, MPI_INT, r, inter));
        if (color != root_color)
            CHECK(got == 1000 + rank, "scatter got %d", got);
        int vg[4] = {-1, -1, -1, -1};
        MPI_CHECK(MPI_Scatterv(gbuf, gcounts, gdispls, MPI_INT, vg, rank + 1, MPI_INT, r, inter));
        if (color != root_color)
            for (int k = 0; k <= rank; k++)
                CHECK(vg[k] == me * 10 + k, "scatterv[%d] = %d", k, vg[k]);

        /* Non-blocking bcast, from rank 0 of the root's group (MPICH 4.0.2's
         * MPI_Ibcast on an intercommunicator loses the data when the root is
         * another rank). */
        int nbr = color == root_color ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int nb = color == root_color && rank == 0 ? 4242 : -1;
        MPI_Request req;
        MPI_CHECK(MPI_Ibcast(&nb, 1, MPI_INT, nbr, inter, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (color != root_color)
            CHECK(nb == 4242, "ibcast got %d", nb);
        free(all);
    }

    /* Allreduce: each group gets the sum over the other group. */
    int send = me + 1, recv = -1, want = 0;
    for (int j = 0; j < rsize; j++)
        want += world_of(1 - color, j) + 1;
    MPI_CHECK(MPI_Allreduce(&send, &recv, 1, MPI_INT, MPI_SUM, inter));
    CHECK(recv == want, "allreduce got %d want %d", recv, want);
    MPI_Request req;
    recv = -1;
    MPI_CHECK(MPI_Iallreduce(&send, &recv, 1, MPI_INT, MPI_SUM, inter, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(recv == want, "iallreduce got %d want %d", recv, want);

    /* Allgather(v): the remote group's world ranks. */
    int ag[8];
    MPI_CHECK(MPI_Allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, inter));
    for (int j = 0; j < rsize; j++)
        CHECK(ag[j] == world_of(1 - color, j), "allgather[%d] = %d", j, ag[j]);
    int two[2] = {me, -me}, agv[16], counts[8], displs[8];
    for (int j = 0; j < rsize; j++)
        counts[j] = 2, displs[j] = 2 * (rsize - 1 - j);
    MPI_CHECK(MPI_Allgatherv(two, 2, MPI_INT, agv, counts, displs, MPI_INT, inter));
    for (int j = 0; j < rsize; j++) {
        int w = world_of(1 - color, j);
        CHECK(agv[displs[j]] == w && agv[displs[j] + 1] == -w, "allgatherv block %d", j);
    }

    /* Alltoall(v,w): block j goes to remote rank j. */
    int a2a[8], a2r[8];
    for (int j = 0; j < rsize; j++)
        a2a[j] = me * 100 + j;
    MPI_CHECK(MPI_Alltoall(a2a, 1, MPI_INT, a2r, 1, MPI_INT, inter));
    for (int j = 0; j < rsize; j++)
        CHECK(a2r[j] == world_of(1 - color, j) * 100 + rank, "alltoall[%d] = %d", j, a2r[j]);
    /* Blocks of different sizes in the two directions: group 0 sends two
     * ints per block, group 1 one. */
    {
        int sn = color == 0 ? 2 : 1, rn = color == 0 ? 1 : 2;
        int sb[16], rb[16];
        for (int j = 0; j < rsize * sn; j++)
            sb[j] = me * 100 + j;
        MPI_CHECK(MPI_Alltoall(sb, sn, MPI_INT, rb, rn, MPI_INT, inter));
        for (int j = 0; j < rsize; j++)
            for (int k = 0; k < rn; k++)
                CHECK(rb[j * rn + k] == world_of(1 - color, j) * 100 + rank * rn + k,
                      "uneven alltoall[%d][%d] = %d", j, k, rb[j * rn + k]);
        int two[2] = {me, me + 1000};
        MPI_CHECK(MPI_Allgather(two, sn, MPI_INT, rb, rn, MPI_INT, inter));
        for (int j = 0; j < rsize; j++)
            for (int k = 0; k < rn; k++)
                CHECK(rb[j * rn + k] == world_of(1 - color, j) + 1000 * k,
                      "uneven allgather[%d][%d] = %d", j, k, rb[j * rn + k]);
    }
    int sd[8], rd[8], ones[8];
    MPI_Datatype types[8];
    for (int j = 0; j < rsize; j++)
        ones[j] = 1, sd[j] = j, rd[j] = j, a2r[j] = -1, types[j] = MPI_INT;
    MPI_CHECK(MPI_Alltoallv(a2a, ones, sd, MPI_INT, a2r, ones, rd, MPI_INT, inter));
    for (int j = 0; j < rsize; j++)
        CHECK(a2r[j] == world_of(1 - color, j) * 100 + rank, "alltoallv[%d] = %d", j, a2r[j]);
    for (int j = 0; j < rsize; j++)
        sd[j] = rd[j] = j * (int)sizeof(int), a2r[j] = -1;
    MPI_CHECK(MPI_Ialltoallw(a2a, ones, sd, types, a2r, ones, rd, types, inter, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int j = 0; j < rsize; j++)
        CHECK(a2r[j] == world_of(1 - color, j) * 100 + rank, "ialltoallw[%d] = %d", j, a2r[j]);

    /* Reduce_scatter_block: both groups reduce vectors of the same count
     * (size x recvcount, MPI 4.0 section 6.11.2); block i of the remote
     * group's sum goes to local rank i. */
    int total = 2 * size * rsize, rc_block = total / size;
    int *rsb = malloc(sizeof(int) * total), *rsr = malloc(sizeof(int) * rc_block);
    for (int j = 0; j < total; j++)
        rsb[j] = me * 1000 + j;
    MPI_CHECK(MPI_Reduce_scatter_block(rsb, rsr, rc_block, MPI_INT, MPI_SUM, inter));
    for (int k = 0; k < rc_block; k++) {
        int w = 0;
        for (int j = 0; j < rsize; j++)
            w += world_of(1 - color, j) * 1000 + rank * rc_block + k;
        CHECK(rsr[k] == w, "reduce_scatter_block[%d] = %d want %d", k, rsr[k], w);
    }
    /* Reduce_scatter: local rank i gets i + 1 + extra elements, the counts
     * adding up to `total` in both groups. */
    int *rcounts = malloc(sizeof(int) * size), given = 0;
    for (int i = 0; i < size; i++) {
        rcounts[i] = i < size - 1 ? total / size - 1 + (i % 2) * 2 : 0;
        given += rcounts[i];
    }
    rcounts[size - 1] = total - (given - rcounts[size - 1]);
    int first = 0;
    for (int i = 0; i < rank; i++)
        first += rcounts[i];
    for (int k = 0; k < rc_block; k++)
        rsr[k] = -1;
    int *rsv = malloc(sizeof(int) * total);
    MPI_CHECK(MPI_Reduce_scatter(rsb, rsv, rcounts, MPI_INT, MPI_SUM, inter));
    for (int k = 0; k < rcounts[rank]; k++) {
        int w = 0;
        for (int j = 0; j < rsize; j++)
            w += world_of(1 - color, j) * 1000 + first + k;
        CHECK(rsv[k] == w, "reduce_scatter[%d] = %d want %d", k, rsv[k], w);
    }
    free(rsb);
    free(rsr);
    free(rsv);
    free(rcounts);

    /* Non-blocking rooted forms from rank 0 of group 0, started together. */
    {
        int r = color == 0 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int at_root = color == 0 && rank == 0, in_b = color == 1;
        int red = -1, gat[8], sca[8], one = -1, mine = me + 1;
        for (int j = 0; j < 8; j++)
            gat[j] = -1, sca[j] = 500 + j;
        MPI_Request reqs[3];
        MPI_CHECK(MPI_Ireduce(&mine, &red, 1, MPI_INT, MPI_MAX, r, inter, &reqs[0]));
        MPI_CHECK(MPI_Igather(&me, 1, MPI_INT, gat, 1, MPI_INT, r, inter, &reqs[1]));
        MPI_CHECK(MPI_Iscatter(sca, 1, MPI_INT, &one, 1, MPI_INT, r, inter, &reqs[2]));
        MPI_Status sts[3];
        MPI_CHECK(MPI_Waitall(3, reqs, sts));
        if (at_root) {
            CHECK(red == world_of(1, rsize - 1) + 1, "ireduce max %d", red);
            for (int j = 0; j < rsize; j++)
                CHECK(gat[j] == world_of(1, j), "igather[%d] = %d", j, gat[j]);
        }
        if (in_b)
            CHECK(one == 500 + rank, "iscatter got %d", one);
        else
            CHECK(one == -1, "iscatter wrote a root-group buffer");
    }
    /* Non-blocking "all" forms, several in flight at once. */
    {
        int ag[8], a2s[8], a2r[8], sum = -1, mine = me + 1;
        for (int j = 0; j < rsize; j++)
            a2s[j] = me * 10 + j;
        MPI_Request reqs[3];
        MPI_CHECK(MPI_Iallgather(&me, 1, MPI_INT, ag, 1, MPI_INT, inter, &reqs[0]));
        MPI_CHECK(MPI_Ialltoall(a2s, 1, MPI_INT, a2r, 1, MPI_INT, inter, &reqs[1]));
        MPI_CHECK(MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_MAX, inter, &reqs[2]));
        MPI_Status sts[3];
        MPI_CHECK(MPI_Waitall(3, reqs, sts));
        for (int j = 0; j < rsize; j++) {
            CHECK(ag[j] == world_of(1 - color, j), "iallgather[%d] = %d", j, ag[j]);
            CHECK(a2r[j] == world_of(1 - color, j) * 10 + rank, "ialltoall[%d] = %d", j,
                  a2r[j]);
        }
        CHECK(sum == world_of(1 - color, rsize - 1) + 1, "iallreduce max %d", sum);
    }

    MPI_CHECK(MPI_Ibarrier(inter, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));

    /* Scan and exscan refuse an intercommunicator. */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int rc = MPI_Scan(&send, &recv, 1, MPI_INT, MPI_SUM, inter);
    CHECK(abicheck_class(rc) == MPI_ERR_COMM, "scan on an intercomm: class %d",
          abicheck_class(rc));
    rc = MPI_Exscan(&send, &recv, 1, MPI_INT, MPI_SUM, inter);
    CHECK(abicheck_class(rc) == MPI_ERR_COMM, "exscan on an intercomm: class %d",
          abicheck_class(rc));
    int dims[1] = {size}, periods[1] = {0};
    MPI_Comm cart;
    rc = MPI_Cart_create(inter, 1, dims, periods, 0, &cart);
    CHECK(abicheck_class(rc) == MPI_ERR_COMM, "cart_create on an intercomm: class %d",
          abicheck_class(rc));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL);
}

static void check_merge(MPI_Comm inter, int color)
{
    int size, rank, lsize;
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_rank(inter, &rank);
    for (int high_side = 0; high_side < 2; high_side++) {
        MPI_Comm merged;
        /* Group `high_side` passes high = 1: it comes second. */
        MPI_CHECK(MPI_Intercomm_merge(inter, color == high_side, &merged));
        MPI_Comm_size(merged, &size);
        CHECK(size == wsize, "merged size %d", size);
        int mrank;
        MPI_Comm_rank(merged, &mrank);
        int want = color == high_side ? group_size(1 - high_side) + rank : rank;
        CHECK(mrank == want, "merge(high=%d): rank %d want %d", color == high_side, mrank, want);
        int flag = 1;
        MPI_Comm_test_inter(merged, &flag);
        CHECK(flag == 0, "merged is an intercommunicator");
        int sum = 0, one = wrank;
        MPI_CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
        CHECK(sum == wsize * (wsize - 1) / 2, "allreduce on merged: %d", sum);
        MPI_CHECK(MPI_Comm_free(&merged));
    }
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);

    int n = -1;
    if (wsize >= 2) {
        int color = wrank % 2;
        MPI_Comm half, inter;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &half));
        /* Leaders: rank 0 of each half = world ranks 0 and 1; tag 77. */
        MPI_CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 77, &inter));
        int flag = 0, lsize, rsize, rank;
        MPI_CHECK(MPI_Comm_test_inter(inter, &flag));
        CHECK(flag == 1, "test_inter = %d", flag);
        MPI_Comm_size(inter, &lsize);
        MPI_Comm_rank(inter, &rank);
        MPI_CHECK(MPI_Comm_remote_size(inter, &rsize));
        CHECK(lsize == group_size(color) && rsize == group_size(1 - color),
              "sizes %d %d", lsize, rsize);
        CHECK(rank == wrank / 2, "rank %d", rank);
        MPI_Group rg, wg;
        MPI_CHECK(MPI_Comm_remote_group(inter, &rg));
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        for (int j = 0; j < rsize; j++) {
            int wr;
            MPI_Group_translate_ranks(rg, 1, &j, wg, &wr);
            CHECK(wr == world_of(1 - color, j), "remote group rank %d is world %d", j, wr);
        }
        MPI_Group_free(&rg);

        /* Point-to-point: rank r sends to remote rank r % rsize. */
        int to = rank % rsize, msg = wrank, got = -1;
        MPI_Request req;
        MPI_CHECK(MPI_Isend(&msg, 1, MPI_INT, to, 5, inter, &req));
        int expect = 0;
        for (int j = 0; j < rsize; j++)
            expect += j % lsize == rank; /* remote ranks sending to me */
        for (int k = 0; k < expect; k++) {
            MPI_Status st;
            MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &st));
            CHECK(got == world_of(1 - color, st.MPI_SOURCE), "p2p from %d got %d",
                  st.MPI_SOURCE, got);
            CHECK(st.MPI_SOURCE % lsize == rank, "p2p source %d", st.MPI_SOURCE);
        }
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));

        /* Persistent point-to-point between the two rank 0s, twice. */
        if (rank == 0) {
            int out = wrank, in = -1;
            MPI_Request pr[2];
            MPI_Status pst[2];
            MPI_CHECK(MPI_Send_init(&out, 1, MPI_INT, 0, 6, inter, &pr[0]));
            MPI_CHECK(MPI_Recv_init(&in, 1, MPI_INT, 0, 6, inter, &pr[1]));
            for (int round = 0; round < 2; round++) {
                in = -1;
                MPI_CHECK(MPI_Startall(2, pr));
                MPI_CHECK(MPI_Waitall(2, pr, pst));
                CHECK(in == 1 - color, "persistent round %d got %d", round, in);
            }
            MPI_Request_free(&pr[0]);
            MPI_Request_free(&pr[1]);
        }

        check_collectives(inter, color);
        check_merge(inter, color);

        /* Dup (with an attribute) and collectives on the dup. */
        MPI_Comm dup;
        MPI_CHECK(MPI_Comm_dup(inter, &dup));
        MPI_Comm_test_inter(dup, &flag);
        CHECK(flag == 1, "dup is not an intercommunicator");
        int cmp = -1;
        MPI_CHECK(MPI_Comm_compare(inter, dup, &cmp));
        CHECK(cmp == MPI_CONGRUENT, "compare(inter, dup) = %d", cmp);
        MPI_CHECK(MPI_Comm_compare(inter, half, &cmp));
        CHECK(cmp == MPI_UNEQUAL, "compare(inter, half) = %d", cmp);
        check_collectives(dup, color);
        MPI_CHECK(MPI_Comm_free(&dup));
        MPI_CHECK(MPI_Comm_idup(inter, &dup, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        int dsize;
        MPI_Comm_remote_size(dup, &dsize);
        CHECK(dsize == rsize, "idup remote size %d", dsize);
        MPI_CHECK(MPI_Comm_free(&dup));

        /* Split: local rank 0 alone (color 0) facing the remote rank 0. */
        MPI_Comm sp;
        MPI_CHECK(MPI_Comm_split(inter, rank == 0 ? 0 : 1, 0, &sp));
        if (rank == 0) {
            int s1, s2;
            CHECK(sp != MPI_COMM_NULL, "split gave MPI_COMM_NULL");
            MPI_Comm_size(sp, &s1);
            MPI_Comm_remote_size(sp, &s2);
            CHECK(s1 == 1 && s2 == 1, "split sizes %d %d", s1, s2);
            int x = wrank, y = -1;
            MPI_CHECK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 1, &y, 1, MPI_INT, 0, 1, sp,
                                   MPI_STATUS_IGNORE));
            CHECK(y == 1 - color, "split p2p got %d", y);
            MPI_CHECK(MPI_Comm_free(&sp));
        } else {
            /* color 1 exists on the remote side only if it has 2+ ranks */
            if (rsize >= 2) {
                int s2;
                CHECK(sp != MPI_COMM_NULL, "split (color 1) gave MPI_COMM_NULL");
                MPI_Comm_remote_size(sp, &s2);
                CHECK(s2 == rsize - 1, "split remote size %d", s2);
                MPI_CHECK(MPI_Comm_free(&sp));
            } else {
                CHECK(sp == MPI_COMM_NULL, "split without remote partners is not null");
            }
        }

        /* Create: the local group's rank 0 only, on both sides. */
        MPI_Group lg, first;
        MPI_Comm_group(inter, &lg);
        int zero = 0;
        MPI_Group_incl(lg, 1, &zero, &first);
        MPI_Comm cr;
        MPI_CHECK(MPI_Comm_create(inter, first, &cr));
        if (rank == 0) {
            int s2;
            CHECK(cr != MPI_COMM_NULL, "create gave MPI_COMM_NULL");
            MPI_Comm_remote_size(cr, &s2);
            CHECK(s2 == 1, "create remote size %d", s2);
            int v = rank == 0 && color == 0 ? 9 : -1;
            MPI_CHECK(MPI_Bcast(&v, 1, MPI_INT, color == 0 ? MPI_ROOT : 0, cr));
            CHECK(v == 9 || color == 0, "bcast on created got %d", v);
            MPI_CHECK(MPI_Comm_free(&cr));
        } else {
            CHECK(cr == MPI_COMM_NULL, "create outside the group is not null");
        }
        MPI_Group_free(&first);

        /* From groups: the same halves, without a parent. */
        MPI_Group evens, odds, mine, theirs;
        int range[1][3] = {{0, wsize - 1, 2}};
        MPI_Group_range_incl(wg, 1, range, &evens);
        MPI_Group_difference(wg, evens, &odds);
        mine = color == 0 ? evens : odds;
        theirs = color == 0 ? odds : evens;
        MPI_Comm fg;
        MPI_CHECK(MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, "halves", MPI_INFO_NULL,
                                                   MPI_ERRORS_ARE_FATAL, &fg));
        MPI_Comm_remote_size(fg, &n);
        CHECK(n == rsize, "from_groups remote size %d", n);
        int s = 1, t = 0;
        MPI_CHECK(MPI_Allreduce(&s, &t, 1, MPI_INT, MPI_SUM, fg));
        CHECK(t == rsize, "allreduce on from_groups: %d", t);
        MPI_CHECK(MPI_Comm_free(&fg));
        MPI_Group_free(&evens);
        MPI_Group_free(&odds);
        MPI_Group_free(&lg);
        MPI_Group_free(&wg);

        MPI_CHECK(MPI_Comm_free(&inter));
        MPI_CHECK(MPI_Comm_free(&half));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (wrank == 0)
        printf("PASS intercomm\n");
    MPI_Finalize();
    return 0;
}
