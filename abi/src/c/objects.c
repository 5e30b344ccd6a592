/*
 * Data objects of the MPICH ABI that programs reference by address (they
 * get copy relocations of these 8-byte pointers), and MPIR_Dup_fn, the
 * function behind MPI_COMM_DUP_FN / MPI_TYPE_DUP_FN / MPI_WIN_DUP_FN.
 * Each pointer names a private object of its own, so the values are
 * distinct from each other and from every user buffer.
 */
#include "mpi.h"

static int oxabi_unweighted_obj;
static int oxabi_weights_empty_obj;
static MPI_Fint oxabi_f_status_ignore_obj[MPI_F_STATUS_SIZE];
static MPI_Fint oxabi_f_statuses_ignore_obj[MPI_F_STATUS_SIZE];
static MPI_F08_status oxabi_f08_status_ignore_obj;
static MPI_F08_status oxabi_f08_statuses_ignore_obj[1];
static char oxabi_pvar_all_handles_obj;

int *const MPI_UNWEIGHTED = &oxabi_unweighted_obj;
int *const MPI_WEIGHTS_EMPTY = &oxabi_weights_empty_obj;
MPI_Fint *MPI_F_STATUS_IGNORE = oxabi_f_status_ignore_obj;
MPI_Fint *MPI_F_STATUSES_IGNORE = oxabi_f_statuses_ignore_obj;
MPI_F08_status *MPI_F08_STATUS_IGNORE = &oxabi_f08_status_ignore_obj;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = oxabi_f08_statuses_ignore_obj;
struct oxmpi_t_pvar_handle *const MPI_T_PVAR_ALL_HANDLES =
    (struct oxmpi_t_pvar_handle *)&oxabi_pvar_all_handles_obj;

/* The attribute copy callback that copies: the new attribute value is the
   old one, and the attribute is kept. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}
