#include "cuda_device.hpp"

#include <nanort/dc/memory_space.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "../device/host_lock_cache.hpp"
#include "../device/replay_cache.hpp"
#include "../small_vector.hpp"
#include "../spin_lock.hpp"
#include "../task.hpp"
#include "../taskiter.hpp"
#include "cuda_api.hpp"
#include "cuda_backend.hpp"
#include "cuda_launcher.hpp"

namespace nanort::rt::cuda {

namespace {

// Makes 'context' current for a scope, and puts back the thread's own on leaving it.
class KeepCurrent {
 public:
  KeepCurrent(const Driver &cu, CUcontext context) : cu_(cu) {
    if (cu.cuCtxGetCurrent(&before_) != CUDA_SUCCESS) before_ = nullptr;
    make_current(cu, context);
  }
  ~KeepCurrent() { set_current(cu_, before_); }
  KeepCurrent(const KeepCurrent &) = delete;
  KeepCurrent &operator=(const KeepCurrent &) = delete;

 private:
  const Driver &cu_;
  CUcontext before_ = nullptr;
};

// Accelerator::hold_kernels: a host function on each kernel stream waits until the hold goes
// (streams have nothing like OpenCL's user events). Each function keeps the gate alive: it
// may run after the hold is gone, since the driver may run host functions one at a time.
struct HostGate {
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;
  static void wait(void *arg) {  // on the driver's thread: no CUDA call in here
    auto *gate = static_cast<std::shared_ptr<HostGate> *>(arg);
    {
      std::unique_lock<std::mutex> lock((*gate)->mutex);
      (*gate)->opened.wait(lock, [&] { return (*gate)->open; });
    }
    delete gate;
  }
};
class HostGateHold final : public KernelHold {
 public:
  explicit HostGateHold(std::shared_ptr<HostGate> gate) : gate_(std::move(gate)) {}
  ~HostGateHold() override {
    std::lock_guard<std::mutex> lock(gate_->mutex);
    gate_->open = true;
    gate_->opened.notify_all();
  }

 private:
  std::shared_ptr<HostGate> gate_;
};

// NANORT_CUDA_KERNEL_STREAMS: 2 (default) or 1 (validated with the rest of the environment).
int kernel_streams_from_environment() {
  const char *text = std::getenv("NANORT_CUDA_KERNEL_STREAMS");
  return text && std::string(text) == "1" ? 1 : 2;
}

// NANORT_CUDA_COPY_ALIGN: page (default) or off (validated with the rest of the environment).
bool copy_align_from_environment() {
  const char *text = std::getenv("NANORT_CUDA_COPY_ALIGN");
  return !(text && std::string(text) == "off");
}

// Makes a copy's stream wait for 'after': events of the driver are waited for on the device,
// other completions (another backend's) on the host.
void wait_for(const Driver &cu, CUstream stream, dc::Dependencies after) {
  for (const dc::CompletionPtr &completion : after) {
    if (auto *kernel = dynamic_cast<KernelCompletion *>(completion.get())) {
      if (kernel->poll()) continue;
      if (CUevent event = kernel->event()) NANORT_CU_CHECK(cuStreamWaitEvent(stream, event, 0));
      continue;
    }
    if (completion->poll()) continue;
    if (auto *event = dynamic_cast<EventCompletion *>(completion.get()))
      NANORT_CU_CHECK(cuStreamWaitEvent(stream, event->event(), 0));
    else
      completion->wait();
  }
}

// What a kernel launched on stream 'stream' of 'launcher' waits for: kernels of its other
// stream by their mark, other GPUs' kernels and copies by their events; other completions
// (another backend's) are waited for here, on the host. A kernel launched earlier on the same
// stream needs no wait at all.
void add_waits(const KernelLauncher &launcher, int stream, dc::Dependencies after,
               std::vector<KernelLaunch::Wait> &waits) {
  for (const dc::CompletionPtr &completion : after) {
    if (auto *kernel = dynamic_cast<KernelCompletion *>(completion.get())) {
      if (kernel->poll()) continue;
      if (kernel->launcher() == &launcher) {
        if (kernel->stream_index() != stream) waits.push_back({nullptr, kernel->mark(), nullptr});
      } else if (CUevent event = kernel->event()) {
        waits.push_back({event, kernel->mark(), nullptr});
      }
      continue;
    }
    if (completion->poll()) continue;
    if (auto *event = dynamic_cast<EventCompletion *>(completion.get()))
      waits.push_back({event->event(), nullptr, completion});
    else
      completion->wait();
  }
}

// ---------------------------------------------------------------------------------------------
// Memory

class CudaMemory final : public dc::MemorySpace {
 public:
  CudaMemory(const Driver &cu, std::string name, const DeviceInfo &info, CUcontext context,
             CUstream to_device, CUstream to_host, CUstream from_peers)
      : cu_(cu), name_(std::move(name)), info_(info), context_(context), to_device_(to_device),
        to_host_(to_host), from_peers_(from_peers),
        events_(std::make_shared<EventPool>(cu, context)) {}

  std::string name() const override { return name_ + " (" + info_.name + ")"; }
  std::size_t memory_size() const override { return info_.memory; }
  bool wants_staging() const override { return true; }

  dc::DeviceBuffer allocate(std::size_t bytes) override {
    const Driver &cu = cu_;
    make_current(cu, context_);
    CUdeviceptr pointer = 0;
    const CUresult status = cu.cuMemAlloc(&pointer, bytes ? bytes : 1);
    if (status == CUDA_ERROR_OUT_OF_MEMORY) return {};
    if (status != CUDA_SUCCESS) throw_error(status, "cuMemAlloc(&pointer, bytes)", __FILE__, __LINE__);
    return dc::DeviceBuffer{static_cast<std::uintptr_t>(pointer)};
  }
  void free(dc::DeviceBuffer buffer) override {
    set_current(cu_, context_);
    cu_.cuMemFree(static_cast<CUdeviceptr>(buffer.handle));
  }

