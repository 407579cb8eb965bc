// EnergyMeter: the energy the GPUs used while the runtime ran, for NANORT_STATS, and their
// power while they run tasks, for the energy policy. NVML (libnvidia-ml.so.1, opened at run
// time like the CUDA driver) keeps a counter per GPU (millijoules since the driver loaded, on
// Volta and later); it is read when the runtime starts and stops, and by sample(). Without
// NVML, or for a GPU without the counter, nothing is printed or measured.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
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

  // Joules all the GPUs read used since the start; negative when none could be read.
  double joules() const;
  // Reads the counters, at most every 100 ms (cheap otherwise; thread-safe). busy[i]: GPU i
  // (in the constructor's order) has tasks now. The power over an interval with the GPU busy
  // at both ends goes into its busy power.
  void sample(const std::vector<bool> &busy);
  // GPU i's average power while busy, in watts; 0 until measured.
  double busy_watts(std::size_t gpu) const {
    return gpu < gpus_ ? watts_[gpu].load(std::memory_order_relaxed) : 0.0;
  }

 private:
  struct Reading {
    std::string name;
    std::size_t gpu = 0;     // its place in the constructor's list
    void *device = nullptr;  // nvmlDevice_t
    std::uint64_t start_mj = 0;
    std::uint64_t sampled_mj = 0, sampled_ns = 0;  // the last sample
    bool busy_at_sample = false;
  };
  struct Nvml;
  Nvml *nvml_ = nullptr;  // null without NVML
  std::vector<Reading> readings_;
  std::uint64_t start_ns_ = 0;
  std::size_t gpus_ = 0;
  std::unique_ptr<std::atomic<double>[]> watts_;
  std::atomic<std::uint64_t> last_sample_ns_{0};
  std::mutex sample_mutex_;
};

}  // namespace nanort::rt
