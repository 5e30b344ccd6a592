/*
 * MPI_Comm_spawn: the job (every rank, root 0) spawns 3 copies of this
 * program (argument "child"); parents and children check the
 * intercommunicator's sizes, exchange point-to-point messages both ways
 * (every parent with every child), an allreduce and a barrier across it,
 * MPI_Intercomm_merge (parents first) with an allgather on the result,
 * and disconnect; then MPI_Comm_spawn_multiple from the last rank with
 * two commands (different arguments, one with info "wdir"), which each
 * child checks. The children find their parents with
 * MPI_Comm_get_parent; the parents have none. Every process checks what
 * it received against what the standard's definitions give.
 *
 * Placement: with SPAWN_HOST set (a host list in oxrun's --host syntax,
 * NAME[:SLOTS],...), MPI_Comm_spawn passes it as info "host", and so does
 * MPI_Comm_spawn_multiple for its first command; children without it
 * belong on the spawning root's host. The parents hand the children that
 * list (argv); each child checks its host name against its slot in it
 * (ranks fill the slots in order, round after round).
 *
 * Faults (the children inherit the parents' environment): with
 * SPAWN_FAULT=kill or stall and SPAWN_FAULT_CHILD=K, child K of
 * MPI_Comm_spawn, once its messages to the parents are posted, writes the
 * wall-clock time in nanoseconds to the file SPAWN_FAULT_STAMP names,
 * then SIGKILLs itself (kill) or waits forever (stall: the test cuts its
 * host's link); the launcher must end the whole job.
 */
#include "abicheck.h"

#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define CHILDREN 3

/* The host that slot `rank` of the list `where` (NAME[:SLOTS],...) names,
 * into `out`: ranks fill each host's slots in turn, round after round. */
static void host_of_slot(const char *where, int rank, char *out, size_t len)
{
    int slots = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *p = where;
        int seen = 0;
        while (*p) {
            const char *end = strchr(p, ',');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            const char *colon = memchr(p, ':', n);
            size_t name = colon ? (size_t)(colon - p) : n;
            int k = colon ? atoi(colon + 1) : 1;
            if (pass == 1 && rank % slots < seen + k) {
                snprintf(out, len, "%.*s", (int)name, p);
                return;
            }
            seen += k;
            p += n + (end != NULL);
        }
        slots = seen;
        CHECK(slots > 0, "no slots in host list \"%s\"", where);
    }
}

/* A child checks that it runs where the parents asked (see the top). */
static void check_placement(const char *where, int rank)
{
    char want[256], here[256];
    host_of_slot(where, rank, want, sizeof want);
    CHECK(gethostname(here, sizeof here) == 0, "gethostname");
    CHECK(strcmp(here, want) == 0, "child %d runs on %s, want %s (hosts \"%s\")", rank, here,
          want, where);
}

/* Whether this child is SPAWN_FAULT_CHILD (see the top). */
static int fault_here(int rank)
{
    const char *child = getenv("SPAWN_FAULT_CHILD");
    return child && getenv("SPAWN_FAULT") && atoi(child) == rank;
}

