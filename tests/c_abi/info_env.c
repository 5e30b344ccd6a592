/*
 * MPI_Info_create_env before MPI_Init and after, with a given command line
 * and with none: the keys MPI 4.0 (section 11.2.2) defines, with values
 * from that command line, the job and the host (OxMPI; MPICH 4.0.2 makes
 * an empty info object, which the calls below accept too). Bad arguments
 * (a negative argc, a null argv[i]) are MPI_ERR_ARG.
 * Prints "PASS info_env" from rank 0.
 */
#include "abicheck.h"
#include <unistd.h>

static int get(MPI_Info info, const char *key, char *value)
{
    int flag = 0;
    MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, value, &flag));
    return flag;
}

static void expect(MPI_Info info, const char *key, const char *want, const char *what)
{
    char v[MPI_MAX_INFO_VAL];
    CHECK(get(info, key, v), "%s: no key %s", what, key);
    CHECK(want == NULL || strcmp(v, want) == 0, "%s: %s is '%s', expected '%s'", what, key, v,
          want);
}

static void common(MPI_Info info, const char *what)
{
    char host[256], cwd[4096];
    CHECK(gethostname(host, sizeof host) == 0, "gethostname failed");
    CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd failed");
    expect(info, "host", host, what);
    expect(info, "wdir", cwd, what);
    expect(info, "arch", NULL, what);
}

int main(int argc, char **argv)
{
    int oxmpi = abicheck_is_oxmpi();
    char *fake[] = {"solver", "-n", "3", "input file", NULL};
    MPI_Info info;
    MPI_CHECK(MPI_Info_create_env(4, fake, &info));
    if (oxmpi) {
        expect(info, "command", "solver", "before init");
        expect(info, "argv", "-n 3 input file", "before init");
        common(info, "before init");
        char v[MPI_MAX_INFO_VAL];
        CHECK(!get(info, "thread_level", v), "before init: thread_level '%s'", v);
    }
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_Info_create_env(0, NULL, &info));
    if (oxmpi)
        expect(info, "command", NULL, "own command line before init");
    MPI_CHECK(MPI_Info_free(&info));

    int provided;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    int size;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    char n[16];
    snprintf(n, sizeof n, "%d", size);
    MPI_CHECK(MPI_Info_create_env(argc, argv, &info));
    if (oxmpi) {
        expect(info, "command", argv[0], "after init");
        expect(info, "maxprocs", n, "after init");
        expect(info, "thread_level", "MPI_THREAD_FUNNELED", "after init");
        common(info, "after init");
        expect(MPI_INFO_ENV, "maxprocs", n, "MPI_INFO_ENV");
        expect(MPI_INFO_ENV, "thread_level", "MPI_THREAD_FUNNELED", "MPI_INFO_ENV");
        int a, b;
        MPI_CHECK(MPI_Info_get_nkeys(info, &a));
        MPI_CHECK(MPI_Info_get_nkeys(MPI_INFO_ENV, &b));
        CHECK(a == b, "create_env has %d keys, MPI_INFO_ENV %d", a, b);
        /* Bad arguments. */
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_Info bad;
        EXPECT_CLASS(MPI_Info_create_env(-1, fake, &bad), MPI_ERR_ARG);
        char *holes[] = {"x", NULL};
        EXPECT_CLASS(MPI_Info_create_env(2, holes, &bad), MPI_ERR_ARG);
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
    MPI_CHECK(MPI_Info_free(&info));
    abicheck_pass("info_env");
    MPI_CHECK(MPI_Finalize());
    MPI_CHECK(MPI_Info_create_env(4, fake, &info));
    MPI_CHECK(MPI_Info_free(&info));
    return 0;
}
