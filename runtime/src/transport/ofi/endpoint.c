/*
 * Thin C shim over a libfabric RDM endpoint: open, address, tagged send and
 * receive, memory registration, RMA read, completion polling, wait object,
 * close. libfabric's data-path
 * calls are static inline functions in its headers that jump through the
 * objects' operation tables, so this file calls them directly; the only
 * exported entry points it needs (fi_getinfo, fi_freeinfo, fi_dupinfo,
 * fi_fabric) are resolved by the Rust side with dlsym and passed in, so
 * the object still links without libfabric (see shim.c).
 *
 * Return codes are libfabric's (0 or a negative -FI_xxx); sys.rs mirrors
 * the few that the Rust side tells apart.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OXMPI_HAVE_FABRIC
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

typedef int (*getinfo_fn)(uint32_t, const char *, const char *, uint64_t,
                          const struct fi_info *, struct fi_info **);
typedef void (*freeinfo_fn)(struct fi_info *);
typedef struct fi_info *(*dupinfo_fn)(const struct fi_info *);
typedef int (*fabric_fn)(struct fi_fabric_attr *, struct fid_fabric **,
                         void *);

/* The flags sys.rs mirrors. */
_Static_assert(FI_MR_LOCAL == (1 << 2) && FI_MR_VIRT_ADDR == (1 << 4) &&
                   FI_MR_PROV_KEY == (1 << 6),
               "FI_MR_* bits differ from sys.rs");
_Static_assert(FI_READ == (1ULL << 8) && FI_RECV == (1ULL << 10) &&
                   FI_SEND == (1ULL << 11) && FI_REMOTE_READ == (1ULL << 12),
               "access bits differ from sys.rs");

#if defined(__GNUC__) || defined(__clang__)
_Static_assert(__builtin_types_compatible_p(__typeof__(&fi_dupinfo),
                                            dupinfo_fn),
               "fi_dupinfo prototype differs");
_Static_assert(__builtin_types_compatible_p(__typeof__(&fi_fabric),
                                            fabric_fn),
               "fi_fabric prototype differs");
#endif

/* The libfabric entry points resolved by the Rust side (sys.rs: Entry). */
struct oxmpi_ofi_entry {
    getinfo_fn getinfo;
    freeinfo_fn freeinfo;
    dupinfo_fn dupinfo;
    fabric_fn fabric;
};

/* One completion, as the Rust side reads it (sys.rs: Completion). */
struct oxmpi_ofi_completion {
    void *context;
    uint64_t flags;
    uint64_t len;
    uint64_t tag;
};

struct oxmpi_ofi_ep {
    freeinfo_fn freeinfo;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    int wait_fd;
};

/* Whether an entry's source address is a loopback or link-local one: such
 * an address cannot be reached from another host. */
static int local_only(const struct fi_info *fi)
{
    if (fi->src_addr == NULL)
        return 0;
    if (fi->addr_format == FI_SOCKADDR_IN) {
        const struct sockaddr_in *a = fi->src_addr;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (fi->addr_format == FI_SOCKADDR_IN6) {
        const struct sockaddr_in6 *a = fi->src_addr;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ||
               IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr);
    }
    return 0;
}

static int domain_is(const struct fi_info *fi, const char *name)
{
    return fi->domain_attr != NULL && fi->domain_attr->name != NULL &&
           strcmp(fi->domain_attr->name, name) == 0;
}

/* Whether an entry's source address is the IP address `want` (the port
 * does not matter). */
static int has_ip(const struct fi_info *fi, const char *want)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (fi->src_addr == NULL)
        return 0;
    if (fi->addr_format == FI_SOCKADDR_IN && inet_pton(AF_INET, want, &v4) == 1) {
        const struct sockaddr_in *a = fi->src_addr;
        return a->sin_addr.s_addr == v4.s_addr;
    }
    if (fi->addr_format == FI_SOCKADDR_IN6 &&
        inet_pton(AF_INET6, want, &v6) == 1) {
        const struct sockaddr_in6 *a = fi->src_addr;
        return memcmp(&a->sin6_addr, &v6, sizeof(v6)) == 0;
    }
    return 0;
}