  dc::CompletionPtr write(dc::DeviceBuffer target, std::size_t offset, const void *source,
                          std::size_t bytes, dc::Dependencies after) override {
    const Driver &cu = cu_;
    make_current(cu, context_);
    wait_for(cu, to_device_, after);
    try {
      for_each_piece(source, bytes, [&](std::size_t at, std::size_t n) {
        NANORT_CU_CHECK(cuMemcpyHtoDAsync(target.handle + offset + at,
                                          static_cast<const char *>(source) + at, n, to_device_));
      });
    } catch (...) {
      cu.cuStreamSynchronize(to_device_);  // (the pieces enqueued before the failed one)
      throw;
    }
    return finished(to_device_, "copy to " + name_);
  }
  dc::CompletionPtr read(dc::DeviceBuffer source, std::size_t offset, void *target,
                         std::size_t bytes, dc::Dependencies after) override {
    const Driver &cu = cu_;
    make_current(cu, context_);
    wait_for(cu, to_host_, after);
    try {
      for_each_piece(target, bytes, [&](std::size_t at, std::size_t n) {
        NANORT_CU_CHECK(cuMemcpyDtoHAsync(static_cast<char *>(target) + at,
                                          source.handle + offset + at, n, to_host_));
      });
    } catch (...) {
      cu.cuStreamSynchronize(to_host_);  // (no piece writes host memory after the error)
      throw;
    }
    return finished(to_host_, "copy from " + name_);
  }
  // A piece of 1 MiB or more whose host bytes start inside a page (malloc puts an array 16
  // bytes past one) goes as two, the bytes up to the next page first, so that the rest starts
  // at a page. We take it that the copy engine cuts a copy into requests from its start, so
  // that each request of one that starts off a cache line touches a line more of host memory
  // (and writes part of one), and where two GPUs copy both ways at once host memory is the
  // limit (docs/results.md, "SAXPY on two GPUs and where host memory starts").
  template <class Copy>
  void for_each_piece(const void *host, std::size_t bytes, Copy &&copy) {
    HostLockCache::for_each_piece(host_locks_.load(std::memory_order_acquire), host, bytes,
                                  std::forward<Copy>(copy),
                                  align_copies_ ? std::size_t(1) << 20 : 0);
  }
  dc::CompletionPtr copy(dc::DeviceBuffer source, std::size_t source_offset,
                         dc::DeviceBuffer target, std::size_t target_offset, std::size_t bytes,
                         dc::Dependencies after) override {
    const Driver &cu = cu_;
    make_current(cu, context_);
    wait_for(cu, to_device_, after);
    NANORT_CU_CHECK(cuMemcpyDtoDAsync(target.handle + target_offset, source.handle + source_offset,
                                      bytes, to_device_));
    return finished(to_device_, "copy inside " + name_);
  }

  bool can_copy_from(const dc::MemorySpace &other) const override {
    auto *peer = dynamic_cast<const CudaMemory *>(&other);
    return peer && std::find(peers_.begin(), peers_.end(), peer->context_) != peers_.end();
  }
  dc::CompletionPtr copy_from(dc::MemorySpace &other, dc::DeviceBuffer source,
                              std::size_t source_offset, dc::DeviceBuffer target,
                              std::size_t target_offset, std::size_t bytes,
                              dc::Dependencies after) override {
    if (!can_copy_from(other))
      return MemorySpace::copy_from(other, source, source_offset, target, target_offset, bytes,
                                    after);
    const Driver &cu = cu_;
    auto &peer = static_cast<CudaMemory &>(other);
    make_current(cu, context_);
    // A stream of their own: such a copy may wait for a kernel still running on the peer
    // (a task launched behind it), and copies from the host must not queue behind it.
    wait_for(cu, from_peers_, after);
    NANORT_CU_CHECK(cuMemcpyPeerAsync(target.handle + target_offset, context_,
                                      source.handle + source_offset, peer.context_, bytes,
                                      from_peers_));
    return finished(from_peers_, "copy from " + peer.name_ + " to " + name_);
  }

  dc::PinnedBuffer allocate_pinned(std::size_t bytes) override {
    make_current(cu_, context_);
    void *host = nullptr;
    if (cu_.cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) return {};
    return dc::PinnedBuffer{host, reinterpret_cast<std::uintptr_t>(host), bytes};
  }
  void free_pinned(dc::PinnedBuffer pinned) override {
    set_current(cu_, context_);
    cu_.cuStreamSynchronize(to_device_);
    cu_.cuStreamSynchronize(to_host_);
    cu_.cuMemFreeHost(pinned.host);
  }

  bool is_page_locked(const void *address, std::size_t bytes) override {
    // What the runtime locked by itself, or is about to, it knows without asking the driver;
    // the rest is asked of the driver (memory the program locked).
    HostLockCache *locks = host_locks_.load(std::memory_order_acquire);
    if (locks) {
      const HostLockCache::Coverage coverage = locks->coverage(address, bytes);
      if (coverage != HostLockCache::Coverage::unknown)
        return coverage == HostLockCache::Coverage::locked;
    }
    return driver_says_locked(address, bytes);
  }
  void staged(const void *address, std::size_t bytes) override {
    if (HostLockCache *locks = host_locks_.load(std::memory_order_acquire))
      locks->moved(address, bytes);  // (counted towards being locked)
  }
  bool locks_before_copy(const void *address, std::size_t bytes) override {
    HostLockCache *locks = host_locks_.load(std::memory_order_acquire);
    return locks && locks->wants_lock_now(address, bytes);
  }
  bool lock_for_copy(const void *address, std::size_t bytes) override {
    HostLockCache *locks = host_locks_.load(std::memory_order_acquire);
    return locks && locks->lock_now(address, bytes);
  }
  void use_host_locks(HostLockCache *locks) { host_locks_.store(locks, std::memory_order_release); }

