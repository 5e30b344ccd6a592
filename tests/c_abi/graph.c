/*
 * Graph and distributed graph topologies through the C ABI: Graph_create
 * (a ring over every rank, and a smaller graph leaving ranks out),
 * Topo_test (MPI_GRAPH, MPI_DIST_GRAPH), Graphdims_get, Graph_get,
 * Graph_neighbors(_count), Graph_map, Dist_graph_create_adjacent with
 * weights and MPI_UNWEIGHTED, Dist_graph_create with edges given by other
 * ranks (neighbor order is not defined there: compared sorted), a rank
 * without edges passing MPI_WEIGHTS_EMPTY, Dist_graph_neighbors(_count),
 * and errors (no topology, rank out of range, arrays too small).
 * Prints "PASS graph" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void test_graph(void)
{
    /* A ring: node i's neighbors are i - 1 and i + 1. */
    int *index = abicheck_malloc(size * sizeof(int));
    int *edges = abicheck_malloc(2 * size * sizeof(int));
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm ring;
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &ring));
    CHECK(ring != MPI_COMM_NULL, "every rank is a node of the ring");
    MPI_CHECK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    int status = -1, nnodes = -1, nedges = -1, r = -1;
    MPI_CHECK(MPI_Topo_test(ring, &status));
    CHECK(status == MPI_GRAPH, "Topo_test(ring) = %d", status);
    MPI_CHECK(MPI_Comm_rank(ring, &r));
    CHECK(r == rank, "graph rank %d", r);
    MPI_CHECK(MPI_Graphdims_get(ring, &nnodes, &nedges));
    CHECK(nnodes == size && nedges == 2 * size, "Graphdims_get = (%d, %d)", nnodes, nedges);
    int *gi = abicheck_malloc(size * sizeof(int));
    int *ge = abicheck_malloc(2 * size * sizeof(int));
    MPI_CHECK(MPI_Graph_get(ring, size, 2 * size, gi, ge));
    for (int i = 0; i < size; i++)
        CHECK(gi[i] == index[i], "Graph_get index[%d] = %d", i, gi[i]);
    for (int i = 0; i < 2 * size; i++)
        CHECK(ge[i] == edges[i], "Graph_get edges[%d] = %d", i, ge[i]);
    for (int node = 0; node < size; node++) {
        int n = -1, nb[2] = {-1, -1};
        MPI_CHECK(MPI_Graph_neighbors_count(ring, node, &n));
        CHECK(n == 2, "node %d has %d neighbors", node, n);
        MPI_CHECK(MPI_Graph_neighbors(ring, node, 2, nb));
        CHECK(nb[0] == edges[2 * node] && nb[1] == edges[2 * node + 1],
              "neighbors of %d: %d %d", node, nb[0], nb[1]);
    }
    int newrank = -2;
    MPI_CHECK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &newrank));
    CHECK(newrank == rank, "Graph_map gave %d", newrank);
    /* Errors: no graph, rank out of range, arrays too small. */
    int n;
    EXPECT_CLASS(MPI_Graph_neighbors_count(ring, size, &n), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &n), MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Graphdims_get(MPI_COMM_WORLD, &n, &n), MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Graph_get(ring, size - 1, 2 * size, gi, ge), MPI_ERR_ARG);
    int ind, outd, w;
    EXPECT_CLASS(MPI_Dist_graph_neighbors_count(ring, &ind, &outd, &w), MPI_ERR_TOPOLOGY);
    /* A dup keeps the graph. */
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(ring, &dup));
    MPI_CHECK(MPI_Topo_test(dup, &status));
    CHECK(status == MPI_GRAPH, "Topo_test(dup) = %d", status);
    MPI_CHECK(MPI_Comm_free(&dup));
    MPI_CHECK(MPI_Comm_free(&ring));
    /* A graph of the first rank only, with a self-loop. */
    int one_index = 1, one_edge = 0;
    MPI_Comm one;
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, 1, &one_index, &one_edge, 0, &one));
    CHECK((one == MPI_COMM_NULL) == (rank != 0), "Graph_create(1 node) on rank %d", rank);
    MPI_CHECK(MPI_Graph_map(MPI_COMM_WORLD, 1, &one_index, &one_edge, &newrank));
    CHECK(newrank == (rank == 0 ? 0 : MPI_UNDEFINED), "Graph_map(1 node) gave %d", newrank);
    if (one != MPI_COMM_NULL) {
        int nb = -1;
        MPI_CHECK(MPI_Graph_neighbors(one, 0, 1, &nb));
        CHECK(nb == 0, "self-loop neighbor %d", nb);
        MPI_CHECK(MPI_Comm_free(&one));
    }
    free(index);
    free(edges);
    free(gi);
    free(ge);
}

/* The irregular graph: rank r sends to r + 1 and 2r + 1 (mod size). */
static int dest_of(int r, int j) { return j == 0 ? (r + 1) % size : (2 * r + 1) % size; }
static int weight_of(int r, int j) { return 100 * r + j; }

