#include "opencl_backend.hpp"

#include <cstdlib>
#include <exception>
#include <stdexcept>

#include "../device/accelerator.hpp"
#include "../device/rank_share.hpp"
#include "opencl_device.hpp"
#include "opencl_program_cache.hpp"

namespace nanort::rt::opencl {
namespace {

class OpenClBackend final : public Backend {
 public:
  bool wanted(const Config &config) const override {
    return config.opencl_devices != "none" || required(config, "opencl") ||
           required(config, "opencl-gpu");
  }

  void list(std::vector<std::string> &warnings) override {
    DevicesSeen &opencl_seen = seen_[0], &opencl_gpus_seen = seen_[1];
    try {
      found_ = opencl::list_devices();
    } catch (const std::exception &e) {
      problem(opencl_seen, std::string("OpenCL devices cannot be listed (") + e.what() +
                               "); no OpenCL device is used",
              warnings);
      opencl_gpus_seen.problem = opencl_seen.problem;
    }
    opencl_seen.found = static_cast<int>(found_.size());
    for (const opencl::DeviceInfo &info : found_)
      if (info.type & CL_DEVICE_TYPE_GPU) ++opencl_gpus_seen.found;
  }

  std::vector<std::size_t> select(const Config &config) override {
    std::vector<std::size_t> chosen;
    try {
      chosen = opencl::select_devices(found_, config.opencl_devices);
    } catch (const std::invalid_argument &e) {
      throw ConfigError("NANORT_OPENCL_DEVICES='" + config.opencl_devices + "': " + e.what());
    }
    // The same for GPUs through OpenCL (not CPU devices: they share the node's cores anyway).
    if (config.opencl_devices == "auto" && !std::getenv("NANORT_OPENCL_DEVICES") &&
        !chosen.empty() && !(found_[chosen.front()].type & CL_DEVICE_TYPE_CPU))
      chosen = share_for_rank(chosen, local_rank_from_environment());
    return chosen;
  }

  void open(const std::vector<std::size_t> &chosen, const Config &config,
            std::vector<std::unique_ptr<Accelerator>> &devices,
            std::vector<std::string> &warnings) override {
    if (chosen.empty()) return;
    DevicesSeen &opencl_seen = seen_[0], &opencl_gpus_seen = seen_[1];
    program_cache_ = std::make_unique<opencl::ProgramCache>(opencl::default_program_cache_folder());
    if (!program_cache_->enabled() && !program_cache_->folder().empty())
      warnings.push_back("OpenCL programs are not cached on disk: " +
                         program_cache_->disabled_reason());
    try {
      for (auto &device : opencl::open_devices(found_, chosen, *program_cache_,
                                               config.opencl_context_per_device,
                                               config.opencl_launch_thread,
                                               config.taskiter_opencl_command_buffers))
        devices.push_back(std::move(device));
    } catch (const std::exception &e) {
      problem(opencl_seen, std::string("OpenCL devices cannot be opened (") + e.what() +
                               "); no OpenCL device is used",
              warnings);
      opencl_gpus_seen.problem = opencl_seen.problem;
      std::erase_if(devices, [](const std::unique_ptr<Accelerator> &accelerator) {
        return accelerator->kind() == NANORT_DEVICE_OPENCL;
      });
    }
  }

  std::span<const DevicesSeen> seen() const override { return seen_; }

  std::string summary() const override {
    return program_cache_ ? program_cache_->summary() : std::string();
  }

 private:
  static void problem(DevicesSeen &seen, std::string text, std::vector<std::string> &warnings) {
    seen.problem = text;
    warnings.push_back(std::move(text));
  }

  std::vector<opencl::DeviceInfo> found_;
  DevicesSeen seen_[2] = {{"opencl", "OpenCL device(s)", 0, {}},
                          {"opencl-gpu", "OpenCL GPU(s)", 0, {}}};
  std::unique_ptr<opencl::ProgramCache> program_cache_;  // outlives the OpenCL devices
};

}  // namespace

std::unique_ptr<Backend> make_backend() { return std::make_unique<OpenClBackend>(); }

}  // namespace nanort::rt::opencl
