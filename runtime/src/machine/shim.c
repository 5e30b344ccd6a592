/*
 * Thin C shim over the system hwloc (2.x), so that the Rust side never
 * depends on the layout of hwloc's structs or on its inline helpers: every
 * field is read here, against the real header, and handed over as plain
 * integers. Compiled by runtime/build.rs; without OXMPI_HAVE_HWLOC every
 * function reports OXMPI_TOPO_NOT_COMPILED.
 *
 * Return codes (mirrored in sys.rs):
 *   0 ok, 1 hwloc not compiled in, 2 hwloc_topology_init failed,
 *   3 hwloc_topology_load failed, 4 no such object.
 * On 2 and 3, *err holds errno.
 */
#include <errno.h>
#include <stddef.h>

#define OXMPI_TOPO_OK 0
#define OXMPI_TOPO_NOT_COMPILED 1
#define OXMPI_TOPO_INIT_FAILED 2
#define OXMPI_TOPO_LOAD_FAILED 3
#define OXMPI_TOPO_NO_SUCH_OBJECT 4

/* Which objects oxmpi_topo_object walks. */
#define OXMPI_KIND_CORE 0
#define OXMPI_KIND_PU 1

/* Object counts; -1 where hwloc has the type at several depths. */
struct oxmpi_topo_counts {
    int pus;
    int cores;
    int packages;
    int numa_nodes;
};

#ifdef OXMPI_HAVE_HWLOC
#include <hwloc.h>

int oxmpi_topo_open(void **out, int *err)
{
    hwloc_topology_t topo;
    *out = NULL;
    *err = 0;
    if (hwloc_topology_init(&topo) != 0) {
        *err = errno;
        return OXMPI_TOPO_INIT_FAILED;
    }
    if (hwloc_topology_load(topo) != 0) {
        *err = errno;
        hwloc_topology_destroy(topo);
        return OXMPI_TOPO_LOAD_FAILED;
    }
    *out = topo;
    return OXMPI_TOPO_OK;
}

void oxmpi_topo_close(void *topo)
{
    if (topo != NULL)
        hwloc_topology_destroy((hwloc_topology_t)topo);
}

unsigned oxmpi_topo_api_version(void)
{
    return hwloc_get_api_version();
}

int oxmpi_topo_counts(void *topo, struct oxmpi_topo_counts *counts)
{
    hwloc_topology_t t = (hwloc_topology_t)topo;
    counts->pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    counts->cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    counts->packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    counts->numa_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    return OXMPI_TOPO_OK;
}

/*
 * The object of the given kind with logical index idx: its OS index, and the
 * OS indices of the PUs inside it (at most cap written; *npus gets them all,
 * so the caller can retry with a larger buffer).
 */
int oxmpi_topo_object(void *topo, int kind, unsigned idx, unsigned *os_index,
                      unsigned *pus, unsigned cap, unsigned *npus)
{
    hwloc_topology_t t = (hwloc_topology_t)topo;
    hwloc_obj_type_t type = kind == OXMPI_KIND_PU ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE;
    hwloc_obj_t obj = hwloc_get_obj_by_type(t, type, idx);
    hwloc_obj_t pu = NULL;
    unsigned n = 0;
    if (obj == NULL || obj->cpuset == NULL)
        return OXMPI_TOPO_NO_SUCH_OBJECT;
    *os_index = obj->os_index;
    while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(t, obj->cpuset, HWLOC_OBJ_PU, pu)) != NULL) {
        if (n < cap)
            pus[n] = pu->os_index;
        n++;
    }
    *npus = n;
    return OXMPI_TOPO_OK;
}

#else /* !OXMPI_HAVE_HWLOC */

int oxmpi_topo_open(void **out, int *err)
{
    *out = NULL;
    *err = 0;
    return OXMPI_TOPO_NOT_COMPILED;
}

void oxmpi_topo_close(void *topo)
{
    (void)topo;
}

unsigned oxmpi_topo_api_version(void)
{
    return 0;
}

int oxmpi_topo_counts(void *topo, struct oxmpi_topo_counts *counts)
{
    (void)topo;
    (void)counts;
    return OXMPI_TOPO_NOT_COMPILED;
}

int oxmpi_topo_object(void *topo, int kind, unsigned idx, unsigned *os_index,
                      unsigned *pus, unsigned cap, unsigned *npus)
{
    (void)topo;
    (void)kind;
    (void)idx;
    (void)os_index;
    (void)pus;
    (void)cap;
    (void)npus;
    return OXMPI_TOPO_NOT_COMPILED;
}

#endif
