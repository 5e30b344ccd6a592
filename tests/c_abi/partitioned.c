/*
 * Partitioned point-to-point communication (MPI 4.0, chapter 4) around a
 * ring: MPI_Psend_init / MPI_Precv_init, started by MPI_Start and
 * MPI_Startall, partitions marked by MPI_Pready (in reverse order),
 * MPI_Pready_range and MPI_Pready_list, MPI_Parrived polled until every
 * partition arrived, completion by MPI_Wait, MPI_Waitall and MPI_Test, over
 * several epochs of the same requests; different partitionings on the two
 * sides; a vector type; two operations with the same peer and tag, matched
 * in the order they were initialized whatever order their partitions
 * become ready; partitioned and ordinary messages with the same tag kept
 * apart; MPI_Parrived of null and inactive requests; and argument errors
 * (partition indices, inactive requests, wrong request kinds). MPICH
 * 4.0.2 crashes or fails on some of these, which are checked on OxMPI
 * (told by MPI_Get_library_version) only. Prints "PASS partitioned" from
 * rank 0.
 */
#include "abicheck.h"

#define PARTS 8
#define COUNT 5

static int rank, size, right, left, oxmpi;

/* MPI_STATUSES_IGNORE through a variable: gcc 12 warns when it sees the
   constant (MPI_Status *)1 passed as an array parameter. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

static int value(int from, int i, int epoch) { return from * 100000 + epoch * 1000 + i; }

/* Marks every partition of `req` ready, the way `how` says. */
static void ready_all(MPI_Request req, int parts, int how)
{
    switch (how % 3) {
    case 0:
        for (int p = parts - 1; p >= 0; p--)
            MPI_CHECK(MPI_Pready(p, req));
        break;
    case 1:
        MPI_CHECK(MPI_Pready_range(parts / 2, parts - 1, req));
        if (parts / 2 > 0)
            MPI_CHECK(MPI_Pready_range(0, parts / 2 - 1, req));
        break;
    default: {
        int list[PARTS];
        for (int i = 0; i < parts; i++)
            list[i] = (i * 3) % parts; /* a permutation: 3 and PARTS are coprime */
        MPI_CHECK(MPI_Pready_list(parts, list, req));
        break;
    }
    }
}

/* Polls MPI_Parrived until every partition of `req` arrived. */
static void wait_arrived(MPI_Request req, int parts)
{
    for (int p = 0; p < parts; p++) {
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Parrived(req, p, &flag));
    }
}

static void test_ring(void)
{
    int out[PARTS * COUNT], in[PARTS * COUNT];
    MPI_Request reqs[2];
    MPI_CHECK(MPI_Precv_init(in, PARTS, COUNT, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &reqs[0]));
    MPI_CHECK(MPI_Psend_init(out, PARTS, COUNT, MPI_INT, right, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &reqs[1]));
    for (int epoch = 0; epoch < 6; epoch++) {
        for (int i = 0; i < PARTS * COUNT; i++) {
            out[i] = value(rank, i, epoch);
            in[i] = -1;
        }
        if (epoch % 2) {
            MPI_CHECK(MPI_Start(&reqs[0]));
            MPI_CHECK(MPI_Start(&reqs[1]));
        } else {
            MPI_CHECK(MPI_Startall(2, reqs));
        }
        ready_all(reqs[1], PARTS, epoch);
        if (epoch % 3 == 0)
            wait_arrived(reqs[0], PARTS);
        MPI_Status sts[2];
        if (epoch % 2) {
            MPI_CHECK(MPI_Waitall(2, reqs, sts));
        } else {
            int flag = 0;
            while (!flag)
                MPI_CHECK(MPI_Test(&reqs[0], &flag, &sts[0]));
            MPI_CHECK(MPI_Wait(&reqs[1], &sts[1]));
        }
        CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
              "completion freed a partitioned request");
        int count = -1;
        MPI_CHECK(MPI_Get_count(&sts[0], MPI_INT, &count));
        CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 1 && count == PARTS * COUNT,
              "epoch %d: receive status source %d tag %d count %d", epoch, sts[0].MPI_SOURCE,
              sts[0].MPI_TAG, count);
        for (int i = 0; i < PARTS * COUNT; i++)
            CHECK(in[i] == value(left, i, epoch), "epoch %d: in[%d] = %d", epoch, i, in[i]);
        /* Completed and inactive: every partition reads as arrived (MPI
           4.1; MPICH 4.0.2 rejects an inactive request: OxMPI only). */
        int flag = 0;
        if (oxmpi)
            MPI_CHECK(MPI_Parrived(reqs[0], PARTS - 1, &flag));
        CHECK(flag || !oxmpi, "MPI_Parrived of an inactive request gave false");
    }
    MPI_CHECK(MPI_Request_free(&reqs[0]));
    MPI_CHECK(MPI_Request_free(&reqs[1]));
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL,
          "Request_free left a handle");
}