/* An entry's source IP address as text ("?" when it has none). */
static void source_text(const struct fi_info *fi, char *out, size_t cap)
{
    const void *ip = NULL;
    int family = AF_INET;
    if (fi->src_addr != NULL && fi->addr_format == FI_SOCKADDR_IN) {
        ip = &((const struct sockaddr_in *)fi->src_addr)->sin_addr;
    } else if (fi->src_addr != NULL && fi->addr_format == FI_SOCKADDR_IN6) {
        ip = &((const struct sockaddr_in6 *)fi->src_addr)->sin6_addr;
        family = AF_INET6;
    }
    if (ip == NULL || inet_ntop(family, ip, out, (socklen_t)cap) == NULL)
        snprintf(out, cap, "?");
}

/* The entry to open: on `iface` when one is named; else the one whose
 * source address is `addr` (the address the launcher reached this host
 * at), when one is; else the first one that other hosts can reach, IPv4
 * before anything else. `*how` says which rule chose it. */
static struct fi_info *choose(struct fi_info *list, const char *iface,
                              const char *addr, const char **how)
{
    struct fi_info *cur;
    if (iface != NULL) {
        *how = "interface named";
        for (cur = list; cur != NULL; cur = cur->next)
            if (domain_is(cur, iface))
                return cur;
        return NULL;
    }
    if (addr != NULL) {
        *how = "this host's address";
        for (cur = list; cur != NULL; cur = cur->next)
            if (has_ip(cur, addr))
                return cur;
    }
    *how = "first reachable address";
    for (cur = list; cur != NULL; cur = cur->next)
        if (cur->addr_format == FI_SOCKADDR_IN && !local_only(cur))
            return cur;
    for (cur = list; cur != NULL; cur = cur->next)
        if (!local_only(cur))
            return cur;
    return NULL;
}

/* Closes the endpoint alone, which ends every operation posted on it;
 * memory registrations may then be closed before oxmpi_ofi_close. */
void oxmpi_ofi_close_ep(struct oxmpi_ofi_ep *e)
{
    if (e != NULL && e->ep != NULL) {
        fi_close(&e->ep->fid);
        e->ep = NULL;
    }
}

void oxmpi_ofi_close(struct oxmpi_ofi_ep *e)
{
    if (e == NULL)
        return;
    if (e->ep != NULL)
        fi_close(&e->ep->fid);
    if (e->cq != NULL)
        fi_close(&e->cq->fid);
    if (e->av != NULL)
        fi_close(&e->av->fid);
    if (e->domain != NULL)
        fi_close(&e->domain->fid);
    if (e->fabric != NULL)
        fi_close(&e->fabric->fid);
    if (e->info != NULL)
        e->freeinfo(e->info);
    free(e);
}

/* Opens an RDM endpoint with tagged messages that keeps send-after-send
 * order, on provider `prov` (NULL: libfabric's choice, which FI_PROVIDER
 * filters) and interface / domain `iface` (NULL: the one holding IP
 * address `addr`, if any does, else the first reachable one);
 * with `rma`, it must also read remote memory (FI_RMA, FI_READ) and let
 * peers read its own (FI_REMOTE_READ). Its completion queue holds
 * `cq_size` entries. Every memory registration mode but raw keys is
 * accepted: the caller honours what oxmpi_ofi_mr_mode reports. On success
 * *out is the endpoint and `desc` (cap bytes) says what was opened; on
 * failure returns a negative libfabric code and `desc` names the step
 * that failed. */
