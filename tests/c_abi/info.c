/*
 * Info objects through the C ABI: create, set (and overwrite), get,
 * get_string (MPI-4), get_valuelen, get_nkeys / get_nthkey in
 * insertion order, delete (and MPI_ERR_INFO_NOKEY), dup (independent
 * copies), free (handle -> MPI_INFO_NULL), MPI_INFO_ENV readable.
 * Prints "PASS info" from rank 0.
 */
#include "abicheck.h"

static void basics(void)
{
    MPI_Info info, copy;
    MPI_CHECK(MPI_Info_create(&info));
    int n = -1;
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0, "a new info has %d keys", n);
    MPI_CHECK(MPI_Info_set(info, "cb_nodes", "4"));
    MPI_CHECK(MPI_Info_set(info, "striping_unit", "1048576"));
    MPI_CHECK(MPI_Info_set(info, "cb_nodes", "8")); /* overwrite keeps the position */
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "2 keys expected, got %d", n);

    char key[MPI_MAX_INFO_KEY + 1], value[64];
    int flag = -1, len = -1;
    MPI_CHECK(MPI_Info_get_nthkey(info, 0, key));
    CHECK(strcmp(key, "cb_nodes") == 0, "key 0 is '%s'", key);
    MPI_CHECK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "striping_unit") == 0, "key 1 is '%s'", key);
    MPI_CHECK(MPI_Info_get(info, "cb_nodes", sizeof value - 1, value, &flag));
    CHECK(flag && strcmp(value, "8") == 0, "cb_nodes = '%s' (flag %d)", value, flag);
    MPI_CHECK(MPI_Info_get_valuelen(info, "striping_unit", &len, &flag));
    CHECK(flag && len == 7, "valuelen %d flag %d", len, flag);
    MPI_CHECK(MPI_Info_get(info, "nothing", sizeof value - 1, value, &flag));
    CHECK(flag == 0, "missing key found");
    MPI_CHECK(MPI_Info_get_valuelen(info, "nothing", &len, &flag));
    CHECK(flag == 0, "missing key has a length");

    int buflen = sizeof value;
    MPI_CHECK(MPI_Info_get_string(info, "striping_unit", &buflen, value, &flag));
    CHECK(flag && buflen == 8 && strcmp(value, "1048576") == 0, "get_string: '%s' buflen %d",
          value, buflen);
    buflen = 4;
    MPI_CHECK(MPI_Info_get_string(info, "striping_unit", &buflen, value, &flag));
    CHECK(flag && buflen == 8 && strcmp(value, "104") == 0, "short get_string: '%s' %d", value,
          buflen);

    MPI_CHECK(MPI_Info_dup(info, &copy));
    MPI_CHECK(MPI_Info_delete(info, "cb_nodes"));
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 1, "after delete: %d keys", n);
    MPI_CHECK(MPI_Info_get_nkeys(copy, &n));
    CHECK(n == 2, "the dup changed with the original: %d keys", n);
    MPI_CHECK(MPI_Info_get(copy, "cb_nodes", sizeof value - 1, value, &flag));
    CHECK(flag && strcmp(value, "8") == 0, "dup lost cb_nodes: '%s'", value);

    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Info_delete(info, "cb_nodes"), MPI_ERR_INFO_NOKEY);
    EXPECT_CLASS(MPI_Info_get_nthkey(info, 5, key), MPI_ERR_ARG);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    MPI_CHECK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "MPI_Info_free did not set MPI_INFO_NULL");
    MPI_CHECK(MPI_Info_free(&copy));
}

static void env(void)
{
    int n = -1, flag = 0;
    MPI_CHECK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    CHECK(n >= 0, "MPI_INFO_ENV has %d keys", n);
    char value[MPI_MAX_INFO_VAL + 1];
    MPI_CHECK(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, value, &flag));
    MPI_Info d;
    MPI_CHECK(MPI_Info_dup(MPI_INFO_ENV, &d));
    int m = -1;
    MPI_CHECK(MPI_Info_get_nkeys(d, &m));
    CHECK(m == n, "dup of MPI_INFO_ENV has %d keys, not %d", m, n);
    MPI_CHECK(MPI_Info_free(&d));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    basics();
    env();
    abicheck_pass("info");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
