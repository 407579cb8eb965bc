#include "cuda_launcher.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../small_vector.hpp"

namespace nanort::rt::cuda {

void make_current(const Driver &cu, CUcontext context) {
  CUcontext now = nullptr;
  if (cu.cuCtxGetCurrent(&now) == CUDA_SUCCESS && now == context) return;
  NANORT_CU_CHECK(cuCtxSetCurrent(context));
}

// ---------------------------------------------------------------------------------------------
// Events

EventPool::~EventPool() {
  set_current(cu_, context_);
  for (CUevent event : free_) cu_.cuEventDestroy(event);
}

CUevent EventPool::record(CUstream stream) {
  const Driver &cu = cu_;
  CUevent event = nullptr;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!free_.empty()) {
      event = free_.back();
      free_.pop_back();
    }
  }
  if (!event) NANORT_CU_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  const CUresult status = cu.cuEventRecord(event, stream);
  if (status != CUDA_SUCCESS) {
    give_back(event);
    throw_error(status, "cuEventRecord(event, stream)", __FILE__, __LINE__);
  }
  return event;
}

void EventPool::give_back(CUevent event) {
  std::lock_guard<std::mutex> guard(mutex_);
  free_.push_back(event);
}

bool EventCompletion::poll() {
  if (done_) return true;
  const CUresult status = cu_.cuEventQuery(event_);
  done_ = status != CUDA_ERROR_NOT_READY;  // done, or failed (wait() reports it)
  return done_;
}

void EventCompletion::wait() {
  const CUresult status = cu_.cuEventSynchronize(event_);
  if (status != CUDA_SUCCESS)
    throw CudaError(status, what_ + " failed with " + error_text(status));
  done_ = true;
}

// ---------------------------------------------------------------------------------------------
// Launches

void KernelLaunch::clear() {
  function = nullptr;
  for (int d = 0; d < 3; ++d) grid[d] = block[d] = 1;
  graph = nullptr;
  graph_launches = graph_kernels = 0;
  shared_bytes = 0;
  at.clear();
  values.clear();
  waits.clear();
}

void KernelLaunch::add_value(const void *value, std::size_t size) {
  const std::size_t start = (values.size() + 7) & ~std::size_t{7};
  values.resize(start + size);
  if (size) std::memcpy(values.data() + start, value, size);
  at.push_back(static_cast<std::uint32_t>(start));
}

CUresult launch_kernel_on(const Driver &cu, const KernelLaunch &launch, CUstream stream) {
  SmallVector<void *, 16> parameters;
  for (std::uint32_t start : launch.at)
    parameters.push_back(const_cast<unsigned char *>(launch.values.data()) + start);
  return cu.cuLaunchKernel(launch.function, launch.grid[0], launch.grid[1], launch.grid[2],
                           launch.block[0], launch.block[1], launch.block[2],
                           launch.shared_bytes, stream, parameters.begin(), nullptr);
}

std::string launch_failure(const KernelLaunch &launch, CUresult status) {
  if (launch.graph)
    return "launching the CUDA Graph of a taskiter's " + std::to_string(launch.graph_kernels) +
           " kernels failed with " + error_text(status);
  return "launching kernel '" + std::string(launch.kernel_name) + "' (grid " +
         std::to_string(launch.grid[0]) + "x" + std::to_string(launch.grid[1]) + "x" +
         std::to_string(launch.grid[2]) + ", block " + std::to_string(launch.block[0]) + "x" +
         std::to_string(launch.block[1]) + "x" + std::to_string(launch.block[2]) + ", " +
         std::to_string(launch.shared_bytes) + " bytes of shared memory) failed with " +
         error_text(status);
}

// ---------------------------------------------------------------------------------------------
// Completions of kernels

CUstream KernelCompletion::stream() const { return launcher_->stream(mark_->stream); }

bool KernelCompletion::poll() {
  if (mark_->done.load(std::memory_order_acquire) || failed()) return true;  // (wait(): why)
  CUevent event = mark_->event.load(std::memory_order_acquire);
  if (!event) return false;  // launched with kernels still to come in its mark: not done
  const CUresult status = launcher_->driver().cuEventQuery(event);
  if (status == CUDA_ERROR_NOT_READY) return false;
  if (status == CUDA_SUCCESS) mark_->done.store(true, std::memory_order_release);
  return true;  // done, or failed (wait() reports it)
}

