/*
 * Ports within one job: the world split into even and odd world ranks;
 * group 0's root opens a port and sends its name to group 1's root over
 * MPI_COMM_WORLD; MPI_Comm_accept / MPI_Comm_connect make an
 * intercommunicator, checked with point-to-point, an allreduce and
 * MPI_Intercomm_merge, then MPI_Comm_disconnect; a second round with the
 * roles and roots swapped finds the port through MPI_Publish_name /
 * MPI_Lookup_name; MPI_Comm_join over a loopback TCP socket between world
 * ranks 0 and 1; MPI_Comm_get_parent is MPI_COMM_NULL (nothing was
 * spawned); the name service's and the port calls' errors (MPI_ERR_SERVICE,
 * MPI_ERR_NAME, MPI_ERR_PORT). At 1 rank only the calls without a peer.
 */
#include "abicheck.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int wrank, wsize;

static int group_size(int color) { return (wsize - color + 1) / 2; }
static int world_of(int color, int r) { return 2 * r + color; }

/* Accepting side `acc`; its root (rank `aroot` of it) opens the port and
 * hands it to the connecting side's root (rank `croot`). */
static void round_trip(MPI_Comm half, int color, int acc, int aroot, int croot, int by_name)
{
    int rank;
    MPI_Comm_rank(half, &rank);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    int aworld = world_of(acc, aroot), cworld = world_of(1 - acc, croot);
    if (color == acc) {
        if (rank == aroot) {
            MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port));
            CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME, "port name %s", port);
            if (by_name) {
                MPI_CHECK(MPI_Publish_name("oxmpi-ports-service", MPI_INFO_NULL, port));
                MPI_CHECK(MPI_Send(NULL, 0, MPI_CHAR, cworld, 7, MPI_COMM_WORLD));
            } else {
                MPI_CHECK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, cworld, 7, MPI_COMM_WORLD));
            }
        }
        MPI_CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, aroot, half, &inter));
        if (rank == aroot) {
            if (by_name)
                MPI_CHECK(MPI_Unpublish_name("oxmpi-ports-service", MPI_INFO_NULL, port));
            MPI_CHECK(MPI_Close_port(port));
        }
    } else {
        if (rank == croot && by_name) {
            MPI_CHECK(MPI_Recv(NULL, 0, MPI_CHAR, aworld, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Lookup_name("oxmpi-ports-service", MPI_INFO_NULL, port));
        } else if (rank == croot) {
            MPI_CHECK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, aworld, 7, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        }
        MPI_CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, croot, half, &inter));
    }
    int flag, rsize, size, irank;
    MPI_CHECK(MPI_Comm_test_inter(inter, &flag));
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_size(inter, &size);
    MPI_Comm_rank(inter, &irank);
    CHECK(flag && size == group_size(color) && rsize == group_size(1 - color) && irank == rank,
          "intercomm: inter %d size %d remote %d rank %d", flag, size, rsize, irank);

    /* Every rank sends its world rank to every remote rank. */
    int *got = malloc(sizeof(int) * rsize);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * rsize);
    for (int r = 0; r < rsize; r++) {
        MPI_CHECK(MPI_Irecv(&got[r], 1, MPI_INT, r, 3, inter, &reqs[r]));
        MPI_CHECK(MPI_Isend(&wrank, 1, MPI_INT, r, 3, inter, &reqs[rsize + r]));
    }
    MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * rsize);
    MPI_CHECK(MPI_Waitall(2 * rsize, reqs, sts));
    for (int r = 0; r < rsize; r++)
        CHECK(sts[r].MPI_SOURCE == r && sts[r].MPI_TAG == 3, "status of the receive from %d: "
              "source %d tag %d", r, sts[r].MPI_SOURCE, sts[r].MPI_TAG);
    free(sts);
    for (int r = 0; r < rsize; r++)
        CHECK(got[r] == world_of(1 - color, r), "from remote %d got %d", r, got[r]);
    free(got);
    free(reqs);

    /* Allreduce on an intercommunicator: the remote group's sum. */
    int sum = -1, want = 0;
    for (int r = 0; r < rsize; r++)
        want += world_of(1 - color, r);
    MPI_CHECK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(sum == want, "intercomm allreduce %d want %d", sum, want);

    /* Merge: group 1 high, so group 0's ranks come first. */
    MPI_Comm merged;
    int mrank, msize;
    MPI_CHECK(MPI_Intercomm_merge(inter, color, &merged));
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == wsize && mrank == (color ? group_size(0) + rank : rank),
          "merged rank %d of %d", mrank, msize);
    int total = -1;
    MPI_CHECK(MPI_Allreduce(&wrank, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK(total == wsize * (wsize - 1) / 2, "merged allreduce %d", total);
    MPI_CHECK(MPI_Comm_free(&merged));

    /* Disconnect waits for what is pending: rank r and remote rank r
     * exchange without waiting; the requests complete after it. */
    int out = 1000 + wrank, in = -1, n = 0;
    MPI_Request pending[2];
    if (rank < rsize) {
        MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, rank, 4, inter, &pending[n++]));
        MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, rank, 4, inter, &pending[n++]));
    }
    MPI_CHECK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL, "disconnect left the handle");
    MPI_Status pst[2];
    MPI_CHECK(MPI_Waitall(n, pending, pst));
    if (n)
        CHECK(in == 1000 + world_of(1 - color, rank), "pending receive got %d", in);
}

