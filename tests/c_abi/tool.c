/*
 * OxMPI only (MPICH exposes variables of its own): the MPI tool information
 * interface. Before MPI_Init, nested and after MPI_Finalize; every control
 * variable described, found by name, read (two set here through the
 * environment read back their values) and refused for writing; the
 * categories partition the variables; performance-variable sessions, and
 * no performance variables, events, sources or enumerations; the string
 * length protocol; the MPI_T_ERR_* classes for bad calls.
 * Prints "PASS tool" from rank 0.
 */
#include "abicheck.h"

#define T_CHECK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)
#define T_EXPECT(call, err) CHECK((call) == (err), "%s: expected %s", #call, #err)

/* Every control variable: described, found again by name, read, not written. */
static int check_cvars(void)
{
    int n = -1;
    T_CHECK(MPI_T_cvar_get_num(&n));
    CHECK(n >= 20, "only %d control variables", n);
    int seen_eager = 0, seen_provider = 0;
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int name_len = 0, desc_len = 0, verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum et;
        /* Length query first: nothing written, the length needed returned. */
        T_CHECK(MPI_T_cvar_get_info(i, name, &name_len, NULL, NULL, NULL, NULL, NULL, NULL,
                                    NULL));
        CHECK(name_len > 7 && name_len <= (int)sizeof name, "cvar %d: name length %d", i,
              name_len);
        name_len = sizeof name;
        desc_len = sizeof desc;
        T_CHECK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &et, desc, &desc_len,
                                    &bind, &scope));
        CHECK(strncmp(name, "OXMPI_", 6) == 0 && (int)strlen(name) + 1 == name_len,
              "cvar %d: name '%s' (%d)", i, name, name_len);
        CHECK(desc_len > 1 && (int)strlen(desc) + 1 == desc_len, "cvar %s: description", name);
        CHECK(dt == MPI_INT || dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_CHAR,
              "cvar %s: datatype", name);
        CHECK(et == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT &&
                  scope == MPI_T_SCOPE_READONLY && verbosity == MPI_T_VERBOSITY_TUNER_BASIC,
              "cvar %s: enum/bind/scope/verbosity", name);
        int again = -1;
        T_CHECK(MPI_T_cvar_get_index(name, &again));
        CHECK(again == i, "cvar %s: index %d, found as %d", name, i, again);

        MPI_T_cvar_handle h;
        int count = 0;
        T_CHECK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        CHECK(count == (dt == MPI_CHAR ? 1024 : 1), "cvar %s: count %d", name, count);
        if (dt == MPI_CHAR) {
            char value[1024];
            T_CHECK(MPI_T_cvar_read(h, value));
            CHECK(strlen(value) < sizeof value, "cvar %s: unterminated", name);
            if (strcmp(name, "OXMPI_OFI_PROVIDER") == 0) {
                CHECK(strcmp(value, "tcp") == 0, "OXMPI_OFI_PROVIDER reads '%s'", value);
                seen_provider = 1;
            }
        } else if (dt == MPI_INT) {
            int value = -1;
            T_CHECK(MPI_T_cvar_read(h, &value));
            CHECK(value == 0 || value == 1, "cvar %s: boolean %d", name, value);
        } else {
            unsigned long long value = 0;
            T_CHECK(MPI_T_cvar_read(h, &value));
            if (strcmp(name, "OXMPI_EAGER_LIMIT") == 0) {
                CHECK(value == 32768, "OXMPI_EAGER_LIMIT reads %llu", value);
                seen_eager = 1;
            }
        }
        int one = 1;
        T_EXPECT(MPI_T_cvar_write(h, &one), MPI_T_ERR_CVAR_SET_NEVER);
        T_CHECK(MPI_T_cvar_handle_free(&h));
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "cvar %s: handle not reset", name);
        T_EXPECT(MPI_T_cvar_read(h, &one), MPI_T_ERR_INVALID_HANDLE);
    }
    CHECK(seen_eager && seen_provider, "OXMPI_EAGER_LIMIT or OXMPI_OFI_PROVIDER missing");
    return n;
}