void KernelCompletion::wait() {
  if (failed()) {
    // Never launched: not_run() says why. But an error that leaves the context unusable
    // (an earlier kernel's fault, seen at this launch) stops the program, as at a wait.
    const CUresult code = mark_->codes[index_];
    if (CudaError(code, std::string()).sticky()) throw CudaError(code, mark_->failures[index_]);
    return;
  }
  CUresult status = CUDA_SUCCESS;
  if (!mark_->done.load(std::memory_order_acquire)) {
    if (CUevent made = launcher_->event(*mark_))
      status = launcher_->driver().cuEventSynchronize(made);
  }
  if (status == CUDA_SUCCESS) status = mark_->error.load(std::memory_order_acquire);
  if (status != CUDA_SUCCESS) {
    // The event follows the kernels of one mark: any of them may be the one that failed.
    const std::uint32_t others = mark_->kernels.load(std::memory_order_relaxed) - 1;
    throw CudaError(status, "kernel '" + std::string(kernel_name_) + "'" +
                                (others ? " (or one of the " + std::to_string(others) +
                                              " kernels launched next to it)"
                                        : std::string()) +
                                " failed with " + error_text(status));
  }
  mark_->done.store(true, std::memory_order_release);
}

CUevent KernelCompletion::event() {
  if (mark_->done.load(std::memory_order_acquire)) return nullptr;
  return launcher_->event(*mark_);
}

// ---------------------------------------------------------------------------------------------
// The launcher

KernelLauncher::KernelLauncher(const Driver &cu, CUcontext context,
                               std::shared_ptr<EventPool> events, std::vector<CUstream> streams,
                               bool own_thread)
    : cu_(cu), context_(context), events_(std::move(events)), streams_(std::move(streams)),
      own_thread_(own_thread), open_(streams_.size()) {
  if (own_thread_) thread_ = std::thread([this] { run(); });
}

KernelLauncher::~KernelLauncher() { stop(); }

void KernelLauncher::stop() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (std::size_t s = 0; s < open_.size(); ++s) seal_locked(static_cast<int>(s));
    stopping_ = true;
  }
  wakeup_.notify_one();
  if (thread_.joinable()) thread_.join();  // (after making every request)
}

std::shared_ptr<KernelCompletion> KernelLauncher::launch(
    const std::shared_ptr<KernelLauncher> &self, KernelLaunch &launch, int stream) {
  std::lock_guard<std::mutex> guard(mutex_);
  // Marks of the other stream it waits for end before it: their events are recorded by the
  // time it is made.
  for (const KernelLaunch::Wait &wait : launch.waits)
    if (!wait.event && wait.mark && open_[static_cast<std::size_t>(wait.mark->stream)] == wait.mark)
      seal_locked(wait.mark->stream);
  std::shared_ptr<LaunchMark> &open = open_[static_cast<std::size_t>(stream)];
  if (!open) {
    open = std::make_shared<LaunchMark>();
    open->pool = events_;
    open->stream = stream;
  }
  Request request;
  request.kind = Request::Kind::kernel;
  if (!spare_.empty()) {
    request.launch = std::move(spare_.back());
    spare_.pop_back();
  }
  // (The completion first: if it cannot be made, the marks stay as they were.)
  const std::uint32_t index = open->kernels.load(std::memory_order_relaxed);
  auto completion = std::make_shared<KernelCompletion>(self, open, index, launch.kernel_name);
  std::swap(request.launch, launch);  // (the caller's gets the spare's memory)
  request.mark = open;
  request.index = index;
  // (A graph's many kernels are worth an event of their own.)
  request.closes = index + 1 == kKernelsPerMark || request.launch.graph;
  const bool closes = request.closes;
  open->kernels.store(index + 1, std::memory_order_relaxed);
  push_locked(std::move(request));
  if (closes) open.reset();  // (after the push: if it threw, a seal still ends the mark)
  return completion;
}

void KernelLauncher::seal() {
  std::lock_guard<std::mutex> guard(mutex_);
  for (std::size_t s = 0; s < open_.size(); ++s) seal_locked(static_cast<int>(s));
}

