/*
 * Neighborhood collectives through the C ABI on 2-D cartesian grids
 * (periodic and open), a ring graph (Graph_create) and an irregular
 * distributed graph (Dist_graph_create_adjacent, with self-loops and a
 * repeated edge): Neighbor_allgather(v), Neighbor_alltoall(v,w) with a
 * strided derived receive type, their non-blocking forms outstanding
 * together, and _c forms. Each result is compared with what the neighbor
 * lists of every rank say should arrive: block i of the receive buffer
 * comes from in-neighbor i; blocks of MPI_PROC_NULL neighbors are left
 * untouched; when a rank is a neighbor more than once, of the m messages
 * it sends to this rank the k-th fills the (m-1-k)-th of its blocks here
 * (what a rank sends towards +1 on a periodic grid of extent 1 or 2
 * arrives in the block for -1, MPICH's pairing in alltoall). In the v and
 * w forms a block's size and contents depend on the (sender, receiver)
 * pair only, so repeated neighbors carry the same data: MPICH 4.0.2 pairs
 * them in order there, unlike its alltoall (OxMPI pairs all in reverse).
 * MPICH 4.0.2's Neighbor_alltoallw loses one of two messages along
 * repeated edges of a distributed graph, so alltoallw is not run there.
 * Errors: no topology.
 * Prints "PASS neighbor" from rank 0.
 */
#include "abicheck.h"

#define MAXN 64
#define UNTOUCHED (-7)

static int rank, size;

typedef struct {
    int in, out;
    int src[MAXN], dst[MAXN];
} nbrs_t;

/* The topology under test and how to list any rank's neighbors. */
static MPI_Comm topo;
static void (*nbrs_of)(int r, nbrs_t *n);

/* For each in-slot of this rank: the sender (-1 for MPI_PROC_NULL) and
   the sender's out-slot whose block lands there. */
static int pair_s[MAXN], pair_j[MAXN];
static nbrs_t me;

static void compute_pairing(void)
{
    nbrs_of(rank, &me);
    for (int i = 0; i < me.in; i++) {
        int s = me.src[i];
        pair_s[i] = -1;
        if (s == MPI_PROC_NULL)
            continue;
        int m = 0, k = 0;
        for (int x = 0; x < me.in; x++)
            if (me.src[x] == s) {
                m++;
                if (x < i)
                    k++;
            }
        nbrs_t sn;
        nbrs_of(s, &sn);
        int want = m - 1 - k, seen = 0;
        for (int j = 0; j < sn.out; j++)
            if (sn.dst[j] == rank && seen++ == want) {
                pair_s[i] = s;
                pair_j[i] = j;
            }
        CHECK(pair_s[i] == s, "no out-edge of %d pairs with in-slot %d", s, i);
    }
}

static int val(int s, int j, int e) { return s * 1000 + j * 10 + e; }
static int len_of(int r) { return r % 3 + 1; }
/* Elements from s to d in the v and w forms (none to MPI_PROC_NULL). */
static int cnt(int s, int d) { return d == MPI_PROC_NULL ? 0 : (s + d) % 3; }

/* Displacements (in elements) of blocks of `counts` laid out in reverse
   order with a one-element gap after each; returns the total length. */
static int reversed_with_gaps(int n, const int *counts, int *displs)
{
    int at = 0;
    for (int i = n - 1; i >= 0; i--) {
        displs[i] = at;
        at += counts[i] + 1;
    }
    return at;
}

static void test_allgather(const char *what)
{
    int send[2] = {rank * 10 + 1, rank * 10 + 2}, recv[2 * MAXN];
    for (int i = 0; i < 2 * MAXN; i++)
        recv[i] = UNTOUCHED;
    MPI_CHECK(MPI_Neighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, topo));
    for (int i = 0; i < me.in; i++)
        for (int e = 0; e < 2; e++) {
            int want = pair_s[i] < 0 ? UNTOUCHED : pair_s[i] * 10 + 1 + e;
            CHECK(recv[2 * i + e] == want, "%s allgather: block %d[%d] = %d, expected %d", what,
                  i, e, recv[2 * i + e], want);
        }
    /* The _c form, non-blocking. */
    MPI_Request r;
    for (int i = 0; i < 2 * MAXN; i++)
        recv[i] = UNTOUCHED;
    MPI_CHECK(MPI_Ineighbor_allgather_c(send, 2, MPI_INT, recv, 2, MPI_INT, topo, &r));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < me.in; i++)
        CHECK(recv[2 * i + 1] == (pair_s[i] < 0 ? UNTOUCHED : pair_s[i] * 10 + 2),
              "%s ineighbor_allgather_c: block %d", what, i);
}

