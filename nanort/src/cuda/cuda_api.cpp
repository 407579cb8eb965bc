#include "cuda_api.hpp"

#include <dlfcn.h>

#include <mutex>

namespace nanort::rt::cuda {

namespace {

std::string describe(CUresult code, const Driver *d) {
  const char *name = nullptr, *text = nullptr;
  if (d && d->cuGetErrorName) d->cuGetErrorName(code, &name);
  if (d && d->cuGetErrorString) d->cuGetErrorString(code, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(static_cast<int>(code));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

struct Loaded {
  Driver driver;
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded loaded;
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    loaded.why = std::string("libcuda.so.1 cannot be loaded (no NVIDIA driver): ") +
                 (error ? error : "unknown reason");
    return loaded;
  }
  using GetProcAddress = CUresult (*)(const char *, void **, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult *);
  auto get = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (!get) {
    loaded.why = "libcuda.so.1 has no cuGetProcAddress_v2 (a driver older than CUDA 12)";
    return loaded;
  }
  Driver &d = loaded.driver;
  // The library stays loaded for the life of the process: its entry points are kept.
#define NANORT_CUDA_RESOLVE(name)                                                          \
  {                                                                                        \
    void *entry = nullptr;                                                                 \
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;                    \
    if (get(#name, &entry, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=           \
            CUDA_SUCCESS ||                                                                \
        !entry) {                                                                          \
      loaded.why = std::string("the NVIDIA driver lacks " #name " (CUDA ") +               \
                   std::to_string(CUDA_VERSION / 1000) + "." +                             \
                   std::to_string(CUDA_VERSION % 1000 / 10) + " or newer is needed)";      \
      return loaded;                                                                       \
    }                                                                                      \
    d.name = reinterpret_cast<decltype(d.name)>(entry);                                    \
  }
  NANORT_CUDA_ENTRIES(NANORT_CUDA_RESOLVE)
#undef NANORT_CUDA_RESOLVE
  const CUresult init = d.cuInit(0);
  if (init != CUDA_SUCCESS) {
    loaded.why = "cuInit failed: " + describe(init, &d);
    return loaded;
  }
  d.cuDriverGetVersion(&d.version);
  loaded.ok = true;
  return loaded;
}

}  // namespace

const Driver *driver(std::string *why) {
  static const Loaded loaded = load();
  if (why) *why = loaded.why;
  return loaded.ok ? &loaded.driver : nullptr;
}

bool CudaError::sticky() const {
  switch (code_) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return true;
    default:
      return false;
  }
}

std::string error_text(CUresult code) { return describe(code, driver()); }

void throw_error(CUresult code, const char *call, const char *file, int line) {
  throw CudaError(code, std::string(call) + " failed with " + error_text(code) + " at " + file +
                            ":" + std::to_string(line));
}

}  // namespace nanort::rt::cuda
