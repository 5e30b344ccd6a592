/*
 * Attributes through the C ABI: the predefined ones (MPI_TAG_UB as a
 * pointer to an int, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL) on every
 * communicator; keyvals with counting copy and delete callbacks (extra
 * state, the communicator handle and the value they are given, the value
 * a copy produces), MPI_COMM_DUP_FN and MPI_COMM_NULL_COPY_FN, replacing
 * and deleting values, freeing a keyval while a value is attached, the
 * MPI-1 names (Keyval_create, Attr_put/get/delete, Keyval_free), a delete
 * callback's error, attributes of MPI_COMM_SELF deleted by MPI_Finalize,
 * and the error classes of bad keyvals.
 * Prints "PASS attr" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

struct counts {
    int copies, deletes;
    MPI_Comm last_comm;
    void *last_value;
};

static struct counts counts;
static int self_deleted;

static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
                         int *flag)
{
    (void)keyval;
    struct counts *c = extra;
    c->copies++;
    c->last_comm = oldcomm;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)keyval;
    struct counts *c = extra;
    c->deletes++;
    c->last_comm = comm;
    c->last_value = value;
    return MPI_SUCCESS;
}

/* Fails the first time only. */
static int failing_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    static int calls;
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    return calls++ == 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int self_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)keyval;
    (void)extra;
    if (comm == MPI_COMM_SELF && value == &self_deleted)
        self_deleted++;
    return MPI_SUCCESS;
}

static void *get(MPI_Comm comm, int keyval, int *flag)
{
    void *v = NULL;
    MPI_CHECK(MPI_Comm_get_attr(comm, keyval, &v, flag));
    return v;
}

static void test_predefined(void)
{
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm comms[] = {MPI_COMM_WORLD, MPI_COMM_SELF, dup};
    for (int k = 0; k < 3; k++) {
        int flag = 0;
        int *ub = get(comms[k], MPI_TAG_UB, &flag);
        CHECK(flag && ub != NULL && *ub >= 32767, "MPI_TAG_UB on comm %d: flag %d", k, flag);
        /* The largest tag works. */
        if (k == 0) {
            int x = rank, y = -1;
            MPI_CHECK(MPI_Sendrecv(&x, 1, MPI_INT, rank, *ub, &y, 1, MPI_INT, rank, *ub,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(y == rank, "self send with tag MPI_TAG_UB");
        }
        int *host = get(comms[k], MPI_HOST, &flag);
        CHECK(flag && *host == MPI_PROC_NULL, "MPI_HOST");
        int *io = get(comms[k], MPI_IO, &flag);
        CHECK(flag && (*io == MPI_ANY_SOURCE || *io == MPI_PROC_NULL ||
                       (*io >= 0 && *io < size)),
              "MPI_IO = %d", *io);
        int *wg = get(comms[k], MPI_WTIME_IS_GLOBAL, &flag);
        CHECK(flag && (*wg == 0 || *wg == 1), "MPI_WTIME_IS_GLOBAL");
    }
    int flag = 0, *ub = NULL;
    MPI_CHECK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && *ub >= 32767, "MPI_Attr_get(MPI_TAG_UB)");
    MPI_CHECK(MPI_Comm_free(&dup));
}

static void test_callbacks(void)
{
    int key, dupkey, nocopy;
    static char payload[16];
    MPI_CHECK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &key, &counts));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &dupkey, NULL));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &nocopy,
                                     NULL));
    CHECK(key != dupkey && key != nocopy && dupkey != nocopy, "keyvals not distinct");

    MPI_Comm a;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    int flag = 1;
    get(a, key, &flag);
    CHECK(!flag, "an attribute before any was set");
    MPI_CHECK(MPI_Comm_set_attr(a, key, payload));
    MPI_CHECK(MPI_Comm_set_attr(a, dupkey, payload + 5));
    MPI_CHECK(MPI_Comm_set_attr(a, nocopy, payload + 7));
    void *v = get(a, key, &flag);
    CHECK(flag && v == payload, "get after set: %p", v);

    /* Dup: copy callback runs once, with the old communicator; its value lands. */
    MPI_Comm b;
    MPI_CHECK(MPI_Comm_dup(a, &b));
    CHECK(counts.copies == 1 && counts.last_comm == a, "copies %d", counts.copies);
    v = get(b, key, &flag);
    CHECK(flag && v == payload + 1, "copied value %p, expected %p", v, (void *)(payload + 1));
    v = get(b, dupkey, &flag);
    CHECK(flag && v == payload + 5, "MPI_COMM_DUP_FN value");
    get(b, nocopy, &flag);
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied");

    /* Replacing runs the delete callback on the old value. */
    MPI_CHECK(MPI_Comm_set_attr(b, key, payload + 3));
    CHECK(counts.deletes == 1 && counts.last_value == payload + 1 && counts.last_comm == b,
          "replace: deletes %d", counts.deletes);
    /* Deleting runs it too; the value is gone afterwards. */
    MPI_CHECK(MPI_Comm_delete_attr(b, key));
    CHECK(counts.deletes == 2 && counts.last_value == payload + 3, "delete_attr");
    get(b, key, &flag);
    CHECK(!flag, "a deleted attribute is still there");
    MPI_CHECK(MPI_Comm_delete_attr(b, nocopy)); /* nothing attached: fine */

    /* Freeing the keyval keeps the attached value until its communicator goes. */
    int key_copy = key;
    MPI_CHECK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval left %d", key);
    MPI_Comm a_handle = a;
    MPI_CHECK(MPI_Comm_free(&a));
    CHECK(counts.deletes == 3 && counts.last_comm == a_handle && counts.last_value == payload,
          "free: deletes %d", counts.deletes);
    (void)key_copy;
    MPI_CHECK(MPI_Comm_free(&b));
    CHECK(counts.deletes == 3, "b had no value of key left");

    /* Many dups copy through many generations. */
    int k2;
    struct counts c2 = {0, 0, MPI_COMM_NULL, NULL};
    MPI_CHECK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &k2, &c2));
    MPI_Comm cur;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &cur));
    MPI_CHECK(MPI_Comm_set_attr(cur, k2, payload));
    for (int g = 1; g <= 10; g++) {
        MPI_Comm next;
        MPI_CHECK(MPI_Comm_dup(cur, &next));
        MPI_CHECK(MPI_Comm_free(&cur));
        cur = next;
        v = get(cur, k2, &flag);
        CHECK(flag && v == payload + g, "generation %d", g);
    }
    CHECK(c2.copies == 10 && c2.deletes == 10, "generations: %d copies %d deletes", c2.copies,
          c2.deletes);
    MPI_CHECK(MPI_Comm_free(&cur));
    CHECK(c2.deletes == 11, "final delete");
    MPI_CHECK(MPI_Comm_free_keyval(&k2));
    MPI_CHECK(MPI_Comm_free_keyval(&dupkey));
    MPI_CHECK(MPI_Comm_free_keyval(&nocopy));
}

