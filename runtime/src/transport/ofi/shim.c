/*
 * Thin C shim over libfabric's structs: provider discovery (the endpoint
 * is endpoint.c's).
 * Everything that touches libfabric's structs is read here against the real
 * header and handed to Rust as plain bytes. Compiled by runtime/build.rs
 * against the header only: libfabric is NOT linked. The Rust side opens
 * libfabric.so.1 with dlopen on first use and passes the entry points it
 * resolved (fi_getinfo, fi_freeinfo) in; nothing here references a libfabric
 * symbol, so the object links without the library.
 *
 * Without OXMPI_HAVE_FABRIC (no header found) every call reports
 * OXMPI_OFI_NOT_COMPILED.
 *
 * Return codes (mirrored in sys.rs): 0 ok, 1 libfabric not compiled in,
 * 2 fi_getinfo failed (its negative return value in *err).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OXMPI_OFI_OK 0
#define OXMPI_OFI_NOT_COMPILED 1
#define OXMPI_OFI_GETINFO_FAILED 2

#ifdef OXMPI_HAVE_FABRIC
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

/* The entry points the Rust side resolves with dlsym (sys.rs: GetinfoFn,
 * FreeinfoFn). */
typedef int (*oxmpi_fi_getinfo_fn)(uint32_t version, const char *node,
                                   const char *service, uint64_t flags,
                                   const struct fi_info *hints,
                                   struct fi_info **info);
typedef void (*oxmpi_fi_freeinfo_fn)(struct fi_info *info);

#if defined(__GNUC__) || defined(__clang__)
/* The typedefs above must be the header's prototypes. __typeof__ does not
 * evaluate its operand, so this references no libfabric symbol. */
_Static_assert(__builtin_types_compatible_p(__typeof__(&fi_getinfo),
                                            oxmpi_fi_getinfo_fn),
               "fi_getinfo prototype differs from oxmpi_fi_getinfo_fn");
_Static_assert(__builtin_types_compatible_p(__typeof__(&fi_freeinfo),
                                            oxmpi_fi_freeinfo_fn),
               "fi_freeinfo prototype differs from oxmpi_fi_freeinfo_fn");
#endif

/* The API version we ask for: the one in the header we were built with
 * (1.17 on Debian 12). */
#define OXMPI_FI_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* The API version requested from fi_getinfo, FI_VERSION-encoded; 0 when not
 * compiled in. */
unsigned oxmpi_ofi_api_version(void)
{
    return OXMPI_FI_VERSION;
}

/*
 * Calls getinfo (libfabric's fi_getinfo) with no hints and writes the
 * provider name of every entry it returns, each followed by '\n', into buf
 * (never more than cap bytes; names that do not fit are skipped), then frees
 * the list with freeinfo. *needed receives the length of the whole list, so
 * a caller whose buffer was too small can retry. No entries (-FI_ENODATA) is
 * success with an empty list.
 */
int oxmpi_ofi_providers(oxmpi_fi_getinfo_fn getinfo,
                        oxmpi_fi_freeinfo_fn freeinfo, char *buf, size_t cap,
                        size_t *needed, int *err)
{
    struct fi_info *info = NULL;
    struct fi_info *cur;
    size_t len = 0;
    int ret;

    *needed = 0;
    *err = 0;
    ret = getinfo(OXMPI_FI_VERSION, NULL, NULL, 0, NULL, &info);
    if (ret == -FI_ENODATA)
        return OXMPI_OFI_OK;
    if (ret != 0) {
        *err = ret;
        return OXMPI_OFI_GETINFO_FAILED;
    }
    for (cur = info; cur != NULL; cur = cur->next) {
        const char *name = "";
        size_t n;
        if (cur->fabric_attr != NULL && cur->fabric_attr->prov_name != NULL)
            name = cur->fabric_attr->prov_name;
        n = strlen(name);
        if (len + n + 1 <= cap) {
            memcpy(buf + len, name, n);
            buf[len + n] = '\n';
        }
        len += n + 1;
    }
    freeinfo(info);
    *needed = len;
    return OXMPI_OFI_OK;
}

#else /* !OXMPI_HAVE_FABRIC */

unsigned oxmpi_ofi_api_version(void)
{
    return 0;
}

int oxmpi_ofi_providers(void *getinfo, void *freeinfo, char *buf, size_t cap,
                        size_t *needed, int *err)
{
    (void)getinfo;
    (void)freeinfo;
    (void)buf;
    (void)cap;
    *needed = 0;
    *err = 0;
    return OXMPI_OFI_NOT_COMPILED;
}

#endif
