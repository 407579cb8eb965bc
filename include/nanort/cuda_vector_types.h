/*
 * CUDA's vector types (float2, float4, int4, double2, dim3 ...) and their make_* functions for
 * host C and C++ compiled by nanocc / nanocxx with --cuda or .cu files, or by nanort_annotate
 * with CUDA kernels: the wrappers put the CUDA toolkit's include folder on the path and
 * include this file first, as OmpSs's mcc --cuda did, so that host code that shares such data
 * with its kernels (OmpSs NBody's float4 bodies) builds unmodified.
 *
 * They are the toolkit's own definitions (vector_types.h, vector_functions.hpp), so that sizes
 * and alignments (float4: 16 bytes, aligned to 16) are those nvcc gives the kernels, and so
 * that a file that includes <cuda_runtime.h> or <vector_types.h> itself gets the same ones.
 *
 * This file comes before the source's first line: it must include no system header, or the
 * source's own feature macros (#define _GNU_SOURCE, _POSIX_C_SOURCE ...) would come too late.
 * vector_types.h includes none; vector_functions.hpp includes the runtime API, which does, only
 * for declarations that the make_* functions do not use: it is kept out here (the include
 * guard of cuda_runtime_api.h set around it), so that <cuda_runtime.h> included later declares
 * the whole API as usual.
 */
#ifndef NANORT_CUDA_VECTOR_TYPES_H
#define NANORT_CUDA_VECTOR_TYPES_H

#include <vector_types.h>

#ifndef __CUDA_RUNTIME_API_H__
#define __CUDA_RUNTIME_API_H__
#define NANORT_CUDA_RUNTIME_API_KEPT_OUT
#endif
#include <vector_functions.hpp>
#ifdef NANORT_CUDA_RUNTIME_API_KEPT_OUT
#undef __CUDA_RUNTIME_API_H__
#undef NANORT_CUDA_RUNTIME_API_KEPT_OUT
#endif

#endif
