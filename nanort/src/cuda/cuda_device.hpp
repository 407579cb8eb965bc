// The CUDA backend: every NVIDIA GPU the driver shows, chosen by NANORT_CUDA_DEVICES, through
// the Driver API loaded at run time (cuda_api.hpp). Without a driver there are no CUDA
// devices, which is not an error.
//
// Each device runs in its primary context with three streams (kernels, copies to the device,
// copies to the host) and is driven by its DeviceManager thread; completions are CUDA events,
// polled. Kernels come from fatbins embedded in the program (NANORT_MODULE_CUDA_FATBIN),
// loaded once per device, and are found by name, C++-mangled names included.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "../device/accelerator.hpp"

namespace nanort::rt::cuda {

// What the driver says about one GPU.
struct DeviceInfo {
  int ordinal = 0;  // the driver's device number
  std::string name;
  std::string pci_bus_id;  // "0000:3b:00.0"
  std::size_t memory = 0;  // bytes
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
};

// Every GPU; empty (with the reason in 'why') when there is no driver or no GPU.
std::vector<DeviceInfo> list_devices(std::string *why = nullptr);

// Which of 'devices' a NANORT_CUDA_DEVICES value chooses (indices into 'devices'): all (or
// auto, or empty) every GPU; none; or a comma list of device numbers. Throws
// std::invalid_argument naming the bad part.
std::vector<std::size_t> select_devices(const std::vector<DeviceInfo> &devices,
                                        const std::string &spec);

// Opens the chosen GPUs, named cuda0, cuda1, ... in that order, with peer access between
// every pair that supports it; with 'launch_thread', each GPU's kernels are launched by a
// thread of its own (NANORT_CUDA_LAUNCH=thread, cuda_launcher.hpp).
std::vector<std::unique_ptr<Accelerator>> open_devices(const std::vector<DeviceInfo> &devices,
                                                       const std::vector<std::size_t> &chosen,
                                                       bool launch_thread);

}  // namespace nanort::rt::cuda
