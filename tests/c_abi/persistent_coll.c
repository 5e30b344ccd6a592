/*
 * Persistent collectives (MPI 4.0) through the C ABI: every
 * MPI_<Coll>_init, each started several times (MPI_Start, MPI_Startall)
 * with new data before each start and checked after each completion
 * (MPI_Wait, MPI_Waitall, MPI_Test loops; see test_gather_scatter for two
 * exceptions the reference needs), ordinary collectives in between,
 * a non-contiguous derived datatype (packed at each start, unpacked at
 * each completion), _init_c forms, neighborhood collectives on a periodic
 * ring, MPI_Request_free of inactive requests, and argument errors
 * reported by the _init call itself. Prints "PASS persistent_coll" from
 * rank 0.
 */
#include "abicheck.h"

#define ROUNDS 3
#define MAXP 16

static int rank, size;

/* Rank r's value i in round k. */
static int v(int k, int r, int i) { return 1000 * k + 10 * r + i; }

static void wait_one(MPI_Request *r)
{
    MPI_Status st;
    MPI_CHECK(MPI_Wait(r, &st));
    CHECK(*r != MPI_REQUEST_NULL, "a persistent request stays allocated after MPI_Wait");
}

/* Waits with a test loop instead of MPI_Wait. */
static void test_until_done(MPI_Request *r)
{
    int flag = 0;
    while (!flag)
        MPI_CHECK(MPI_Test(r, &flag, MPI_STATUS_IGNORE));
    CHECK(*r != MPI_REQUEST_NULL, "a persistent request stays allocated after MPI_Test");
}

static void test_barrier_bcast_reductions(void)
{
    MPI_Request barrier, bcast, reduce, allreduce, scan, exscan;
    int b[4], s[2], red[2], all[2], sc[2], ex[2];
    const int root = size - 1;
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "hint", "ignored"));
    MPI_CHECK(MPI_Barrier_init(MPI_COMM_WORLD, info, &barrier));
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_Bcast_init(b, 4, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &bcast));
    MPI_CHECK(MPI_Reduce_init(s, red, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &reduce));
    MPI_CHECK(MPI_Allreduce_init(s, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &allreduce));
    MPI_CHECK(MPI_Scan_init(s, sc, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &scan));
    MPI_CHECK(MPI_Exscan_init(s, ex, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &exscan));
    for (int k = 0; k < ROUNDS; k++) {
        MPI_CHECK(MPI_Start(&barrier));
        wait_one(&barrier);
        for (int i = 0; i < 4; i++)
            b[i] = rank == root ? v(k, root, i) : -1;
        MPI_CHECK(MPI_Start(&bcast));
        test_until_done(&bcast);
        for (int i = 0; i < 4; i++)
            CHECK(b[i] == v(k, root, i), "round %d bcast[%d] = %d", k, i, b[i]);
        s[0] = v(k, rank, 0);
        s[1] = v(k, rank, 1);
        ex[0] = ex[1] = -5;
        MPI_Request four[4] = {reduce, allreduce, scan, exscan};
        MPI_CHECK(MPI_Startall(4, four));
        /* An ordinary collective while they run. */
        int one = 1, n = 0;
        MPI_CHECK(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(n == size, "allreduce between starts: %d", n);
        MPI_Status sts[4];
        MPI_CHECK(MPI_Waitall(4, four, sts));
        for (int i = 0; i < 2; i++) {
            int sum = 0, prefix = 0;
            for (int r = 0; r < size; r++) {
                sum += v(k, r, i);
                if (r <= rank)
                    prefix += v(k, r, i);
            }
            if (rank == 0)
                CHECK(red[i] == sum, "round %d reduce[%d] = %d, expected %d", k, i, red[i], sum);
            CHECK(all[i] == v(k, size - 1, i), "round %d allreduce max[%d] = %d", k, i, all[i]);
            CHECK(sc[i] == prefix, "round %d scan[%d] = %d, expected %d", k, i, sc[i], prefix);
            if (rank > 0)
                CHECK(ex[i] == prefix - v(k, rank, i), "round %d exscan[%d] = %d", k, i, ex[i]);
        }
    }
    MPI_Request all_reqs[6] = {barrier, bcast, reduce, allreduce, scan, exscan};
    for (int i = 0; i < 6; i++) {
        MPI_CHECK(MPI_Request_free(&all_reqs[i]));
        CHECK(all_reqs[i] == MPI_REQUEST_NULL, "Request_free sets MPI_REQUEST_NULL");
    }
}

