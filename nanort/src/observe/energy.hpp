// EnergyMeter: the energy the GPUs used while the runtime ran, for NANORT_STATS. NVML
// (libnvidia-ml.so.1, opened at run time like the CUDA driver) keeps a counter per GPU
// (millijoules since the driver loaded, on Volta and later); it is read when the runtime starts
// and when it stops. Without NVML, or for a GPU without the counter, nothing is printed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nanort::rt {

class EnergyMeter {
 public:
  struct Gpu {
    std::string name;        // "cuda0"
    std::string pci_bus_id;  // "0000:3b:00.0"
  };
  explicit EnergyMeter(const std::vector<Gpu> &gpus);
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter &) = delete;
  EnergyMeter &operator=(const EnergyMeter &) = delete;

  // Lines "  energy: cuda0 12.3 J, 41.2 W on average" since the start; "" when none was read.
  std::string summary() const;

 private:
  struct Reading {
    std::string name;
    void *device = nullptr;  // nvmlDevice_t
    std::uint64_t start_mj = 0;
  };
  struct Nvml;
  Nvml *nvml_ = nullptr;  // null without NVML
  std::vector<Reading> readings_;
  std::uint64_t start_ns_ = 0;
};

}  // namespace nanort::rt
