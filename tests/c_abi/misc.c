/*
 * Small pieces real programs use:
 *
 * - MPI_Comm_set_info / MPI_Comm_get_info: a hint set is given back;
 * - MPI_Request_get_status: false while a receive waits, then true with the
 *   status, leaving the request to MPI_Wait (same status), and true at once
 *   for MPI_REQUEST_NULL;
 * - MPI_Status_c2f / MPI_Status_f2c: the status survives the round trip;
 * - datatype attributes: MPI_Type_create_keyval (MPI_TYPE_DUP_FN and a
 *   delete callback), MPI_Type_set_attr / get_attr / delete_attr on derived
 *   and predefined types, copied by MPI_Type_dup, deleted by MPI_Type_free,
 *   MPI_Type_free_keyval.
 *
 * Prints "PASS misc" from rank 0.
 */
#include "abicheck.h"

static int rank, size;

static void comm_info(void)
{
    MPI_Comm dup;
    MPI_Info info, used;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_CHECK(MPI_Comm_set_info(dup, info));
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_Comm_get_info(dup, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Comm_get_info gave MPI_INFO_NULL");
    MPI_CHECK(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, "true") == 0, "hint mpi_assert_no_any_tag: flag %d '%s'", flag,
          flag ? value : "");
    MPI_CHECK(MPI_Info_free(&used));
    MPI_CHECK(MPI_Comm_get_info(MPI_COMM_WORLD, &used));
    MPI_CHECK(MPI_Info_free(&used));
    MPI_CHECK(MPI_Comm_free(&dup));
}

static void request_get_status(void)
{
    int in = -1, out = 40 + rank, flag = 1;
    int from = (rank + size - 1) % size, to = (rank + 1) % size;
    MPI_Request r;
    MPI_Status st, st2;

    MPI_CHECK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK(flag, "MPI_REQUEST_NULL is not complete");

    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, from, 21, MPI_COMM_WORLD, &r));
    /* Nobody sends tag 21 before the barrier. */
    MPI_CHECK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a receive with no message reports completion");
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, to, 21, MPI_COMM_WORLD));
    do
        MPI_CHECK(MPI_Request_get_status(r, &flag, &st));
    while (!flag);
    CHECK(r != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 21, "status source %d tag %d", st.MPI_SOURCE,
          st.MPI_TAG);
    int count = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 1, "count %d", count);
    /* Asking again is fine. */
    MPI_CHECK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "second MPI_Request_get_status says not complete");
    MPI_CHECK(MPI_Wait(&r, &st2));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the request");
    CHECK(st2.MPI_SOURCE == from && st2.MPI_TAG == 21 && in == 40 + from,
          "wait: source %d tag %d data %d", st2.MPI_SOURCE, st2.MPI_TAG, in);

    /* A persistent request that was not started is complete. */
    MPI_CHECK(MPI_Recv_init(&in, 1, MPI_INT, from, 22, MPI_COMM_WORLD, &r));
    flag = 0;
    MPI_CHECK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "an inactive persistent request is not complete");
    MPI_CHECK(MPI_Request_free(&r));
}

static void status_conversion(void)
{
    int out = 7, in = 0;
    MPI_Status st, back;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, rank, 31, &in, 1, MPI_INT, rank, 31,
                           MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Status_c2f(&st, f));
    memset(&back, 0, sizeof back);
    MPI_CHECK(MPI_Status_f2c(f, &back));
    int count = -1;
    MPI_CHECK(MPI_Get_count(&back, MPI_INT, &count));
    CHECK(back.MPI_SOURCE == rank && back.MPI_TAG == 31 && count == 1,
          "round trip: source %d tag %d count %d", back.MPI_SOURCE, back.MPI_TAG, count);
}

static int deletes;
static void *deleted_value;

static int count_delete(MPI_Datatype type, int keyval, void *value, void *extra)
{
    (void)type;
    (void)keyval;
    CHECK(extra == &deletes, "delete callback got extra_state %p", extra);
    deletes++;
    deleted_value = value;
    return MPI_SUCCESS;
}

static void type_attributes(void)
{
    int keyval, dropped, flag = 0;
    static int a, b, c;
    void *got = NULL;
    MPI_Datatype vec, dup;

    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &keyval, &deletes));
    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &dropped,
                                     NULL));
    MPI_CHECK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));

    MPI_CHECK(MPI_Type_get_attr(vec, keyval, &got, &flag));
    CHECK(!flag, "attribute set before any MPI_Type_set_attr");
    MPI_CHECK(MPI_Type_set_attr(vec, keyval, &a));
    MPI_CHECK(MPI_Type_set_attr(vec, dropped, &c));
    MPI_CHECK(MPI_Type_get_attr(vec, keyval, &got, &flag));
    CHECK(flag && got == &a, "get_attr: flag %d value %p (set %p)", flag, got, (void *)&a);

    /* Replacing runs the delete callback on the old value. */
    deletes = 0;
    MPI_CHECK(MPI_Type_set_attr(vec, keyval, &b));
    CHECK(deletes == 1 && deleted_value == &a, "replace: %d deletes of %p", deletes,
          deleted_value);

    /* A duplicate gets the copied attribute, not the one without a copy callback. */
    MPI_CHECK(MPI_Type_dup(vec, &dup));
    MPI_CHECK(MPI_Type_get_attr(dup, keyval, &got, &flag));
    CHECK(flag && got == &b, "dup: flag %d value %p", flag, got);
    MPI_CHECK(MPI_Type_get_attr(dup, dropped, &got, &flag));
    CHECK(!flag, "dup copied an attribute with MPI_TYPE_NULL_COPY_FN");

    /* delete_attr and free run the delete callback. */
    deletes = 0;
    MPI_CHECK(MPI_Type_delete_attr(dup, keyval));
    CHECK(deletes == 1, "delete_attr: %d deletes", deletes);
    MPI_CHECK(MPI_Type_get_attr(dup, keyval, &got, &flag));
    CHECK(!flag, "attribute still there after MPI_Type_delete_attr");
    MPI_CHECK(MPI_Type_free(&dup));
    CHECK(deletes == 1, "freeing a type without the attribute ran a callback");
    MPI_CHECK(MPI_Type_free(&vec));
    CHECK(deletes == 2 && deleted_value == &b, "free: %d deletes of %p", deletes,
          deleted_value);

    /* Predefined types take attributes too. */
    MPI_CHECK(MPI_Type_set_attr(MPI_INT, keyval, &c));
    MPI_CHECK(MPI_Type_get_attr(MPI_INT, keyval, &got, &flag));
    CHECK(flag && got == &c, "MPI_INT attribute: flag %d value %p", flag, got);
    MPI_CHECK(MPI_Type_delete_attr(MPI_INT, keyval));
    CHECK(deletes == 3, "MPI_INT delete_attr: %d deletes", deletes);

    MPI_CHECK(MPI_Type_free_keyval(&keyval));
    CHECK(keyval == MPI_KEYVAL_INVALID, "keyval is %#x after free", (unsigned)keyval);
    MPI_CHECK(MPI_Type_free_keyval(&dropped));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    comm_info();
    request_get_status();
    status_conversion();
    type_attributes();
    abicheck_pass("misc");
    MPI_CHECK(MPI_Finalize());
    return 0;
}
