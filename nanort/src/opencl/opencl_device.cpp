#include "opencl_device.hpp"

#include <nanort/dc/human_size.hpp>

#include <algorithm>
#include <array>
#include <utility>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "../device/host_lock_cache.hpp"
#include "../device/replay_cache.hpp"
#include "../task.hpp"
#include "../taskiter.hpp"
#include "opencl_launcher.hpp"
#include "opencl_program_cache.hpp"

namespace nanort::rt::opencl {

namespace {

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  NANORT_CL_CHECK(clGetPlatformInfo(platform, what, 0, nullptr, &size));
  std::string text(size, '\0');
  NANORT_CL_CHECK(clGetPlatformInfo(platform, what, size, text.data(), nullptr));
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string device_string(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  NANORT_CL_CHECK(clGetDeviceInfo(device, what, 0, nullptr, &size));
  std::string text(size, '\0');
  NANORT_CL_CHECK(clGetDeviceInfo(device, what, size, text.data(), nullptr));
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

template <class T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  NANORT_CL_CHECK(clGetDeviceInfo(device, what, sizeof value, &value, nullptr));
  return value;
}

std::string lower(std::string text) {
  for (char &c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool contains(const std::string &haystack, const std::string &needle) {
  return lower(haystack).find(lower(needle)) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// Completions: OpenCL events

// A copy's completion.
class EventCompletion final : public dc::Completion {
 public:
  EventCompletion(cl_event event, cl_context context, std::string what)
      : event_(event), context_(context), what_(std::move(what)) {}
  ~EventCompletion() override { clReleaseEvent(event_); }

  bool poll() override {
    cl_int status = CL_COMPLETE;
    if (clGetEventInfo(event_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                       nullptr) != CL_SUCCESS)
      return true;  // wait() reports it
    return status <= CL_COMPLETE;  // complete, or failed (negative)
  }
  void wait() override {
    clWaitForEvents(1, &event_);
    cl_int status = CL_COMPLETE;
    NANORT_CL_CHECK(clGetEventInfo(event_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                   &status, nullptr));
    if (status < 0) throw OpenClError(status, what_ + " failed with " + error_name(status));
  }
  bool on_done(std::function<void()> done) override {
    return call_when_complete(event_, std::move(done));
  }
  cl_event event() const { return event_; }
  cl_context context() const { return context_; }

 private:
  cl_event event_;
  cl_context context_;
  std::string what_;
};

// Accelerator::hold_kernels: a barrier on the kernel queue waits for this user event, which
// is set complete when the hold goes.
class UserEventHold final : public KernelHold {
 public:
  explicit UserEventHold(cl_event gate) : gate_(gate) {}
  ~UserEventHold() override {
    clSetUserEventStatus(gate_, CL_COMPLETE);
    clReleaseEvent(gate_);
  }

 private:
  cl_event gate_;
};

// The events of 'after' that a command in 'context' can wait for; completions from other
// contexts or backends are waited for here, on the host. Kernels launched earlier by 'same'
// (on the in-order queue the command goes to) need no wait at all.
std::vector<cl_event> wait_list(dc::Dependencies after, cl_context context,
                                const KernelLauncher *same = nullptr) {
  std::vector<cl_event> events;
  for (const dc::CompletionPtr &completion : after) {
    if (auto *kernel = dynamic_cast<KernelCompletion *>(completion.get())) {
      if (kernel->launcher() == same || kernel->poll()) continue;
      if (kernel->context() == context) {
        if (cl_event event = kernel->event()) events.push_back(event);
        continue;
      }
    } else if (completion->poll()) {
      continue;
    } else if (auto *event = dynamic_cast<EventCompletion *>(completion.get());
               event && event->context() == context) {
      events.push_back(event->event());
      continue;
    }
    completion->wait();
  }
  return events;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Discovery and selection

const char *type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

namespace {
// Environment variables that OpenCL drivers change while they load (PoCL sets
// HWLOC_PLUGINS_PATH, and OCL_ICD_FILENAMES was seen cut down to PoCL alone): put back as they
// were, so that processes the program starts later still find every platform.
class KeepEnvironment {
 public:
  KeepEnvironment() {
    for (const char *name : kNames) {
      const char *value = std::getenv(name);
      saved_.push_back(value ? std::optional<std::string>(value) : std::nullopt);
    }
  }
  ~KeepEnvironment() {
    for (std::size_t i = 0; i < std::size(kNames); ++i) {
      const char *now = std::getenv(kNames[i]);
      if (saved_[i] && (!now || *saved_[i] != now)) setenv(kNames[i], saved_[i]->c_str(), 1);
      if (!saved_[i] && now) unsetenv(kNames[i]);
    }
  }

 private:
  static constexpr const char *kNames[] = {"OCL_ICD_FILENAMES", "OCL_ICD_VENDORS",
                                           "HWLOC_PLUGINS_PATH"};
  std::vector<std::optional<std::string>> saved_;
};
}  // namespace

std::vector<DeviceInfo> list_devices() {
  const KeepEnvironment keep;
  cl_uint platform_count = 0;
  const cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
  if (status == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || platform_count == 0) return {};
  NANORT_CL_CHECK(status);
  std::vector<cl_platform_id> platforms(platform_count);
  NANORT_CL_CHECK(clGetPlatformIDs(platform_count, platforms.data(), nullptr));
  std::vector<DeviceInfo> devices;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(count);
    NANORT_CL_CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr));
    for (cl_device_id id : ids) {
      DeviceInfo info;
      info.platform = platform;
      info.id = id;
      info.platform_name = platform_string(platform, CL_PLATFORM_NAME);
      info.platform_vendor = platform_string(platform, CL_PLATFORM_VENDOR);
      info.platform_version = platform_string(platform, CL_PLATFORM_VERSION);
      info.name = device_string(id, CL_DEVICE_NAME);
      info.vendor = device_string(id, CL_DEVICE_VENDOR);
      info.version = device_string(id, CL_DEVICE_VERSION);
      info.driver = device_string(id, CL_DRIVER_VERSION);
      info.type = device_value<cl_device_type>(id, CL_DEVICE_TYPE);
      info.global_memory = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
      info.max_allocation = device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.address_alignment =
          std::max<std::size_t>(1, device_value<cl_uint>(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8);
      info.host_unified_memory = device_value<cl_bool>(id, CL_DEVICE_HOST_UNIFIED_MEMORY);
      info.compute_units = device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
      devices.push_back(std::move(info));
    }
  }
  return devices;
}

std::vector<std::size_t> select_devices(const std::vector<DeviceInfo> &devices,
                                        const std::string &spec) {
  std::vector<std::size_t> chosen;
  const std::string all = lower(spec);
  if (all == "all") {
    for (std::size_t i = 0; i < devices.size(); ++i) chosen.push_back(i);
    return chosen;
  }
  if (all.empty() || all == "auto") {
    // GPUs and accelerators when there are any: a CPU device would compete with the CPU
    // workers for the same cores. Else the CPU devices (PoCL), so kernels still run.
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (!(devices[i].type & CL_DEVICE_TYPE_CPU)) chosen.push_back(i);
    if (chosen.empty())
      for (std::size_t i = 0; i < devices.size(); ++i) chosen.push_back(i);
    return chosen;
  }
  if (all == "none") return chosen;
  std::vector<bool> pick(devices.size(), false);
  std::size_t begin = 0;
  while (begin <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', begin), spec.size());
    const std::string selector = spec.substr(begin, comma - begin);
    begin = comma + 1;
    if (selector.empty()) throw std::invalid_argument("an empty selector");
    if (std::all_of(selector.begin(), selector.end(), [](char c) { return std::isdigit(c); })) {
      const std::size_t index = std::stoul(selector);
      if (index >= devices.size())
        throw std::invalid_argument("device index " + selector + " but " +
                                    std::to_string(devices.size()) +
                                    " OpenCL device(s) found (nanort-info lists them)");
      pick[index] = true;
      continue;
    }
    // Conditions joined by '+'.
    std::vector<std::pair<std::string, std::string>> conditions;
    std::size_t from = 0;
    while (from <= selector.size()) {
      const std::size_t plus = std::min(selector.find('+', from), selector.size());
      const std::string condition = selector.substr(from, plus - from);
      from = plus + 1;
      const std::size_t colon = condition.find(':');
      if (colon == std::string::npos)
        throw std::invalid_argument("'" + condition +
                                    "' is neither an index nor key:value (keys: platform, "
                                    "vendor, name, type)");
      std::string key = lower(condition.substr(0, colon)), value = condition.substr(colon + 1);
      if (key != "platform" && key != "vendor" && key != "name" && key != "type")
        throw std::invalid_argument("unknown key '" + key +
                                    "' (keys: platform, vendor, name, type)");
      if (key == "type" && lower(value) != "gpu" && lower(value) != "cpu" &&
          lower(value) != "accelerator")
        throw std::invalid_argument("type:" + value + " is not one of gpu, cpu, accelerator");
      conditions.emplace_back(std::move(key), std::move(value));
    }
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const DeviceInfo &d = devices[i];
      bool match = true;
      for (const auto &[key, value] : conditions) {
        if (key == "platform") match = match && (contains(d.platform_name, value) ||
                                                 contains(d.platform_vendor, value));
        if (key == "vendor") match = match && contains(d.vendor, value);
        if (key == "name") match = match && contains(d.name, value);
        if (key == "type") match = match && lower(value) == type_name(d.type);
      }
      if (match) pick[i] = true;
    }
  }
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (pick[i]) chosen.push_back(i);
  return chosen;
}

// ---------------------------------------------------------------------------------------------
// Context: one per device, or one per platform (NANORT_OPENCL_CONTEXTS); programs are built
// once per context, for all of its devices.

class Context {
 public:
  Context(cl_platform_id platform, std::vector<cl_device_id> devices, ProgramCache &cache,
          bool locks_host)
      : devices_(std::move(devices)), cache_(cache), locks_host_(locks_host) {
    const cl_context_properties properties[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int status = CL_SUCCESS;
    context_ = clCreateContext(properties, static_cast<cl_uint>(devices_.size()),
                               devices_.data(), nullptr, nullptr, &status);
    NANORT_CL_CHECK_STATUS(status, "clCreateContext");
  }
  ~Context() {
    for (auto &[start, locked] : host_locked_) clReleaseMemObject(locked.buffer);
    for (auto &[module, entry] : programs_)
      if (entry.program) clReleaseProgram(entry.program);
    clReleaseContext(context_);
  }
  cl_context handle() const { return context_; }
  // Held while memory objects are made or released for the devices' data, and by launcher
  // threads while they enqueue: NVIDIA's OpenCL was seen crashing (in clEnqueueNDRangeKernel,
  // and in clReleaseMemObject) when a launcher thread enqueued kernels beside another thread's
  // buffer and sub-buffer calls.
  std::mutex &memory_objects() { return memory_objects_; }

  // Host memory page-locked for the devices of this context, where the platform locks memory
  // that a buffer is made over (CL_MEM_USE_HOST_PTR): NVIDIA's OpenCL locks the pages when the
  // buffer is made (like cuMemHostRegister), copies from and into them with clEnqueueWrite/ReadBuffer then
  // go at the bus's speed (55 GB/s on the H100 and H200 machines, against 6-15 from ordinary
  // memory), and the buffer, never given to a kernel, takes no device memory. Other platforms
  // may copy the memory into such a buffer instead: their copies go through staging.
  bool locks_host() const { return locks_host_; }
  // (The buffer is made and released outside host_mutex_: pinning takes long, and copying
  // threads ask host_locked(). Map nodes are made and freed outside it too: a free may wait
  // in the runtime's memory hooks for the thread that locks, which may be waiting here.)
  void lock_host(void *address, std::size_t bytes) {
    const auto start = reinterpret_cast<std::uintptr_t>(address);
    Holding found;
    {
      std::lock_guard<std::mutex> guard(host_mutex_);
      found = add_holder(start, bytes);
    }
    if (found == Holding::added) return;  // another device of this context
    if (found == Holding::overlaps) throw_overlap(bytes);
    cl_int status = CL_SUCCESS;
    std::unique_lock<std::mutex> objects(memory_objects_);  // (launcher threads wait meanwhile)
    cl_mem buffer = clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes,
                                   address, &status);
    objects.unlock();
    NANORT_CL_CHECK_STATUS(status, "clCreateBuffer(CL_MEM_USE_HOST_PTR)");
    std::map<std::uintptr_t, HostLocked> node;
    try {
      node.emplace(start, HostLocked{start + bytes, buffer, 1});
    } catch (...) {
      release_locked_buffer(buffer);
      throw;
    }
    {
      std::lock_guard<std::mutex> guard(host_mutex_);
      found = add_holder(start, bytes);  // (another thread may have made it meanwhile)
      if (found == Holding::absent) host_locked_.insert(node.extract(node.begin()));
    }
    if (found == Holding::absent) return;
    release_locked_buffer(buffer);
    if (found == Holding::overlaps) throw_overlap(bytes);
  }
  void unlock_host(void *address) {
    std::map<std::uintptr_t, HostLocked> gone;
    bool known = false;
    {
      std::lock_guard<std::mutex> guard(host_mutex_);
      auto it = host_locked_.find(reinterpret_cast<std::uintptr_t>(address));
      known = it != host_locked_.end();
      if (known && --it->second.holders == 0) gone.insert(host_locked_.extract(it));
    }
    if (!known)
      throw std::invalid_argument("unlocking host memory for OpenCL: not an address locked");
    if (!gone.empty()) release_locked_buffer(gone.begin()->second.buffer);
  }
  void release_locked_buffer(cl_mem buffer) {
    std::lock_guard<std::mutex> objects(memory_objects_);
    clReleaseMemObject(buffer);
  }
  // (Under host_mutex_, allocating nothing.) 'added': [start, start + bytes) is locked here
  // already, one more holder; 'overlaps': it overlaps another range; 'absent': neither.
  enum class Holding { added, overlaps, absent };
  Holding add_holder(std::uintptr_t start, std::size_t bytes) {
    auto next = host_locked_.lower_bound(start);
    if (next != host_locked_.end() && next->first == start && next->second.end == start + bytes) {
      ++next->second.holders;
      return Holding::added;
    }
    if ((next != host_locked_.end() && next->first < start + bytes) ||
        (next != host_locked_.begin() && std::prev(next)->second.end > start))
      return Holding::overlaps;
    return Holding::absent;
  }
  [[noreturn]] static void throw_overlap(std::size_t bytes) {
    throw std::invalid_argument("page-locking " + std::to_string(bytes) +
                                " bytes of host memory for OpenCL: they overlap memory locked "
                                "already");
  }
  // Whether [address, address + bytes) lies in one range locked here.
  bool host_locked(const void *address, std::size_t bytes) {
    const auto start = reinterpret_cast<std::uintptr_t>(address);
    std::lock_guard<std::mutex> guard(host_mutex_);
    auto it = host_locked_.upper_bound(start);
    if (it == host_locked_.begin()) return false;
    --it;
    return it->second.end >= start + bytes;
  }

  // The module's program, built at the first call (by whichever device asks first); a build
  // failure is remembered and reported to every task that needs the module.
  cl_program program(const nanort_kernel_module &module) {
    std::lock_guard<std::mutex> guard(mutex_);
    Entry &entry = programs_[&module];
    if (entry.program) return entry.program;
    if (!entry.error.empty()) throw std::runtime_error(entry.error);
    if (module.format != NANORT_MODULE_OPENCL_SOURCE || !module.image) {
      entry.error = "the kernel module is not OpenCL source";
      throw std::runtime_error(entry.error);
    }
    const char *text = static_cast<const char *>(module.image);
    const std::string_view source(text, module.image_size ? module.image_size
                                                          : std::strlen(text));
    try {
      entry.program = cache_.build(context_, devices_, source,
                                   module.build_options ? module.build_options : "",
                                   module.origin ? module.origin : "embedded OpenCL source");
    } catch (const std::exception &e) {
      entry.error = e.what();
      throw;
    }
    return entry.program;
  }

 private:
  struct Entry {
    cl_program program = nullptr;
    std::string error;
  };
  struct HostLocked {
    std::uintptr_t end;
    cl_mem buffer;
    int holders;
  };
  cl_context context_ = nullptr;
  std::vector<cl_device_id> devices_;
  ProgramCache &cache_;
  std::mutex mutex_;
  std::map<const nanort_kernel_module *, Entry> programs_;
  const bool locks_host_;
  std::mutex host_mutex_;
  std::map<std::uintptr_t, HostLocked> host_locked_;  // by start
  std::mutex memory_objects_;
};

namespace {

// ---------------------------------------------------------------------------------------------
// Memory

class OpenClMemory final : public dc::MemorySpace {
 public:
  OpenClMemory(std::string name, const DeviceInfo &info, std::shared_ptr<Context> context,
               cl_command_queue to_device, cl_command_queue to_host)
      : name_(std::move(name)), info_(info), context_(std::move(context)),
        to_device_(to_device), to_host_(to_host) {}
  ~OpenClMemory() override {
    for (auto &[buffer, views] : views_) release_views(views);
  }

  std::string name() const override { return name_ + " (" + info_.name + ")"; }
  std::size_t memory_size() const override { return info_.global_memory; }
  std::size_t argument_alignment() const override { return info_.address_alignment; }
  bool wants_staging() const override {
    return !(info_.type & CL_DEVICE_TYPE_CPU) && !info_.host_unified_memory;
  }

  dc::DeviceBuffer allocate(std::size_t bytes) override {
    if (bytes > info_.max_allocation)
      throw dc::DataTooLargeError("needs one buffer of " + dc::human_size(bytes) + " on " + name() +
                                  ", more than the largest buffer the device allows, " +
                                  dc::human_size(info_.max_allocation) +
                                  " (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    cl_int status = CL_SUCCESS;
    std::unique_lock<std::mutex> objects(context_->memory_objects());
    cl_mem buffer =
        clCreateBuffer(context_->handle(), CL_MEM_READ_WRITE, bytes ? bytes : 1, nullptr, &status);
    objects.unlock();
    if (status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ||
        status == CL_OUT_OF_HOST_MEMORY)
      return {};
    NANORT_CL_CHECK_STATUS(status, "clCreateBuffer");
    return dc::DeviceBuffer{reinterpret_cast<std::uintptr_t>(buffer)};
  }

  void free(dc::DeviceBuffer buffer) override {
    std::lock_guard<std::mutex> guard(views_mutex_);  // (before memory_objects, as argument())
    std::lock_guard<std::mutex> objects(context_->memory_objects());
    if (auto it = views_.find(as_mem(buffer)); it != views_.end()) {
      release_views(it->second);
      views_.erase(it);
    }
    clReleaseMemObject(as_mem(buffer));
  }

  dc::CompletionPtr write(dc::DeviceBuffer target, std::size_t offset, const void *source,
                          std::size_t bytes, dc::Dependencies after) override {
    const std::vector<cl_event> waits = wait_list(after, context_->handle());
    cl_event event = nullptr;
    // (In order on the queue: the last piece's event ends the copy.)
    in_pieces(source, bytes, event, [&](std::size_t at, std::size_t n, cl_event *made) {
      return clEnqueueWriteBuffer(to_device_, as_mem(target), CL_FALSE, offset + at, n,
                                  static_cast<const char *>(source) + at, count(waits),
                                  data(waits), made);
    }, "clEnqueueWriteBuffer");
    clFlush(to_device_);
    return finished(event, "copy to " + name_);
  }

  dc::CompletionPtr read(dc::DeviceBuffer source, std::size_t offset, void *target,
                         std::size_t bytes, dc::Dependencies after) override {
    const std::vector<cl_event> waits = wait_list(after, context_->handle());
    cl_event event = nullptr;
    in_pieces(target, bytes, event, [&](std::size_t at, std::size_t n, cl_event *made) {
      return clEnqueueReadBuffer(to_host_, as_mem(source), CL_FALSE, offset + at, n,
                                 static_cast<char *>(target) + at, count(waits), data(waits),
                                 made);
    }, "clEnqueueReadBuffer");
    clFlush(to_host_);
    return finished(event, "copy from " + name_);
  }

  bool is_page_locked(const void *address, std::size_t bytes) override {
    if (!context_->locks_host()) return false;
    // What the runtime locked by itself (or is about to), else what the program locked.
    HostLockCache *locks = host_locks_.load(std::memory_order_acquire);
    if (locks) {
      const HostLockCache::Coverage coverage = locks->coverage(address, bytes);
      if (coverage != HostLockCache::Coverage::unknown)
        return coverage == HostLockCache::Coverage::locked;
    }
    return context_->host_locked(address, bytes);
  }
  void staged(const void *address, std::size_t bytes) override {
    if (HostLockCache *locks = host_locks_.load(std::memory_order_acquire))
      locks->moved(address, bytes);  // (counted towards being locked)
  }
  bool locks_before_copy(const void *address, std::size_t bytes) override {
    HostLockCache *locks = host_locks_.load(std::memory_order_acquire);
    return locks && context_->locks_host() && locks->wants_lock_now(address, bytes);
  }
  bool lock_for_copy(const void *address, std::size_t bytes) override {
    HostLockCache *locks = host_locks_.load(std::memory_order_acquire);
    return locks && context_->locks_host() && locks->lock_now(address, bytes);
  }
  void use_host_locks(HostLockCache *locks) { host_locks_.store(locks, std::memory_order_release); }
  // Enqueues the copy in pieces (for_each_piece) with enqueue(at, n, &event); 'last' is the
  // last piece's event (in order on the queue: it ends the copy). If a piece fails, those
  // enqueued before it end before the error goes on: none writes memory after it is reported.
  template <class Enqueue>
  void in_pieces(const void *host, std::size_t bytes, cl_event &last, Enqueue &&enqueue,
                 const char *call) {
    for_each_piece(host, bytes, [&](std::size_t at, std::size_t n) {
      cl_event made = nullptr;
      const cl_int status = enqueue(at, n, &made);
      if (status != CL_SUCCESS) {
        if (last) {
          clWaitForEvents(1, &last);
          clReleaseEvent(last);
          last = nullptr;
        }
        throw_error(status, call, __FILE__, __LINE__);
      }
      if (last) clReleaseEvent(last);
      last = made;
    });
  }
  template <class Copy>
  void for_each_piece(const void *host, std::size_t bytes, Copy &&copy) {
    HostLockCache::for_each_piece(host_locks_.load(std::memory_order_acquire), host, bytes,
                                  std::forward<Copy>(copy));
  }

  dc::CompletionPtr copy(dc::DeviceBuffer source, std::size_t source_offset,
                         dc::DeviceBuffer target, std::size_t target_offset, std::size_t bytes,
                         dc::Dependencies after) override {
    const std::vector<cl_event> waits = wait_list(after, context_->handle());
    cl_event event = nullptr;
    NANORT_CL_CHECK(clEnqueueCopyBuffer(to_device_, as_mem(source), as_mem(target),
                                        source_offset, target_offset, bytes, count(waits),
                                        data(waits), &event));
    clFlush(to_device_);
    return finished(event, "copy inside " + name_);
  }

  bool can_copy_from(const dc::MemorySpace &other) const override {
    auto *peer = dynamic_cast<const OpenClMemory *>(&other);
    return peer && peer->context_ == context_;
  }

  dc::CompletionPtr copy_from(dc::MemorySpace &other, dc::DeviceBuffer source,
                              std::size_t source_offset, dc::DeviceBuffer target,
                              std::size_t target_offset, std::size_t bytes,
                              dc::Dependencies after) override {
    if (!can_copy_from(other))
      return MemorySpace::copy_from(other, source, source_offset, target, target_offset, bytes,
                                    after);
    return copy(source, source_offset, target, target_offset, bytes, after);
  }

  dc::PinnedBuffer allocate_pinned(std::size_t bytes) override {
    cl_int status = CL_SUCCESS;
    std::unique_lock<std::mutex> objects(context_->memory_objects());
    cl_mem buffer = clCreateBuffer(context_->handle(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                   bytes, nullptr, &status);
    objects.unlock();
    if (status != CL_SUCCESS) return {};
    void *host = clEnqueueMapBuffer(to_device_, buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                    bytes, 0, nullptr, nullptr, &status);
    if (status != CL_SUCCESS) {
      std::lock_guard<std::mutex> guard(context_->memory_objects());
      clReleaseMemObject(buffer);
      return {};
    }
    return dc::PinnedBuffer{host, reinterpret_cast<std::uintptr_t>(buffer), bytes};
  }

  void free_pinned(dc::PinnedBuffer pinned) override {
    cl_mem buffer = reinterpret_cast<cl_mem>(pinned.handle);
    clEnqueueUnmapMemObject(to_device_, buffer, pinned.host, 0, nullptr, nullptr);
    clFinish(to_device_);
    std::lock_guard<std::mutex> objects(context_->memory_objects());
    clReleaseMemObject(buffer);
  }

  // The memory object a kernel argument pointing 'offset' bytes into 'buffer' gets: the
  // buffer itself, or a sub-buffer from there to the buffer's end, made once and kept until
  // the buffer is freed (kernels may be enqueued later, by a launcher thread). NVIDIA's OpenCL
  // crashes when a sub-buffer is released while a newer one overlapping it exists, so a
  // buffer's views go together, newest first, when it is freed (its kernels have ended by
  // then). A buffer has as many as the offsets kernels were given into it.
  cl_mem argument(dc::DeviceBuffer buffer, std::size_t offset) {
    if (offset == 0) return as_mem(buffer);
    if (offset % info_.address_alignment != 0)
      throw std::runtime_error("the data starts " + std::to_string(offset) +
                               " bytes into a device allocation, and OpenCL on " + name() +
                               " can only pass offsets that are multiples of " +
                               std::to_string(info_.address_alignment) + " bytes");
    std::lock_guard<std::mutex> guard(views_mutex_);
    std::vector<View> &views = views_[as_mem(buffer)];
    for (const View &view : views)
      if (view.offset == offset) return view.memory;
    std::size_t size = 0;
    NANORT_CL_CHECK(clGetMemObjectInfo(as_mem(buffer), CL_MEM_SIZE, sizeof size, &size, nullptr));
    cl_buffer_region region{offset, size - offset};
    cl_int status = CL_SUCCESS;
    std::lock_guard<std::mutex> objects(context_->memory_objects());
    cl_mem view = clCreateSubBuffer(as_mem(buffer), CL_MEM_READ_WRITE,
                                    CL_BUFFER_CREATE_TYPE_REGION, &region, &status);
    NANORT_CL_CHECK_STATUS(status, "clCreateSubBuffer");
    views.push_back({offset, view});
    return view;
  }
  dc::CompletionPtr finished(cl_event event, std::string what) {
    return std::make_shared<EventCompletion>(event, context_->handle(), std::move(what));
  }
  cl_context context() const { return context_->handle(); }

 private:
  static cl_mem as_mem(dc::DeviceBuffer buffer) { return reinterpret_cast<cl_mem>(buffer.handle); }
  static cl_uint count(const std::vector<cl_event> &events) {
    return static_cast<cl_uint>(events.size());
  }
  static const cl_event *data(const std::vector<cl_event> &events) {
    return events.empty() ? nullptr : events.data();
  }

  struct View {
    std::size_t offset;
    cl_mem memory;
  };
  static void release_views(std::vector<View> &views) {
    for (auto it = views.rbegin(); it != views.rend(); ++it) clReleaseMemObject(it->memory);
    views.clear();
  }

  std::string name_;
  const DeviceInfo &info_;
  std::shared_ptr<Context> context_;
  cl_command_queue to_device_, to_host_;
  std::atomic<HostLockCache *> host_locks_{nullptr};
  std::mutex views_mutex_;
  std::map<cl_mem, std::vector<View>> views_;  // by buffer: its sub-buffers, oldest first
};

// ---------------------------------------------------------------------------------------------
// Device

class OpenClDevice final : public Accelerator {
 public:
  OpenClDevice(std::string name, DeviceInfo info, std::shared_ptr<Context> context,
               bool launch_thread, bool command_buffers)
      : name_(std::move(name)), info_(std::move(info)), context_(std::move(context)) {
    compute_ = make_queue();
    if (command_buffers) command_buffers_ = CommandBufferApi::load(info_.platform, info_.id);
    launcher_ = std::make_shared<KernelLauncher>(compute_, launch_thread,
                                                 &context_->memory_objects());
    to_device_ = make_queue();
    to_host_ = make_queue();
    memory_ = std::make_unique<OpenClMemory>(name_, info_, context_, to_device_, to_host_);
  }
  ~OpenClDevice() override {
    // Its thread goes; it lives on while kernels' completions do, making what they still ask
    // for (a marker, a callback) on their threads.
    launcher_->stop();
    for (cl_command_queue queue : {compute_, to_device_, to_host_}) clFinish(queue);
    recorded_.clear([&](Recorded &recorded) {
      if (recorded.buffer) command_buffers_.release(recorded.buffer);
      if (recorded.kernels)
        for (const ReplayedKernel &kernel : *recorded.kernels) clReleaseKernel(kernel.kernel);
    });
    for (auto &[key, kernel] : kernels_) clReleaseKernel(kernel);
    memory_.reset();  // before the queues it uses
    for (cl_command_queue queue : {compute_, to_device_, to_host_}) clReleaseCommandQueue(queue);
  }

  nanort_device_kind kind() const override { return NANORT_DEVICE_OPENCL; }
  const std::string &name() const override { return name_; }
  std::string description() const override {
    return info_.name + " (" + type_name(info_.type) + ", " + info_.platform_name + ", " +
           info_.version + ")";
  }
  std::string model() const override { return "opencl:" + info_.name; }
  dc::MemorySpace &memory() override { return *memory_; }

  dc::CompletionPtr launch(const Task &task, const nanort_task_impl &impl,
                           const std::vector<dc::DataAccess> &data,
                           const dc::Directory::Staging &staging) override {
    if (TaskIter::is_graph_launcher(task)) return launch_replays(task, data, staging);
    KernelLaunch &launch = launch_;  // (reused: its vectors keep their memory)
    launch.clear();
    KernelEntry &entry = prepare(task, impl, data, staging, launch);
    launch.waits = wait_list(staging.ready, memory_->context(), launcher_.get());
    for (cl_event wait : launch.waits) clRetainEvent(wait);  // (the launcher releases them)
    // The launch's shape: what the driver may refuse in one launch and take in another (the
    // work-group size, the local memory). (Before the launch is handed over: that takes it.)
    KernelEntry::Shape shape = {launch.has_local ? launch.local[0] : 0,
                                launch.has_local ? launch.local[1] : 0,
                                launch.has_local ? launch.local[2] : 0, 0};
    for (const KernelLaunch::Argument &argument : launch.arguments)
      if (argument.at == KernelLaunch::kLocal) shape[3] += argument.size;
    std::shared_ptr<KernelCompletion> done = launcher_->launch(launcher_, launch,
                                                               memory_->context());
    const bool new_shape =
        entry.launched.size() < kKeptShapes &&
        std::find(entry.launched.begin(), entry.launched.end(), shape) == entry.launched.end();
    if (!launcher_->threaded() || new_shape) {
      // A kernel's first launch in a shape is waited for: what the driver refuses for the
      // program's reasons (the work-group size, the local memory, an argument's size) fails
      // here, with the task, before any task after it is launched behind it. (Without a
      // launcher thread every launch is made by now. Past kKeptShapes shapes, a refusal fails
      // its task when its mark's end is seen, and tasks launched behind it run.)
      launcher_->drain();
      if (const std::string *why = done->not_run()) throw std::runtime_error(*why);
      if (new_shape) entry.launched.push_back(shape);  // (each shape once, the first few)
    }
    return done;
  }

  // (As a command buffer where the device has them, else as its kernels enqueued in order.)
  bool replays_as_graph() const override { return true; }

  bool completes_in_order() const override { return true; }  // one in-order compute queue
  void flush_launches() override { launcher_->seal(); }
  void quiesce() override {
    launcher_->quiesce();
    for (cl_command_queue queue : {to_device_, to_host_}) clFinish(queue);
  }

  // Host memory is locked for the whole context (Context::lock_host), where its platform can.
  const void *host_lock_scope() const override {
    return context_->locks_host() ? context_.get() : nullptr;
  }
  void register_host(void *address, std::size_t bytes) override {
    if (context_->locks_host()) context_->lock_host(address, bytes);
  }
  void unregister_host(void *address) override {
    if (context_->locks_host()) context_->unlock_host(address);
  }
  void use_host_locks(HostLockCache *locks) override {
    if (context_->locks_host()) memory_->use_host_locks(locks);
  }

  std::unique_ptr<KernelHold> hold_kernels() override {
    cl_int status = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(memory_->context(), &status);
    NANORT_CL_CHECK_STATUS(status, "clCreateUserEvent");
    auto hold = std::make_unique<UserEventHold>(gate);  // sets it complete however this ends
    launcher_->hold_behind(gate);
    return hold;
  }

 private:
  struct KernelEntry;
  // A taskiter's replays as recorded: its kernels, each a kernel object of its own with its
  // arguments set (shared with the launches handed over, which outlive a move of the entry),
  // and where the device has them, a command buffer of them.
  struct Recorded {
    cl_command_buffer_khr buffer = nullptr;
    std::shared_ptr<std::vector<ReplayedKernel>> kernels;
    ReplaySignature signature;  // of its kernels, as recorded: shapes and argument values
    ReplaySignature shape;      // the kernels, their launch shapes and arguments' sizes alone
    bool made() const { return kernels && !kernels->empty(); }
  };
  // Fills 'launch' for the task's kernel (all but its waits) and returns the kernel's entry.
  // 'sorted_data': a graph launch's data (many disjoint spans in address order).
  KernelEntry &prepare(const Task &task, const nanort_task_impl &impl,
                       const std::vector<dc::DataAccess> &data,
                       const dc::Directory::Staging &staging, KernelLaunch &launch,
                       bool sorted_data = false) {
    if (!impl.kernel_name || !*impl.kernel_name || !impl.module)
      throw std::runtime_error("the OpenCL implementation names no kernel or no module");
    const char *const kernel_name = impl.kernel_name;
    KernelEntry &entry = find_kernel(*impl.module, kernel_name);
    launch.kernel = entry.kernel;
    launch.kernel_name = kernel_name;
    set_arguments(entry, task, impl, data, staging, launch, sorted_data);
    if (task.ndrange_dims == 0)
      throw std::runtime_error("kernel '" + std::string(kernel_name) + "' needs an ndrange");
    launch.dims = static_cast<cl_uint>(task.ndrange_dims);
    launch.has_local = true;
    for (int d = 0; d < 3; ++d) launch.local[d] = launch.global[d] = 1;
    for (int d = 0; d < task.ndrange_dims; ++d) {
      launch.local[d] = task.ndrange_local[d];
      launch.has_local = launch.has_local && launch.local[d] > 0;
    }
    for (int d = 0; d < task.ndrange_dims; ++d) {
      std::size_t &global = launch.global[d];
      global = task.ndrange_global[d];
      if (launch.has_local)
        global = (global + launch.local[d] - 1) / launch.local[d] * launch.local[d];  // as OmpSs
    }
    return entry;
  }

  // A taskiter's replays ('task' launches them: task.replay's tasks, their data among 'data'):
  // the replayed kernels recorded in order, each a kernel object of its own with its arguments
  // set once, and where the device has cl_khr_command_buffer (NANORT_TASKITER_GRAPH=all), a
  // command buffer of them, finalized once. Each replay then is one enqueue of the command
  // buffer, or else one enqueue of each kernel, in order on the in-order queue: no argument
  // set, no task made. When only argument values changed (an update's values, a buffer moved),
  // the kernel objects take the new ones; anything else, or a command buffer, records again. A
  // later recording of the same kernels and arguments takes over an earlier one's.
  dc::CompletionPtr launch_replays(const Task &task, const std::vector<dc::DataAccess> &data,
                                   const dc::Directory::Staging &staging) {
    const std::vector<Task *> &tasks = task.replay->tasks();
    const std::uint64_t key = task.replay->id();
    std::vector<KernelLaunch> kernels(tasks.size());
    ReplaySignature signature, shape;
    const auto add = [&](const void *bytes, std::size_t n) {
      append_signature(signature, bytes, n);
      append_signature(shape, bytes, n);
    };
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      KernelLaunch &kernel = kernels[k];
      prepare(*tasks[k], *tasks[k]->impl, data, staging, kernel, true);
      add(&kernel.kernel, sizeof kernel.kernel);
      add(&kernel.dims, sizeof kernel.dims);
      add(kernel.global, sizeof kernel.global);
      add(kernel.local, sizeof kernel.local);
      add(&kernel.has_local, sizeof kernel.has_local);
      for (const KernelLaunch::Argument &argument : kernel.arguments) {
        const bool local = argument.at == KernelLaunch::kLocal;
        add(&argument.index, sizeof argument.index);
        add(&argument.size, sizeof argument.size);
        add(&local, sizeof local);
        if (!local)
          append_signature(signature, kernel.values.data() + argument.at, argument.size);
      }
    }
    Recorded &recorded =
        recorded_.entry(key, signature, [&](Recorded &oldest) { release_recorded(oldest); });
    const bool same = recorded.made() && recorded.signature == signature;
    bool recorded_now = false;
    if (!same && recorded.made() && !recorded.buffer && recorded.shape == shape) {
      launcher_->drain();  // (the launcher has enqueued the kernels with their old values)
      std::lock_guard<std::mutex> objects(context_->memory_objects());
      recorded.signature.clear();  // (until every argument is set: none to take over)
      set_arguments(*recorded.kernels, kernels);
      recorded.signature = std::move(signature);
      task.replay->graph_updates.fetch_add(1, std::memory_order_relaxed);
    } else if (!same) {
      Recorded made = record_replays(kernels);
      release_recorded(recorded);
      recorded = std::move(made);
      recorded.signature = std::move(signature);
      recorded.shape = std::move(shape);
      task.replay->graph_captures.fetch_add(1, std::memory_order_relaxed);
      recorded_now = true;
    }
    KernelLaunch &launch = launch_;
    launch.clear();
    launch.kernel_name = tasks.front()->impl->kernel_name;
    if (recorded.buffer) {
      launch.command_buffer = recorded.buffer;
      launch.command_buffers = &command_buffers_;
    } else {
      launch.replayed = recorded.kernels;
    }
    launch.launches = 1;  // the replays it stands for (Runtime::replay)
    if (task.args_size == sizeof launch.launches)
      std::memcpy(&launch.launches, task.args, sizeof launch.launches);
    launch.waits = wait_list(staging.ready, memory_->context(), launcher_.get());
    for (cl_event wait : launch.waits) clRetainEvent(wait);  // (the launcher releases them)
    std::shared_ptr<KernelCompletion> done = launcher_->launch(launcher_, launch,
                                                               memory_->context());
    if (recorded_now || !launcher_->threaded()) {  // (a new recording's first launch)
      launcher_->drain();
      if (const std::string *why = done->not_run()) throw std::runtime_error(*why);
    }
    return done;
  }

  // The recorded kernel objects take the arguments of 'kernels' (the same kernels and shapes,
  // so the same layout of values) that differ from those they have, and every memory object
  // (a freed buffer's handle may come back as another buffer's).
  static void set_arguments(std::vector<ReplayedKernel> &own,
                            const std::vector<KernelLaunch> &kernels) {
    for (std::size_t k = 0; k < kernels.size(); ++k)
      for (const KernelLaunch::Argument &argument : kernels[k].arguments) {
        if (argument.at == KernelLaunch::kLocal) continue;  // (its size is in the shape)
        const unsigned char *value = kernels[k].values.data() + argument.at;
        unsigned char *had = own[k].values.data() + argument.at;
        if (!argument.memory && std::memcmp(value, had, argument.size) == 0) continue;
        NANORT_CL_CHECK(clSetKernelArg(own[k].kernel, argument.index, argument.size, value));
        std::memcpy(had, value, argument.size);
      }
  }

  // Each kernel gets a kernel object of its own, its arguments set once: an implementation
  // that reads a kernel's arguments when a command buffer runs rather than when the command
  // is recorded (PoCL 3.1 does) then still runs each command with its own. A command buffer
  // the driver refuses to record leaves the kernels to be enqueued one by one (said once).
  Recorded record_replays(const std::vector<KernelLaunch> &kernels) {
    Recorded made;
    made.kernels = std::make_shared<std::vector<ReplayedKernel>>();
    std::vector<ReplayedKernel> &own = *made.kernels;
    cl_int status = CL_SUCCESS;
    const auto fail = [&](const char *call) {
      for (const ReplayedKernel &kernel : own) clReleaseKernel(kernel.kernel);  // (not handed over)
      throw OpenClError(status, "recording a taskiter's " + std::to_string(kernels.size()) +
                                    " kernels failed: " + call + " returned " +
                                    error_name(status));
    };
    for (const KernelLaunch &kernel : kernels) {
      cl_program program = nullptr;
      status = clGetKernelInfo(kernel.kernel, CL_KERNEL_PROGRAM, sizeof program, &program, nullptr);
      if (status != CL_SUCCESS) fail("clGetKernelInfo");
      ReplayedKernel one;
      one.kernel = clCreateKernel(program, kernel.kernel_name, &status);
      if (status != CL_SUCCESS) fail("clCreateKernel");
      one.name = kernel.kernel_name;
      one.values = kernel.values;
      one.dims = kernel.dims;
      std::copy(kernel.global, kernel.global + 3, one.global);
      std::copy(kernel.local, kernel.local + 3, one.local);
      one.has_local = kernel.has_local;
      own.push_back(std::move(one));
      for (const KernelLaunch::Argument &argument : kernel.arguments) {
        status = clSetKernelArg(own.back().kernel, argument.index, argument.size,
                                argument.at == KernelLaunch::kLocal
                                    ? nullptr
                                    : static_cast<const void *>(kernel.values.data() + argument.at));
        if (status != CL_SUCCESS) fail("clSetKernelArg");
      }
    }
    // (A device whose driver refused one is not asked again.)
    if (command_buffers_.usable() && !command_buffer_refused_) {
      std::string why;
      made.buffer = record_command_buffer(own, why);
      if (!made.buffer) {
        command_buffer_refused_ = true;
        std::fprintf(stderr,
                     "nanort: warning: %s: %s; its taskiter replays enqueue their kernels one "
                     "by one instead\n",
                     name_.c_str(), why.c_str());
      }
    }
    return made;
  }

  // The kernels as one command buffer, each command after the one before; null (and 'why')
  // when the driver refuses.
  cl_command_buffer_khr record_command_buffer(const std::vector<ReplayedKernel> &kernels,
                                              std::string &why) {
    const CommandBufferApi &api = command_buffers_;
    const cl_command_buffer_properties_khr properties[] = {
        CL_COMMAND_BUFFER_FLAGS_KHR,
        api.simultaneous_use ? cl_command_buffer_properties_khr{CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR}
                             : cl_command_buffer_properties_khr{0},
        0};
    cl_int status = CL_SUCCESS;
    cl_command_buffer_khr buffer = api.create(1, &compute_, properties, &status);
    const auto refused = [&](const char *call) -> cl_command_buffer_khr {
      why = "recording the command buffer of a taskiter's " + std::to_string(kernels.size()) +
            " kernels failed: " + call + " returned " + error_name(status);
      if (buffer) api.release(buffer);
      return nullptr;
    };
    if (status != CL_SUCCESS) {
      buffer = nullptr;
      return refused("clCreateCommandBufferKHR");
    }
    cl_sync_point_khr before = 0;
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const ReplayedKernel &kernel = kernels[k];
      cl_sync_point_khr point = 0;
      status = api.ndrange(buffer, nullptr, nullptr, kernel.kernel, kernel.dims, nullptr,
                           kernel.global, kernel.has_local ? kernel.local : nullptr, k ? 1 : 0,
                           k ? &before : nullptr, &point, nullptr);
      if (status != CL_SUCCESS) return refused("clCommandNDRangeKernelKHR");
      before = point;
    }
    status = api.finalize(buffer);
    if (status != CL_SUCCESS) return refused("clFinalizeCommandBufferKHR");
    return buffer;
  }

  // (Once the launcher has enqueued what names it; a command buffer once its enqueues have
  // ended too. Kernel objects live on in the commands enqueued with them.)
  void release_recorded(Recorded &recorded) {
    if (!recorded.buffer && !recorded.made()) return;
    launcher_->drain();
    if (recorded.buffer) {
      clFinish(compute_);
      command_buffers_.release(recorded.buffer);
    }
    if (recorded.kernels)
      for (const ReplayedKernel &kernel : *recorded.kernels) clReleaseKernel(kernel.kernel);
    recorded.buffer = nullptr;
    recorded.kernels.reset();
  }

  cl_command_queue make_queue() {
    cl_int status = CL_SUCCESS;
    cl_command_queue queue = clCreateCommandQueue(context_->handle(), info_.id, 0, &status);
    NANORT_CL_CHECK_STATUS(status, "clCreateCommandQueue");
    return queue;
  }

  struct KernelEntry {
    cl_kernel kernel = nullptr;
    cl_uint arguments = 0;
    const char *name = nullptr;
    // Work-group size (0s: the driver's choice) and local memory bytes: the launches'
    // shapes the driver took (the first kKeptShapes).
    using Shape = std::array<std::size_t, 4>;
    std::vector<Shape> launched;
  };
  static constexpr std::size_t kKeptShapes = 32;

  // The kernel of a task site, found by the addresses of its module and name (both static)
  // after the first launch, so that a launch compares no strings and takes no lock.
  KernelEntry &find_kernel(const nanort_kernel_module &module, const char *kernel_name) {
    const auto key = std::make_pair(&module, kernel_name);
    if (auto it = by_site_.find(key); it != by_site_.end()) return it->second;
    KernelEntry entry;
    entry.kernel = find_kernel_by_name(module, kernel_name);
    entry.arguments = argument_counts_.at(entry.kernel);
    entry.name = kernel_name;
    return by_site_.emplace(key, entry).first->second;
  }

  cl_kernel find_kernel_by_name(const nanort_kernel_module &module,
                                const std::string &kernel_name) {
    cl_program program = nullptr;
    try {
      program = context_->program(module);
    } catch (const std::exception &e) {
      throw std::runtime_error("kernel '" + kernel_name + "': " + e.what());
    }
    auto key = std::make_pair(program, kernel_name);
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second;
    cl_int status = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, kernel_name.c_str(), &status);
    if (status == CL_INVALID_KERNEL_NAME)
      throw std::runtime_error("no kernel named '" + kernel_name + "' in " +
                               (module.origin ? module.origin : "the embedded OpenCL source"));
    NANORT_CL_CHECK_STATUS(status, "clCreateKernel");
    kernels_.emplace(key, kernel);
    cl_uint arguments = 0;
    NANORT_CL_CHECK(clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof arguments, &arguments,
                                    nullptr));
    argument_counts_[kernel] = arguments;
    return kernel;
  }

  // The kernel's arguments from the task's argument block, into 'launch'.
  void set_arguments(const KernelEntry &entry, const Task &task, const nanort_task_impl &impl,
                     const std::vector<dc::DataAccess> &data,
                     const dc::Directory::Staging &staging, KernelLaunch &launch,
                     bool sorted_data) {
    if (entry.arguments != impl.num_kernel_args)
      throw std::runtime_error("kernel '" + std::string(entry.name) + "' takes " +
                               std::to_string(entry.arguments) + " argument(s), the task passes " +
                               std::to_string(impl.num_kernel_args));
    for (cl_uint i = 0; i < impl.num_kernel_args; ++i) {
      const nanort_kernel_arg &arg = impl.kernel_args[i];
      // Named in messages only: made when one is needed.
      auto which = [&] {
        return "argument " + std::to_string(i) + " of kernel '" + std::string(entry.name) + "'";
      };
      if (arg.kind != NANORT_ARG_LOCAL && arg.offset + arg.size > task.args_size)
        throw std::runtime_error(which() + " lies outside the task's argument block");
      if (arg.kind == NANORT_ARG_VALUE) {
        launch.add_value(i, task.args + arg.offset, arg.size);
      } else if (arg.kind == NANORT_ARG_LOCAL) {
        const std::size_t bytes = arg.size ? arg.size : task.shmem_bytes;
        if (bytes == 0)
          throw std::runtime_error(which() + " is local memory of 0 bytes (give shmem)");
        launch.add_local(i, bytes);
      } else if (arg.kind == NANORT_ARG_BUFFER) {
        if (arg.size != sizeof(void *))
          throw std::runtime_error(which() + " is a buffer but not pointer-sized in the block");
        void *pointer = nullptr;
        std::memcpy(&pointer, task.args + arg.offset, sizeof pointer);
        cl_mem memory = nullptr;
        if (pointer) {
          // (A graph launch's data, searched by halves.)
          const dc::Placement place =
              sorted_data ? sorted_device_place(which, pointer, data, staging)
                          : device_place(which, pointer, data, staging);
          memory = memory_->argument(place.buffer, place.offset);
        }
        launch.add_memory(i, memory);  // (a null cl_mem: a null pointer)
      } else {
        throw std::runtime_error(which() + " has an unknown kind " + std::to_string(arg.kind));
      }
    }
  }

  std::string name_;
  DeviceInfo info_;
  std::shared_ptr<Context> context_;
  cl_command_queue compute_ = nullptr, to_device_ = nullptr, to_host_ = nullptr;
  // Enqueues on compute_; shared with the kernels' completions.
  std::shared_ptr<KernelLauncher> launcher_;
  // Taskiter replays (as command buffers where the device has cl_khr_command_buffer and
  // NANORT_TASKITER_GRAPH=all asks for them), by recording (manager thread only), oldest first.
  CommandBufferApi command_buffers_;
  bool command_buffer_refused_ = false;  // (said once)
  ReplayCache<Recorded> recorded_{16};
  std::unique_ptr<OpenClMemory> memory_;
  // Manager thread only.
  KernelLaunch launch_;
  std::map<std::pair<cl_program, std::string>, cl_kernel> kernels_;
  std::map<cl_kernel, cl_uint> argument_counts_;
  std::map<std::pair<const nanort_kernel_module *, const char *>, KernelEntry> by_site_;
};

}  // namespace

std::vector<std::unique_ptr<Accelerator>> open_devices(const std::vector<DeviceInfo> &devices,
                                                       const std::vector<std::size_t> &chosen,
                                                       ProgramCache &cache,
                                                       bool context_per_device,
                                                       bool launch_thread,
                                                       bool command_buffers) {
  std::vector<std::unique_ptr<Accelerator>> opened;
  // The groups that share a context: each platform's chosen devices, or each device alone.
  std::vector<std::vector<std::size_t>> groups;
  std::map<cl_platform_id, std::size_t> group_of_platform;
  for (std::size_t index : chosen) {
    if (context_per_device) {
      groups.push_back({index});
      continue;
    }
    auto [it, added] = group_of_platform.emplace(devices[index].platform, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(index);
  }
  for (const std::vector<std::size_t> &group : groups) {
    std::vector<cl_device_id> ids;
    for (std::size_t index : group) ids.push_back(devices[index].id);
    // (NVIDIA's OpenCL: every device a GPU, checked on the H100 and H200 machines.)
    const bool locks_host =
        devices[group.front()].platform_name.find("NVIDIA") != std::string::npos &&
        std::all_of(group.begin(), group.end(),
                    [&](std::size_t index) { return devices[index].type & CL_DEVICE_TYPE_GPU; });
    auto context =
        std::make_shared<Context>(devices[group.front()].platform, ids, cache, locks_host);
    for (std::size_t index : group)
      opened.push_back(std::make_unique<OpenClDevice>("opencl" + std::to_string(opened.size()),
                                                      devices[index], context, launch_thread,
                                                      command_buffers));
  }
  return opened;
}

}  // namespace nanort::rt::opencl