int oxmpi_ofi_open(const struct oxmpi_ofi_entry *fns, const char *prov,
                   const char *iface, const char *addr, int rma,
                   size_t cq_size, struct oxmpi_ofi_ep **out, char *desc,
                   size_t cap)
{
    struct fi_info *hints, *list = NULL, *fi;
    const char *how = "";
    char source[INET6_ADDRSTRLEN];
    struct fi_cq_attr cq_attr;
    struct fi_av_attr av_attr;
    struct oxmpi_ofi_ep *e;
    int ret;

    *out = NULL;
    hints = fns->dupinfo(NULL);
    if (hints == NULL) {
        snprintf(desc, cap, "fi_allocinfo");
        return -FI_ENOMEM;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED;
    if (rma)
        hints->caps |= FI_RMA | FI_READ | FI_REMOTE_READ;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->addr_format = FI_FORMAT_UNSPEC;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ENDPOINT |
                                  FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                  FI_MR_PROV_KEY;
    if (prov != NULL)
        hints->fabric_attr->prov_name = strdup(prov);
    ret = fns->getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL,
                       NULL, 0, hints, &list);
    fns->freeinfo(hints);
    if (ret != 0) {
        snprintf(desc, cap, "fi_getinfo");
        return ret;
    }
    fi = choose(list, iface, addr, &how);
    if (fi == NULL) {
        fns->freeinfo(list);
        snprintf(desc, cap, "no reachable interface");
        return -FI_ENODATA;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL) {
        fns->freeinfo(list);
        snprintf(desc, cap, "calloc");
        return -FI_ENOMEM;
    }
    e->freeinfo = fns->freeinfo;
    e->wait_fd = -1;
    e->info = fns->dupinfo(fi);
    fns->freeinfo(list);
    if (e->info == NULL) {
        free(e);
        snprintf(desc, cap, "fi_dupinfo");
        return -FI_ENOMEM;
    }
    fi = e->info;
#define STEP(call, name)                                                     \
    do {                                                                     \
        ret = (call);                                                        \
        if (ret != 0) {                                                      \
            snprintf(desc, cap, "%s", name);                                 \
            oxmpi_ofi_close(e);                                              \
            return ret;                                                      \
        }                                                                    \
    } while (0)
    STEP(fns->fabric(fi->fabric_attr, &e->fabric, NULL), "fi_fabric");
    STEP(fi_domain(e->fabric, fi, &e->domain, NULL), "fi_domain");
    memset(&av_attr, 0, sizeof(av_attr));
    av_attr.type = FI_AV_UNSPEC;
    STEP(fi_av_open(e->domain, &av_attr, &e->av, NULL), "fi_av_open");
    memset(&cq_attr, 0, sizeof(cq_attr));
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = cq_size;
    cq_attr.wait_obj = FI_WAIT_FD;
    if (fi_cq_open(e->domain, &cq_attr, &e->cq, NULL) != 0) {
        /* No file descriptor to wait on: the caller sleeps in short steps. */
        cq_attr.wait_obj = FI_WAIT_NONE;
        STEP(fi_cq_open(e->domain, &cq_attr, &e->cq, NULL), "fi_cq_open");
    } else if (fi_control(&e->cq->fid, FI_GETWAIT, &e->wait_fd) != 0) {
        e->wait_fd = -1;
    }
    STEP(fi_endpoint(e->domain, fi, &e->ep, NULL), "fi_endpoint");
    STEP(fi_ep_bind(e->ep, &e->av->fid, 0), "fi_ep_bind(av)");
    STEP(fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV),
         "fi_ep_bind(cq)");
    STEP(fi_enable(e->ep), "fi_enable");
#undef STEP
    source_text(fi, source, sizeof(source));
    snprintf(desc, cap,
             "%s on %s (fabric %s), source %s (%s), inject %zu, max message "
             "%zu, mr_mode %#x",
             fi->fabric_attr->prov_name ? fi->fabric_attr->prov_name : "?",
             fi->domain_attr->name ? fi->domain_attr->name : "?",
             fi->fabric_attr->name ? fi->fabric_attr->name : "?", source, how,
             fi->tx_attr->inject_size, fi->ep_attr->max_msg_size,
             (unsigned)fi->domain_attr->mr_mode);
    *out = e;
    return 0;
}

size_t oxmpi_ofi_inject_size(const struct oxmpi_ofi_ep *e)
{
    return e->info->tx_attr->inject_size;
}

/* The registration modes the provider requires (FI_MR_* bits). */
uint64_t oxmpi_ofi_mr_mode(const struct oxmpi_ofi_ep *e)
{
    return (uint64_t)e->info->domain_attr->mr_mode;
}

/* Whether this endpoint reads remote memory and lets peers read its own. */
int oxmpi_ofi_can_read(const struct oxmpi_ofi_ep *e)
{
    uint64_t need = FI_RMA | FI_READ | FI_REMOTE_READ;
    return (e->info->caps & need) == need;
}

/* Registers `len` bytes at `buf` for `access` (FI_SEND, FI_RECV, FI_READ,
 * FI_REMOTE_READ) with `key` as the requested key (ignored under
 * FI_MR_PROV_KEY); under FI_MR_ENDPOINT the registration is bound to the
 * endpoint and enabled. *mr is the registration, *mr_desc its local
 * descriptor for data calls and *mr_key the key peers name it by. */