  bool driver_says_locked(const void *address, std::size_t bytes) {
    // cuPointerGetAttributes (unlike the singular form) answers "unknown" for ordinary memory
    // instead of failing. Both ends in one locked range (one buffer id): an asynchronous copy
    // across two registrations, even touching ones, fails (CUDA_ERROR_INVALID_VALUE).
    const Driver &cu = cu_;
    make_current(cu, context_);
    unsigned long long buffer[2] = {0, 0};
    int at = 0;
    for (const void *end : {address, static_cast<const void *>(
                                         static_cast<const char *>(address) + bytes - 1)}) {
      unsigned type = 0;
      CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                          CU_POINTER_ATTRIBUTE_BUFFER_ID};
      void *values[] = {&type, &buffer[at++]};
      if (cu.cuPointerGetAttributes(2, attributes, values,
                                    reinterpret_cast<CUdeviceptr>(end)) != CUDA_SUCCESS ||
          type != CU_MEMORYTYPE_HOST)
        return false;
    }
    return buffer[0] == buffer[1];
  }

  void add_peer(CUcontext peer) { peers_.push_back(peer); }
  CUcontext context() const { return context_; }

  dc::CompletionPtr finished(CUstream stream, std::string what) {
    return std::make_shared<EventCompletion>(cu_, events_, events_->record(stream), std::move(what));
  }
  const std::shared_ptr<EventPool> &events() const { return events_; }

 private:
  const Driver &cu_;
  std::string name_;
  const DeviceInfo &info_;
  CUcontext context_;
  CUstream to_device_, to_host_, from_peers_;
  std::vector<CUcontext> peers_;  // contexts whose memory this one reads directly
  std::shared_ptr<EventPool> events_;
  std::atomic<HostLockCache *> host_locks_{nullptr};
  const bool align_copies_ = copy_align_from_environment();  // NANORT_CUDA_COPY_ALIGN
};

// ---------------------------------------------------------------------------------------------
// Device

class CudaDevice final : public Accelerator {
 public:
  CudaDevice(const Driver &cu, std::string name, DeviceInfo info, bool launch_thread)
      : cu_(cu), name_(std::move(name)), info_(std::move(info)) {
    NANORT_CU_CHECK(cuDeviceGet(&device_, info_.ordinal));
    NANORT_CU_CHECK(cuDevicePrimaryCtxRetain(&context_, device_));
    make_current(cu, context_);
    kernel_streams_ = kernel_streams_from_environment();
    for (CUstream *stream : {&compute_[0], &compute_[1], &to_device_, &to_host_, &from_peers_})
      NANORT_CU_CHECK(cuStreamCreate(stream, CU_STREAM_NON_BLOCKING));
    memory_ = std::make_unique<CudaMemory>(cu, name_, info_, context_, to_device_, to_host_,
                                           from_peers_);
    launcher_ = std::make_shared<KernelLauncher>(
        cu, context_, memory_->events(), std::vector<CUstream>{compute_[0], compute_[1]},
        launch_thread);
  }
  ~CudaDevice() override {
    // Its thread goes; it lives on while kernels' completions do, recording what they still
    // ask for on their threads.
    launcher_->stop();
    set_current(cu_, context_);
    for (CUstream stream : {compute_[0], compute_[1], to_device_, to_host_, from_peers_})
      cu_.cuStreamSynchronize(stream);
    // With memory_, the last owners of the event pool: gone before the context.
    launcher_.reset();
    memory_.reset();
    for (auto &[module, loaded] : modules_)
      if (loaded.module) cu_.cuModuleUnload(loaded.module);
    graphs_.clear([&](ReplayGraph &graph) { graph.release(cu_); });
    for (CUstream stream : {compute_[0], compute_[1], to_device_, to_host_, from_peers_})
      cu_.cuStreamDestroy(stream);
    if (capture_) cu_.cuStreamDestroy(capture_);
    cu_.cuDevicePrimaryCtxRelease(device_);
  }

