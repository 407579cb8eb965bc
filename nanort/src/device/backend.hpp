// Backend: one kind of device (CUDA, OpenCL) as the runtime's start sees it: it lists the
// devices there are, selects those the configuration asks for, and opens them as Accelerators.
// Each backend lives in its own folder (cuda/cuda_backend.cpp, opencl/opencl_backend.cpp);
// make_backends() (backend.cpp) is the one place that names them all.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../config.hpp"

namespace nanort::rt {

class Accelerator;

// What a backend found, for NANORT_REQUIRE: one entry per kind that NANORT_REQUIRE names.
struct DevicesSeen {
  std::string require_kind;  // as NANORT_REQUIRE names the kind: "cuda", "opencl", "opencl-gpu"
  std::string what;          // as its message names them: "CUDA device(s)"
  int found = 0;
  std::string problem;  // why none (or not all) can be used; empty when nothing went wrong
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Whether to look at all: its devices are wanted, or NANORT_REQUIRE asks for the kind.
  virtual bool wanted(const Config &config) const = 0;
  // Finds the devices there are (counted in seen()); a problem is a warning too.
  virtual void list(std::vector<std::string> &warnings) = 0;
  // Which of the listed devices to use (indices), by the configuration (NANORT_*_DEVICES) and
  // this rank's share of the node. Throws ConfigError for a selection it cannot read.
  virtual std::vector<std::size_t> select(const Config &config) = 0;
  // Opens the chosen devices after those in 'devices'. If they cannot be opened, none of
  // this backend's devices is left there, and the problem is a warning (and in seen()).
  virtual void open(const std::vector<std::size_t> &chosen, const Config &config,
                    std::vector<std::unique_ptr<Accelerator>> &devices,
                    std::vector<std::string> &warnings) = 0;
  virtual std::span<const DevicesSeen> seen() const = 0;
  // Its lines of the NANORT_STATS summary ("" for none).
  virtual std::string summary() const { return {}; }
};

// Every backend, in the order their devices are numbered (CUDA, then OpenCL). A backend lives
// as long as its devices (the OpenCL program cache does).
std::vector<std::unique_ptr<Backend>> make_backends();

// NANORT_REQUIRE names 'kind'.
bool required(const Config &config, const char *kind);

// Each backend that is wanted lists, selects and opens its devices, appended to 'devices'.
void open_backends(std::span<const std::unique_ptr<Backend>> backends, const Config &config,
                   std::vector<std::unique_ptr<Accelerator>> &devices,
                   std::vector<std::string> &warnings);

// NANORT_REQUIRE: a machine that must have GPUs fails here (ConfigError), with the backend's
// error, instead of running without them.
void check_requirements(std::span<const std::unique_ptr<Backend>> backends,
                        const Config &config);

}  // namespace nanort::rt
