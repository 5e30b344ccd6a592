/*
 * MPI_Type_get_envelope_c / MPI_Type_get_contents_c on types made by the
 * large-count constructors report their MPI_Count arguments as large
 * counts, also beyond int: contiguous (2^31 + 5 bytes), vector, hvector,
 * indexed, struct, subarray, resized. The sizes and extents of those
 * types are right too, and the classic MPI_Type_get_envelope refuses such
 * a type (its counts are MPI_Counts).
 * Prints "PASS large_types" from rank 0.
 */
#include "abicheck.h"

#define BIG ((MPI_Count)1 << 31)

/* Checks the envelope and large counts of `t`. */
static void expect(MPI_Datatype t, int combiner, MPI_Count ni, MPI_Count na, MPI_Count nl,
                   MPI_Count nd, const MPI_Count *large, const int *ints, const char *what)
{
    MPI_Count i = -1, a = -1, l = -1, d = -1;
    int c = -1;
    MPI_CHECK(MPI_Type_get_envelope_c(t, &i, &a, &l, &d, &c));
    CHECK(c == combiner && i == ni && a == na && l == nl && d == nd,
          "%s: envelope combiner %d ints %lld addrs %lld large %lld types %lld", what, c,
          (long long)i, (long long)a, (long long)l, (long long)d);
    int gi[8];
    MPI_Aint ga[8];
    MPI_Count gl[16];
    MPI_Datatype gd[8];
    MPI_CHECK(MPI_Type_get_contents_c(t, i, a, l, d, gi, ga, gl, gd));
    for (MPI_Count k = 0; k < nl; k++)
        CHECK(gl[k] == large[k], "%s: large count %lld is %lld, expected %lld", what,
              (long long)k, (long long)gl[k], (long long)large[k]);
    for (MPI_Count k = 0; k < ni; k++)
        CHECK(gi[k] == ints[k], "%s: integer %lld is %d, expected %d", what, (long long)k,
              gi[k], ints[k]);
    for (MPI_Count k = 0; k < d; k++) {
        int ni2, na2, nd2, c2;
        MPI_CHECK(MPI_Type_get_envelope(gd[k], &ni2, &na2, &nd2, &c2));
        if (c2 != MPI_COMBINER_NAMED)
            MPI_CHECK(MPI_Type_free(&gd[k]));
    }
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Datatype t;
    MPI_Count size = -1, lb = -1, extent = -1;

    MPI_CHECK(MPI_Type_contiguous_c(BIG + 5, MPI_BYTE, &t));
    MPI_CHECK(MPI_Type_size_c(t, &size));
    CHECK(size == BIG + 5, "contiguous size %lld", (long long)size);
    expect(t, MPI_COMBINER_CONTIGUOUS, 0, 0, 1, 1, (MPI_Count[]){BIG + 5}, NULL, "contiguous");
    MPI_Count ni = -1, na = -1, nl = -1, nd = -1;
    int comb = -1;
    MPI_CHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb));
    MPI_Datatype inner;
    MPI_CHECK(MPI_Type_get_contents_c(t, ni, na, nl, nd, NULL, NULL, (MPI_Count[1]){0}, &inner));
    CHECK(inner == MPI_BYTE, "contiguous of %#x", (unsigned)inner);
    /* The classic query cannot say what a large-count constructor got. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int ci, ca, cd, cc;
    int rc = MPI_Type_get_envelope(t, &ci, &ca, &cd, &cc);
    CHECK(rc != MPI_SUCCESS, "classic envelope of a large-count type: %d %d %d", ci, ca, cd);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Type_free(&t));

    MPI_CHECK(MPI_Type_vector_c(3, BIG + 1, 4 * BIG, MPI_BYTE, &t));
    MPI_CHECK(MPI_Type_get_extent_c(t, &lb, &extent));
    CHECK(extent == 2 * 4 * BIG + BIG + 1, "vector extent %lld", (long long)extent);
    expect(t, MPI_COMBINER_VECTOR, 0, 0, 3, 1, (MPI_Count[]){3, BIG + 1, 4 * BIG}, NULL,
           "vector");
    MPI_CHECK(MPI_Type_free(&t));

    MPI_CHECK(MPI_Type_create_hvector_c(2, BIG, 3 * BIG, MPI_BYTE, &t));
    expect(t, MPI_COMBINER_HVECTOR, 0, 0, 3, 1, (MPI_Count[]){2, BIG, 3 * BIG}, NULL, "hvector");
    MPI_CHECK(MPI_Type_free(&t));

    MPI_Count bl[2] = {BIG, 7}, ds[2] = {0, 2 * BIG};
    MPI_CHECK(MPI_Type_indexed_c(2, bl, ds, MPI_BYTE, &t));
    expect(t, MPI_COMBINER_INDEXED, 0, 0, 5, 1, (MPI_Count[]){2, BIG, 7, 0, 2 * BIG}, NULL,
           "indexed");
    MPI_CHECK(MPI_Type_free(&t));

    MPI_Datatype tys[2] = {MPI_BYTE, MPI_INT};
    MPI_CHECK(MPI_Type_create_struct_c(2, bl, ds, tys, &t));
    MPI_CHECK(MPI_Type_size_c(t, &size));
    CHECK(size == BIG + 7 * 4, "struct size %lld", (long long)size);
    expect(t, MPI_COMBINER_STRUCT, 0, 0, 5, 2, (MPI_Count[]){2, BIG, 7, 0, 2 * BIG}, NULL,
           "struct");
    MPI_CHECK(MPI_Type_free(&t));

    MPI_Count sizes[2] = {4, BIG + 3}, subs[2] = {2, BIG}, starts[2] = {1, 3};
    MPI_CHECK(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, &t));
    expect(t, MPI_COMBINER_SUBARRAY, 2, 0, 6, 1, (MPI_Count[]){4, BIG + 3, 2, BIG, 1, 3},
           (int[]){2, MPI_ORDER_C}, "subarray");
    MPI_CHECK(MPI_Type_free(&t));

    MPI_CHECK(MPI_Type_create_resized_c(MPI_INT, -BIG, 3 * BIG, &t));
    MPI_CHECK(MPI_Type_get_extent_c(t, &lb, &extent));
    CHECK(lb == -BIG && extent == 3 * BIG, "resized lb %lld extent %lld", (long long)lb,
          (long long)extent);
    expect(t, MPI_COMBINER_RESIZED, 0, 0, 2, 1, (MPI_Count[]){-BIG, 3 * BIG}, NULL, "resized");
    MPI_CHECK(MPI_Type_free(&t));

    /* A classic constructor's type: no large counts. */
    MPI_CHECK(MPI_Type_vector(3, 2, 5, MPI_INT, &t));
    expect(t, MPI_COMBINER_VECTOR, 3, 0, 0, 1, NULL, (int[]){3, 2, 5}, "classic vector");
    MPI_CHECK(MPI_Type_free(&t));

    abicheck_pass("large_types");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
