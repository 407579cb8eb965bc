// The OpenCL backend: every device of every platform the ICD loader finds (NVIDIA's OpenCL on
// GPU machines, PoCL on CPUs), chosen by NANORT_OPENCL_DEVICES.
//
// Each device has a context of its own by default (NANORT_OPENCL_CONTEXTS=device: with NVIDIA's
// OpenCL, two GPUs sharing a context went no faster than one where their data cross); with
// NANORT_OPENCL_CONTEXTS=platform a platform's devices share one, so that copies between them
// go device to device and a program is built once for all of them. Each device has three
// in-order queues (kernels, copies to the device, copies to the host) and is driven by its
// DeviceManager thread; completions are OpenCL events, whose callbacks wake the manager.
#pragma once

#include <nanort/dc/memory_space.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../device/accelerator.hpp"
#include "opencl_api.hpp"

namespace nanort::rt::opencl {

class ProgramCache;

// What OpenCL says about one device.
struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string platform_name, platform_vendor, platform_version;
  std::string name, vendor, version, driver;
  cl_device_type type = 0;
  cl_ulong global_memory = 0, max_allocation = 0;
  std::size_t address_alignment = 1;  // bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8)
  bool host_unified_memory = false;
  cl_uint compute_units = 0;
};

// Every device of every platform, platform by platform. Empty when the ICD loader finds no
// platform (not an error).
std::vector<DeviceInfo> list_devices();
const char *type_name(cl_device_type type);

// Which of 'devices' a NANORT_OPENCL_DEVICES value chooses (indices into 'devices'):
//   auto (or empty)   the GPUs and accelerators if there are any, else every device
//   all               every device
//   none              no device
//   a comma list of selectors, each an index into the list (as nanort-info prints it) or
//   conditions joined by '+': platform:TEXT, vendor:TEXT, name:TEXT (case-insensitive
//   substrings), type:gpu|cpu|accelerator. A device is chosen when any selector matches.
// Throws std::invalid_argument naming the bad part.
std::vector<std::size_t> select_devices(const std::vector<DeviceInfo> &devices,
                                        const std::string &spec);

class Context;

// Opens the chosen devices (contexts, queues), named opencl0, opencl1, ... in that order: the
// devices of a platform in one context, or each in a context of its own; kernels enqueued by
// a launcher thread per device ('launch_thread') or by the device's manager thread.
std::vector<std::unique_ptr<Accelerator>> open_devices(const std::vector<DeviceInfo> &devices,
                                                       const std::vector<std::size_t> &chosen,
                                                       ProgramCache &cache,
                                                       bool context_per_device,
                                                       bool launch_thread,
                                                       bool command_buffers);

}  // namespace nanort::rt::opencl
