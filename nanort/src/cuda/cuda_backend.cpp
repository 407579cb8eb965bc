#include "cuda_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>

#include "../device/accelerator.hpp"
#include "../device/rank_share.hpp"
#if NANORT_HAVE_CUDA
#include "cuda_device.hpp"
#endif

namespace nanort::rt {

// ---------------------------------------------------------------------------------------------
// CUDA images of linked objects

namespace {
std::mutex &linked_images_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<const void *> &linked_images() {
  static std::vector<const void *> images;
  return images;
}
}  // namespace

void register_linked_cuda_image(const void *image) {
  std::lock_guard<std::mutex> guard(linked_images_mutex());
  std::vector<const void *> &images = linked_images();
  if (std::find(images.begin(), images.end(), image) == images.end()) images.push_back(image);
}

std::vector<const void *> linked_cuda_images() {
  std::lock_guard<std::mutex> guard(linked_images_mutex());
  return linked_images();
}

// ---------------------------------------------------------------------------------------------
// The backend

namespace cuda {
namespace {

#if NANORT_HAVE_CUDA
class CudaBackend final : public Backend {
 public:
  // (A required kind is listed even when none of its devices is chosen.)
  bool wanted(const Config &config) const override {
    return config.cuda_devices != "none" || required(config, "cuda");
  }

  void list(std::vector<std::string> &warnings) override {
    try {
      std::string why_none;  // no driver, or no GPU: not a warning, but NANORT_REQUIRE says it
      found_ = cuda::list_devices(&why_none);
      if (found_.empty()) seen_.problem = why_none;
    } catch (const std::exception &e) {
      problem(std::string("CUDA devices cannot be listed (") + e.what() +
                  "); no CUDA device is used",
              warnings);
    }
    seen_.found = static_cast<int>(found_.size());
  }

  std::vector<std::size_t> select(const Config &config) override {
    std::vector<std::size_t> chosen;
    try {
      chosen = cuda::select_devices(found_, config.cuda_devices);
    } catch (const std::invalid_argument &e) {
      throw ConfigError("NANORT_CUDA_DEVICES='" + config.cuda_devices + "': " + e.what());
    }
    // Several ranks of an MPI job on this node, GPUs left to the default: a share each.
    if (config.cuda_devices == "all" && !std::getenv("NANORT_CUDA_DEVICES"))
      chosen = share_for_rank(chosen, local_rank_from_environment());
    return chosen;
  }

  void open(const std::vector<std::size_t> &chosen, const Config &config,
            std::vector<std::unique_ptr<Accelerator>> &devices,
            std::vector<std::string> &warnings) override {
    try {
      for (auto &device : cuda::open_devices(found_, chosen, config.cuda_launch_thread))
        devices.push_back(std::move(device));
    } catch (const std::exception &e) {
      problem(std::string("CUDA devices cannot be opened (") + e.what() +
                  "); no CUDA device is used",
              warnings);
    }
  }

  std::span<const DevicesSeen> seen() const override { return {&seen_, 1}; }

 private:
  void problem(std::string text, std::vector<std::string> &warnings) {
    seen_.problem = text;
    warnings.push_back(std::move(text));
  }

  std::vector<cuda::DeviceInfo> found_;
  DevicesSeen seen_{"cuda", "CUDA device(s)", 0, {}};
};
#else
// A build without cuda.h: no device, and NANORT_REQUIRE says why.
class CudaBackend final : public Backend {
 public:
  bool wanted(const Config &config) const override {
    return config.cuda_devices != "all" && config.cuda_devices != "none";
  }
  void list(std::vector<std::string> &warnings) override {
    warnings.push_back("NANORT_CUDA_DEVICES is set but this build has no CUDA backend");
  }
  std::vector<std::size_t> select(const Config &) override { return {}; }
  void open(const std::vector<std::size_t> &, const Config &,
            std::vector<std::unique_ptr<Accelerator>> &, std::vector<std::string> &) override {}
  std::span<const DevicesSeen> seen() const override { return {&seen_, 1}; }

 private:
  DevicesSeen seen_{"cuda", "CUDA device(s)", 0,
                    "this build of nanort has no CUDA backend (cuda.h was not found)"};
};
#endif

}  // namespace

std::unique_ptr<Backend> make_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace cuda
}  // namespace nanort::rt
