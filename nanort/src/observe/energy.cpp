#include "energy.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>

#include "observer.hpp"

namespace nanort::rt {

// The four NVML entry points used, with NVML's C signatures (nvmlReturn_t is an int, 0 is
// success; nvmlDevice_t an opaque pointer).
struct EnergyMeter::Nvml {
  void *library = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci_bus_id)(const char *, void **) = nullptr;
  int (*total_energy)(void *, unsigned long long *) = nullptr;
};

EnergyMeter::EnergyMeter(const std::vector<Gpu> &gpus)
    : start_ns_(Observer::now_ns()), gpus_(gpus.size()),
      watts_(std::make_unique<std::atomic<double>[]>(gpus.size())) {
  for (std::size_t i = 0; i < gpus_; ++i) watts_[i].store(0.0);
  if (gpus.empty()) return;
  void *library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) return;
  auto *nvml = new Nvml;
  nvml->library = library;
  nvml->init = reinterpret_cast<int (*)()>(dlsym(library, "nvmlInit_v2"));
  nvml->shutdown = reinterpret_cast<int (*)()>(dlsym(library, "nvmlShutdown"));
  nvml->by_pci_bus_id =
      reinterpret_cast<int (*)(const char *, void **)>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
  nvml->total_energy = reinterpret_cast<int (*)(void *, unsigned long long *)>(
      dlsym(library, "nvmlDeviceGetTotalEnergyConsumption"));
  if (!nvml->init || !nvml->shutdown || !nvml->by_pci_bus_id || !nvml->total_energy ||
      nvml->init() != 0) {
    dlclose(library);
    delete nvml;
    return;
  }
  nvml_ = nvml;
  for (const Gpu &gpu : gpus) {
    Reading reading{gpu.name};
    reading.gpu = static_cast<std::size_t>(&gpu - gpus.data());
    unsigned long long energy = 0;
    if (gpu.pci_bus_id.empty() || nvml_->by_pci_bus_id(gpu.pci_bus_id.c_str(), &reading.device) != 0 ||
        nvml_->total_energy(reading.device, &energy) != 0)
      continue;  // no counter on this GPU
    reading.start_mj = energy;
    readings_.push_back(reading);
  }
}

EnergyMeter::~EnergyMeter() {
  if (!nvml_) return;
  nvml_->shutdown();
  dlclose(nvml_->library);
  delete nvml_;
}

void EnergyMeter::sample(const std::vector<bool> &busy) {
  if (!nvml_ || readings_.empty()) return;
  const std::uint64_t now = Observer::now_ns();
  std::uint64_t last = last_sample_ns_.load(std::memory_order_relaxed);
  if (now - last < 100'000'000 ||
      !last_sample_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed))
    return;
  std::lock_guard lock(sample_mutex_);
  for (Reading &reading : readings_) {
    unsigned long long energy = 0;
    if (nvml_->total_energy(reading.device, &energy) != 0) continue;
    const bool now_busy = reading.gpu < busy.size() && busy[reading.gpu];
    if (reading.sampled_ns && reading.busy_at_sample && now_busy && energy >= reading.sampled_mj &&
        now > reading.sampled_ns) {
      const double watts = static_cast<double>(energy - reading.sampled_mj) * 1e-3 /
                           (static_cast<double>(now - reading.sampled_ns) * 1e-9);
      const double before = watts_[reading.gpu].load(std::memory_order_relaxed);
      watts_[reading.gpu].store(before > 0 ? 0.7 * before + 0.3 * watts : watts,
                                std::memory_order_relaxed);
    }
    reading.sampled_ns = now;
    reading.sampled_mj = energy;
    reading.busy_at_sample = now_busy;
  }
}

double EnergyMeter::joules() const {
  double total = -1;
  for (const Reading &reading : readings_) {
    unsigned long long energy = 0;
    if (nvml_->total_energy(reading.device, &energy) != 0 || energy < reading.start_mj) continue;
    total = std::max(total, 0.0) + static_cast<double>(energy - reading.start_mj) * 1e-3;
  }
  return total;
}

std::string EnergyMeter::summary() const {
  std::string text;
  const double seconds = static_cast<double>(Observer::now_ns() - start_ns_) * 1e-9;
  for (const Reading &reading : readings_) {
    unsigned long long energy = 0;
    if (nvml_->total_energy(reading.device, &energy) != 0 || energy < reading.start_mj) continue;
    const double joules = static_cast<double>(energy - reading.start_mj) * 1e-3;
    char line[160];
    std::snprintf(line, sizeof line, "  energy: %s %.1f J, %.1f W on average\n",
                  reading.name.c_str(), joules, seconds > 0 ? joules / seconds : 0.0);
    text += line;
  }
  return text;
}

}  // namespace nanort::rt