static void test_allgatherv(const char *what)
{
    int counts[MAXN], displs[MAXN], send[3], recv[4 * MAXN + MAXN];
    for (int e = 0; e < len_of(rank); e++)
        send[e] = val(rank, 0, e);
    for (int i = 0; i < me.in; i++)
        counts[i] = pair_s[i] < 0 ? 2 : len_of(pair_s[i]);
    int total = reversed_with_gaps(me.in, counts, displs);
    for (int i = 0; i < total; i++)
        recv[i] = UNTOUCHED;
    MPI_CHECK(MPI_Neighbor_allgatherv(send, len_of(rank), MPI_INT, recv, counts, displs,
                                      MPI_INT, topo));
    for (int i = 0; i < me.in; i++)
        for (int e = 0; e < counts[i]; e++) {
            int want = pair_s[i] < 0 ? UNTOUCHED : val(pair_s[i], 0, e);
            CHECK(recv[displs[i] + e] == want, "%s allgatherv: block %d[%d] = %d, expected %d",
                  what, i, e, recv[displs[i] + e], want);
        }
    for (int i = 0; i < me.in; i++)
        CHECK(recv[displs[i] + counts[i]] == UNTOUCHED, "%s allgatherv: gap after block %d",
              what, i);
}

static void test_alltoall(const char *what)
{
    int send[2 * MAXN], recv[2 * MAXN];
    for (int j = 0; j < me.out; j++)
        for (int e = 0; e < 2; e++)
            send[2 * j + e] = val(rank, j, e);
    for (int i = 0; i < 2 * MAXN; i++)
        recv[i] = UNTOUCHED;
    MPI_CHECK(MPI_Neighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, topo));
    for (int i = 0; i < me.in; i++)
        for (int e = 0; e < 2; e++) {
            int want = pair_s[i] < 0 ? UNTOUCHED : val(pair_s[i], pair_j[i], e);
            CHECK(recv[2 * i + e] == want, "%s alltoall: block %d[%d] = %d, expected %d", what,
                  i, e, recv[2 * i + e], want);
        }
    for (int i = 0; i < 2 * MAXN; i++)
        recv[i] = UNTOUCHED;
    MPI_CHECK(MPI_Neighbor_alltoall_c(send, 2, MPI_INT, recv, 2, MPI_INT, topo));
    for (int i = 0; i < me.in; i++)
        CHECK(recv[2 * i] == (pair_s[i] < 0 ? UNTOUCHED : val(pair_s[i], pair_j[i], 0)),
              "%s alltoall_c: block %d", what, i);
}

static void test_alltoallv(const char *what)
{
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN], send[3 * MAXN], recv[3 * MAXN + MAXN];
    int at = 0;
    for (int j = 0; j < me.out; j++) {
        sc[j] = cnt(rank, me.dst[j]);
        sd[j] = at;
        for (int e = 0; e < sc[j]; e++)
            send[at++] = val(rank, me.dst[j], e);
    }
    for (int i = 0; i < me.in; i++)
        rc[i] = pair_s[i] < 0 ? 1 : cnt(pair_s[i], rank);
    int total = reversed_with_gaps(me.in, rc, rd);
    for (int i = 0; i < total; i++)
        recv[i] = UNTOUCHED;
    MPI_CHECK(MPI_Neighbor_alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, topo));
    for (int i = 0; i < me.in; i++)
        for (int e = 0; e < rc[i]; e++) {
            int want = pair_s[i] < 0 ? UNTOUCHED : val(pair_s[i], rank, e);
            CHECK(recv[rd[i] + e] == want, "%s alltoallv: block %d[%d] = %d, expected %d", what,
                  i, e, recv[rd[i] + e], want);
        }
    /* The _c form with MPI_Count / MPI_Aint arrays. */
    MPI_Count scc[MAXN], rcc[MAXN];
    MPI_Aint sdc[MAXN], rdc[MAXN];
    for (int j = 0; j < me.out; j++) {
        scc[j] = sc[j];
        sdc[j] = sd[j];
    }
    for (int i = 0; i < me.in; i++) {
        rcc[i] = rc[i];
        rdc[i] = rd[i];
    }
    for (int i = 0; i < total; i++)
        recv[i] = UNTOUCHED;
    MPI_CHECK(MPI_Neighbor_alltoallv_c(send, scc, sdc, MPI_INT, recv, rcc, rdc, MPI_INT, topo));
    for (int i = 0; i < me.in; i++)
        if (rc[i] > 0)
            CHECK(recv[rd[i]] == (pair_s[i] < 0 ? UNTOUCHED : val(pair_s[i], rank, 0)),
                  "%s alltoallv_c: block %d", what, i);
}

/* Alltoallw: ints sent contiguously, received every other int (a
   resized, non-contiguous type) at byte displacements. */
