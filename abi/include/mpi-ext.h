/* OxMPI extensions, under the header name Open MPI programs include for them.
   CUDA-aware support is decided at run time: MPIX_Query_cuda_support() is 1
   when a CUDA driver with a device was loaded (OXMPI_CUDA=auto|on). */
#ifndef OXMPI_MPI_EXT_H
#define OXMPI_MPI_EXT_H

#include <mpi.h>

#define MPIX_CUDA_AWARE_SUPPORT 1

#if defined(__cplusplus)
extern "C" {
#endif
int MPIX_Query_cuda_support(void);
#if defined(__cplusplus)
}
#endif

#endif
