/* The part of Nanos++'s API (OmpSs-1's runtime) that OmpSs programs call, answered by nanort
 * through libnanort-omp. mcc makes these declarations visible in every OmpSs file without an
 * #include; nanocc / nanocxx do the same (nanort/ompss_compat.h), and a program that includes
 * <nanos.h> gets them here. */
#ifndef NANORT_OMP_NANOS_H
#define NANORT_OMP_NANOS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OpenCL devices nanort runs tasks on (NANORT_OPENCL_DEVICES chooses them). */
unsigned int nanos_get_opencl_num_devices(void);
void nanos_get_opencl_num_devices_(int *count); /* Fortran's spelling */
/* CUDA GPUs nanort runs tasks on (NANORT_CUDA_DEVICES chooses them). */
unsigned int nanos_get_cuda_num_devices(void);

/* Memory for data that OpenCL tasks use: ordinary memory (nanort copies it as any other). */
void *ompss_opencl_malloc(size_t size);
void ompss_opencl_free(void *address);
void *nanos_malloc_opencl(size_t size);
void nanos_free_opencl(void *address);

/* Page-locked memory for data that CUDA tasks use (nanort_host_register): moved between host
 * and GPUs at the full speed of the bus. Free it with nanos_free_pinned_cuda, after a taskwait
 * that covers the tasks using it. */
void *nanos_malloc_pinned_cuda(size_t size);
void nanos_free_pinned_cuda(void *address);

#ifdef __cplusplus
}
#endif

#endif /* NANORT_OMP_NANOS_H */
