/*
 * Ports between two separately started jobs (run by tests/tests/c_abi.rs,
 * `ports_between_jobs`): `ports_jobs server N` and `ports_jobs client M`
 * in one directory, N and M the other job's size, started at the same
 * time; then `ports_jobs late` once the server job has ended.
 *
 * Round 1: the server's rank 0 opens a port and writes its name to
 * port.txt; MPI_Comm_accept / MPI_Comm_connect over MPI_COMM_WORLD. Each
 * round checks point-to-point between every pair (and a 1 MiB message),
 * an allreduce and a bcast (MPI_ROOT / MPI_PROC_NULL) on the
 * intercommunicator, MPI_Intercomm_merge with a reduce and an allreduce,
 * then MPI_Comm_disconnect. The server closes the port. Round 2: a new
 * port, found through MPI_Publish_name / MPI_Lookup_name (the jobs share
 * the name directory). Before it, the client tries the round-2 name with
 * a wrong secret (refused while the server waits in accept, which then
 * goes on), a malformed name and round 1's closed port: MPI_ERR_PORT each.
 * Then MPI_Comm_join over a loopback TCP socket between the two rank 0s.
 * `late` connects to round 1's port after its job ended: MPI_ERR_PORT.
 */
#include "abicheck.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define BIG (256 * 1024)

static int wrank, wsize, server;

static void write_file(const char *path, const char *text)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL, "cannot write %s", tmp);
    fputs(text, f);
    fclose(f);
    CHECK(rename(tmp, path) == 0, "rename to %s", path);
}

/* The content of `path` once it exists (waits up to 100 s). */
static void read_file(const char *path, char *out, int size)
{
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            int n = (int)fread(out, 1, size - 1, f);
            fclose(f);
            out[n] = 0;
            return;
        }
        usleep(100 * 1000);
    }
    FAIL("%s never appeared", path);
}

static int value_of(int is_server, int rank) { return (is_server ? 1000 : 2000) + rank; }

static void round_trip(const char *port, int rsize_want, int round)
{
    MPI_Comm inter;
    if (server)
        MPI_CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    else
        MPI_CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    int flag, rsize, size, rank;
    MPI_CHECK(MPI_Comm_test_inter(inter, &flag));
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_size(inter, &size);
    MPI_Comm_rank(inter, &rank);
    CHECK(flag && size == wsize && rsize == rsize_want && rank == wrank,
          "round %d: inter %d size %d remote %d rank %d", round, flag, size, rsize, rank);

    /* Every rank sends its value to every remote rank. */
    int mine = value_of(server, wrank);
    int *got = abicheck_malloc(sizeof(int) * rsize);
    MPI_Request *reqs = abicheck_malloc(sizeof(MPI_Request) * 2 * rsize);
    for (int r = 0; r < rsize; r++) {
        MPI_CHECK(MPI_Irecv(&got[r], 1, MPI_INT, r, 3, inter, &reqs[r]));
        MPI_CHECK(MPI_Isend(&mine, 1, MPI_INT, r, 3, inter, &reqs[rsize + r]));
    }
    MPI_Status *sts = abicheck_malloc(sizeof(MPI_Status) * 2 * rsize);
    MPI_CHECK(MPI_Waitall(2 * rsize, reqs, sts));
    for (int r = 0; r < rsize; r++)
        CHECK(sts[r].MPI_SOURCE == r && sts[r].MPI_TAG == 3, "round %d: receive from %d: "
              "source %d tag %d", round, r, sts[r].MPI_SOURCE, sts[r].MPI_TAG);
    free(sts);
    for (int r = 0; r < rsize; r++)
        CHECK(got[r] == value_of(!server, r), "round %d: from remote %d got %d", round, r,
              got[r]);
    free(got);
    free(reqs);

    /* A large message each way between the rank 0s. */
    if (wrank == 0) {
        int *big = abicheck_malloc(sizeof(int) * BIG), *back = abicheck_malloc(sizeof(int) * BIG);
        for (int i = 0; i < BIG; i++)
            big[i] = i * 3 + server + round;
        MPI_CHECK(MPI_Sendrecv(big, BIG, MPI_INT, 0, 4, back, BIG, MPI_INT, 0, 4, inter,
                               MPI_STATUS_IGNORE));
        for (int i = 0; i < BIG; i++)
            CHECK(back[i] == i * 3 + !server + round, "round %d: big[%d] = %d", round, i,
                  back[i]);
        free(big);
        free(back);
    }

    /* Allreduce on an intercommunicator: the remote group's sum. */
    int sum = -1, want = 0;
    for (int r = 0; r < rsize; r++)
        want += value_of(!server, r);
    MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(sum == want, "round %d: intercomm allreduce %d want %d", round, sum, want);

    /* Bcast from the server's rank 0 to the client group. */
    int data[4] = {0, 0, 0, 0};
    if (server) {
        if (wrank == 0)
            for (int i = 0; i < 4; i++)
                data[i] = 7 * i + round;
        MPI_CHECK(MPI_Bcast(data, 4, MPI_INT, wrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    } else {
        MPI_CHECK(MPI_Bcast(data, 4, MPI_INT, 0, inter));
        for (int i = 0; i < 4; i++)
            CHECK(data[i] == 7 * i + round, "round %d: bcast data[%d] = %d", round, i, data[i]);
    }

    /* Merge: the server low, so its ranks come first. */
    MPI_Comm merged;
    int mrank, msize;
    MPI_CHECK(MPI_Intercomm_merge(inter, !server, &merged));
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == wsize + rsize && mrank == (server ? wrank : rsize + wrank),
          "round %d: merged rank %d of %d", round, mrank, msize);
    int total = 0, expect = 0, top = -1;
    for (int r = 0; r < (server ? wsize : rsize); r++)
        expect += value_of(1, r);
    for (int r = 0; r < (server ? rsize : wsize); r++)
        expect += value_of(0, r);
    MPI_CHECK(MPI_Reduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, merged));
    if (mrank == 0)
        CHECK(total == expect, "round %d: merged reduce %d want %d", round, total, expect);
    MPI_CHECK(MPI_Allreduce(&mrank, &top, 1, MPI_INT, MPI_MAX, merged));
    CHECK(top == msize - 1, "round %d: merged allreduce max %d", round, top);
    MPI_CHECK(MPI_Comm_free(&merged));

    MPI_CHECK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL, "disconnect left the handle");
}

