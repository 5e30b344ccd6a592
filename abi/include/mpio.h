/*
 * mpio.h for OxMPI. The MPI-IO types, constants and prototypes are part of
 * mpi.h (as the standard has it); this header keeps the ROMIO-era names
 * that C programs written for MPICH expect from <mpio.h>.
 */
#ifndef OXMPI_MPIO_H
#define OXMPI_MPIO_H

#include "mpi.h"

/* Non-blocking I/O uses ordinary MPI requests. */
#define MPIO_Request MPI_Request
#define MPIO_USES_MPI_REQUEST
#define MPIO_REQUEST_DEFINED
#define MPIO_REQUEST_NULL ((MPIO_Request)0)
#define MPIO_Wait MPI_Wait
#define MPIO_Test MPI_Test
#define PMPIO_Wait PMPI_Wait
#define PMPIO_Test PMPI_Test

/* Tell code written for ROMIO that these are already provided. */
#define MPI_FILE_DEFINED
#define HAVE_MPI_OFFSET
#define HAVE_MPI_INFO
#define HAVE_MPI_GREQUEST 1
#define HAVE_MPI_DARRAY_SUBARRAY
#define HAVE_MPI_DATAREP_FUNCTIONS

#endif /* OXMPI_MPIO_H */
