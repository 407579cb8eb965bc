// The CUDA Driver API as the backend uses it: libcuda.so.1 opened at run time and its entry
// points resolved with cuGetProcAddress, so that one binary runs with and without NVIDIA's
// driver; the checking macro and the error type it throws. Only cuda.h's types and
// declarations are used here (from the CUDA toolkit); nothing links libcuda.
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>

// Every Driver API function the backend calls. The names are cuda.h's: where cuda.h maps a
// name to a versioned symbol (cuMemAlloc -> cuMemAlloc_v2), the member has the mapped name and
// the signature of that version, and cuGetProcAddress is asked for the base name at the
// CUDA_VERSION the build used, which gives the same version.
#define NANORT_CUDA_ENTRIES(X)                                                                 \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)    \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                \
  X(cuDeviceGetPCIBusId) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)              \
  X(cuCtxSetCurrent) X(cuDeviceCanAccessPeer) X(cuCtxEnablePeerAccess) X(cuStreamCreate)       \
  X(cuStreamDestroy) X(cuStreamWaitEvent) X(cuStreamSynchronize) X(cuEventCreate)              \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery) X(cuEventSynchronize) X(cuMemAlloc)       \
  X(cuMemFree) X(cuMemGetInfo) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemcpyHtoDAsync)         \
  X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemcpyPeerAsync) X(cuModuleLoadData)           \
  X(cuModuleUnload) X(cuModuleGetFunction) X(cuModuleGetFunctionCount)                         \
  X(cuModuleEnumerateFunctions) X(cuFuncGetName) X(cuFuncGetParamInfo) X(cuLaunchKernel)        \
  X(cuCtxGetCurrent) X(cuMemHostRegister) X(cuMemHostUnregister) X(cuPointerGetAttributes)   \
  X(cuLaunchHostFunc) X(cuStreamBeginCapture) X(cuStreamEndCapture)                           \
  X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy) \
  X(cuGraphDebugDotPrint) X(cuEventElapsedTime) X(cuGraphGetRootNodes)                      \
  X(cuGraphNodeGetDependentNodes) X(cuGraphExecKernelNodeSetParams)

namespace nanort::rt::cuda {

struct Driver {
#define NANORT_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  NANORT_CUDA_ENTRIES(NANORT_CUDA_MEMBER)
#undef NANORT_CUDA_MEMBER
  int version = 0;  // cuDriverGetVersion: 13000 for CUDA 13.0
};

// The driver, loaded and initialised at the first call; nullptr when there is none (no
// libcuda.so.1, an entry point missing, or cuInit failing), with the reason in 'why'.
const Driver *driver(std::string *why = nullptr);

// A failed Driver API call: the call's text, the error's name and description, and where.
class CudaError : public std::runtime_error {
 public:
  CudaError(CUresult code, const std::string &message) : std::runtime_error(message), code_(code) {}
  CUresult code() const { return code_; }
  // Errors after which the context is unusable (the process must stop to recover).
  bool sticky() const;

 private:
  CUresult code_;
};

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string error_text(CUresult code);

[[noreturn]] void throw_error(CUresult code, const char *call, const char *file, int line);

}  // namespace nanort::rt::cuda

// Runs a Driver API call through the loaded driver and throws CudaError unless it succeeds:
//   NANORT_CU_CHECK(cuMemAlloc(&pointer, bytes));   (cu.cuMemAlloc, 'cu' a Driver in scope)
#define NANORT_CU_CHECK(call)                                                         \
  do {                                                                                \
    const CUresult nanort_cu_status_ = cu.call;                                       \
    if (nanort_cu_status_ != CUDA_SUCCESS)                                            \
      ::nanort::rt::cuda::throw_error(nanort_cu_status_, #call, __FILE__, __LINE__);  \
  } while (0)
