// Taskiter replays as OpenCL command buffers (cl_khr_command_buffer, a provisional extension):
// the entry points, found on the device's platform at run time. PoCL has the extension (3.1
// reports version 0.9.0, 5.0 newer); NVIDIA's OpenCL (driver 580) does not.
#pragma once

#include "opencl_api.hpp"

#include <CL/cl_ext.h>

namespace nanort::rt::opencl {

struct CommandBufferApi {
  clCreateCommandBufferKHR_fn create = nullptr;
  clCommandNDRangeKernelKHR_fn ndrange = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
  // A command buffer may be enqueued again while an enqueue of it is pending
  // (CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR); without it, each enqueue waits for the one before.
  bool simultaneous_use = false;

  bool usable() const { return create && ndrange && finalize && enqueue && release; }
  // Where the device has the extension, its entry points; else none (usable() false).
  static CommandBufferApi load(cl_platform_id platform, cl_device_id device);
};

}  // namespace nanort::rt::opencl