/* 8 partitions of 5 sent, 4 partitions of 10 received (the sizes match),
   into every other int (a vector type of 10 ints resized to span 20). */
static void test_shapes(void)
{
    MPI_Datatype vec, every_other;
    MPI_CHECK(MPI_Type_vector(2 * COUNT, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_create_resized(vec, 0, 4 * COUNT * (MPI_Aint)sizeof(int), &every_other));
    MPI_CHECK(MPI_Type_free(&vec));
    MPI_CHECK(MPI_Type_commit(&every_other));
    int out[PARTS * COUNT], in[2 * PARTS * COUNT];
    for (int i = 0; i < PARTS * COUNT; i++)
        out[i] = value(rank, i, 7);
    for (int i = 0; i < 2 * PARTS * COUNT; i++)
        in[i] = -1;
    MPI_Request reqs[2];
    MPI_CHECK(MPI_Precv_init(in, PARTS / 2, 1, every_other, left, 2, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &reqs[0]));
    MPI_CHECK(MPI_Psend_init(out, PARTS, COUNT, MPI_INT, right, 2, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &reqs[1]));
    MPI_CHECK(MPI_Type_free(&every_other));
    MPI_CHECK(MPI_Startall(2, reqs));
    ready_all(reqs[1], PARTS, 1);
    wait_arrived(reqs[0], PARTS / 2);
    MPI_CHECK(MPI_Waitall(2, reqs, statuses_ignore));
    for (int i = 0; i < 2 * PARTS * COUNT; i++) {
        int want = i % 2 ? -1 : value(left, i / 2, 7);
        CHECK(in[i] == want, "vector receive: in[%d] = %d, expected %d", i, in[i], want);
    }
    MPI_CHECK(MPI_Request_free(&reqs[0]));
    MPI_CHECK(MPI_Request_free(&reqs[1]));
}

/* Two operations with the same peer and tag match in the order they were
   initialized, though the second one's partitions are ready first; an
   ordinary message with that tag goes to the ordinary receive. */
static void test_matching_order(void)
{
    enum { M = 4 };
    int a[M], b[M], ra[M], rb[M], plain = rank, got = -1;
    for (int i = 0; i < M; i++) {
        a[i] = value(rank, i, 1);
        b[i] = value(rank, i, 2);
        ra[i] = rb[i] = -1;
    }
    MPI_Request s[2], r[2], pr;
    MPI_CHECK(MPI_Psend_init(a, M, 1, MPI_INT, right, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &s[0]));
    MPI_CHECK(MPI_Psend_init(b, 1, M, MPI_INT, right, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &s[1]));
    MPI_CHECK(MPI_Precv_init(ra, 2, M / 2, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    MPI_CHECK(MPI_Precv_init(rb, M, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    MPI_CHECK(MPI_Irecv(&got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &pr));
    /* The receives start in the opposite order too. */
    MPI_CHECK(MPI_Start(&r[1]));
    MPI_CHECK(MPI_Start(&r[0]));
    MPI_CHECK(MPI_Startall(2, s));
    MPI_CHECK(MPI_Pready(0, s[1]));
    MPI_CHECK(MPI_Send(&plain, 1, MPI_INT, right, 9, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Pready_range(0, M - 1, s[0]));
    MPI_CHECK(MPI_Waitall(2, s, statuses_ignore));
    MPI_CHECK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    for (int i = 0; i < M; i++)
        CHECK(ra[i] == value(left, i, 1) && rb[i] == value(left, i, 2),
              "matching order: ra[%d] = %d, rb[%d] = %d", i, ra[i], i, rb[i]);
    CHECK(got == left, "the ordinary receive got %d, expected %d", got, left);
    for (int i = 0; i < 2; i++) {
        MPI_CHECK(MPI_Request_free(&s[i]));
        MPI_CHECK(MPI_Request_free(&r[i]));
    }
}

static void test_errors(void)
{
    int buf[PARTS * COUNT], flag = 0;
    MPI_Request s, r;
    if (oxmpi) {
        /* MPI 4.1 (MPICH 4.0.2 crashes). */
        MPI_CHECK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag));
        CHECK(flag, "MPI_Parrived(MPI_REQUEST_NULL) gave false");
    }
    EXPECT_CLASS(MPI_Psend_init(buf, -1, COUNT, MPI_INT, right, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &s),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Psend_init(buf, PARTS, -1, MPI_INT, right, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &s),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Psend_init(buf, PARTS, COUNT, MPI_INT, size, 0, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &s),
                 MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Precv_init(buf, PARTS, COUNT, MPI_INT, left, -3, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &r),
                 MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Precv_init(buf, PARTS, COUNT, MPI_DATATYPE_NULL, left, 0, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &r),
                 MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Precv_init(buf, PARTS, COUNT, MPI_INT, left, 0, MPI_COMM_NULL,
                                MPI_INFO_NULL, &r),
                 MPI_ERR_COMM);
    /* A matched pair, used for the request errors, then run to the end. */
    MPI_CHECK(MPI_Psend_init(buf, PARTS, COUNT, MPI_INT, right, 5, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &s));
    MPI_CHECK(MPI_Precv_init(buf, PARTS, COUNT, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &r));
    if (oxmpi) {
        /* MPICH 4.0.2 does not check these (it asserts or corrupts). */
        EXPECT_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST);
        EXPECT_CLASS(MPI_Pready(0, r), MPI_ERR_REQUEST);
        EXPECT_CLASS(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST);
        EXPECT_CLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST);
        EXPECT_CLASS(MPI_Parrived(r, PARTS, &flag), MPI_ERR_ARG);
    }
    MPI_CHECK(MPI_Start(&r));
    MPI_CHECK(MPI_Start(&s));
    if (oxmpi) {
        EXPECT_CLASS(MPI_Pready(PARTS, s), MPI_ERR_ARG);
        EXPECT_CLASS(MPI_Pready(-1, s), MPI_ERR_ARG);
        EXPECT_CLASS(MPI_Pready_range(2, PARTS, s), MPI_ERR_ARG);
        EXPECT_CLASS(MPI_Pready_range(3, 2, s), MPI_ERR_ARG);
        int bad[2] = {1, PARTS + 4};
        EXPECT_CLASS(MPI_Pready_list(2, bad, s), MPI_ERR_ARG);
        int twice[2] = {1, 1};
        EXPECT_CLASS(MPI_Pready_list(2, twice, s), MPI_ERR_ARG);
        EXPECT_CLASS(MPI_Parrived(r, -1, &flag), MPI_ERR_ARG);
        EXPECT_CLASS(MPI_Start(&s), MPI_ERR_REQUEST);
        EXPECT_CLASS(MPI_Request_free(&s), MPI_ERR_REQUEST);
        /* None of these marked anything: partition 1 can still be marked once. */
        MPI_CHECK(MPI_Pready(1, s));
        EXPECT_CLASS(MPI_Pready(1, s), MPI_ERR_ARG);
        MPI_CHECK(MPI_Pready(0, s));
        MPI_CHECK(MPI_Pready_range(2, PARTS - 1, s));
    } else {
        MPI_CHECK(MPI_Pready_range(0, PARTS - 1, s));
    }
    MPI_CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Request_free(&s));
    MPI_CHECK(MPI_Request_free(&r));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    oxmpi = strncmp(lib, "OxMPI", 5) == 0;
    test_ring();
    test_shapes();
    test_matching_order();
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_errors();
    abicheck_pass("partitioned");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