  nanort_device_kind kind() const override { return NANORT_DEVICE_CUDA; }
  const std::string &name() const override { return name_; }
  std::string description() const override {
    return info_.name + " (compute capability " + std::to_string(info_.major) + "." +
           std::to_string(info_.minor) + ", " + std::to_string(info_.multiprocessors) +
           " SMs, PCI " + info_.pci_bus_id + ")";
  }
  std::string model() const override { return "cuda:" + info_.name; }
  dc::MemorySpace &memory() override { return *memory_; }
  CudaMemory &cuda_memory() { return *memory_; }
  // A kernel launched behind unfinished predecessors runs after every kernel launched before
  // it (launch() sees to it with two kernel streams).
  bool completes_in_order() const override { return true; }
  void flush_launches() override { launcher_->seal(); }
  void quiesce() override { launcher_->stop(); }
  bool replays_as_graph() const override { return true; }
  std::string pci_bus_id() const override { return info_.pci_bus_id; }
  std::unique_ptr<KernelHold> hold_kernels() override {
    const Driver &cu = cu_;
    make_current(cu, context_);
    auto gate = std::make_shared<HostGate>();
    auto hold = std::make_unique<HostGateHold>(gate);  // opens it however this ends
    // Where the launches are made: the kernels handed over before it run first, their marks
    // ended before the gate (their ends are seen while it holds).
    launcher_->seal();
    launcher_->run_in_order([&] {
      for (CUstream stream : compute_) {
        auto *arg = new std::shared_ptr<HostGate>(gate);
        const CUresult status = cu.cuLaunchHostFunc(stream, &HostGate::wait, arg);
        if (status != CUDA_SUCCESS) {
          delete arg;
          throw_error(status, "cuLaunchHostFunc", __FILE__, __LINE__);
        }
      }
    });
    return hold;
  }
  // Portable: one registration serves every context, so the runtime asks one GPU.
  // (Both may run on a thread of the program, inside its free: its current context stays.)
  void register_host(void *address, std::size_t bytes) override {
    const Driver &cu = cu_;
    const KeepCurrent keep(cu, context_);
    const CUresult status = cu.cuMemHostRegister(address, bytes, CU_MEMHOSTREGISTER_PORTABLE);
    if (status == CUDA_SUCCESS) return;
    const std::string what = "page-locking " + std::to_string(bytes) + " bytes of host memory "
                             "failed with " + error_text(status);
    if (status == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED || status == CUDA_ERROR_INVALID_VALUE)
      throw std::invalid_argument(what);
    throw CudaError(status, what);
  }
  void unregister_host(void *address) override {
    const Driver &cu = cu_;
    const KeepCurrent keep(cu, context_);
    const CUresult status = cu.cuMemHostUnregister(address);
    if (status == CUDA_SUCCESS) return;
    const std::string what = "unlocking host memory failed with " + error_text(status);
    if (status == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED || status == CUDA_ERROR_INVALID_VALUE)
      throw std::invalid_argument(what + " (not an address nanort_host_register locked)");
    throw CudaError(status, what);
  }
  void use_host_locks(HostLockCache *locks) override { memory_->use_host_locks(locks); }
  const void *host_lock_scope() const override {
    static const char every_cuda_gpu = 0;  // (portable registrations)
    return &every_cuda_gpu;
  }
  bool is_fatal(const std::exception &error) const override {
    auto *cuda_error = dynamic_cast<const CudaError *>(&error);
    return cuda_error && cuda_error->sticky();
  }

  dc::CompletionPtr launch(const Task &task, const nanort_task_impl &impl,
                           const std::vector<dc::DataAccess> &data,
                           const dc::Directory::Staging &staging) override {
    make_current(cu_, context_);
    if (TaskIter::is_graph_launcher(task)) return launch_graph(task, data, staging);
    KernelLaunch &launch = launch_;  // (reused: its vectors keep their memory)
    launch.clear();
    Kernel &kernel = prepare(task, impl, data, staging, launch);
    // The kernel stream. Kernels of tasks take the two in turn, so that one kernel's start
    // overlaps the last, partly empty wave of the one before (a long tail where threads' work
    // varies). A task launched behind unfinished predecessors waits for their kernels (their
    // completions are among staging.ready): on the stream of this GPU's ones when they all
    // lie on one (stream order, no event to record), else on the next in turn.
    const int s = choose_stream(task, staging);
    add_waits(*launcher_, s, staging.ready, launch.waits);
    // (Before the launch is handed over: that takes its contents.)
    const Kernel::Shape shape = {launch.block[0], launch.block[1], launch.block[2],
                                 launch.shared_bytes,
                                 launch.grid[1] > 65535 || launch.grid[2] > 65535 ? 1u : 0u};
    std::shared_ptr<KernelCompletion> done = launcher_->launch(launcher_, launch, s);
    const bool new_shape =
        kernel.launched.size() < kKeptShapes &&
        std::find(kernel.launched.begin(), kernel.launched.end(), shape) == kernel.launched.end();
    if (!launcher_->threaded() || new_shape) {
      // A kernel's first launch in a shape is waited for: what the driver refuses for the
      // program's reasons (the block size, the shared memory) fails here, with the task,
      // before any task after it is launched behind it. (Without a launcher thread every
      // launch is made by now. Past kKeptShapes shapes, a refusal fails its task when its
      // kernel's end is seen, and tasks launched behind it run.)
      launcher_->drain();
      if (const std::string *why = done->not_run()) throw CudaError(done->launch_error(), *why);
      if (new_shape) kernel.launched.push_back(shape);  // (each shape once, the first few)
    }
    // A kernel on a megabyte or more runs long enough that an event of its own costs nothing,
    // and its end is then seen at once (its results may go home, its successors start)
    // rather than with the kernels launched after it.
    std::size_t bytes = 0;
    for (const dc::DataAccess &access : data) bytes += access.region.bytes();
    if (bytes >= (std::size_t(1) << 20)) launcher_->seal(s);
    return done;
  }

 private:
  struct Kernel;