int oxmpi_ofi_mr_reg(struct oxmpi_ofi_ep *e, const void *buf, size_t len,
                     uint64_t access, uint64_t key, void **mr,
                     void **mr_desc, uint64_t *mr_key)
{
    struct fid_mr *m = NULL;
    int ret = fi_mr_reg(e->domain, buf, len, access, 0, key, 0, &m, NULL);
    if (ret != 0)
        return ret;
    if (e->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        ret = fi_mr_bind(m, &e->ep->fid, 0);
        if (ret == 0)
            ret = fi_mr_enable(m);
        if (ret != 0) {
            fi_close(&m->fid);
            return ret;
        }
    }
    *mr_key = fi_mr_key(m);
    if (*mr_key == FI_KEY_NOTAVAIL) {
        fi_close(&m->fid);
        return -FI_EKEYREJECTED;
    }
    *mr = m;
    *mr_desc = fi_mr_desc(m);
    return 0;
}

int oxmpi_ofi_mr_close(void *mr)
{
    return fi_close(&((struct fid_mr *)mr)->fid);
}

int oxmpi_ofi_wait_fd(const struct oxmpi_ofi_ep *e)
{
    return e->wait_fd;
}

/* The endpoint's address: *len in, capacity; out, its length. */
int oxmpi_ofi_getname(struct oxmpi_ofi_ep *e, void *addr, size_t *len)
{
    return fi_getname(&e->ep->fid, addr, len);
}

/* Inserts one peer address; *fi_addr receives its handle. */
int oxmpi_ofi_insert(struct oxmpi_ofi_ep *e, const void *addr,
                     uint64_t *fi_addr)
{
    fi_addr_t a = FI_ADDR_NOTAVAIL;
    int n = fi_av_insert(e->av, addr, 1, &a, 0, NULL);
    if (n != 1)
        return n < 0 ? n : -FI_EADDRNOTAVAIL;
    *fi_addr = a;
    return 0;
}

ssize_t oxmpi_ofi_tsend(struct oxmpi_ofi_ep *e, const void *buf, size_t len,
                        void *mr_desc, uint64_t dest, uint64_t tag,
                        void *context)
{
    return fi_tsend(e->ep, buf, len, mr_desc, dest, tag, context);
}

ssize_t oxmpi_ofi_tinject(struct oxmpi_ofi_ep *e, const void *buf,
                          size_t len, uint64_t dest, uint64_t tag)
{
    return fi_tinject(e->ep, buf, len, dest, tag);
}

ssize_t oxmpi_ofi_trecv(struct oxmpi_ofi_ep *e, void *buf, size_t len,
                        void *mr_desc, uint64_t tag, uint64_t ignore,
                        void *context)
{
    return fi_trecv(e->ep, buf, len, mr_desc, FI_ADDR_UNSPEC, tag, ignore,
                    context);
}

/* Reads `len` bytes of peer `src`'s registration `key` at `addr` (its
 * virtual address under FI_MR_VIRT_ADDR, else an offset) into `buf`. */
ssize_t oxmpi_ofi_read(struct oxmpi_ofi_ep *e, void *buf, size_t len,
                       void *mr_desc, uint64_t src, uint64_t addr,
                       uint64_t key, void *context)
{
    return fi_read(e->ep, buf, len, mr_desc, src, addr, key, context);
}

int oxmpi_ofi_cancel(struct oxmpi_ofi_ep *e, void *context)
{
    return (int)fi_cancel(&e->ep->fid, context);
}

/* Reads up to `max` completions into `out`; returns how many (0: none). A
 * failed operation returns -FI_EAVAIL with its context in *err_context,
 * libfabric's error in *err and the provider's text in errbuf. */
ssize_t oxmpi_ofi_poll(struct oxmpi_ofi_ep *e,
                       struct oxmpi_ofi_completion *out, size_t max,
                       void **err_context, int *err, char *errbuf,
                       size_t errcap)
{
    struct fi_cq_tagged_entry entries[16];
    struct fi_cq_err_entry failure;
    ssize_t n, i;

    if (max > 16)
        max = 16;
    n = fi_cq_read(e->cq, entries, max);
    if (n == -FI_EAGAIN)
        return 0;
    if (n == -FI_EAVAIL) {
        memset(&failure, 0, sizeof(failure));
        if (fi_cq_readerr(e->cq, &failure, 0) < 0)
            return -FI_EAGAIN;
        *err_context = failure.op_context;
        *err = failure.err;
        snprintf(errbuf, errcap, "%s",
                 fi_cq_strerror(e->cq, failure.prov_errno, failure.err_data,
                                NULL, 0));
        return -FI_EAVAIL;
    }
    for (i = 0; i < n; i++) {
        out[i].context = entries[i].op_context;
        out[i].flags = entries[i].flags;
        out[i].len = entries[i].len;
        out[i].tag = entries[i].tag;
    }
    return n;
}