static void test_alltoallw(const char *what)
{
    MPI_Datatype strided;
    MPI_CHECK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided));
    MPI_CHECK(MPI_Type_commit(&strided));
    int sc[MAXN], rc[MAXN], send[4 * MAXN], recv[8 * MAXN + 2 * MAXN];
    MPI_Aint sd[MAXN], rd[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN];
    int at = 0;
    for (int j = 0; j < me.out; j++) {
        sc[j] = cnt(rank, me.dst[j]) + 1;
        sd[j] = at * (MPI_Aint)sizeof(int);
        st[j] = MPI_INT;
        for (int e = 0; e < sc[j]; e++)
            send[at++] = val(rank, me.dst[j], e);
    }
    at = 0;
    for (int i = 0; i < me.in; i++) {
        rc[i] = pair_s[i] < 0 ? 1 : cnt(pair_s[i], rank) + 1;
        rd[i] = at * (MPI_Aint)sizeof(int);
        rt[i] = strided;
        at += 2 * rc[i] + 1;
    }
    for (int i = 0; i < at; i++)
        recv[i] = UNTOUCHED;
    MPI_CHECK(MPI_Neighbor_alltoallw(send, sc, sd, st, recv, rc, rd, rt, topo));
    for (int i = 0; i < me.in; i++) {
        int *b = recv + rd[i] / sizeof(int);
        for (int e = 0; e < rc[i]; e++) {
            int want = pair_s[i] < 0 ? UNTOUCHED : val(pair_s[i], rank, e);
            CHECK(b[2 * e] == want, "%s alltoallw: block %d[%d] = %d, expected %d", what, i, e,
                  b[2 * e], want);
            CHECK(b[2 * e + 1] == UNTOUCHED, "%s alltoallw: stride gap %d[%d]", what, i, e);
        }
    }
    /* Non-blocking _c form. */
    MPI_Count scc[MAXN], rcc[MAXN];
    for (int j = 0; j < me.out; j++)
        scc[j] = sc[j];
    for (int i = 0; i < me.in; i++)
        rcc[i] = rc[i];
    for (int i = 0; i < at; i++)
        recv[i] = UNTOUCHED;
    MPI_Request r;
    MPI_CHECK(MPI_Ineighbor_alltoallw_c(send, scc, sd, st, recv, rcc, rd, rt, topo, &r));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < me.in; i++) {
        int *b = recv + rd[i] / sizeof(int);
        int want = pair_s[i] < 0 ? UNTOUCHED : val(pair_s[i], rank, rc[i] - 1);
        CHECK(b[2 * (rc[i] - 1)] == want, "%s ialltoallw_c: block %d", what, i);
    }
    MPI_CHECK(MPI_Type_free(&strided));
}

/* Three non-blocking ones outstanding at once, completed together. */
static void test_nonblocking(const char *what)
{
    int a_send[2 * MAXN], a_recv[2 * MAXN], b_recv[MAXN], v_recv[3 * MAXN + MAXN];
    int counts[MAXN], displs[MAXN], one = -rank, mine[3];
    for (int j = 0; j < me.out; j++)
        for (int e = 0; e < 2; e++)
            a_send[2 * j + e] = val(rank + 1, j, e);
    for (int i = 0; i < 2 * MAXN; i++)
        a_recv[i] = UNTOUCHED;
    for (int i = 0; i < MAXN; i++)
        b_recv[i] = UNTOUCHED;
    for (int e = 0; e < len_of(rank); e++)
        mine[e] = val(rank, 5, e);
    for (int i = 0; i < me.in; i++)
        counts[i] = pair_s[i] < 0 ? 1 : len_of(pair_s[i]);
    int total = reversed_with_gaps(me.in, counts, displs);
    for (int i = 0; i < total; i++)
        v_recv[i] = UNTOUCHED;
    MPI_Request reqs[3];
    MPI_Status sts[3];
    MPI_CHECK(MPI_Ineighbor_alltoall(a_send, 2, MPI_INT, a_recv, 2, MPI_INT, topo, &reqs[0]));
    MPI_CHECK(MPI_Ineighbor_allgather(&one, 1, MPI_INT, b_recv, 1, MPI_INT, topo, &reqs[1]));
    MPI_CHECK(MPI_Ineighbor_allgatherv(mine, len_of(rank), MPI_INT, v_recv, counts, displs,
                                       MPI_INT, topo, &reqs[2]));
    MPI_CHECK(MPI_Waitall(3, reqs, sts));
    for (int i = 0; i < me.in; i++) {
        int s = pair_s[i];
        CHECK(a_recv[2 * i] == (s < 0 ? UNTOUCHED : val(s + 1, pair_j[i], 0)),
              "%s ineighbor_alltoall: block %d", what, i);
        CHECK(b_recv[i] == (s < 0 ? UNTOUCHED : -s), "%s ineighbor_allgather: block %d", what,
              i);
        CHECK(v_recv[displs[i]] == (s < 0 ? UNTOUCHED : val(s, 5, 0)),
              "%s ineighbor_allgatherv: block %d", what, i);
    }
}