static void test_mpi1_names(void)
{
    int key;
    struct counts c = {0, 0, MPI_COMM_NULL, NULL};
    static int value = 77;
    MPI_CHECK(MPI_Keyval_create(copy_plus_one, count_delete, &key, &c));
    MPI_CHECK(MPI_Attr_put(MPI_COMM_WORLD, key, &value));
    int flag = 0;
    int *p = NULL;
    MPI_CHECK(MPI_Attr_get(MPI_COMM_WORLD, key, &p, &flag));
    CHECK(flag && p == &value && *p == 77, "Attr_get");
    MPI_CHECK(MPI_Attr_delete(MPI_COMM_WORLD, key));
    CHECK(c.deletes == 1 && c.last_comm == MPI_COMM_WORLD, "Attr_delete");
    MPI_CHECK(MPI_Keyval_free(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "Keyval_free");
}

static void test_errors(void)
{
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int tag_ub = MPI_TAG_UB, flag;
    void *v;
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &flag), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_free_keyval(&tag_ub), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag),
                 MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_get_attr(MPI_COMM_NULL, MPI_TAG_UB, &v, &flag), MPI_ERR_COMM);
    /* A failing delete callback fails the call that ran it. */
    int key;
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete, &key, NULL));
    MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &flag));
    int rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    CHECK(rc != MPI_SUCCESS, "a failing delete callback went unnoticed");
    MPI_CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
    MPI_CHECK(MPI_Comm_free_keyval(&key));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    test_predefined();
    test_callbacks();
    test_mpi1_names();
    test_errors();
    /* An attribute on MPI_COMM_SELF: MPI_Finalize deletes it first thing. */
    int key;
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &key, NULL));
    MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, key, &self_deleted));
    abicheck_pass("attr");
    MPI_CHECK(MPI_Finalize());
    if (self_deleted != 1) {
        fprintf(stderr, "FAIL attr.c: MPI_Finalize ran the MPI_COMM_SELF delete callback %d "
                        "times\n", self_deleted);
        return 1;
    }
    return 0;
}