static void test_gather_scatter(void)
{
    int send[2] = {0, 0}, gathered[2 * MAXP], scattered[2], block[2 * MAXP];
    /* Bugs of the reference, MPICH 4.0.2: a persistent gather, and an
       allgather on a power-of-two number of ranks, read their send buffer
       when they are initialized rather than at each start (so that data
       is set first and kept); a persistent scatter cannot be started a
       second time with 3 or more ranks (so it is started once). */
    int gsend[2] = {v(0, rank, 0), v(0, rank, 1)};
    int counts[MAXP], displs[MAXP], gv[3 * MAXP], sv[MAXP];
    const int root = 0, mine = rank % 3 + 1;
    for (int r = 0, at = 0; r < size; r++) {
        counts[r] = r % 3 + 1;
        displs[r] = at;
        at += counts[r] + 1;
    }
    MPI_Request req[6];
    MPI_CHECK(MPI_Gather_init(gsend, 2, MPI_INT, gathered, 2, MPI_INT, root, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &req[0]));
    MPI_CHECK(MPI_Scatter_init(block, 2, MPI_INT, scattered, 2, MPI_INT, root, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &req[1]));
    MPI_CHECK(MPI_Allgather_init(gsend, 2, MPI_INT, block, 2, MPI_INT, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &req[2]));
    MPI_CHECK(MPI_Gatherv_init(send, mine, MPI_INT, gv, counts, displs, MPI_INT, root,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &req[3]));
    MPI_CHECK(MPI_Scatterv_init(gv, counts, displs, MPI_INT, sv, mine, MPI_INT, root,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &req[4]));
    MPI_CHECK(MPI_Allgatherv_init(send, mine, MPI_INT, gv, counts, displs, MPI_INT,
                                  MPI_COMM_WORLD, MPI_INFO_NULL, &req[5]));
    for (int k = 0; k < ROUNDS; k++) {
        send[0] = v(k, rank, 0);
        send[1] = v(k, rank, 1);
        MPI_CHECK(MPI_Start(&req[0]));
        wait_one(&req[0]);
        if (rank == root)
            for (int r = 0; r < size; r++)
                CHECK(gathered[2 * r] == v(0, r, 0) && gathered[2 * r + 1] == v(0, r, 1),
                      "round %d gather block %d", k, r);
        if (k == 0) {
            if (rank == root)
                for (int r = 0; r < size; r++)
                    block[2 * r] = block[2 * r + 1] = v(k, r, 7);
            MPI_CHECK(MPI_Start(&req[1]));
            wait_one(&req[1]);
            CHECK(scattered[0] == v(k, rank, 7) && scattered[1] == v(k, rank, 7),
                  "round %d scatter: %d %d", k, scattered[0], scattered[1]);
        }
        MPI_CHECK(MPI_Start(&req[2]));
        wait_one(&req[2]);
        for (int r = 0; r < size; r++)
            CHECK(block[2 * r] == v(0, r, 0) && block[2 * r + 1] == v(0, r, 1),
                  "round %d allgather block %d", k, r);
        /* Gatherv then scatterv back (sending the first `mine` values). */
        for (int i = 0; i < 3 * MAXP; i++)
            gv[i] = -1;
        MPI_CHECK(MPI_Start(&req[3]));
        wait_one(&req[3]);
        if (rank == root)
            for (int r = 0; r < size; r++) {
                CHECK(gv[displs[r]] == v(k, r, 0), "round %d gatherv block %d", k, r);
                gv[displs[r]] = v(k, r, 9);
            }
        sv[0] = -1;
        MPI_CHECK(MPI_Start(&req[4]));
        wait_one(&req[4]);
        CHECK(sv[0] == v(k, rank, 9), "round %d scatterv: %d", k, sv[0]);
        MPI_CHECK(MPI_Start(&req[5]));
        wait_one(&req[5]);
        for (int r = 0; r < size; r++)
            CHECK(gv[displs[r]] == v(k, r, 0), "round %d allgatherv block %d", k, r);
    }
    for (int i = 0; i < 6; i++)
        MPI_CHECK(MPI_Request_free(&req[i]));
}