  // Fills 'launch' for the task's kernel: the kernel, its parameters' values (buffers at
  // device addresses here), grid and block, shared memory.
  Kernel &prepare(const Task &task, const nanort_task_impl &impl,
                  const std::vector<dc::DataAccess> &data, const dc::Directory::Staging &staging,
                  KernelLaunch &launch, bool sorted_data = false) {
    if (!impl.kernel_name || !*impl.kernel_name || !impl.module)
      throw std::runtime_error("the CUDA implementation names no kernel or no module");
    Kernel &kernel = find_kernel(*impl.module, impl.kernel_name);
    launch.function = kernel.function;
    launch.kernel_name = impl.kernel_name;
    launch.shared_bytes = static_cast<unsigned>(task.shmem_bytes);
    if (task.ndrange_dims < 1 || task.ndrange_dims > 3)
      throw std::runtime_error("kernel '" + std::string(impl.kernel_name) + "' needs an ndrange");
    const std::uint32_t count = impl.num_kernel_args;
    if (count > 0 && !parameter_size(kernel, count - 1))
      throw std::runtime_error("kernel '" + std::string(impl.kernel_name) + "' takes " +
                               std::to_string(kernel.sizes.size()) +
                               " parameter(s), the task passes " + std::to_string(count));
    for (std::uint32_t i = 0; i < count; ++i) {
      const nanort_kernel_arg &arg = impl.kernel_args[i];
      auto which = [&] {
        return "parameter " + std::to_string(i) + " of kernel '" + std::string(impl.kernel_name) + "'";
      };
      if (arg.kind == NANORT_ARG_LOCAL)
        throw std::runtime_error(which() + " is local memory: CUDA kernels get dynamic shared "
                                           "memory from shmem instead");
      if (arg.offset + arg.size > task.args_size)
        throw std::runtime_error(which() + " lies outside the task's argument block");
      if (arg.size != parameter_size(kernel, i))
        throw std::runtime_error(which() + " is " + std::to_string(kernel.sizes[i]) +
                                 " bytes, the task passes " + std::to_string(arg.size));
      if (arg.kind == NANORT_ARG_VALUE) {
        launch.add_value(task.args + arg.offset, arg.size);
      } else if (arg.kind == NANORT_ARG_BUFFER) {
        if (arg.size != sizeof(void *))
          throw std::runtime_error(which() + " is a buffer but not pointer-sized in the block");
        void *pointer = nullptr;
        std::memcpy(&pointer, task.args + arg.offset, sizeof pointer);
        CUdeviceptr address = 0;
        if (pointer) {
          // (A graph launch's data: many disjoint spans in address order, searched by halves.)
          const dc::Placement place = sorted_data ? sorted_device_place(which, pointer, data, staging)
                                                  : device_place(which, pointer, data, staging);
          address = static_cast<CUdeviceptr>(place.buffer.handle + place.offset);
        }
        launch.add_value(&address, sizeof address);
      } else {
        throw std::runtime_error(which() + " has an unknown kind " + std::to_string(arg.kind));
      }
    }
    // Grid and block: the global size rounded up to whole blocks, as OmpSs does.
    for (int d = 0; d < task.ndrange_dims; ++d) {
      const std::size_t global = task.ndrange_global[d];
      std::size_t local = task.ndrange_local[d];
      if (local == 0) local = d == 0 ? std::min<std::size_t>(std::max<std::size_t>(global, 1), 128) : 1;
      launch.block[d] = static_cast<unsigned>(local);
      launch.grid[d] = static_cast<unsigned>((global + local - 1) / local);
    }
    return kernel;
  }

  int choose_stream(const Task &task, const dc::Directory::Staging &staging) {
    if (kernel_streams_ != 2) return 0;
    int behind = -1;  // the stream of this GPU's unfinished predecessors, 2 for both
    if (task.early_released)
      for (const dc::CompletionPtr &completion : staging.ready) {
        auto *kernel = dynamic_cast<KernelCompletion *>(completion.get());
        if (!kernel || kernel->poll()) continue;
        const int on = kernel->launcher() == launcher_.get() ? kernel->stream_index() : -1;
        if (on >= 0) behind = behind < 0 || behind == on ? on : 2;
      }
    if (behind == 0 || behind == 1) return behind;
    const int s = next_stream_;
    next_stream_ ^= 1;
    return s;
  }