/* The categories hold every variable exactly once. */
static void check_categories(int ncvars)
{
    int ncat = 0, stamp = -1, stamp2 = -2;
    T_CHECK(MPI_T_category_get_num(&ncat));
    CHECK(ncat >= 1, "no categories");
    T_CHECK(MPI_T_category_changed(&stamp));
    int *owner = abicheck_malloc(ncvars * sizeof *owner);
    for (int v = 0; v < ncvars; v++)
        owner[v] = -1;
    for (int c = 0; c < ncat; c++) {
        char name[128];
        int len = sizeof name, nc = -1, np = -1, nsub = -1, ne = -1, found = -1;
        T_CHECK(MPI_T_category_get_info(c, name, &len, NULL, NULL, &nc, &np, &nsub));
        CHECK(np == 0 && nsub == 0 && nc >= 0, "category %s: %d pvars %d sub", name, np, nsub);
        T_CHECK(MPI_T_category_get_index(name, &found));
        CHECK(found == c, "category %s: index %d, found as %d", name, c, found);
        T_CHECK(MPI_T_category_get_num_events(c, &ne));
        CHECK(ne == 0, "category %s: %d events", name, ne);
        int *idx = abicheck_malloc((nc + 1) * sizeof *idx);
        T_CHECK(MPI_T_category_get_cvars(c, nc, idx));
        for (int k = 0; k < nc; k++) {
            CHECK(idx[k] >= 0 && idx[k] < ncvars && owner[idx[k]] == -1,
                  "category %s: variable %d twice or out of range", name, idx[k]);
            owner[idx[k]] = c;
        }
        free(idx);
    }
    for (int v = 0; v < ncvars; v++)
        CHECK(owner[v] >= 0, "variable %d in no category", v);
    free(owner);
    T_CHECK(MPI_T_category_changed(&stamp2));
    CHECK(stamp == stamp2, "categories changed");
    int ignored;
    T_EXPECT(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, &ignored, &ignored, &ignored),
             MPI_T_ERR_INVALID_INDEX);
    T_EXPECT(MPI_T_category_get_index("no such category", &ignored), MPI_T_ERR_INVALID_NAME);
}

/* No performance variables; sessions still work. */
static void check_pvars(void)
{
    int n = -1, idx;
    T_CHECK(MPI_T_pvar_get_num(&n));
    CHECK(n == 0, "%d performance variables", n);
    T_EXPECT(MPI_T_pvar_get_index("x", MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_T_ERR_INVALID_NAME);
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL, other;
    T_CHECK(MPI_T_pvar_session_create(&s));
    T_CHECK(MPI_T_pvar_session_create(&other));
    CHECK(s != MPI_T_PVAR_SESSION_NULL && s != other, "sessions");
    MPI_T_pvar_handle h;
    int count;
    T_EXPECT(MPI_T_pvar_handle_alloc(s, 0, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    T_CHECK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    T_CHECK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    T_CHECK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    long long buf;
    T_EXPECT(MPI_T_pvar_read(s, MPI_T_PVAR_HANDLE_NULL, &buf), MPI_T_ERR_INVALID_HANDLE);
    T_CHECK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not reset");
    T_EXPECT(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
    T_EXPECT(MPI_T_pvar_session_free(&s), MPI_T_ERR_INVALID_SESSION);
    T_CHECK(MPI_T_pvar_session_free(&other));
}

/* No events, sources or enumerations; bad indices, names and handles. */
static void check_the_rest(int ncvars)
{
    int n = -1, idx, num;
    T_CHECK(MPI_T_event_get_num(&n));
    CHECK(n == 0, "%d events", n);
    T_CHECK(MPI_T_source_get_num(&n));
    CHECK(n == 0, "%d sources", n);
    T_EXPECT(MPI_T_event_get_index("x", &idx), MPI_T_ERR_INVALID_NAME);
    T_EXPECT(MPI_T_cvar_get_index("OXMPI_NO_SUCH_THING", &idx), MPI_T_ERR_INVALID_NAME);
    T_EXPECT(MPI_T_cvar_get_info(ncvars, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    T_EXPECT(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    T_EXPECT(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    MPI_Count ts;
    T_EXPECT(MPI_T_source_get_timestamp(0, &ts), MPI_T_ERR_INVALID_INDEX);
    /* A name truncated to the buffer keeps its terminator. */
    char small[4];
    int len = sizeof small;
    T_CHECK(MPI_T_cvar_get_info(0, small, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(len == 4 && small[3] == '\0' && strncmp(small, "OXM", 3) == 0, "truncation: '%s' %d",
          small, len);
}

int main(int argc, char **argv)
{
    setenv("OXMPI_EAGER_LIMIT", "32k", 1);
    setenv("OXMPI_OFI_PROVIDER", "tcp", 1);
    int n, provided = -1;
    T_EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    T_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    T_CHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    int before = check_cvars();

    MPI_CHECK(MPI_Init(&argc, &argv));
    CHECK(check_cvars() == before, "the variables changed with MPI_Init");
    check_categories(before);
    check_pvars();
    check_the_rest(before);
    T_CHECK(MPI_T_finalize());
    T_CHECK(MPI_T_cvar_get_num(&n)); /* still initialized once */
    T_CHECK(MPI_T_finalize());
    T_EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    abicheck_pass("tool");
    MPI_CHECK(MPI_Finalize());

    /* After MPI_Finalize too. */
    T_CHECK(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided));
    T_CHECK(MPI_T_cvar_get_num(&n));
    CHECK(n == before, "%d variables after MPI_Finalize", n);
    T_CHECK(MPI_T_finalize());
    return 0;
}
