// PerfModel: expected execution times of kinds of tasks on kinds of places, learnt from
// history, for the performance-model policy (earliest finish time, as StarPU's dmda).
//
// A key is a task kind (its label and pragma location), a place class ("smp", or a device's
// model, "cuda:NVIDIA H100 80GB HBM3") and the size of the task's data in powers of two. Each
// key keeps the running mean and variance of its samples (Welford's method). The first sample
// of a key in each process is not kept: it pays for loading or building the kernel, for first
// touches of memory. Once a key has kCalibration samples it is calibrated; from then on a
// sample more than kOutlierRatio times its mean is rejected (a page-fault storm, a preempted
// thread); faster ones are kept (a time cannot be measured shorter than it was). A
// size that has no samples of its own borrows the nearest calibrated size of the same task and
// place, scaled by the size ratio. The model persists per machine as a text file, written
// whole and renamed into place; a damaged file is reported and ignored, never half-trusted.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace nanort::rt {

struct PerfKey {
  std::string task;   // "label (file:line)"
  std::string place;  // "smp", "cuda:<model>", "opencl:<model>"
  int size_class = 0;  // floor(log2(bytes of data)), 0 for none
  auto operator<=>(const PerfKey &) const = default;
};

class PerfModel {
 public:
  static constexpr std::uint64_t kCalibration = 5;
  static constexpr double kOutlierRatio = 4.0;

  // A measured execution; false when it was not kept (the first of its key in this process,
  // or an outlier).
  bool record(const PerfKey &key, double seconds);
  // The expected time of 'key', if it or a size near it is calibrated.
  std::optional<double> expected(const PerfKey &key) const;
  bool calibrated(const PerfKey &key) const;
  std::size_t keys() const;

  // Replaces the model with the file's; false (and the model unchanged, 'why' set) when the
  // file cannot be read or is damaged. A missing file is not an error: an empty model.
  bool load(const std::string &path, std::string &why);
  // Writes the model (to a temporary file renamed into place); false with 'why' on failure.
  bool save(const std::string &path, std::string &why) const;

  static int size_class(std::uint64_t bytes);

 private:
  struct Stats {
    std::uint64_t count = 0;
    double mean = 0, m2 = 0;  // Welford: running mean, sum of squared deviations
    std::uint64_t rejected = 0;
    bool warmed = false;  // this process has seen (and dropped) its first sample
  };
  mutable std::mutex mutex_;
  std::map<PerfKey, Stats> stats_;
};

// The model file of this machine: NANORT_PERF_MODEL (a path, or off) or
// $XDG_CACHE_HOME/nanort/perfmodels/<host name>.model (~/.cache when XDG_CACHE_HOME is unset);
// empty when off or there is no home.
std::string default_perf_model_path();

}  // namespace nanort::rt
