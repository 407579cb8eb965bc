#include "backend.hpp"

#include <nanort/dc/invariant.hpp>

#include <algorithm>

#include "../cuda/cuda_backend.hpp"
#include "../opencl/opencl_backend.hpp"
#include "accelerator.hpp"

namespace nanort::rt {

std::vector<std::unique_ptr<Backend>> make_backends() {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(cuda::make_backend());
  backends.push_back(opencl::make_backend());
  return backends;
}

bool required(const Config &config, const char *kind) {
  return std::any_of(config.require.begin(), config.require.end(),
                     [kind](const DeviceRequirement &r) { return r.kind == kind; });
}

void open_backends(std::span<const std::unique_ptr<Backend>> backends, const Config &config,
                   std::vector<std::unique_ptr<Accelerator>> &devices,
                   std::vector<std::string> &warnings) {
  for (const std::unique_ptr<Backend> &backend : backends) {
    if (!backend->wanted(config)) continue;
    backend->list(warnings);
    const std::vector<std::size_t> chosen = backend->select(config);
    backend->open(chosen, config, devices, warnings);
  }
}

void check_requirements(std::span<const std::unique_ptr<Backend>> backends,
                        const Config &config) {
  for (const DeviceRequirement &required : config.require) {
    const DevicesSeen *found = nullptr;
    for (const std::unique_ptr<Backend> &backend : backends)
      for (const DevicesSeen &seen : backend->seen())
        if (seen.require_kind == required.kind) found = &seen;
    // (read_config accepts only the kinds that a backend answers for.)
    NANORT_INVARIANT(found, "NANORT_REQUIRE names '" + required.kind +
                                "', which no backend answers for");
    const DevicesSeen &seen = *found;
    const char *what = seen.what.c_str();
    if (seen.found >= required.count && seen.problem.empty()) continue;
    std::string text = "NANORT_REQUIRE asks for " + std::to_string(required.count) + " " + what +
                       ": ";
    if (seen.found < required.count)
      text += std::to_string(seen.found) + " found";
    else
      text += std::to_string(seen.found) + " found, but";
    if (!seen.problem.empty()) text += (seen.found < required.count ? "; " : " ") + seen.problem;
    throw ConfigError(text);
  }
}

}  // namespace nanort::rt
