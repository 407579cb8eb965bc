#include "energy.hpp"

#include <dlfcn.h>

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

EnergyMeter::EnergyMeter(const std::vector<Gpu> &gpus) : start_ns_(Observer::now_ns()) {
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