static void test_alltoall_reduce_scatter(void)
{
    int send[2 * MAXP], recv[2 * MAXP], counts[MAXP], displs[MAXP], rs[2];
    int wdispls[MAXP]; /* bytes */
    MPI_Datatype types[MAXP];
    for (int r = 0; r < size; r++) {
        counts[r] = 2;
        displs[r] = 2 * r;
        wdispls[r] = 2 * r * (int)sizeof(int);
        types[r] = MPI_INT;
    }
    MPI_Request req[5];
    MPI_CHECK(MPI_Alltoall_init(send, 2, MPI_INT, recv, 2, MPI_INT, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &req[0]));
    MPI_CHECK(MPI_Alltoallv_init(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT,
                                 MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    MPI_CHECK(MPI_Alltoallw_init(send, counts, wdispls, types, recv, counts, wdispls, types,
                                 MPI_COMM_WORLD, MPI_INFO_NULL, &req[2]));
    MPI_CHECK(MPI_Reduce_scatter_block_init(send, rs, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                            MPI_INFO_NULL, &req[3]));
    MPI_CHECK(MPI_Reduce_scatter_init(send, rs, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                      MPI_INFO_NULL, &req[4]));
    for (int k = 0; k < ROUNDS; k++)
        for (int which = 0; which < 5; which++) {
            for (int r = 0; r < size; r++) {
                send[2 * r] = v(k, rank, r);
                send[2 * r + 1] = -v(k, rank, r);
            }
            MPI_CHECK(MPI_Start(&req[which]));
            wait_one(&req[which]);
            if (which < 3) {
                for (int r = 0; r < size; r++)
                    CHECK(recv[2 * r] == v(k, r, rank) && recv[2 * r + 1] == -v(k, r, rank),
                          "round %d alltoall form %d block %d", k, which, r);
            } else {
                int sum = 0;
                for (int r = 0; r < size; r++)
                    sum += v(k, r, rank);
                CHECK(rs[0] == sum && rs[1] == -sum, "round %d reduce_scatter form %d: %d",
                      k, which, rs[0]);
            }
        }
    for (int i = 0; i < 5; i++)
        MPI_CHECK(MPI_Request_free(&req[i]));
}

/* A broadcast of every other int (non-contiguous) and large-count forms. */
static void test_derived_and_c(void)
{
    MPI_Datatype every_other;
    MPI_CHECK(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
    MPI_CHECK(MPI_Type_commit(&every_other));
    int buf[6], s[2], all[2];
    MPI_Request bc, ar;
    MPI_CHECK(MPI_Bcast_init_c(buf, 1, every_other, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &bc));
    MPI_CHECK(MPI_Allreduce_init_c(s, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                   &ar));
    /* The datatype may be freed once the request holds it. */
    MPI_CHECK(MPI_Type_free(&every_other));
    for (int k = 0; k < ROUNDS; k++) {
        for (int i = 0; i < 6; i++)
            buf[i] = rank == 0 ? v(k, 0, i) : -1;
        s[0] = v(k, rank, 0);
        s[1] = 1;
        MPI_Request both[2] = {bc, ar};
        MPI_CHECK(MPI_Startall(2, both));
        MPI_Status sts[2];
        MPI_CHECK(MPI_Waitall(2, both, sts));
        for (int i = 0; i < 6; i++) {
            int want = (i % 2 == 0 || rank == 0) ? v(k, 0, i) : -1;
            CHECK(buf[i] == want, "round %d strided bcast[%d] = %d, expected %d", k, i, buf[i],
                  want);
        }
        CHECK(all[1] == size, "round %d allreduce_c: %d", k, all[1]);
    }
    MPI_CHECK(MPI_Request_free(&bc));
    MPI_CHECK(MPI_Request_free(&ar));
}

/* Neighborhood collectives on a periodic ring: left then right. */
static void test_neighbor(void)
{
    int dims = size, periods = 1;
    MPI_Comm ring;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int one, two[2], got[2], counts[2] = {1, 1}, displs[2] = {1, 0};
    MPI_Aint wdispls[2] = {sizeof(int), 0};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Request req[6];
    MPI_CHECK(MPI_Neighbor_allgather_init(&one, 1, MPI_INT, got, 1, MPI_INT, ring,
                                          MPI_INFO_NULL, &req[0]));
    MPI_CHECK(MPI_Neighbor_allgatherv_init(&one, 1, MPI_INT, got, counts, displs, MPI_INT, ring,
                                           MPI_INFO_NULL, &req[1]));
    MPI_CHECK(MPI_Neighbor_alltoall_init(two, 1, MPI_INT, got, 1, MPI_INT, ring, MPI_INFO_NULL,
                                         &req[2]));
    MPI_CHECK(MPI_Neighbor_alltoallv_init(two, counts, displs, MPI_INT, got, counts, displs,
                                          MPI_INT, ring, MPI_INFO_NULL, &req[3]));
    MPI_CHECK(MPI_Neighbor_alltoallw_init(two, counts, wdispls, types, got, counts, wdispls,
                                          types, ring, MPI_INFO_NULL, &req[4]));
    MPI_CHECK(MPI_Neighbor_alltoall_init_c(two, 1, MPI_INT, got, 1, MPI_INT, ring,
                                           MPI_INFO_NULL, &req[5]));
    for (int k = 0; k < ROUNDS; k++)
        for (int which = 0; which < 6; which++) {
            one = v(k, rank, 0);
            /* Block 0 goes left, block 1 right (swapped by the displacements in
               the v and w forms, so the same data arrives). */
            int swapped = which == 3 || which == 4;
            two[swapped ? 1 : 0] = v(k, rank, 1); /* to the left */
            two[swapped ? 0 : 1] = v(k, rank, 2); /* to the right */
            got[0] = got[1] = -1;
            MPI_CHECK(MPI_Start(&req[which]));
            wait_one(&req[which]);
            int from_left, from_right;
            if (which < 2) {
                from_left = v(k, left, 0);
                from_right = v(k, right, 0);
            } else if (size > 2) {
                /* The left neighbor's block for its right, and vice versa. */
                from_left = v(k, left, 2);
                from_right = v(k, right, 1);
            } else {
                /* Extent 1 or 2: left = right; data sent towards +1 arrives in
                   the block for -1 (checked in neighbor.c for alltoall; the v
                   and w forms differ between MPICH versions). */
                from_left = got[swapped ? 1 : 0];
                from_right = got[swapped ? 0 : 1];
                CHECK((from_left == v(k, left, 2) && from_right == v(k, right, 1)) ||
                          (from_left == v(k, left, 1) && from_right == v(k, right, 2)),
                      "round %d neighbor form %d: got %d %d", k, which, got[0], got[1]);
            }
            int at_left = (which == 1 || swapped) ? 1 : 0;
            CHECK(got[at_left] == from_left && got[1 - at_left] == from_right,
                  "round %d neighbor form %d: got %d %d, expected %d from the left and %d from "
                  "the right",
                  k, which, got[0], got[1], from_left, from_right);
        }
    for (int i = 0; i < 6; i++)
        MPI_CHECK(MPI_Request_free(&req[i]));
    MPI_CHECK(MPI_Comm_free(&ring));
}

static void test_errors(void)
{
    int x = 0, y[MAXP];
    MPI_Request r = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Bcast_init(&x, 1, MPI_INT, size, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                 MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Bcast_init(&x, -1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allreduce_init(&x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &r),
                 MPI_ERR_OP);
    EXPECT_CLASS(MPI_Gather_init(&x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, 0, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &r),
                 MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Neighbor_allgather_init(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD,
                                             MPI_INFO_NULL, &r),
                 MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &r), MPI_ERR_COMM);
    CHECK(r == MPI_REQUEST_NULL, "a failed _init leaves the request alone");
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size > MAXP)
        FAIL("at most %d ranks", MAXP);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_barrier_bcast_reductions();
    test_gather_scatter();
    test_alltoall_reduce_scatter();
    test_derived_and_c();
    test_neighbor();
    test_errors();
    abicheck_pass("persistent_coll");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
