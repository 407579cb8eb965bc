#include "cuda_api.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

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

// NANORT_STATS=1: every Driver API call goes through a wrapper that adds up its time per entry
// point, printed at exit (which calls a manager thread spends its time in).
enum Entry : std::size_t {
#define NANORT_CUDA_ENUM(name) entry_##name,
  NANORT_CUDA_ENTRIES(NANORT_CUDA_ENUM)
#undef NANORT_CUDA_ENUM
      entry_count
};
const char *const entry_names[] = {
#define NANORT_CUDA_NAME(name) #name,
    NANORT_CUDA_ENTRIES(NANORT_CUDA_NAME)
#undef NANORT_CUDA_NAME
};

struct alignas(64) CallTimes {  // a cache line each: managers call different entries at once
  std::atomic<std::uint64_t> calls{0}, ns{0}, longest_ns{0};
};
CallTimes call_times[entry_count];
void *real_entries[entry_count];

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

template <std::size_t I, typename F>
struct Timed;
template <std::size_t I, typename... A>
struct Timed<I, CUresult (*)(A...)> {
  static CUresult call(A... args) {
    const std::uint64_t start = now_ns();
    const CUresult result = reinterpret_cast<CUresult (*)(A...)>(real_entries[I])(args...);
    const std::uint64_t took = now_ns() - start;
    CallTimes &t = call_times[I];
    t.calls.fetch_add(1, std::memory_order_relaxed);
    t.ns.fetch_add(took, std::memory_order_relaxed);
    std::uint64_t longest = t.longest_ns.load(std::memory_order_relaxed);
    while (took > longest && !t.longest_ns.compare_exchange_weak(longest, took)) {
    }
    return result;
  }
};

void print_call_times() {
  // A snapshot: threads a program left running at exit may still be calling.
  struct Row {
    const char *name;
    std::uint64_t calls, ns, longest_ns;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < entry_count; ++i)
    if (const std::uint64_t calls = call_times[i].calls.load(); calls > 0)
      rows.push_back({entry_names[i], calls, call_times[i].ns.load(),
                      call_times[i].longest_ns.load()});
  if (rows.empty()) return;
  std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.ns > b.ns; });
  std::fprintf(stderr, "nanort: CUDA driver calls     %8s %11s %11s %11s\n", "calls", "total ms",
               "mean us", "longest us");
  for (const Row &row : rows)
    std::fprintf(stderr, "  %-26s %8llu %11.3f %11.2f %11.2f\n", row.name,
                 static_cast<unsigned long long>(row.calls), static_cast<double>(row.ns) * 1e-6,
                 static_cast<double>(row.ns) * 1e-3 / static_cast<double>(row.calls),
                 static_cast<double>(row.longest_ns) * 1e-3);
}

bool stats_requested() {
  const char *v = std::getenv("NANORT_STATS");  // as the configuration reads it
  return v && (!std::strcmp(v, "1") || !std::strcmp(v, "yes") || !std::strcmp(v, "true"));
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
  if (stats_requested()) {
#define NANORT_CUDA_TIME(name)                                        \
  real_entries[entry_##name] = reinterpret_cast<void *>(d.name);       \
  d.name = &Timed<entry_##name, decltype(d.name)>::call;
    NANORT_CUDA_ENTRIES(NANORT_CUDA_TIME)
#undef NANORT_CUDA_TIME
    std::atexit(print_call_times);
  }
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