  // A taskiter's replay as one CUDA Graph launch ('task' launches it: task.replay's tasks,
  // their data among 'data'). The graph is the replayed kernels captured in recorded order
  // (each after its predecessors) on one stream, instantiated once and launched again; where
  // only parameter values changed (an update's values, a buffer moved) its nodes take them
  // (update_in_place), and where anything else changed it is captured again.
  dc::CompletionPtr launch_graph(const Task &task, const std::vector<dc::DataAccess> &data,
                                 const dc::Directory::Staging &staging) {
    const Driver &cu = cu_;  // (NANORT_CU_CHECK calls through 'cu')
    const std::vector<Task *> &tasks = task.replay->tasks();
    const std::uint64_t key = task.replay->id();
    // What the graph's kernels are: each one's function, grid, block, shared memory and
    // parameters' values (device addresses included).
    std::vector<KernelLaunch> kernels(tasks.size());
    ReplaySignature signature;
    std::vector<std::size_t> ends;  // where each kernel's part of the signature ends
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      KernelLaunch &kernel = kernels[k];
      prepare(*tasks[k], *tasks[k]->impl, data, staging, kernel, true);
      const auto add = [&](const void *bytes, std::size_t n) {
        append_signature(signature, bytes, n);
      };
      add(&kernel.function, sizeof kernel.function);
      add(kernel.grid, sizeof kernel.grid);
      add(kernel.block, sizeof kernel.block);
      add(&kernel.shared_bytes, sizeof kernel.shared_bytes);
      const std::size_t bytes = kernel.values.size();
      add(&bytes, sizeof bytes);
      add(kernel.values.data(), bytes);
      ends.push_back(signature.size());
    }
    // (A new recording of the same kernels on the same data takes over the graph made for an
    // earlier one: no capture, no instantiation, no upload.)
    ReplayGraph &graph = graphs_.entry(key, signature, [&](ReplayGraph &oldest) {
      launcher_->drain();  // (a launch handed over may name it)
      oldest.release(cu_);
    });
    bool capture = !graph.exec || signature != graph.signature;
    if (capture && update_in_place(graph, kernels, signature, ends)) {
      capture = false;
      task.replay->graph_updates.fetch_add(1, std::memory_order_relaxed);
    }
    if (capture) {
      if (!capture_) NANORT_CU_CHECK(cuStreamCreate(&capture_, CU_STREAM_NON_BLOCKING));
      NANORT_CU_CHECK(cuStreamBeginCapture(capture_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
      CUgraph captured = nullptr;
      for (const KernelLaunch &kernel : kernels)
        if (const CUresult status = launch_kernel_on(cu_, kernel, capture_);
            status != CUDA_SUCCESS) {
          cu_.cuStreamEndCapture(capture_, &captured);
          if (captured) cu_.cuGraphDestroy(captured);
          throw CudaError(status, launch_failure(kernel, status));
        }
      NANORT_CU_CHECK(cuStreamEndCapture(capture_, &captured));
      if (const char *dot = std::getenv("NANORT_CUDA_GRAPH_DOT"))
        cu_.cuGraphDebugDotPrint(captured, dot, CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE);
      CUgraphExec exec = nullptr;
      const CUresult status = cu_.cuGraphInstantiateWithFlags(&exec, captured, 0);
      if (status != CUDA_SUCCESS) {
        cu_.cuGraphDestroy(captured);
        throw CudaError(status, "instantiating the CUDA Graph of a taskiter's " +
                                    std::to_string(tasks.size()) + " kernels failed with " +
                                    error_text(status));
      }
      // (An instance still running is freed once it ends; one handed over is launched first.)
      if (graph.exec) launcher_->drain();
      graph.release(cu_);
      graph.exec = exec;
      graph.graph = captured;
      graph.nodes = chain_nodes(captured, kernels.size());
      graph.signature = std::move(signature);
      graph.ends = std::move(ends);
      task.replay->graph_captures.fetch_add(1, std::memory_order_relaxed);
    }
    KernelLaunch &launch = launch_;
    launch.clear();
    launch.graph = graph.exec;
    launch.graph_kernels = tasks.size();
    launch.kernel_name = tasks.front()->impl->kernel_name;
    launch.graph_launches = 1;  // the replays it stands for (Runtime::replay)
    if (task.args_size == sizeof launch.graph_launches)
      std::memcpy(&launch.graph_launches, task.args, sizeof launch.graph_launches);
    const int s = choose_stream(task, staging);
    add_waits(*launcher_, s, staging.ready, launch.waits);
    std::shared_ptr<KernelCompletion> done = launcher_->launch(launcher_, launch, s);
    if (capture || !launcher_->threaded()) {  // (a new graph's first launch, as a site's)
      launcher_->drain();
      if (const std::string *why = done->not_run()) throw CudaError(done->launch_error(), *why);
    }
    return done;
  }

  struct ReplayGraph {
    CUgraphExec exec = nullptr;
    CUgraph graph = nullptr;          // what it was instantiated from (its nodes name kernels)
    std::vector<CUgraphNode> nodes;   // the kernels' nodes in launch order; empty: none known
    ReplaySignature signature;  // of its kernels, as captured or updated (launch_graph)
    std::vector<std::size_t> ends;    // where each kernel's part of it ends
    bool made() const { return exec != nullptr; }
    void release(const Driver &cu) {
      if (exec) cu.cuGraphExecDestroy(exec);
      if (graph) cu.cuGraphDestroy(graph);
      exec = nullptr;
      graph = nullptr;
      nodes.clear();
    }
  };

  // The kernel nodes of a graph captured from one stream, in launch order (a chain from its
  // root); empty where it is not a chain of 'count' nodes.
  std::vector<CUgraphNode> chain_nodes(CUgraph graph, std::size_t count) const {
    std::vector<CUgraphNode> nodes;
    CUgraphNode node = nullptr;
    std::size_t n = 1;
    if (cu_.cuGraphGetRootNodes(graph, &node, &n) != CUDA_SUCCESS || n != 1) return {};
    while (node) {
      nodes.push_back(node);
      CUgraphNode next[2] = {nullptr, nullptr};
      n = 2;
      if (cu_.cuGraphNodeGetDependentNodes(node, next, nullptr, &n) != CUDA_SUCCESS || n > 1)
        return {};
      node = n ? next[0] : nullptr;
    }
    if (nodes.size() != count) return {};
    return nodes;
  }

  // A replay whose kernels are those of the graph with other parameter values (a taskiter's
  // update: the iteration's own firstprivate values; or data moved to other addresses): the
  // nodes whose values changed take the new ones in the instantiated graph
  // (cuGraphExecKernelNodeSetParams), instead of a capture and an instantiation. False where
  // anything else changed (a kernel, its grid, block, shared memory or parameter sizes).
  bool update_in_place(ReplayGraph &graph, const std::vector<KernelLaunch> &kernels,
                       const ReplaySignature &signature, const std::vector<std::size_t> &ends) {
    if (!graph.exec || graph.nodes.size() != kernels.size() || graph.ends != ends) return false;
    // Each kernel's shape: the bytes before its parameter values (function, grid, block,
    // shared memory, the values' size) must be the same.
    std::vector<std::size_t> changed;
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const std::size_t begin = k ? ends[k - 1] : 0, values = ends[k] - kernels[k].values.size();
      if (!std::equal(signature.begin() + static_cast<std::ptrdiff_t>(begin),
                      signature.begin() + static_cast<std::ptrdiff_t>(values),
                      graph.signature.begin() + static_cast<std::ptrdiff_t>(begin)))
        return false;
      if (!std::equal(signature.begin() + static_cast<std::ptrdiff_t>(values),
                      signature.begin() + static_cast<std::ptrdiff_t>(ends[k]),
                      graph.signature.begin() + static_cast<std::ptrdiff_t>(values)))
        changed.push_back(k);
    }
    launcher_->drain();  // (a launch of the instance handed over is made before it changes)
    for (std::size_t k : changed) {
      const KernelLaunch &kernel = kernels[k];
      SmallVector<void *, 16> parameters;
      for (std::uint32_t start : kernel.at)
        parameters.push_back(const_cast<unsigned char *>(kernel.values.data()) + start);
      CUDA_KERNEL_NODE_PARAMS params{};
      params.func = kernel.function;
      params.gridDimX = kernel.grid[0];
      params.gridDimY = kernel.grid[1];
      params.gridDimZ = kernel.grid[2];
      params.blockDimX = kernel.block[0];
      params.blockDimY = kernel.block[1];
      params.blockDimZ = kernel.block[2];
      params.sharedMemBytes = kernel.shared_bytes;
      params.kernelParams = parameters.begin();
      if (cu_.cuGraphExecKernelNodeSetParams(graph.exec, graph.nodes[k], &params) !=
          CUDA_SUCCESS) {
        graph.signature.clear();  // (partly set: never launched again as it is)
        return false;             // (captured again: the instance is replaced whole)
      }
    }
    graph.signature = signature;
    return true;
  }

