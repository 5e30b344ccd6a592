/*
 * Thin C shim over the system libfabric: provider discovery only, for now.
 * Everything that touches libfabric's structs is read here against the real
 * header and handed to Rust as plain bytes. Compiled by runtime/build.rs;
 * without OXMPI_HAVE_FABRIC every call reports OXMPI_OFI_NOT_COMPILED.
 *
 * Return codes (mirrored in sys.rs): 0 ok, 1 libfabric not compiled in,
 * 2 fi_getinfo failed (its negative return value in *err).
 */
#include <stddef.h>
#include <string.h>

#define OXMPI_OFI_OK 0
#define OXMPI_OFI_NOT_COMPILED 1
#define OXMPI_OFI_GETINFO_FAILED 2

#ifdef OXMPI_HAVE_FABRIC
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

/* The API version we ask for: the one in the header we were built with
 * (1.17 on Debian 12). */
#define OXMPI_FI_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* The version of the loaded library, FI_VERSION-encoded. */
unsigned oxmpi_ofi_library_version(void)
{
    return fi_version();
}

/* The API version requested from fi_getinfo, FI_VERSION-encoded. */
unsigned oxmpi_ofi_api_version(void)
{
    return OXMPI_FI_VERSION;
}

/*
 * Calls fi_getinfo with no hints and writes the provider name of every entry
 * it returns, each followed by '\n', into buf (never more than cap bytes;
 * names that do not fit are skipped). *needed receives the length of the
 * whole list, so a caller whose buffer was too small can retry. No entries
 * (-FI_ENODATA) is success with an empty list.
 */
int oxmpi_ofi_providers(char *buf, size_t cap, size_t *needed, int *err)
{
    struct fi_info *info = NULL;
    struct fi_info *cur;
    size_t len = 0;
    int ret;

    *needed = 0;
    *err = 0;
    ret = fi_getinfo(OXMPI_FI_VERSION, NULL, NULL, 0, NULL, &info);
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
    fi_freeinfo(info);
    *needed = len;
    return OXMPI_OFI_OK;
}

/* libfabric's text for a (negative) return code. */
const char *oxmpi_ofi_strerror(int code)
{
    return fi_strerror(code < 0 ? -code : code);
}

#else /* !OXMPI_HAVE_FABRIC */

unsigned oxmpi_ofi_library_version(void)
{
    return 0;
}

unsigned oxmpi_ofi_api_version(void)
{
    return 0;
}

int oxmpi_ofi_providers(char *buf, size_t cap, size_t *needed, int *err)
{
    (void)buf;
    (void)cap;
    *needed = 0;
    *err = 0;
    return OXMPI_OFI_NOT_COMPILED;
}

const char *oxmpi_ofi_strerror(int code)
{
    (void)code;
    return "libfabric not compiled in";
}

#endif