void KernelLauncher::seal(int stream) {
  std::lock_guard<std::mutex> guard(mutex_);
  seal_locked(stream);
}

void KernelLauncher::seal_locked(int stream) {
  std::shared_ptr<LaunchMark> &open = open_[static_cast<std::size_t>(stream)];
  if (!open) return;
  Request request;
  request.kind = Request::Kind::seal;
  request.mark = std::move(open);
  push_locked(std::move(request));
}

CUevent KernelLauncher::event(LaunchMark &mark) {
  if (CUevent made = mark.event.load(std::memory_order_acquire)) return made;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (open_[static_cast<std::size_t>(mark.stream)].get() == &mark) seal_locked(mark.stream);
  }
  // The launcher thread makes what was handed over before, then records this mark's event.
  for (;;) {
    if (CUevent made = mark.event.load(std::memory_order_acquire)) return made;
    if (mark.done.load(std::memory_order_acquire)) return nullptr;
    std::this_thread::yield();
  }
}

void KernelLauncher::run_in_order(const std::function<void()> &call) {
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    Request request;
    request.kind = Request::Kind::call;
    request.call = &call;
    request.error = &error;
    push_locked(std::move(request));
  }
  drain();
  if (error) std::rethrow_exception(error);
}

void KernelLauncher::drain() {
  if (!own_thread_) return;  // (made at once; after stop() too, whose join made the rest)
  const std::uint64_t handed = pushed_.load(std::memory_order_acquire);
  while (made_.load(std::memory_order_acquire) < handed) std::this_thread::yield();
}

void KernelLauncher::push_locked(Request &&request) {
  if (!own_thread_ || stopped_) {  // made here, now
    process(request);
    if (request.kind == Request::Kind::kernel && spare_.size() < 64) {
      request.launch.clear();
      spare_.push_back(std::move(request.launch));
    }
    return;
  }
  requests_.push_back(std::move(request));
  pushed_.fetch_add(1, std::memory_order_relaxed);
  pending_.fetch_add(1, std::memory_order_release);
  if (asleep_) wakeup_.notify_one();
}

void KernelLauncher::run() {
  set_current(cu_, context_);
  std::deque<Request> taken;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Back from making them: the launches' vectors go back for reuse.
      for (Request &done : taken)
        if (done.kind == Request::Kind::kernel && spare_.size() < 64) {
          done.launch.clear();
          spare_.push_back(std::move(done.launch));
        }
      taken.clear();
      if (requests_.empty()) {
        if (stopping_) {
          stopped_ = true;  // (under the lock: later requests are made by their callers)
          return;
        }
        // Launches come every few microseconds while the manager works: wait for the next
        // one awake for a short while, then asleep.
        lock.unlock();
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
        while (pending_.load(std::memory_order_acquire) == 0 &&
               std::chrono::steady_clock::now() < until)
          std::this_thread::yield();
        lock.lock();
        if (requests_.empty() && !stopping_) {
          asleep_ = true;
          wakeup_.wait(lock, [&] { return !requests_.empty() || stopping_; });
          asleep_ = false;
        }
        continue;
      }
      taken.swap(requests_);
      pending_.store(0, std::memory_order_relaxed);
    }
    for (Request &request : taken) {
      try {
        process(request);
      } catch (...) {  // (out of memory: the kernel is not launched, its mark still ends)
        if (request.kind == Request::Kind::kernel) {
          LaunchMark &mark = *request.mark;
          mark.codes[request.index] = CUDA_ERROR_OUT_OF_MEMORY;
          mark.failed.fetch_or(std::uint32_t{1} << request.index, std::memory_order_release);
          if (request.closes) record(request.mark);
        } else if (request.kind == Request::Kind::seal) {
          record(request.mark);
        }
      }
      made_.fetch_add(1, std::memory_order_release);
    }
  }
}

void KernelLauncher::process(Request &request) {
  switch (request.kind) {
    case Request::Kind::kernel:
      launch_kernel(request);
      break;
    case Request::Kind::seal:
      record(request.mark);
      break;
    case Request::Kind::call:
      try {
        (*request.call)();
      } catch (...) {
        *request.error = std::current_exception();
      }
      break;
  }
}

