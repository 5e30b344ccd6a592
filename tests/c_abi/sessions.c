/*
 * Sessions alongside the World Model: a session opened before MPI_Init
 * (MPI_Initialized stays 0), its process sets (mpi://WORLD, mpi://SELF:
 * names, mpi_size, groups), MPI_Comm_create_from_group doing an allreduce,
 * session error handlers, MPI_Session_get_info; then MPI_Init with the
 * session still open, a second session inside the World Model, and the
 * first session finalized after MPI_COMM_WORLD was used. Results are
 * checked exactly.
 */
#include "abicheck.h"
#include <strings.h>

static int handler_calls, handler_code;
static MPI_Session handler_session;

static void on_error(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_session = *s;
    handler_code = *code;
}

/* A communicator of process set `name` of `s`, checked with an allreduce. */
static void use_pset(MPI_Session s, const char *name, const char *tag, int expect_size)
{
    MPI_Group g;
    MPI_CHECK(MPI_Group_from_session_pset(s, name, &g));
    int gsize, grank;
    MPI_Group_size(g, &gsize);
    MPI_Group_rank(g, &grank);
    CHECK(gsize == expect_size, "%s: group size %d want %d", name, gsize, expect_size);
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int size, rank;
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    CHECK(size == gsize && rank == grank, "%s: comm %d/%d, group %d/%d", name, rank, size,
          grank, gsize);
    int one = rank + 1, sum = 0;
    MPI_CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size + 1) / 2, "%s: allreduce %d", name, sum);
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Group_free(&g));
}

int main(int argc, char **argv)
{
    int flag = -1;
    MPI_Initialized(&flag);
    CHECK(flag == 0, "initialized before anything: %d", flag);

    MPI_Session s1;
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1));
    CHECK(s1 != MPI_SESSION_NULL, "session is null");
    MPI_Initialized(&flag);
    CHECK(flag == 0, "a session initialized the World Model");

    int npsets = 0, found_world = 0, found_self = 0;
    MPI_CHECK(MPI_Session_get_num_psets(s1, MPI_INFO_NULL, &npsets));
    CHECK(npsets >= 2, "%d process sets", npsets);
    for (int i = 0; i < npsets; i++) {
        int len = 0;
        MPI_CHECK(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1, "pset %d: length %d", i, len);
        char *name = malloc(len);
        MPI_CHECK(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, name));
        CHECK((int)strlen(name) == len - 1, "pset %d: %s, length %d", i, name, len);
        found_world |= strcasecmp(name, "mpi://WORLD") == 0;
        found_self |= strcasecmp(name, "mpi://SELF") == 0;
        free(name);
    }
    CHECK(found_world && found_self, "world %d self %d", found_world, found_self);

    /* mpi_size of the world pset is the job's size. */
    MPI_Info info;
    MPI_CHECK(MPI_Session_get_pset_info(s1, "mpi://WORLD", &info));
    char value[64];
    int vflag = 0;
    MPI_CHECK(MPI_Info_get(info, "mpi_size", sizeof value - 1, value, &vflag));
    CHECK(vflag, "no mpi_size");
    int nprocs = atoi(value);
    CHECK(nprocs >= 1, "mpi_size %s", value);
    MPI_Info_free(&info);
    MPI_CHECK(MPI_Session_get_pset_info(s1, "mpi://SELF", &info));
    MPI_CHECK(MPI_Info_get(info, "mpi_size", sizeof value - 1, value, &vflag));
    CHECK(vflag && atoi(value) == 1, "self mpi_size %s", value);
    MPI_Info_free(&info);

    use_pset(s1, "mpi://WORLD", "test.sessions.world", nprocs);
    use_pset(s1, "mpi://SELF", "test.sessions.self", 1);

    /* Session error handlers. */
    MPI_Errhandler eh, got;
    MPI_CHECK(MPI_Session_create_errhandler(on_error, &eh));
    MPI_CHECK(MPI_Session_set_errhandler(s1, eh));
    MPI_CHECK(MPI_Session_get_errhandler(s1, &got));
    CHECK(got == eh, "get_errhandler returned another handler");
    MPI_Errhandler_free(&got);
    MPI_CHECK(MPI_Session_call_errhandler(s1, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_session == s1 && handler_code == MPI_ERR_OTHER,
          "handler: %d calls, code %d", handler_calls, handler_code);
    MPI_CHECK(MPI_Session_set_errhandler(s1, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);

    MPI_Info used;
    MPI_CHECK(MPI_Session_get_info(s1, &used));
    CHECK(used != MPI_INFO_NULL, "get_info gave MPI_INFO_NULL");
    MPI_Info_free(&used);

    /* The World Model alongside the open session. */
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Init did not initialize");
    int wsize, wrank;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    CHECK(wsize == nprocs, "world %d, pset %d", wsize, nprocs);
    MPI_Session s2;
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    CHECK(s2 != s1, "two sessions share a handle");
    use_pset(s2, "mpi://WORLD", "test.sessions.second", wsize);
    MPI_CHECK(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "finalize did not null the handle");
    int sum = 0;
    MPI_CHECK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == wsize * (wsize - 1) / 2, "world allreduce %d", sum);
    use_pset(s1, "mpi://WORLD", "test.sessions.again", wsize);
    MPI_CHECK(MPI_Session_finalize(&s1));
    /* A session that outlives the World Model. */
    MPI_Session s3;
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3));
    MPI_Barrier(MPI_COMM_WORLD);
    if (wrank == 0)
        printf("PASS sessions\n");
    fflush(stdout);
    MPI_CHECK(MPI_Finalize());
    MPI_Finalized(&flag);
    CHECK(flag == 1, "MPI_Finalized = %d", flag);
    use_pset(s3, "mpi://SELF", "test.sessions.after", 1);
    MPI_CHECK(MPI_Session_finalize(&s3));
    return 0;
}