/* Stamps the time into SPAWN_FAULT_STAMP, then the fault SPAWN_FAULT names. */
static void fault_now(void)
{
    const char *path = getenv("SPAWN_FAULT_STAMP"), *fault = getenv("SPAWN_FAULT");
    CHECK(path != NULL, "SPAWN_FAULT without SPAWN_FAULT_STAMP");
    CHECK(strcmp(fault, "kill") == 0 || strcmp(fault, "stall") == 0, "SPAWN_FAULT=%s", fault);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    fprintf(f, "%lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
    fclose(f);
    if (strcmp(fault, "kill") == 0)
        raise(SIGKILL);
    for (;;)
        pause();
}

static void exchange(MPI_Comm inter, int me, int base_mine, int base_theirs, int fault)
{
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    int *got = malloc(sizeof(int) * rsize);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * rsize);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * rsize);
    int mine = base_mine + me;
    for (int r = 0; r < rsize; r++) {
        MPI_CHECK(MPI_Irecv(&got[r], 1, MPI_INT, r, 9, inter, &reqs[r]));
        MPI_CHECK(MPI_Isend(&mine, 1, MPI_INT, r, 9, inter, &reqs[rsize + r]));
    }
    if (fault)
        fault_now();
    MPI_CHECK(MPI_Waitall(2 * rsize, reqs, sts));
    for (int r = 0; r < rsize; r++)
        CHECK(got[r] == base_theirs + r && sts[r].MPI_SOURCE == r,
              "from remote rank %d got %d (source %d)", r, got[r], sts[r].MPI_SOURCE);
    int sum = -1, want = 0;
    for (int r = 0; r < rsize; r++)
        want += base_theirs + r;
    MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(sum == want, "allreduce across: %d, want %d", sum, want);
    MPI_CHECK(MPI_Barrier(inter));

    /* Merge, parents first (they pass high = 0); a collective on it. */
    int lsize, lrank, high = base_mine != 0;
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm all;
    int arank, asize;
    MPI_CHECK(MPI_Intercomm_merge(inter, high, &all));
    MPI_Comm_rank(all, &arank);
    MPI_Comm_size(all, &asize);
    CHECK(asize == lsize + rsize && arank == (high ? rsize : 0) + lrank,
          "merged: rank %d of %d", arank, asize);
    int key = base_mine + me, *keys = malloc(sizeof(int) * asize);
    MPI_CHECK(MPI_Allgather(&key, 1, MPI_INT, keys, 1, MPI_INT, all));
    for (int r = 0; r < asize; r++) {
        int parents = high ? rsize : lsize;
        int want = r < parents ? r : 1000 + r - parents;
        CHECK(keys[r] == want, "merged allgather: [%d] = %d, want %d", r, keys[r], want);
    }
    free(keys);
    MPI_CHECK(MPI_Comm_free(&all));
    free(got);
    free(reqs);
    free(sts);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    MPI_CHECK(MPI_Comm_get_parent(&parent));
    int child = argc > 1 && strcmp(argv[1], "child") == 0;
    if (child) {
        CHECK(parent != MPI_COMM_NULL, "a spawned process has no parent");
        CHECK(size == CHILDREN, "the children's world has %d processes", size);
        int flag, rsize, lsize;
        MPI_CHECK(MPI_Comm_test_inter(parent, &flag));
        MPI_Comm_remote_size(parent, &rsize);
        MPI_Comm_size(parent, &lsize);
        CHECK(flag && lsize == CHILDREN && rsize >= 1, "parent: inter %d size %d remote %d",
              flag, lsize, rsize);
        CHECK(argc == 4, "a child takes 3 arguments, got %d", argc - 1);
        check_placement(argv[3], rank);
        if (strcmp(argv[2], "-") != 0) {
            /* spawn_multiple: ranks 0-1 run "A" here, rank 2 "B" in /tmp. */
            char cwd[PATH_MAX];
            CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
            const char *want = rank < 2 ? "A" : "B";
            CHECK(strcmp(argv[2], want) == 0, "child %d runs command %s", rank, argv[2]);
            if (rank == 2)
                CHECK(strcmp(cwd, "/tmp") == 0, "child 2 runs in %s", cwd);
        }
        exchange(parent, rank, 1000, 0, strcmp(argv[2], "-") == 0 && fault_here(rank));
        MPI_CHECK(MPI_Comm_disconnect(&parent));
        MPI_CHECK(MPI_Comm_get_parent(&parent));
        CHECK(parent == MPI_COMM_NULL, "the parent is still there after disconnecting");
        MPI_Finalize();
        return 0;
    }
    CHECK(parent == MPI_COMM_NULL, "a process nobody spawned has a parent");
    char self[PATH_MAX];
    CHECK(realpath(argv[0], self) != NULL, "realpath(%s)", argv[0]);
    /* Where the children of each call belong (see the top): the root's
     * host, as the root sees it, unless SPAWN_HOST names the hosts. */
    char root_host[256] = "", multi_host[256] = "";
    if (rank == 0)
        CHECK(gethostname(root_host, sizeof root_host) == 0, "gethostname");
    if (rank == size - 1)
        CHECK(gethostname(multi_host, sizeof multi_host) == 0, "gethostname");
    const char *hosts = getenv("SPAWN_HOST");
    MPI_Info where = MPI_INFO_NULL;
    if (hosts) {
        MPI_CHECK(MPI_Info_create(&where));
        MPI_CHECK(MPI_Info_set(where, "host", hosts));
    }
    char *args[] = {"child", "-", hosts ? (char *)hosts : root_host, NULL};
    int errcodes[CHILDREN] = {-1, -1, -1};
    MPI_Comm inter;
    MPI_CHECK(MPI_Comm_spawn(self, args, CHILDREN, where, 0, MPI_COMM_WORLD, &inter, errcodes));
    if (where != MPI_INFO_NULL)
        MPI_CHECK(MPI_Info_free(&where));
    if (rank == 0)
        for (int i = 0; i < CHILDREN; i++)
            CHECK(errcodes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, errcodes[i]);
    int rsize, lsize;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_size(inter, &lsize);
    CHECK(rsize == CHILDREN && lsize == size, "spawned: size %d remote %d", lsize, rsize);
    exchange(inter, rank, 0, 1000, 0);
    MPI_CHECK(MPI_Comm_disconnect(&inter));

    /* MPI_Comm_spawn_multiple: two commands (arguments and directories
     * differ) in one new job, root = the last rank. */
    /* Command "A" goes where SPAWN_HOST says (if set), "B" to the root's host. */
    char *args_a[] = {"child", "A", hosts ? (char *)hosts : multi_host, NULL};
    char *args_b[] = {"child", "B", multi_host, NULL};
    char *cmds[2] = {self, self};
    char **argvs[2] = {args_a, args_b};
    int counts[2] = {2, 1};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_CHECK(MPI_Info_create(&infos[1]));
    MPI_CHECK(MPI_Info_set(infos[1], "wdir", "/tmp"));
    if (hosts) {
        MPI_CHECK(MPI_Info_create(&infos[0]));
        MPI_CHECK(MPI_Info_set(infos[0], "host", hosts));
    }
    MPI_CHECK(MPI_Comm_spawn_multiple(2, cmds, argvs, counts, infos, size - 1, MPI_COMM_WORLD,
                                      &inter, errcodes));
    MPI_CHECK(MPI_Info_free(&infos[1]));
    if (hosts)
        MPI_CHECK(MPI_Info_free(&infos[0]));
    for (int i = 0; i < CHILDREN; i++)
        CHECK(errcodes[i] == MPI_SUCCESS, "spawn_multiple: errcodes[%d] = %d", i, errcodes[i]);
    exchange(inter, rank, 0, 1000, 0);
    MPI_CHECK(MPI_Comm_disconnect(&inter));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("PASS spawn\n");
    MPI_Finalize();
    return 0;
}