void KernelLauncher::launch_kernel(Request &request) {
  KernelLaunch &launch = request.launch;
  CUstream stream = streams_[static_cast<std::size_t>(request.mark->stream)];
  CUresult status = CUDA_SUCCESS;
  for (const KernelLaunch::Wait &wait : launch.waits) {
    // (A mark of the other stream was recorded before this request, or waited for.)
    CUevent event = wait.event ? wait.event : wait.mark->event.load(std::memory_order_acquire);
    if (!event) continue;
    status = cu_.cuStreamWaitEvent(stream, event, 0);
    if (status != CUDA_SUCCESS) break;
  }
  launch.waits.clear();  // (the marks and copies it kept alive)
  if (status == CUDA_SUCCESS) {
    if (launch.graph) {
      static const bool timed = std::getenv("NANORT_CUDA_GRAPH_TIMING") != nullptr;
      CUevent times[2] = {nullptr, nullptr};
      if (timed && cu_.cuEventCreate(&times[0], 0) == CUDA_SUCCESS &&
          cu_.cuEventCreate(&times[1], 0) == CUDA_SUCCESS)
        cu_.cuEventRecord(times[0], stream);
      for (std::uint64_t k = 0; k < launch.graph_launches && status == CUDA_SUCCESS; ++k)
        status = cu_.cuGraphLaunch(launch.graph, stream);
      if (times[1] && status == CUDA_SUCCESS) {
        report_graph_time(launch, times, stream);
      } else {
        for (CUevent event : times)
          if (event) cu_.cuEventDestroy(event);
      }
    } else {
      status = launch_kernel_on(cu_, launch, stream);
    }
  }
  if (status != CUDA_SUCCESS) {
    LaunchMark &mark = *request.mark;
    try {
      mark.failures[request.index] = launch_failure(launch, status);
    } catch (...) {  // (out of memory for the text: the code still says it)
    }
    mark.codes[request.index] = status;
    mark.failed.fetch_or(std::uint32_t{1} << request.index, std::memory_order_release);
  }
  if (request.closes) record(request.mark);
}

// NANORT_CUDA_GRAPH_TIMING: the GPU time of a series of graph launches, waited for here (a
// diagnostic: the launcher thread stops until the series ends).
void KernelLauncher::report_graph_time(const KernelLaunch &launch, CUevent times[2],
                                       CUstream stream) {
  float ms = 0;
  if (cu_.cuEventRecord(times[1], stream) == CUDA_SUCCESS &&
      cu_.cuEventSynchronize(times[1]) == CUDA_SUCCESS &&
      cu_.cuEventElapsedTime(&ms, times[0], times[1]) == CUDA_SUCCESS)
    std::fprintf(stderr,
                 "nanort: taskiter graph of %llu kernels: %llu launches in %.3f ms on the GPU "
                 "(%.2f us per launch, %.3f us per kernel)\n",
                 static_cast<unsigned long long>(launch.graph_kernels),
                 static_cast<unsigned long long>(launch.graph_launches), ms,
                 1e3 * ms / static_cast<double>(launch.graph_launches),
                 1e3 * ms / static_cast<double>(launch.graph_launches * launch.graph_kernels));
  cu_.cuEventDestroy(times[0]);
  cu_.cuEventDestroy(times[1]);
}

void KernelLauncher::record(const std::shared_ptr<LaunchMark> &mark) {
  // Any thread may ask (after stop()), with its own context current: recorded in the
  // stream's context.
  CUcontext previous = nullptr;
  cu_.cuCtxGetCurrent(&previous);
  if (previous != context_) set_current(cu_, context_);
  const CUstream stream = streams_[static_cast<std::size_t>(mark->stream)];
  CUevent event = nullptr;
  try {
    event = events_->record(stream);
  } catch (...) {
  }
  if (event) {
    mark->event.store(event, std::memory_order_release);
  } else {
    // (The driver is out of resources, or the context failed.) Waited for here instead; the
    // kernels' completions report what the wait says.
    mark->error.store(cu_.cuStreamSynchronize(stream), std::memory_order_release);
    mark->done.store(true, std::memory_order_release);
  }
  if (previous != context_) set_current(cu_, previous);
}

}  // namespace nanort::rt::cuda