static void join_pair(void)
{
    int fd = -1;
    if (wrank == 0) {
        int lsock = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        CHECK(bind(lsock, (struct sockaddr *)&a, sizeof a) == 0, "bind");
        CHECK(listen(lsock, 1) == 0, "listen");
        socklen_t len = sizeof a;
        getsockname(lsock, (struct sockaddr *)&a, &len);
        int portno = ntohs(a.sin_port);
        MPI_CHECK(MPI_Send(&portno, 1, MPI_INT, 1, 8, MPI_COMM_WORLD));
        fd = accept(lsock, NULL, NULL);
        close(lsock);
    } else {
        int portno;
        MPI_CHECK(MPI_Recv(&portno, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(portno);
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect");
    }
    CHECK(fd >= 0, "socket");
    MPI_Comm inter;
    MPI_CHECK(MPI_Comm_join(fd, &inter));
    int rsize, other = -1;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(rsize == 1, "join remote size %d", rsize);
    MPI_CHECK(MPI_Sendrecv(&wrank, 1, MPI_INT, 0, 5, &other, 1, MPI_INT, 0, 5, inter,
                           MPI_STATUS_IGNORE));
    CHECK(other == 1 - wrank, "join: the other end says %d", other);
    MPI_CHECK(MPI_Comm_disconnect(&inter));
    close(fd);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);

    MPI_Comm parent;
    MPI_CHECK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "a process nobody spawned has a parent");

    char port[MPI_MAX_PORT_NAME], port2[MPI_MAX_PORT_NAME];
    MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port2));
    CHECK(strcmp(port, port2) != 0, "two ports share the name %s", port);
    MPI_CHECK(MPI_Close_port(port2));

    /* The name service: every rank publishes its own service. */
    char service[64], found[MPI_MAX_PORT_NAME];
    snprintf(service, sizeof service, "oxmpi-ports-%d", wrank);
    MPI_CHECK(MPI_Publish_name(service, MPI_INFO_NULL, port));
    MPI_CHECK(MPI_Lookup_name(service, MPI_INFO_NULL, found));
    CHECK(strcmp(found, port) == 0, "looked up %s, published %s", found, port);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (wsize > 1) {
        int next = (wrank + 1) % wsize, prev = (wrank + wsize - 1) % wsize;
        char theirs[MPI_MAX_PORT_NAME], other[64];
        MPI_CHECK(MPI_Sendrecv(port, MPI_MAX_PORT_NAME, MPI_CHAR, prev, 2, theirs,
                               MPI_MAX_PORT_NAME, MPI_CHAR, next, 2, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        snprintf(other, sizeof other, "oxmpi-ports-%d", next);
        MPI_CHECK(MPI_Lookup_name(other, MPI_INFO_NULL, found));
        CHECK(strcmp(found, theirs) == 0, "rank %d's service: %s, want %s", next, found, theirs);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
    CHECK(abicheck_class(rc) == MPI_ERR_SERVICE, "publishing twice: class %d",
          abicheck_class(rc));
    MPI_CHECK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port);
    CHECK(abicheck_class(rc) == MPI_ERR_SERVICE, "unpublishing twice: class %d",
          abicheck_class(rc));
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
    CHECK(abicheck_class(rc) == MPI_ERR_NAME, "looking up an unpublished name: class %d",
          abicheck_class(rc));
    MPI_CHECK(MPI_Close_port(port));
    rc = MPI_Close_port(port);
    CHECK(abicheck_class(rc) == MPI_ERR_PORT, "closing a closed port: class %d",
          abicheck_class(rc));
    MPI_Comm bad;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    rc = MPI_Comm_connect("oxmpi-port:nojob:0:1", MPI_INFO_NULL, 0, MPI_COMM_SELF, &bad);
    CHECK(abicheck_class(rc) == MPI_ERR_PORT, "connecting to a malformed port name: class %d",
          abicheck_class(rc));
    rc = MPI_Comm_accept("not a port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &bad);
    CHECK(abicheck_class(rc) == MPI_ERR_PORT, "accepting on a bad port: class %d",
          abicheck_class(rc));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    if (wsize > 1) {
        int color = wrank % 2;
        MPI_Comm half;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &half));
        round_trip(half, color, 0, 0, 0, 0);
        round_trip(half, color, 1, group_size(1) - 1, group_size(0) - 1, 1);
        MPI_CHECK(MPI_Comm_free(&half));
        if (wrank < 2)
            join_pair();
    }

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0)
        printf("PASS ports\n");
    MPI_Finalize();
    return 0;
}
