/*
 * Point-to-point checks: token ring, Isend/Irecv/Waitall all-to-all,
 * Sendrecv shifts, ANY_SOURCE/ANY_TAG with status checks, Probe + Get_count
 * on messages of unknown length, and a 4 MiB message verified element by
 * element (both non-blocking and blocking, i.e. the rendezvous path).
 * Prints "PASS p2p" from rank 0.
 */
#include "oxcheck.h"

#include <stdint.h>
#include <string.h>

static int rank, size;

/* Payload value that identifies sender, receiver, element and test. */
static int stamp(int src, int dst, int i, int test)
{
    return ((test * 131 + src) * 257 + dst) * 1009 + i;
}

static void ring(void)
{
    /* A token travels 0 -> 1 -> ... -> size-1 -> 0; each rank adds its rank. */
    int token, expected = size * (size - 1) / 2;
    if (size == 1) {
        MPI_Request req;
        token = 0;
        MPI_CHECK(MPI_Isend(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &req));
        int got = -1;
        MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(got == 0, "ring: self message carried %d, expected 0", got);
        return;
    }
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank == 0) {
        token = 0;
        MPI_CHECK(MPI_Send(&token, 1, MPI_INT, next, 1, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(&token, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == expected, "ring: token came back as %d, expected %d", token, expected);
    } else {
        MPI_CHECK(MPI_Recv(&token, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == rank * (rank - 1) / 2, "ring: token from %d is %d, expected %d", prev,
              token, rank * (rank - 1) / 2);
        token += rank;
        MPI_CHECK(MPI_Send(&token, 1, MPI_INT, next, 1, MPI_COMM_WORLD));
    }
}

static void nonblocking_all_to_all(void)
{
    /* Every rank sends COUNT ints to every rank (itself included). */
    enum { COUNT = 64 };
    int *sendbuf = oxcheck_malloc(sizeof(int) * COUNT * size);
    int *recvbuf = oxcheck_malloc(sizeof(int) * COUNT * size);
    MPI_Request *reqs = oxcheck_malloc(sizeof(MPI_Request) * 2 * size);
    MPI_Status *stats = oxcheck_malloc(sizeof(MPI_Status) * 2 * size);
    for (int peer = 0; peer < size; peer++) {
        for (int i = 0; i < COUNT; i++) {
            sendbuf[peer * COUNT + i] = stamp(rank, peer, i, 2);
            recvbuf[peer * COUNT + i] = -1;
        }
    }
    for (int peer = 0; peer < size; peer++)
        MPI_CHECK(MPI_Irecv(recvbuf + peer * COUNT, COUNT, MPI_INT, peer, 20 + peer,
                            MPI_COMM_WORLD, &reqs[peer]));
    for (int peer = 0; peer < size; peer++)
        MPI_CHECK(MPI_Isend(sendbuf + peer * COUNT, COUNT, MPI_INT, peer, 20 + rank,
                            MPI_COMM_WORLD, &reqs[size + peer]));
    MPI_CHECK(MPI_Waitall(2 * size, reqs, stats));
    for (int peer = 0; peer < size; peer++) {
        int count = -1;
        CHECK(stats[peer].MPI_SOURCE == peer, "Irecv %d: status source %d", peer,
              stats[peer].MPI_SOURCE);
        CHECK(stats[peer].MPI_TAG == 20 + peer, "Irecv %d: status tag %d, expected %d", peer,
              stats[peer].MPI_TAG, 20 + peer);
        MPI_CHECK(MPI_Get_count(&stats[peer], MPI_INT, &count));
        CHECK(count == COUNT, "Irecv %d: count %d, expected %d", peer, count, COUNT);
        for (int i = 0; i < COUNT; i++) {
            int want = stamp(peer, rank, i, 2), got = recvbuf[peer * COUNT + i];
            CHECK(got == want, "Irecv from %d: element %d is %d, expected %d", peer, i, got,
                  want);
        }
    }
    free(sendbuf);
    free(recvbuf);
    free(reqs);
    free(stats);
}

static void sendrecv_shifts(void)
{
    /* For every shift k, send to rank+k and receive from rank-k at once. */
    enum { COUNT = 17 };
    int out[COUNT], in[COUNT];
    for (int k = 0; k < size; k++) {
        int dst = (rank + k) % size, src = (rank + size - k) % size;
        MPI_Status st;
        for (int i = 0; i < COUNT; i++) {
            out[i] = stamp(rank, dst, i, 3 + k);
            in[i] = -1;
        }
        MPI_CHECK(MPI_Sendrecv(out, COUNT, MPI_INT, dst, 30 + k, in, COUNT, MPI_INT, src, 30 + k,
                               MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 30 + k,
              "Sendrecv shift %d: status source %d tag %d, expected %d and %d", k, st.MPI_SOURCE,
              st.MPI_TAG, src, 30 + k);
        for (int i = 0; i < COUNT; i++)
            CHECK(in[i] == stamp(src, rank, i, 3 + k),
                  "Sendrecv shift %d: element %d is %d, expected %d", k, i, in[i],
                  stamp(src, rank, i, 3 + k));
    }
}

static void wildcards(void)
{
    /*
     * Every rank sends rank+1 ints to rank 0 with tag 100+rank; rank 0
     * receives with ANY_SOURCE/ANY_TAG and checks the status says who sent
     * what, and that every rank was heard exactly once. A private
     * communicator keeps later tests' messages out of the wildcards' reach.
     */
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    int mine[16];
    MPI_Request req;
    for (int i = 0; i <= rank && i < 16; i++)
        mine[i] = stamp(rank, 0, i, 50);
    int mycount = rank + 1 < 16 ? rank + 1 : 16;
    MPI_CHECK(MPI_Isend(mine, mycount, MPI_INT, 0, 100 + rank, comm, &req));
    if (rank == 0) {
        int *seen = oxcheck_malloc(sizeof(int) * size);
        memset(seen, 0, sizeof(int) * size);
        for (int m = 0; m < size; m++) {
            int buf[16], count = -1;
            MPI_Status st;
            MPI_CHECK(MPI_Recv(buf, 16, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
            int src = st.MPI_SOURCE;
            CHECK(src >= 0 && src < size, "ANY_SOURCE: status source %d out of range", src);
            CHECK(!seen[src], "ANY_SOURCE: heard from rank %d twice", src);
            seen[src] = 1;
            CHECK(st.MPI_TAG == 100 + src, "ANY_TAG: tag %d from rank %d, expected %d",
                  st.MPI_TAG, src, 100 + src);
            MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
            int want = src + 1 < 16 ? src + 1 : 16;
            CHECK(count == want, "ANY_SOURCE: count %d from rank %d, expected %d", count, src,
                  want);
            for (int i = 0; i < count; i++)
                CHECK(buf[i] == stamp(src, 0, i, 50),
                      "ANY_SOURCE: element %d from rank %d is %d, expected %d", i, src, buf[i],
                      stamp(src, 0, i, 50));
        }
        free(seen);
    }
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_free(&comm));
}

static void probe_unknown_length(void)
{
    /* rank sends 7*rank+3 ints to rank+1, which learns the length by Probe. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int n_out = 7 * rank + 3, n_in_want = 7 * prev + 3;
    int *out = oxcheck_malloc(sizeof(int) * n_out);
    for (int i = 0; i < n_out; i++)
        out[i] = stamp(rank, next, i, 60);
    MPI_Request req;
    MPI_CHECK(MPI_Isend(out, n_out, MPI_INT, next, 60, MPI_COMM_WORLD, &req));
    MPI_Status st;
    int count = -1, flag = 0;
    MPI_CHECK(MPI_Probe(prev, 60, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 60, "Probe: status source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == n_in_want, "Probe: count %d, expected %d", count, n_in_want);
    MPI_CHECK(MPI_Iprobe(prev, 60, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag, "Iprobe did not see a message that Probe already found");
    int *in = oxcheck_malloc(sizeof(int) * count);
    MPI_CHECK(MPI_Recv(in, count, MPI_INT, prev, 60, MPI_COMM_WORLD, &st));
    for (int i = 0; i < count; i++)
        CHECK(in[i] == stamp(prev, rank, i, 60), "Probe recv: element %d is %d, expected %d", i,
              in[i], stamp(prev, rank, i, 60));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    free(out);
    free(in);
}

/* Deterministic per-element value of the large messages. */
static uint32_t big_value(int src, size_t i)
{
    uint32_t x = (uint32_t)src * 2654435761u ^ (uint32_t)i * 40503u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    return x ^ (x >> 15);
}

static void verify_big(const uint32_t *buf, size_t n, int src, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(buf[i] == big_value(src, i), "%s: element %zu from rank %d is %u, expected %u",
              what, i, src, buf[i], big_value(src, i));
}

static void large_messages(void)
{
    const size_t n = (4u << 20) / sizeof(uint32_t); /* 4 MiB */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    uint32_t *out = oxcheck_malloc(n * sizeof(uint32_t));
    uint32_t *in = oxcheck_malloc(n * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        out[i] = big_value(rank, i);
        in[i] = 0xdeadbeefu;
    }
    MPI_Request reqs[2];
    MPI_Status stats[2], st;
    int count = -1;
    MPI_CHECK(MPI_Irecv(in, (int)n, MPI_UINT32_T, prev, 70, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Isend(out, (int)n, MPI_UINT32_T, next, 70, MPI_COMM_WORLD, &reqs[1]));
    MPI_CHECK(MPI_Waitall(2, reqs, stats));
    verify_big(in, n, prev, "4 MiB Isend/Irecv");

    /* Blocking 4 MiB from rank 0 to the last rank and back with Ssend. */
    if (size > 1 && (rank == 0 || rank == size - 1)) {
        int peer = rank == 0 ? size - 1 : 0;
        memset(in, 0, n * sizeof(uint32_t));
        if (rank == 0) {
            MPI_CHECK(MPI_Send(out, (int)n, MPI_UINT32_T, peer, 71, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Recv(in, (int)n, MPI_UINT32_T, peer, 72, MPI_COMM_WORLD, &st));
        } else {
            MPI_CHECK(MPI_Recv(in, (int)n, MPI_UINT32_T, peer, 71, MPI_COMM_WORLD, &st));
            MPI_CHECK(MPI_Ssend(out, (int)n, MPI_UINT32_T, peer, 72, MPI_COMM_WORLD));
        }
        MPI_CHECK(MPI_Get_count(&st, MPI_UINT32_T, &count));
        CHECK((size_t)count == n, "4 MiB blocking: count %d, expected %zu", count, n);
        verify_big(in, n, peer, "4 MiB blocking Send/Recv");
    }
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    ring();
    nonblocking_all_to_all();
    sendrecv_shifts();
    wildcards();
    probe_unknown_length();
    large_messages();
    oxcheck_pass("p2p");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