static void check_dist(MPI_Comm g, int weighted_graph, const char *what)
{
    int status = -1, ind = -1, outd = -1, w = -1;
    MPI_CHECK(MPI_Topo_test(g, &status));
    CHECK(status == MPI_DIST_GRAPH, "%s: Topo_test = %d", what, status);
    MPI_CHECK(MPI_Dist_graph_neighbors_count(g, &ind, &outd, &w));
    /* Expected in-edges: every (s, j) with dest_of(s, j) == rank. */
    int want_in = 0, want_src[64], want_sw[64];
    for (int s = 0; s < size; s++)
        for (int j = 0; j < 2; j++)
            if (dest_of(s, j) == rank) {
                want_src[want_in] = s;
                want_sw[want_in++] = weight_of(s, j);
            }
    CHECK(ind == want_in && outd == 2 && w == weighted_graph,
          "%s: counts (%d, %d, %d), expected (%d, 2, %d)", what, ind, outd, w, want_in,
          weighted_graph);
    int src[64], sw[64], dst[2], dw[2];
    MPI_CHECK(MPI_Dist_graph_neighbors(g, ind, src, sw, outd, dst, dw));
    /* Order is only defined for the adjacent form: compare (source,
       weight) pairs as sorted keys. */
    int got_keys[64], want_keys[64];
    for (int i = 0; i < ind; i++) {
        got_keys[i] = src[i] * 1000000 + (weighted_graph ? sw[i] : 0);
        want_keys[i] = want_src[i] * 1000000 + (weighted_graph ? want_sw[i] : 0);
    }
    qsort(got_keys, ind, sizeof(int), cmp_int);
    qsort(want_keys, ind, sizeof(int), cmp_int);
    for (int i = 0; i < ind; i++)
        CHECK(got_keys[i] == want_keys[i], "%s: in-edge %d: key %d, expected %d", what, i,
              got_keys[i], want_keys[i]);
    int got_out[2] = {dst[0] * 1000000 + (weighted_graph ? dw[0] : 0),
                      dst[1] * 1000000 + (weighted_graph ? dw[1] : 0)};
    int want_out[2] = {dest_of(rank, 0) * 1000000 + (weighted_graph ? weight_of(rank, 0) : 0),
                       dest_of(rank, 1) * 1000000 + (weighted_graph ? weight_of(rank, 1) : 0)};
    qsort(got_out, 2, sizeof(int), cmp_int);
    qsort(want_out, 2, sizeof(int), cmp_int);
    CHECK(got_out[0] == want_out[0] && got_out[1] == want_out[1], "%s: out-edges", what);
}

static void test_dist_graph(void)
{
    int want_in = 0, src[64], sw[64];
    for (int s = 0; s < size; s++)
        for (int j = 0; j < 2; j++)
            if (dest_of(s, j) == rank) {
                src[want_in] = s;
                sw[want_in++] = weight_of(s, j);
            }
    int dst[2] = {dest_of(rank, 0), dest_of(rank, 1)};
    int dw[2] = {weight_of(rank, 0), weight_of(rank, 1)};
    MPI_Comm g;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, want_in, src, sw, 2, dst, dw,
                                             MPI_INFO_NULL, 0, &g));
    check_dist(g, 1, "adjacent, weighted");
    /* The adjacent form keeps the order given. */
    int osrc[64], osw[64], odst[2], odw[2];
    MPI_CHECK(MPI_Dist_graph_neighbors(g, want_in, osrc, osw, 2, odst, odw));
    for (int i = 0; i < want_in; i++)
        CHECK(osrc[i] == src[i] && osw[i] == sw[i], "adjacent order: in-edge %d", i);
    CHECK(odst[0] == dst[0] && odst[1] == dst[1] && odw[0] == dw[0] && odw[1] == dw[1],
          "adjacent order: out-edges");
    /* MPI_UNWEIGHTED as an output: weights are not written. */
    MPI_CHECK(MPI_Dist_graph_neighbors(g, want_in, osrc, MPI_UNWEIGHTED, 2, odst,
                                       MPI_UNWEIGHTED));
    MPI_CHECK(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
    if (want_in > 0)
        EXPECT_CLASS(MPI_Dist_graph_neighbors(g, want_in - 1, osrc, osw, 2, odst, odw),
                     MPI_ERR_ARG);
    int n;
    EXPECT_CLASS(MPI_Graph_neighbors_count(g, 0, &n), MPI_ERR_TOPOLOGY);
    MPI_CHECK(MPI_Comm_free(&g));

    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, want_in, src, MPI_UNWEIGHTED, 2,
                                             dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    check_dist(g, 0, "adjacent, unweighted");
    MPI_CHECK(MPI_Comm_free(&g));

    /* Routed: rank (s + 1) % size gives the edges of source s; with more
       than one rank, rank 0 gives nothing more (MPI_WEIGHTS_EMPTY). */
    int s = (rank + size - 1) % size, deg = 2, d[2] = {dest_of(s, 0), dest_of(s, 1)};
    int w[2] = {weight_of(s, 0), weight_of(s, 1)};
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "some_hint", "ignored"));
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &s, &deg, d, w, info, 1, &g));
    check_dist(g, 1, "routed, weighted");
    MPI_CHECK(MPI_Comm_free(&g));
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &s, &deg, d, MPI_UNWEIGHTED,
                                    MPI_INFO_NULL, 0, &g));
    check_dist(g, 0, "routed, unweighted");
    MPI_CHECK(MPI_Comm_free(&g));
    /* Every edge given by rank 0; the others give none. */
    int all_src[64], all_deg[64], all_dst[128], all_w[128], ns = 0, ne = 0;
    if (rank == 0)
        for (int r = 0; r < size; r++) {
            all_src[ns] = r;
            all_deg[ns++] = 2;
            for (int j = 0; j < 2; j++) {
                all_dst[ne] = dest_of(r, j);
                all_w[ne++] = weight_of(r, j);
            }
        }
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, ns, all_src, all_deg, all_dst,
                                    rank == 0 ? all_w : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    check_dist(g, 1, "all edges from rank 0");
    MPI_CHECK(MPI_Comm_free(&g));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_graph();
    test_dist_graph();
    abicheck_pass("graph");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
