/*
 * MPI_Comm_split_type by hardware (MPI 4.0, section 7.4.2):
 * MPI_COMM_TYPE_HW_GUIDED with "mpi_shared_memory" is MPI_COMM_TYPE_SHARED;
 * an unknown level or no info gives MPI_COMM_NULL; on OxMPI, "Core" and
 * "PU" give the ranks whose CPU binding lies in one core / PU, as a serial
 * reading of sched_getaffinity and sysfs says, with mpi_hw_resource_type
 * in the new communicator's info. MPI_COMM_TYPE_HW_UNGUIDED, applied
 * again and again, gives strict subsets that every member agrees on, down
 * to MPI_COMM_NULL.
 * Prints "PASS split_hw" from rank 0.
 */
#define _GNU_SOURCE
#include "abicheck.h"
#include <sched.h>

static int rank, size, oxmpi;

static MPI_Comm guided(MPI_Comm parent, const char *level)
{
    MPI_Info info = MPI_INFO_NULL;
    if (level) {
        MPI_CHECK(MPI_Info_create(&info));
        MPI_CHECK(MPI_Info_set(info, "mpi_hw_resource_type", level));
    }
    MPI_Comm c = MPI_COMM_NULL;
    MPI_CHECK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    if (level)
        MPI_CHECK(MPI_Info_free(&info));
    return c;
}

/* The CPUs this process may run on. */
static int my_cpus(cpu_set_t *set)
{
    CPU_ZERO(set);
    CHECK(sched_getaffinity(0, sizeof *set, set) == 0, "sched_getaffinity failed");
    return CPU_COUNT(set);
}

/* The CPU list in `path` ("0-3,8") as a set; 0 when unreadable. */
static int read_list(const char *path, cpu_set_t *out)
{
    CPU_ZERO(out);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int a, b, n = 0;
    char sep;
    while (fscanf(f, "%d", &a) == 1) {
        b = a;
        if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
            if (fscanf(f, "%d", &b) != 1)
                break;
            if (fscanf(f, "%c", &sep) != 1)
                sep = 0;
        }
        for (int c = a; c <= b; c++, n++)
            CPU_SET(c, out);
        if (sep != ',')
            break;
    }
    fclose(f);
    return n;
}

static int first_cpu(cpu_set_t *set)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set))
            return c;
    return -1;
}

/* The comm of ranks in the same core (or PU) as a serial reading says. */
static MPI_Comm expected(MPI_Comm node, int pu)
{
    cpu_set_t mine, obj, both;
    int n = my_cpus(&mine), color = MPI_UNDEFINED, first = first_cpu(&mine);
    if (pu) {
        if (n == 1)
            color = first;
    } else {
        char path[256];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list",
                 first);
        if (read_list(path, &obj) == 0) {
            snprintf(path, sizeof path,
                     "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", first);
            read_list(path, &obj);
        }
        CPU_AND(&both, &mine, &obj);
        if (CPU_COUNT(&obj) > 0 && CPU_EQUAL(&both, &mine))
            color = first_cpu(&obj);
    }
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_split(node, color, 0, &c));
    return c;
}

static void check_level(MPI_Comm node, const char *name, int pu)
{
    MPI_Comm got = guided(node, name), want = expected(node, pu);
    CHECK((got == MPI_COMM_NULL) == (want == MPI_COMM_NULL), "%s: got %s, expected %s", name,
          got == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator",
          want == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    if (got == MPI_COMM_NULL)
        return;
    int result;
    MPI_CHECK(MPI_Comm_compare(got, want, &result));
    CHECK(result == MPI_CONGRUENT, "%s: compare with the serial split = %d", name, result);
    MPI_Info info;
    MPI_CHECK(MPI_Comm_get_info(got, &info));
    char v[MPI_MAX_INFO_VAL];
    int flag = 0;
    MPI_CHECK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(flag && strcmp(v, name) == 0, "%s: info says '%s'", name, flag ? v : "(none)");
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_Comm_free(&got));
    MPI_CHECK(MPI_Comm_free(&want));
}