/* 0 when the caller may block on the wait descriptor (nothing is pending
 * that only another poll would reveal). */
int oxmpi_ofi_trywait(struct oxmpi_ofi_ep *e)
{
    struct fid *fids[1];
    fids[0] = &e->cq->fid;
    return fi_trywait(e->fabric, fids, 1);
}

#else /* !OXMPI_HAVE_FABRIC */

/* Without the header nothing opens, so the Rust side never reaches the
 * other functions; they exist so that it links. */
struct oxmpi_ofi_ep;
#define NOSYS (-38) /* -FI_ENOSYS */

int oxmpi_ofi_open(const void *fns, const char *prov, const char *iface,
                   const char *addr, int rma, size_t cq_size,
                   struct oxmpi_ofi_ep **out, char *desc, size_t cap)
{
    (void)fns;
    (void)prov;
    (void)iface;
    (void)addr;
    (void)rma;
    (void)cq_size;
    *out = NULL;
    snprintf(desc, cap, "libfabric's header was missing at build time");
    return NOSYS;
}
void oxmpi_ofi_close(struct oxmpi_ofi_ep *e) { (void)e; }
void oxmpi_ofi_close_ep(struct oxmpi_ofi_ep *e) { (void)e; }
size_t oxmpi_ofi_inject_size(const struct oxmpi_ofi_ep *e) { (void)e; return 0; }
uint64_t oxmpi_ofi_mr_mode(const struct oxmpi_ofi_ep *e) { (void)e; return 0; }
int oxmpi_ofi_can_read(const struct oxmpi_ofi_ep *e) { (void)e; return 0; }
int oxmpi_ofi_mr_reg(struct oxmpi_ofi_ep *e, const void *b, size_t l,
                     uint64_t a, uint64_t k, void **m, void **d, uint64_t *o)
{ (void)e; (void)b; (void)l; (void)a; (void)k; (void)m; (void)d; (void)o; return NOSYS; }
int oxmpi_ofi_mr_close(void *m) { (void)m; return NOSYS; }
int oxmpi_ofi_wait_fd(const struct oxmpi_ofi_ep *e) { (void)e; return -1; }
int oxmpi_ofi_getname(struct oxmpi_ofi_ep *e, void *a, size_t *l)
{ (void)e; (void)a; (void)l; return NOSYS; }
int oxmpi_ofi_insert(struct oxmpi_ofi_ep *e, const void *a, uint64_t *f)
{ (void)e; (void)a; (void)f; return NOSYS; }
long oxmpi_ofi_tsend(struct oxmpi_ofi_ep *e, const void *b, size_t l,
                     void *m, uint64_t d, uint64_t t, void *c)
{ (void)e; (void)b; (void)l; (void)m; (void)d; (void)t; (void)c; return NOSYS; }
long oxmpi_ofi_tinject(struct oxmpi_ofi_ep *e, const void *b, size_t l,
                       uint64_t d, uint64_t t)
{ (void)e; (void)b; (void)l; (void)d; (void)t; return NOSYS; }
long oxmpi_ofi_trecv(struct oxmpi_ofi_ep *e, void *b, size_t l, void *m,
                     uint64_t t, uint64_t i, void *c)
{ (void)e; (void)b; (void)l; (void)m; (void)t; (void)i; (void)c; return NOSYS; }
long oxmpi_ofi_read(struct oxmpi_ofi_ep *e, void *b, size_t l, void *m,
                    uint64_t s, uint64_t a, uint64_t k, void *c)
{ (void)e; (void)b; (void)l; (void)m; (void)s; (void)a; (void)k; (void)c; return NOSYS; }
int oxmpi_ofi_cancel(struct oxmpi_ofi_ep *e, void *c) { (void)e; (void)c; return NOSYS; }
long oxmpi_ofi_poll(struct oxmpi_ofi_ep *e, void *o, size_t m, void **ec,
                    int *err, char *b, size_t cap)
{ (void)e; (void)o; (void)m; (void)ec; (void)err; (void)b; (void)cap; return NOSYS; }
int oxmpi_ofi_trywait(struct oxmpi_ofi_ep *e) { (void)e; return NOSYS; }

#endif