  struct Loaded {
    CUmodule module = nullptr;
    std::string error;
  };
  struct Kernel {
    CUfunction function = nullptr;
    const char *name = nullptr;
    std::vector<std::size_t> sizes;  // of the parameters asked about so far
    bool all_known = false;          // 'sizes' holds every parameter
    // Block, shared memory and a grid past 65535 in y or z: the launches' shapes the driver
    // took (the first kKeptShapes).
    using Shape = std::array<unsigned, 5>;
    std::vector<Shape> launched;
  };
  static constexpr std::size_t kKeptShapes = 32;

  // The module of one fatbin image on this GPU, loaded at the first call ('key' names it:
  // the nanort_kernel_module, or a linked object's image).
  CUmodule module_for(const void *key, const void *image, const std::string &origin) {
    const Driver &cu = cu_;
    Loaded &loaded = modules_[key];
    if (loaded.module) return loaded.module;
    if (!loaded.error.empty()) throw std::runtime_error(loaded.error);
    const CUresult status = cu.cuModuleLoadData(&loaded.module, image);
    if (status != CUDA_SUCCESS) {
      loaded.module = nullptr;
      loaded.error = "loading " + origin + " on " + name_ + " (" + info_.name +
                     ", compute capability " + std::to_string(info_.major) + "." +
                     std::to_string(info_.minor) + ") failed with " + error_text(status) +
                     (status == CUDA_ERROR_NO_BINARY_FOR_GPU
                          ? ": build it for this GPU (nvcc -gencode) or with PTX"
                          : "");
      throw std::runtime_error(loaded.error);
    }
    return loaded.module;
  }

  // The modules a kernel module stands for: its fatbin, or every image that objects made by
  // nvcc -c registered.
  std::vector<CUmodule> modules_of(const nanort_kernel_module &module, std::string &origin) {
    if (module.format == NANORT_MODULE_CUDA_FATBIN && module.image) {
      origin = module.origin ? module.origin : "the embedded CUDA module";
      return {module_for(&module, module.image, origin)};
    }
    if (module.format == NANORT_MODULE_CUDA_LINKED) {
      origin = "the CUDA objects linked into the program";
      const std::vector<const void *> images = linked_cuda_images();
      if (images.empty())
        throw std::runtime_error("no CUDA object registered its kernels: link the objects made "
                                 "by nvcc -c together with nanort_cuda_objects");
      std::vector<CUmodule> loaded;
      for (const void *image : images)
        loaded.push_back(module_for(image, image, "an object made by nvcc -c"));
      return loaded;
    }
    throw std::runtime_error(std::string(module.origin ? module.origin : "the kernel module") +
                             " is neither a CUDA fatbin nor linked CUDA objects");
  }

  // A kernel by its name, or by the C++ mangling of that name (a kernel compiled as C++ and
  // declared from C): the one function whose mangled name starts with _Z<length><name>. The
  // modules' functions are listed rather than asked for by name, so that a C++ kernel costs no
  // failing call (which tools such as compute-sanitizer report).
  Kernel &find_kernel(const nanort_kernel_module &module, const char *kernel_name) {
    const auto key = std::make_pair(&module, kernel_name);
    if (last_kernel_ && last_key_ == key) return *last_kernel_;  // the usual case: same site
    if (auto it = kernels_.find(key); it != kernels_.end()) {
      last_key_ = key;
      last_kernel_ = &it->second;
      return it->second;
    }
    const Driver &cu = cu_;
    std::string origin;
    const std::vector<CUmodule> modules = modules_of(module, origin);
    const std::string prefix = "_Z" + std::to_string(std::strlen(kernel_name)) + kernel_name;
    Kernel kernel;
    kernel.name = kernel_name;
    std::string listed;
    int mangled_matches = 0;
    bool exact = false;
    for (CUmodule loaded : modules) {
      unsigned count = 0;
      NANORT_CU_CHECK(cuModuleGetFunctionCount(&count, loaded));
      std::vector<CUfunction> functions(count);
      if (count) NANORT_CU_CHECK(cuModuleEnumerateFunctions(functions.data(), count, loaded));
      for (CUfunction function : functions) {
        const char *name = nullptr;
        if (cu.cuFuncGetName(&name, function) != CUDA_SUCCESS || !name) continue;
        listed += (listed.empty() ? "" : ", ") + std::string(name);
        if (std::strcmp(name, kernel_name) == 0) {
          kernel.function = function;
          exact = true;
          break;
        }
        if (std::strncmp(name, prefix.c_str(), prefix.size()) == 0) {
          kernel.function = function;
          ++mangled_matches;
        }
      }
      if (exact) break;
    }
    if (!kernel.function)
      throw std::runtime_error("no kernel named '" + std::string(kernel_name) + "' in " + origin +
                               " (its kernels: " + (listed.empty() ? "none" : listed) + ")");
    if (!exact && mangled_matches > 1)
      throw std::runtime_error("kernel name '" + std::string(kernel_name) + "' is overloaded in " +
                               origin + " (" + listed + "): declare it extern \"C\"");
    Kernel &found = kernels_.emplace(key, std::move(kernel)).first->second;
    last_key_ = key;
    last_kernel_ = &found;
    return found;
  }

