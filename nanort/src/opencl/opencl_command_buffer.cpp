#include "opencl_command_buffer.hpp"

#include <string>
#include <vector>

namespace nanort::rt::opencl {

CommandBufferApi CommandBufferApi::load(cl_platform_id platform, cl_device_id device) {
  CommandBufferApi api;
  std::size_t size = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &size) != CL_SUCCESS || !size)
    return api;
  std::string extensions(size, '\0');
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr) !=
      CL_SUCCESS)
    return api;
  // (A whole word: cl_khr_command_buffer_multi_device alone would not do.)
  const std::string name = "cl_khr_command_buffer";
  bool found = false;
  for (std::size_t at = extensions.find(name); at != std::string::npos;
       at = extensions.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    if ((at == 0 || extensions[at - 1] == ' ') &&
        (end == extensions.size() || extensions[end] == ' ' || extensions[end] == '\0'))
      found = true;
  }
  if (!found) return api;
  cl_device_command_buffer_capabilities_khr capabilities = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof capabilities,
                      &capabilities, nullptr) != CL_SUCCESS)
    return api;
  // The runtime's queues have no properties (in order, no profiling): a device that needs
  // some for its command buffers is not used for them.
  cl_command_queue_properties required = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
                      sizeof required, &required, nullptr) != CL_SUCCESS ||
      required != 0)
    return api;
  const auto entry = [&](const char *function) {
    return clGetExtensionFunctionAddressForPlatform(platform, function);
  };
  api.create = reinterpret_cast<clCreateCommandBufferKHR_fn>(entry("clCreateCommandBufferKHR"));
  api.ndrange = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(entry("clCommandNDRangeKernelKHR"));
  api.finalize =
      reinterpret_cast<clFinalizeCommandBufferKHR_fn>(entry("clFinalizeCommandBufferKHR"));
  api.enqueue = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(entry("clEnqueueCommandBufferKHR"));
  api.release = reinterpret_cast<clReleaseCommandBufferKHR_fn>(entry("clReleaseCommandBufferKHR"));
  api.simultaneous_use = capabilities & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR;
  if (!api.usable()) api = CommandBufferApi{};
  return api;
}

}  // namespace nanort::rt::opencl