static void join_rank0s(void)
{
    int fd = -1;
    if (server) {
        int lsock = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        CHECK(bind(lsock, (struct sockaddr *)&a, sizeof a) == 0, "bind");
        CHECK(listen(lsock, 1) == 0, "listen");
        socklen_t len = sizeof a;
        getsockname(lsock, (struct sockaddr *)&a, &len);
        char text[32];
        snprintf(text, sizeof text, "%d", ntohs(a.sin_port));
        write_file("join.txt", text);
        fd = accept(lsock, NULL, NULL);
        close(lsock);
    } else {
        char text[32];
        read_file("join.txt", text, sizeof text);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(atoi(text));
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect");
    }
    CHECK(fd >= 0, "socket");
    MPI_Comm inter;
    MPI_CHECK(MPI_Comm_join(fd, &inter));
    int rsize, other = -1, me = server ? 1 : 2;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(rsize == 1, "join remote size %d", rsize);
    MPI_CHECK(MPI_Sendrecv(&me, 1, MPI_INT, 0, 5, &other, 1, MPI_INT, 0, 5, inter,
                           MPI_STATUS_IGNORE));
    CHECK(other == 3 - me, "join: the other end says %d", other);
    MPI_CHECK(MPI_Comm_disconnect(&inter));
    close(fd);
}

/* MPI_Comm_connect(name) on MPI_COMM_SELF fails with MPI_ERR_PORT. */
static void bad_port(const char *name, const char *what)
{
    MPI_Comm bad = MPI_COMM_NULL;
    int rc = MPI_Comm_connect(name, MPI_INFO_NULL, 0, MPI_COMM_SELF, &bad);
    CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_PORT,
          "connecting to %s (%s): rc %d class %d", what, name, rc,
          rc == MPI_SUCCESS ? 0 : abicheck_class(rc));
    CHECK(bad == MPI_COMM_NULL, "a failed connect set the handle");
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(argc >= 2, "usage: ports_jobs server|client N | late");
    const char *role = argv[1];
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    char port[MPI_MAX_PORT_NAME] = "", port2[MPI_MAX_PORT_NAME] = "";

    if (strcmp(role, "late") == 0) {
        if (wrank == 0) {
            read_file("port.txt", port, sizeof port);
            bad_port(port, "the port of a job that ended");
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (wrank == 0)
            printf("PASS ports_jobs late\n");
        MPI_Finalize();
        return 0;
    }
    CHECK(argc == 3, "usage: ports_jobs server|client N");
    server = strcmp(role, "server") == 0;
    int other = atoi(argv[2]);

    if (server) {
        if (wrank == 0) {
            MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port));
            write_file("port.txt", port);
        }
        round_trip(port, other, 1);
        if (wrank == 0) {
            MPI_CHECK(MPI_Close_port(port));
            MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port2));
            CHECK(strcmp(port, port2) != 0, "two ports share the name %s", port);
            MPI_CHECK(MPI_Publish_name("oxmpi-ports-jobs", MPI_INFO_NULL, port2));
        }
        round_trip(port2, other, 2);
        if (wrank == 0) {
            MPI_CHECK(MPI_Unpublish_name("oxmpi-ports-jobs", MPI_INFO_NULL, port2));
            MPI_CHECK(MPI_Close_port(port2));
        }
    } else {
        if (wrank == 0)
            read_file("port.txt", port, sizeof port);
        round_trip(port, other, 1);
        if (wrank == 0) {
            MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
            int rc = MPI_ERR_NAME;
            for (int i = 0; i < 1000 && rc != MPI_SUCCESS; i++) {
                rc = MPI_Lookup_name("oxmpi-ports-jobs", MPI_INFO_NULL, port2);
                if (rc != MPI_SUCCESS) {
                    CHECK(abicheck_class(rc) == MPI_ERR_NAME, "lookup: class %d",
                          abicheck_class(rc));
                    usleep(100 * 1000);
                }
            }
            MPI_CHECK(rc);
            MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
            char wrong[MPI_MAX_PORT_NAME];
            strcpy(wrong, port2);
            char *last = &wrong[strlen(wrong) - 1];
            *last = *last == '0' ? '1' : '0';
            bad_port(wrong, "a wrong secret");
            bad_port("oxmpi-port:garbage", "a malformed name");
            bad_port(port, "a closed port");
        }
        round_trip(port2, other, 2);
    }
    /* Over loopback: the test across hosts sets this when the rank 0s are
     * on different hosts. */
    if (wrank == 0 && getenv("PORTS_JOBS_NO_JOIN") == NULL)
        join_rank0s();

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0)
        printf("PASS ports_jobs %s\n", role);
    MPI_Finalize();
    return 0;
}