/* Every member of each rank's new communicator has the same view of it. */
static void check_consistent(MPI_Comm parent, MPI_Comm sub)
{
    int psize, me[2] = {-1, 0};
    MPI_CHECK(MPI_Comm_size(parent, &psize));
    if (sub != MPI_COMM_NULL) {
        MPI_CHECK(MPI_Comm_size(sub, &me[1]));
        CHECK(me[1] < psize, "unguided gave %d of %d ranks: not a strict subset", me[1], psize);
        /* The smallest world rank in it names it. */
        MPI_CHECK(MPI_Allreduce(&rank, &me[0], 1, MPI_INT, MPI_MIN, sub));
    }
    int *all = abicheck_malloc(2 * psize * sizeof(int));
    MPI_CHECK(MPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, parent));
    for (int i = 0; i < psize; i++) {
        if (all[2 * i] < 0)
            continue;
        int same = 0;
        for (int j = 0; j < psize; j++)
            same += all[2 * j] == all[2 * i];
        CHECK(same == all[2 * i + 1], "members disagree: %d ranks name %d, its size is %d", same,
              all[2 * i], all[2 * i + 1]);
    }
    free(all);
}

static void unguided(void)
{
    MPI_Comm parent = MPI_COMM_WORLD;
    int depth = 0, last = -1;
    const char *order[] = {"mpi_shared_memory", "Package", "NUMANode", "L3Cache",
                           "L2Cache",           "L1Cache", "Core",     "PU"};
    for (;;) {
        MPI_Comm sub;
        /* The caller's info comes back naming the level (MPI 4.0, 7.4.2). */
        MPI_Info asked;
        MPI_CHECK(MPI_Info_create(&asked));
        MPI_CHECK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_UNGUIDED, 0, asked, &sub));
        if (sub != MPI_COMM_NULL) {
            char level[MPI_MAX_INFO_VAL];
            int found = 0;
            MPI_CHECK(MPI_Info_get(asked, "mpi_hw_resource_type", MPI_MAX_INFO_VAL - 1, level,
                                   &found));
            CHECK(found, "unguided: the info argument does not name the level");
        }
        MPI_CHECK(MPI_Info_free(&asked));
        check_consistent(parent, sub);
        int any = sub != MPI_COMM_NULL, some;
        MPI_CHECK(MPI_Allreduce(&any, &some, 1, MPI_INT, MPI_MAX, parent));
        if (oxmpi && sub != MPI_COMM_NULL) {
            MPI_Info info;
            MPI_CHECK(MPI_Comm_get_info(sub, &info));
            char v[MPI_MAX_INFO_VAL];
            int flag = 0;
            MPI_CHECK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL - 1, v, &flag));
            CHECK(flag, "unguided: no mpi_hw_resource_type");
            int at = -1;
            for (int i = 0; i < 8; i++)
                if (strcmp(order[i], v) == 0)
                    at = i;
            CHECK(at > last, "unguided went from level %d to %s", last, v);
            if (getenv("SPLIT_HW_VERBOSE"))
                printf("rank %d: level %s\n", rank, v);
            last = at;
            MPI_CHECK(MPI_Info_free(&info));
        }
        if (parent != MPI_COMM_WORLD)
            MPI_CHECK(MPI_Comm_free(&parent));
        if (!some)
            break;
        CHECK(++depth < 16, "unguided splits never end");
        /* Ranks without a subset are done; the others go deeper. */
        if (sub == MPI_COMM_NULL)
            break;
        parent = sub;
    }
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    oxmpi = abicheck_is_oxmpi();
    MPI_Comm shared, hw;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                  &shared));
    hw = guided(MPI_COMM_WORLD, "mpi_shared_memory");
    CHECK(hw != MPI_COMM_NULL, "mpi_shared_memory gave MPI_COMM_NULL");
    int result;
    MPI_CHECK(MPI_Comm_compare(hw, shared, &result));
    CHECK(result == MPI_CONGRUENT, "mpi_shared_memory vs MPI_COMM_TYPE_SHARED: %d", result);
    MPI_CHECK(MPI_Comm_free(&hw));
    if (oxmpi) {
        hw = guided(MPI_COMM_WORLD, "NoSuchLevel");
        CHECK(hw == MPI_COMM_NULL, "an unknown level gave a communicator");
        hw = guided(MPI_COMM_WORLD, NULL);
        CHECK(hw == MPI_COMM_NULL, "no info gave a communicator");
        check_level(shared, "Core", 0);
        check_level(shared, "PU", 1);
    }
    MPI_CHECK(MPI_Comm_free(&shared));
    unguided();
    abicheck_pass("split_hw");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
