// The OpenCL host API as the backend uses it: one header to include (fixing the API version
// to 1.2, the newest that NVIDIA's and PoCL's platforms both implement in full), the checking
// macro and the error type it throws.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <stdexcept>
#include <string>

namespace nanort::rt::opencl {

// A failed OpenCL call: the call's text, the error's name and where it was made.
class OpenClError : public std::runtime_error {
 public:
  OpenClError(cl_int code, const std::string &message) : std::runtime_error(message), code_(code) {}
  cl_int code() const { return code_; }

 private:
  cl_int code_;
};

// "CL_OUT_OF_RESOURCES" for -5, and so on; "CL error <n>" for codes it does not know.
std::string error_name(cl_int code);

[[noreturn]] void throw_error(cl_int code, const char *call, const char *file, int line);

}  // namespace nanort::rt::opencl

// Runs an OpenCL call that returns cl_int and throws OpenClError unless it is CL_SUCCESS.
#define NANORT_CL_CHECK(call)                                                          \
  do {                                                                                 \
    const cl_int nanort_cl_status_ = (call);                                           \
    if (nanort_cl_status_ != CL_SUCCESS)                                               \
      ::nanort::rt::opencl::throw_error(nanort_cl_status_, #call, __FILE__, __LINE__); \
  } while (0)

// For calls that return an object and report through their last argument:
//   cl_int status;
//   cl_mem m = clCreateBuffer(context, flags, size, nullptr, &status);
//   NANORT_CL_CHECK_STATUS(status, "clCreateBuffer");
#define NANORT_CL_CHECK_STATUS(status, call)                                        \
  do {                                                                              \
    if ((status) != CL_SUCCESS)                                                     \
      ::nanort::rt::opencl::throw_error((status), call, __FILE__, __LINE__);         \
  } while (0)