static void test_all(const char *what, int with_w)
{
    compute_pairing();
    /* The library's neighbor lists are the ones expected. */
    int status;
    MPI_CHECK(MPI_Topo_test(topo, &status));
    if (status == MPI_DIST_GRAPH) {
        int in, out, w, src[MAXN], dst[MAXN];
        MPI_CHECK(MPI_Dist_graph_neighbors_count(topo, &in, &out, &w));
        CHECK(in == me.in && out == me.out, "%s: degrees (%d, %d)", what, in, out);
        MPI_CHECK(MPI_Dist_graph_neighbors(topo, in, src, MPI_UNWEIGHTED, out, dst,
                                           MPI_UNWEIGHTED));
        for (int i = 0; i < in; i++)
            CHECK(src[i] == me.src[i], "%s: source %d", what, i);
    }
    test_allgather(what);
    test_allgatherv(what);
    test_alltoall(what);
    test_alltoallv(what);
    if (with_w)
        test_alltoallw(what);
    test_nonblocking(what);
}

/* ------------------------------------------------------------ topologies */

static int dims[2], periods[2];

static void cart_nbrs(int r, nbrs_t *n)
{
    int c[2];
    MPI_CHECK(MPI_Cart_coords(topo, r, 2, c));
    n->in = n->out = 4;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 2; k++) {
            int cc[2] = {c[0], c[1]};
            cc[d] += k ? 1 : -1;
            int v;
            if (!periods[d] && (cc[d] < 0 || cc[d] >= dims[d]))
                v = MPI_PROC_NULL;
            else {
                cc[d] = (cc[d] + dims[d]) % dims[d];
                MPI_CHECK(MPI_Cart_rank(topo, cc, &v));
            }
            n->src[2 * d + k] = n->dst[2 * d + k] = v;
        }
}

static void ring_nbrs(int r, nbrs_t *n)
{
    n->in = n->out = 2;
    n->src[0] = n->dst[0] = (r + size - 1) % size;
    n->src[1] = n->dst[1] = (r + 1) % size;
}

/* Out-edges of r: next, 2r + 1, itself when r % 3 == 0, next again for
   odd r; in-edges ordered by source rank then position. */
static void dist_nbrs(int r, nbrs_t *n)
{
    n->out = 0;
    n->dst[n->out++] = (r + 1) % size;
    n->dst[n->out++] = (2 * r + 1) % size;
    if (r % 3 == 0)
        n->dst[n->out++] = r;
    if (r % 2 == 1)
        n->dst[n->out++] = (r + 1) % size;
    n->in = 0;
    for (int s = 0; s < size; s++) {
        int d[4], nd = 0;
        d[nd++] = (s + 1) % size;
        d[nd++] = (2 * s + 1) % size;
        if (s % 3 == 0)
            d[nd++] = s;
        if (s % 2 == 1)
            d[nd++] = (s + 1) % size;
        for (int j = 0; j < nd; j++)
            if (d[j] == r)
                n->src[n->in++] = s;
    }
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x = 0, y[4];
    EXPECT_CLASS(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_TOPOLOGY);
    MPI_Request r;
    EXPECT_CLASS(MPI_Ineighbor_alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &r),
                 MPI_ERR_TOPOLOGY);

    const int variants[3][2] = {{1, 1}, {0, 0}, {1, 0}};
    const char *names[3] = {"cart periodic", "cart open", "cart mixed"};
    for (int v = 0; v < 3; v++) {
        dims[0] = dims[1] = 0;
        MPI_CHECK(MPI_Dims_create(size, 2, dims));
        periods[0] = variants[v][0];
        periods[1] = variants[v][1];
        MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &topo));
        nbrs_of = cart_nbrs;
        test_all(names[v], 1);
        MPI_CHECK(MPI_Comm_free(&topo));
    }

    int index[MAXN], edges[2 * MAXN];
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &topo));
    nbrs_of = ring_nbrs;
    test_all("ring graph", 1);
    MPI_CHECK(MPI_Comm_free(&topo));

    nbrs_t mine;
    dist_nbrs(rank, &mine);
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, mine.in, mine.src, MPI_UNWEIGHTED,
                                             mine.out, mine.dst, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                             0, &topo));
    nbrs_of = dist_nbrs;
    test_all("dist graph", 0);
    MPI_CHECK(MPI_Comm_free(&topo));

    abicheck_pass("neighbor");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
