/*
 * Datatypes stay small whatever their counts: vectors, hvectors and
 * contiguous types of 2^30 and more elements (of MPI_INT and of the pair
 * MPI_DOUBLE_INT, nested two deep) are built, committed and queried in
 * well under a second and a few MB, and their sizes, extents and element
 * counts are right. A small vector of the same shape moves data right.
 * Prints "PASS huge_count_types" from rank 0.
 */
#include "abicheck.h"
#include <sys/resource.h>
#include <time.h>

static long max_rss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    long rss = max_rss_kb();
    double t0 = now();
    const int n = 1 << 30;
    MPI_Datatype v, p, pp, c;
    MPI_CHECK(MPI_Type_vector(n, 1, 2, MPI_INT, &v));
    MPI_CHECK(MPI_Type_commit(&v));
    MPI_CHECK(MPI_Type_vector(n, 3, 5, MPI_DOUBLE_INT, &p));
    MPI_CHECK(MPI_Type_commit(&p));
    MPI_Aint lb, ext;
    MPI_CHECK(MPI_Type_get_extent(p, &lb, &ext));
    MPI_CHECK(MPI_Type_create_hvector(4, 1, 2 * ext, p, &pp));
    MPI_CHECK(MPI_Type_commit(&pp));
    MPI_CHECK(MPI_Type_contiguous(n, v, &c));
    MPI_CHECK(MPI_Type_commit(&c));
    MPI_Count sz, lb_c, ext_c;
    MPI_CHECK(MPI_Type_size_c(v, &sz));
    MPI_CHECK(MPI_Type_get_extent_c(v, &lb_c, &ext_c));
    CHECK(sz == 4LL * n && ext_c == 8LL * (n - 1) + 4, "vector size %lld extent %lld",
          (long long)sz, (long long)ext_c);
    MPI_CHECK(MPI_Type_size_c(pp, &sz));
    CHECK(sz == 4LL * 3 * n * 12, "hvector of pairs: size %lld", (long long)sz);
    MPI_CHECK(MPI_Type_size_c(c, &sz));
    CHECK(sz == 4LL * n * n, "contiguous of vectors: size %lld", (long long)sz);
    /* Elements in the first 2 pairs and a double of the pair vector. */
    MPI_Status st;
    MPI_CHECK(MPI_Status_set_elements_x(&st, MPI_BYTE, 2 * 12 + 8));
    MPI_Count elems = -1;
    MPI_CHECK(MPI_Get_elements_x(&st, pp, &elems));
    CHECK(elems == 5, "elements in 32 bytes of pairs: %lld", (long long)elems);
    double took = now() - t0;
    long grew = max_rss_kb() - rss;
    CHECK(took < 5.0, "building and committing took %.2f s", took);
    CHECK(grew < 64 * 1024, "building and committing took %ld KiB", grew);
    MPI_Datatype all[4] = {v, p, pp, c};
    for (int i = 0; i < 4; i++)
        MPI_CHECK(MPI_Type_free(&all[i]));

    /* The same shapes, small, moving data around a ring. */
    MPI_Datatype small, inner;
    MPI_CHECK(MPI_Type_vector(5, 3, 5, MPI_DOUBLE_INT, &inner));
    MPI_CHECK(MPI_Type_get_extent(inner, &lb, &ext));
    MPI_CHECK(MPI_Type_create_hvector(4, 1, 2 * ext, inner, &small));
    MPI_CHECK(MPI_Type_commit(&small));
    struct {
        double d;
        int i;
    } out[200], in[200];
    for (int k = 0; k < 200; k++) {
        out[k].d = rank * 1000 + k;
        out[k].i = k;
        in[k].d = -1;
        in[k].i = -1;
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_CHECK(MPI_Sendrecv(out, 1, small, right, 0, in, 1, small, left, 0, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    /* Block b of the hvector starts at pair 2 * 25 * b - 2 * b (2 * extent);
       in each, vector block j holds pairs 5j .. 5j + 2. */
    int inner_ext = (int)(ext / 16);
    for (int k = 0; k < 200; k++) {
        int b = k / (2 * inner_ext), w = k % (2 * inner_ext);
        int in_type = b < 4 && w < inner_ext && w % 5 < 3;
        double want = in_type ? left * 1000 + k : -1;
        CHECK(in[k].d == want && in[k].i == (in_type ? k : -1), "pair %d: (%g, %d)", k,
              in[k].d, in[k].i);
    }
    MPI_CHECK(MPI_Type_free(&small));
    MPI_CHECK(MPI_Type_free(&inner));
    abicheck_pass("huge_count_types");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
