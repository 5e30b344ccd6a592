/*
 * Attribute callbacks' error codes and freed keyvals, for communicators
 * and datatypes: a copy callback that fails makes MPI_Comm_dup /
 * MPI_Type_dup fail with the callback's own error (its class; OxMPI
 * returns the code itself); a keyval freed while a value is attached
 * stays usable for that value (get, copy on dup, delete) until the value
 * is gone, and the delete callbacks run once per value.
 * Prints "PASS keyvals" from rank 0.
 */
#include "abicheck.h"

static int my_code, deletes;

static int failing_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)k, (void)extra, (void)in, (void)out;
    *flag = 0;
    return my_code;
}

static int failing_type_copy(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)k, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_ARG;
}

static int counting_delete(MPI_Comm c, int k, void *v, void *extra)
{
    (void)c, (void)k, (void)v, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int counting_type_delete(MPI_Datatype t, int k, void *v, void *extra)
{
    (void)t, (void)k, (void)v, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void comm_copy_error(void)
{
    int my_class;
    MPI_CHECK(MPI_Add_error_class(&my_class));
    MPI_CHECK(MPI_Add_error_code(my_class, &my_code));
    int key;
    MPI_CHECK(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    MPI_Comm a, b = MPI_COMM_NULL;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_CHECK(MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_attr(a, key, (void *)1));
    int rc = MPI_Comm_dup(a, &b);
    CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == my_class,
          "dup with a failing copy callback returned %d (class %d), expected class %d", rc,
          rc == MPI_SUCCESS ? 0 : abicheck_class(rc), my_class);
    if (abicheck_is_oxmpi())
        CHECK(rc == my_code, "dup returned %d, not the callback's code %d", rc, my_code);
    /* Predefined classes come back as they are too. */
    my_code = MPI_ERR_ARG;
    rc = MPI_Comm_dup(a, &b);
    CHECK(abicheck_class(rc) == MPI_ERR_ARG, "dup returned class %d", abicheck_class(rc));
    MPI_CHECK(MPI_Comm_delete_attr(a, key));
    MPI_CHECK(MPI_Comm_free(&a));
    MPI_CHECK(MPI_Comm_free_keyval(&key));
}

static void comm_freed_keyval(void)
{
    int key, kept;
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, counting_delete, &key, NULL));
    kept = key;
    MPI_Comm a, b;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_CHECK(MPI_Comm_set_attr(a, key, (void *)42));
    MPI_CHECK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "freed keyval is %d", key);
    void *v = NULL;
    int flag = 0;
    MPI_CHECK(MPI_Comm_get_attr(a, kept, &v, &flag));
    CHECK(flag && v == (void *)42, "get after free_keyval: flag %d value %p", flag, v);
    MPI_CHECK(MPI_Comm_dup(a, &b));
    flag = 0;
    MPI_CHECK(MPI_Comm_get_attr(b, kept, &v, &flag));
    CHECK(flag && v == (void *)42, "dup after free_keyval: flag %d value %p", flag, v);
    deletes = 0;
    MPI_CHECK(MPI_Comm_delete_attr(b, kept));
    CHECK(deletes == 1, "delete_attr ran %d delete callbacks", deletes);
    MPI_CHECK(MPI_Comm_free(&a));
    CHECK(deletes == 2, "comm_free ran %d delete callbacks in all", deletes);
    MPI_CHECK(MPI_Comm_free(&b));
    CHECK(deletes == 2, "a deleted value was deleted again (%d)", deletes);
}

static void types(void)
{
    MPI_Datatype t, u = MPI_DATATYPE_NULL;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &t));
    int key, kept;
    MPI_CHECK(MPI_Type_create_keyval(failing_type_copy, MPI_TYPE_NULL_DELETE_FN, &key, NULL));
    MPI_CHECK(MPI_Type_set_attr(t, key, (void *)1));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Type_dup(t, &u);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK(rc != MPI_SUCCESS && abicheck_class(rc) == MPI_ERR_ARG,
          "type dup with a failing copy callback returned %d (class %d)", rc,
          rc == MPI_SUCCESS ? 0 : abicheck_class(rc));
    if (rc == MPI_SUCCESS)
        MPI_CHECK(MPI_Type_free(&u));
    MPI_CHECK(MPI_Type_delete_attr(t, key));
    MPI_CHECK(MPI_Type_free_keyval(&key));

    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, counting_type_delete, &key, NULL));
    kept = key;
    MPI_CHECK(MPI_Type_set_attr(t, key, (void *)7));
    MPI_CHECK(MPI_Type_free_keyval(&key));
    void *v = NULL;
    int flag = 0;
    MPI_CHECK(MPI_Type_get_attr(t, kept, &v, &flag));
    CHECK(flag && v == (void *)7, "type get after free_keyval: flag %d value %p", flag, v);
    MPI_CHECK(MPI_Type_dup(t, &u));
    flag = 0;
    MPI_CHECK(MPI_Type_get_attr(u, kept, &v, &flag));
    CHECK(flag && v == (void *)7, "type dup after free_keyval: flag %d value %p", flag, v);
    deletes = 0;
    MPI_CHECK(MPI_Type_delete_attr(u, kept));
    CHECK(deletes == 1, "type delete_attr ran %d delete callbacks", deletes);
    MPI_CHECK(MPI_Type_free(&t));
    MPI_CHECK(MPI_Type_free(&u));
    CHECK(deletes == 2, "type delete callbacks ran %d times", deletes);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    comm_copy_error();
    comm_freed_keyval();
    types();
    abicheck_pass("keyvals");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