  // Bytes of parameter 'index', or 0 when the kernel has fewer parameters. Asked of the
  // driver once per parameter, and past the last one only when a task passes too many (the
  // driver has no parameter count; asking past the end is an API error that tools report).
  std::size_t parameter_size(Kernel &kernel, std::size_t index) {
    while (kernel.sizes.size() <= index && !kernel.all_known) {
      std::size_t offset = 0, size = 0;
      if (cu_.cuFuncGetParamInfo(kernel.function, kernel.sizes.size(), &offset, &size) ==
          CUDA_SUCCESS)
        kernel.sizes.push_back(size);
      else
        kernel.all_known = true;
    }
    return index < kernel.sizes.size() ? kernel.sizes[index] : 0;
  }

  const Driver &cu_;
  std::string name_;
  DeviceInfo info_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream compute_[2] = {}, to_device_ = nullptr, to_host_ = nullptr, from_peers_ = nullptr;
  int kernel_streams_ = 2;  // NANORT_CUDA_KERNEL_STREAMS: 1 keeps every kernel on the first
  int next_stream_ = 0;     // manager thread only
  std::unique_ptr<CudaMemory> memory_;
  std::shared_ptr<KernelLauncher> launcher_;  // makes the calls on compute_
  KernelLaunch launch_;                       // (manager thread; reused)
  // Manager thread only.
  std::map<const void *, Loaded> modules_;  // by nanort_kernel_module or linked image
  std::map<std::pair<const nanort_kernel_module *, const char *>, Kernel> kernels_;
  std::pair<const nanort_kernel_module *, const char *> last_key_{};
  Kernel *last_kernel_ = nullptr;  // in kernels_ (map nodes stay put)
  // Taskiter replays as CUDA Graphs, by recording (manager thread only), and the stream
  // their kernels are captured on.
  ReplayCache<ReplayGraph> graphs_{16};
  CUstream capture_ = nullptr;
};

}  // namespace

std::vector<DeviceInfo> list_devices(std::string *why) {
  const Driver *driver_loaded = driver(why);
  if (!driver_loaded) return {};
  const Driver &cu = *driver_loaded;
  int count = 0;
  NANORT_CU_CHECK(cuDeviceGetCount(&count));
  if (count == 0 && why) *why = "the NVIDIA driver shows no GPU";
  std::vector<DeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    NANORT_CU_CHECK(cuDeviceGet(&device, ordinal));
    DeviceInfo info;
    info.ordinal = ordinal;
    char text[256] = {};
    NANORT_CU_CHECK(cuDeviceGetName(text, sizeof text - 1, device));
    info.name = text;
    std::memset(text, 0, sizeof text);
    if (cu.cuDeviceGetPCIBusId(text, sizeof text - 1, device) == CUDA_SUCCESS) info.pci_bus_id = text;
    std::transform(info.pci_bus_id.begin(), info.pci_bus_id.end(), info.pci_bus_id.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    NANORT_CU_CHECK(cuDeviceTotalMem(&info.memory, device));
    cu.cuDeviceGetAttribute(&info.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    cu.cuDeviceGetAttribute(&info.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    cu.cuDeviceGetAttribute(&info.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    devices.push_back(std::move(info));
  }
  return devices;
}

std::vector<std::size_t> select_devices(const std::vector<DeviceInfo> &devices,
                                        const std::string &spec) {
  std::vector<std::size_t> chosen;
  if (spec == "none") return chosen;
  if (spec.empty() || spec == "all" || spec == "auto") {
    for (std::size_t i = 0; i < devices.size(); ++i) chosen.push_back(i);
    return chosen;
  }
  std::size_t begin = 0;
  while (begin <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', begin), spec.size());
    const std::string item = spec.substr(begin, comma - begin);
    begin = comma + 1;
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("'" + item + "' is not a device number (use all, none, or "
                                  "numbers such as 0,1)");
    const std::size_t index = std::stoul(item);
    if (index >= devices.size()) {
      if (devices.empty()) continue;  // no GPU here: the selection chooses nothing
      throw std::invalid_argument("device " + item + " but " + std::to_string(devices.size()) +
                                  " GPU(s) found");
    }
    if (std::find(chosen.begin(), chosen.end(), index) == chosen.end()) chosen.push_back(index);
  }
  return chosen;
}

std::vector<std::unique_ptr<Accelerator>> open_devices(const std::vector<DeviceInfo> &devices,
                                                       const std::vector<std::size_t> &chosen,
                                                       bool launch_thread) {
  std::vector<std::unique_ptr<Accelerator>> opened;
  const Driver *driver_loaded = driver();
  if (!driver_loaded || chosen.empty()) return opened;
  const Driver &cu = *driver_loaded;
  std::vector<CudaDevice *> gpus;
  for (std::size_t index : chosen) {
    auto device = std::make_unique<CudaDevice>(cu, "cuda" + std::to_string(opened.size()),
                                               devices[index], launch_thread);
    gpus.push_back(device.get());
    opened.push_back(std::move(device));
  }
  // Peer access where the GPUs allow it, so that data moves between them directly.
  for (CudaDevice *to : gpus)
    for (CudaDevice *from : gpus) {
      if (to == from) continue;
      CUdevice a = 0, b = 0;
      int can = 0;
      const auto ordinal = [&](CudaDevice *gpu) {
        return static_cast<int>(
            devices[chosen[static_cast<std::size_t>(std::find(gpus.begin(), gpus.end(), gpu) -
                                                    gpus.begin())]]
                .ordinal);
      };
      NANORT_CU_CHECK(cuDeviceGet(&a, ordinal(to)));
      NANORT_CU_CHECK(cuDeviceGet(&b, ordinal(from)));
      if (cu.cuDeviceCanAccessPeer(&can, a, b) != CUDA_SUCCESS || !can) continue;
      make_current(cu, to->cuda_memory().context());
      const CUresult status = cu.cuCtxEnablePeerAccess(from->cuda_memory().context(), 0);
      if (status == CUDA_SUCCESS || status == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        to->cuda_memory().add_peer(from->cuda_memory().context());
    }
  return opened;
}

}  // namespace nanort::rt::cuda
