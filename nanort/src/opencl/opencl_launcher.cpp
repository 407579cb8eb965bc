#include "opencl_launcher.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace nanort::rt::opencl {

bool call_when_complete(cl_event event, std::function<void()> done) {
  auto *call = new std::function<void()>(std::move(done));
  const auto trampoline = [](cl_event, cl_int, void *arg) {
    auto *f = static_cast<std::function<void()> *>(arg);
    (*f)();
    delete f;
  };
  if (clSetEventCallback(event, CL_COMPLETE, trampoline, call) == CL_SUCCESS) return true;
  delete call;
  return false;
}

void KernelLaunch::add_value(cl_uint index, const void *value, std::size_t size) {
  const std::size_t at = values.size();
  values.resize(at + size);
  if (size) std::memcpy(values.data() + at, value, size);
  arguments.push_back({index, size, at});
}

LaunchMark::~LaunchMark() {
  cl_event made = event.load();
  if (made && !(owner && owner->release_later(made))) clReleaseEvent(made);
}

// ---------------------------------------------------------------------------------------------
// Completions

bool KernelCompletion::poll() {
  if (mark_->done.load(std::memory_order_acquire) || failed()) return true;
  // (While the launcher thread enqueues, it polls after; calls beside its enqueues slow both.)
  if (launcher_->enqueueing()) return false;
  cl_event event = mark_->event.load(std::memory_order_acquire);
  if (!event) return false;  // not all enqueued yet
  cl_int status = CL_COMPLETE;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                     nullptr) != CL_SUCCESS)
    return true;  // wait() reports it
  if (status == CL_COMPLETE) mark_->done.store(true, std::memory_order_release);
  return status <= CL_COMPLETE;  // complete, or failed (negative)
}

void KernelCompletion::wait() {
  if (failed()) return;  // never enqueued: not_run() says why
  cl_int status = CL_COMPLETE;
  if (!mark_->done.load(std::memory_order_acquire)) {
    if (cl_event made = event()) {
      clWaitForEvents(1, &made);
      NANORT_CL_CHECK(clGetEventInfo(made, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                     &status, nullptr));
    }
  } else {
    status = mark_->status.load(std::memory_order_relaxed);
  }
  if (status < 0) {
    // The event ends the kernels of one mark: any of them may be the one that failed.
    const std::uint32_t others = mark_->kernels.load(std::memory_order_relaxed) - 1;
    throw OpenClError(status, "kernel '" + std::string(kernel_name_) + "'" +
                                  (others ? " (or one of the " + std::to_string(others) +
                                                " kernels launched next to it)"
                                          : std::string()) +
                                  " failed with " + error_name(status));
  }
}

// The launcher's mark callbacks wake the manager (every kernel here is its manager's).
bool KernelCompletion::on_done(std::function<void()> done) {
  if (mark_->unwatchable.load(std::memory_order_acquire)) return false;  // polled
  launcher_->wake_with(std::move(done));
  std::atomic_thread_fence(std::memory_order_seq_cst);  // (the wake-up set, then the looks)
  launcher_->seal();  // (the manager seals before it sleeps; this makes sure)
  const unsigned before = mark_->watch.fetch_or(1);
  if (before == 2) launcher_->watch_later(mark_);  // (the event is made; else close() does it)
  if (poll()) launcher_->wake();  // done before the wake-up was set
  return true;
}

cl_event KernelCompletion::event() {
  if (failed()) return nullptr;  // never enqueued
  return launcher_->event(*mark_);
}

// ---------------------------------------------------------------------------------------------
// The launcher

KernelLauncher::KernelLauncher(cl_command_queue queue, bool own_thread,
                               std::mutex *memory_objects)
    : queue_(queue), own_thread_(own_thread),
      memory_objects_(own_thread ? memory_objects : nullptr), tracking_(own_thread) {
  clRetainCommandQueue(queue_);
  if (own_thread_) thread_ = std::thread([this] { run(); });
}

void KernelLauncher::stop() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    seal_locked();
    stopping_.store(true);
  }
  idle_.notify_all();
  if (thread_.joinable()) thread_.join();  // (after enqueueing every request)
  std::deque<std::shared_ptr<LaunchMark>> in_flight;
  std::vector<std::shared_ptr<LaunchMark>> to_watch;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopped_ = true;
    recent_.clear();
    in_flight.swap(in_flight_);
    to_watch.swap(to_watch_);
  }
  std::vector<cl_event> gone;
  {
    std::lock_guard<std::mutex> guard(releases_mutex_);
    tracking_.store(false, std::memory_order_release);
    gone.swap(releases_);
  }
  for (cl_event event : gone) clReleaseEvent(event);
  // (The marks kept go here, their events released at once, while the queue is alive.)
}

bool KernelLauncher::release_later(cl_event event) {
  if (!tracking_.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> guard(releases_mutex_);
  if (!tracking_.load(std::memory_order_relaxed)) return false;
  releases_.push_back(event);
  return true;
}

void KernelLauncher::release_gone() {
  std::vector<cl_event> gone;
  {
    std::lock_guard<std::mutex> guard(releases_mutex_);
    if (releases_.empty()) return;
    gone.swap(releases_);
  }
  for (cl_event event : gone) clReleaseEvent(event);
}

void KernelLauncher::quiesce() {
  stop();
  clFinish(queue_);
  // Callbacks come on the driver's threads, possibly after clFinish returns.
  while (callbacks_pending_.load(std::memory_order_acquire) > 0) std::this_thread::yield();
}

KernelLauncher::~KernelLauncher() {
  quiesce();
  delete wake_.load();
  clReleaseCommandQueue(queue_);
}

std::shared_ptr<KernelCompletion> KernelLauncher::launch(
    const std::shared_ptr<KernelLauncher> &self, KernelLaunch &launch, cl_context context) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto now = std::chrono::steady_clock::now();
  // A kernel behind copies or other devices' kernels: its start is theirs, and so is its end.
  // It gets a mark of its own, the kernels before it theirs. (Without a launcher thread, the
  // open mark ends before this kernel too where no launch came for 50 us: the manager was busy
  // elsewhere, staging, and the mark's kernels would be seen done late. A launcher thread
  // ends it then by itself.)
  const bool behind_others = !launch.waits.empty();
  if (behind_others ||
      (!own_thread_ && open_ && now - last_launch_ > std::chrono::microseconds(50)))
    seal_locked();
  last_launch_ = now;
  if (!open_) {
    open_ = std::make_shared<LaunchMark>();
    open_->owner = this;
  }
  Request request;
  request.kind = Request::Kind::kernel;
  if (!spare_.empty()) {
    request.launch = std::move(spare_.back());
    spare_.pop_back();
  }
  // (The completion first: if it cannot be made, the marks stay as they were.)
  const std::uint32_t index = open_->kernels.load(std::memory_order_relaxed);
  auto completion =
      std::make_shared<KernelCompletion>(self, open_, index, context, launch.kernel_name);
  std::swap(request.launch, launch);  // (the caller's gets the spare's memory)
  request.mark = open_;
  request.index = index;
  request.closes = index + 1 == kKernelsPerMark || request.launch.command_buffer ||
                   request.launch.replayed || behind_others ||
                   recent_.device_behind(now, [this](LaunchMark &mark) { return state(mark); });
  open_->kernels.store(index + 1, std::memory_order_relaxed);
  if (request.closes) {
    recent_.ended(open_, now);
    open_.reset();
  }
  push_locked(std::move(request));
  return completion;
}

void KernelLauncher::seal() {
  std::lock_guard<std::mutex> guard(mutex_);
  seal_locked();
}

void KernelLauncher::seal_locked() {
  if (!open_) return;
  recent_.ended(open_, std::chrono::steady_clock::now());
  Request request;
  request.kind = Request::Kind::seal;
  request.mark = std::move(open_);
  push_locked(std::move(request));
}

MarkState KernelLauncher::state(LaunchMark &mark) {
  if (mark.done.load(std::memory_order_acquire)) return MarkState::done;
  cl_event event = mark.event.load(std::memory_order_acquire);
  if (!event) return MarkState::unknown;
  if (own_thread_) {
    const auto enqueued = std::chrono::steady_clock::time_point(
        std::chrono::nanoseconds(mark.closed_ns.load(std::memory_order_relaxed)));
    if (std::chrono::steady_clock::now() - enqueued < RecentMarks<LaunchMark>::kBacklog)
      return MarkState::unknown;
    // (Not asked beside its enqueues: its polls after each batch set 'done'.)
    if (enqueueing()) return MarkState::running;
  }
  cl_int status = CL_COMPLETE;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                     nullptr) != CL_SUCCESS)
    return MarkState::unknown;
  return status <= CL_COMPLETE ? MarkState::done : MarkState::running;
}

cl_event KernelLauncher::event(LaunchMark &mark) {
  if (cl_event made = mark.event.load(std::memory_order_acquire)) return made;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (open_.get() == &mark) seal_locked();
  }
  // The launcher thread enqueues what was handed over before, then this mark's end.
  for (;;) {
    if (cl_event made = mark.event.load(std::memory_order_acquire)) return made;
    if (mark.done.load(std::memory_order_acquire)) return nullptr;
    std::this_thread::yield();
  }
}

void KernelLauncher::drain() {
  if (!own_thread_) return;  // (made at once; after stop() too, whose join drained the rest)
  const std::uint64_t handed = pushed_.load(std::memory_order_acquire);
  while (enqueued_.load(std::memory_order_acquire) < handed) std::this_thread::yield();
}

void KernelLauncher::hold_behind(cl_event gate) {
  clRetainEvent(gate);
  std::lock_guard<std::mutex> guard(mutex_);
  seal_locked();  // the kernels launched before the hold end without it
  Request request;
  request.kind = Request::Kind::barrier;
  request.gate = gate;
  push_locked(std::move(request));
}

void KernelLauncher::watch_later(std::shared_ptr<LaunchMark> mark) {
  std::lock_guard<std::mutex> guard(mutex_);
  Request request;
  request.kind = Request::Kind::watch;
  request.mark = std::move(mark);
  push_locked(std::move(request));
}

void KernelLauncher::wake_with(std::function<void()> wake) {
  if (wake_.load(std::memory_order_acquire)) return;
  auto *made = new std::function<void()>(std::move(wake));
  std::function<void()> *expected = nullptr;
  if (!wake_.compare_exchange_strong(expected, made)) delete made;
}

void KernelLauncher::wake() {
  if (std::function<void()> *wake = wake_.load(std::memory_order_acquire)) (*wake)();
}

void KernelLauncher::push_locked(Request &&request) {
  if (!own_thread_ || stopped_) {  // made here, now
    process(request);
    if (request.kind == Request::Kind::kernel) {
      request.launch.clear();
      spare_.push_back(std::move(request.launch));
    }
    return;
  }
  requests_.push_back(std::move(request));
  pushed_.fetch_add(1, std::memory_order_relaxed);
  pending_.fetch_add(1, std::memory_order_release);
  idle_.notify(1);
}

void KernelLauncher::run() {
  std::deque<Request> taken;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // Back from enqueueing: the launches' vectors go back for reuse.
      for (Request &done : taken)
        if (done.kind == Request::Kind::kernel && spare_.size() < 64) {
          done.launch.clear();
          spare_.push_back(std::move(done.launch));
        }
      taken.clear();
      if (requests_.empty() && stopping_.load()) {
        stopped_ = true;  // (requests from now on are made by whoever makes them)
        break;
      }
      taken.swap(requests_);
      pending_.store(0, std::memory_order_relaxed);
    }
    release_gone();
    if (taken.empty()) {
      idle();
      continue;
    }
    enqueueing_.store(true, std::memory_order_relaxed);
    for (Request &request : taken) {
      process(request);
      enqueued_.fetch_add(1, std::memory_order_release);
    }
    poll_marks();
    enqueueing_.store(false, std::memory_order_release);
    std::erase_if(to_watch_, [](const std::shared_ptr<LaunchMark> &mark) {
      return mark->done.load(std::memory_order_acquire);
    });
  }
  release_gone();
}

void KernelLauncher::watch_when_idle(const std::shared_ptr<LaunchMark> &mark) {
  if (tracking_.load(std::memory_order_relaxed) && !stopped_)
    to_watch_.push_back(mark);
  else
    watch(mark);
}

void KernelLauncher::watch_asked() {
  // The manager asked to sleep: the marks it waits for that are still running get a callback.
  // (Not while this thread enqueues: a callback takes 2.5 to 15 us and slows the enqueues after
  // it; the polls after each batch wake the manager meanwhile.)
  if (to_watch_.empty()) return;
  poll_marks();
  for (const std::shared_ptr<LaunchMark> &mark : to_watch_)
    if (!mark->done.load(std::memory_order_acquire)) watch(mark);
  to_watch_.clear();
}

class KernelLauncher::PausedEnqueueing {
 public:
  explicit PausedEnqueueing(KernelLauncher &launcher)
      : launcher_(launcher), paused_(launcher.enqueueing_.load(std::memory_order_relaxed)) {
    if (!paused_) return;
    launcher_.enqueueing_.store(false, std::memory_order_release);
    launcher_.poll_marks();
    launcher_.watch_asked();
  }
  ~PausedEnqueueing() {
    if (paused_) launcher_.enqueueing_.store(true, std::memory_order_relaxed);
  }

 private:
  KernelLauncher &launcher_;
  const bool paused_;
};

void KernelLauncher::idle() {
  watch_asked();
  // Launches come every few microseconds while the manager works: the next one is waited for
  // awake for a short while, then asleep. (Meanwhile the manager polls the marks itself.)
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  while (pending_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!requests_.empty() || stopping_.load()) return;
    if (open_) {
      // Nothing came for a while: the manager is busy elsewhere (staging a large copy, say),
      // and the kernels of the open mark, all enqueued, would wait for their end to be seen
      // until it pauses. Sealed now.
      std::shared_ptr<LaunchMark> mark = std::move(open_);
      recent_.ended(mark, std::chrono::steady_clock::now());
      lock.unlock();
      close_with_marker(mark);
      return;
    }
  }
  idle_.sleep_unless([&] { return pending_.load() != 0 || stopping_.load(); });
}

void KernelLauncher::poll_marks() {
  bool seen = false;
  while (!in_flight_.empty()) {
    LaunchMark &mark = *in_flight_.front();
    if (!mark.done.load(std::memory_order_acquire)) {
      cl_int status = CL_COMPLETE;
      const cl_int asked = clGetEventInfo(mark.event.load(std::memory_order_relaxed),
                                          CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                          &status, nullptr);
      if (asked != CL_SUCCESS) status = asked;  // (reported as the kernels' failure)
      if (status > CL_COMPLETE) break;
      if (status < 0) mark.status.store(status, std::memory_order_relaxed);
      mark.done.store(true, std::memory_order_release);
      seen = true;
    }
    in_flight_.pop_front();
  }
  if (seen) {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // (done set, then the wake-up read)
    wake();
  }
}

void KernelLauncher::process(Request &request) {
  switch (request.kind) {
    case Request::Kind::kernel:
      enqueue_kernel(request);
      break;
    case Request::Kind::seal:
      close_with_marker(request.mark);
      break;
    case Request::Kind::watch:
      watch_when_idle(request.mark);
      break;
    case Request::Kind::barrier:
      // (Refused: the kernels are not held, and the test that asked sees them run.)
      clEnqueueBarrierWithWaitList(queue_, 1, &request.gate, nullptr);
      clFlush(queue_);
      clReleaseEvent(request.gate);
      break;
  }
}

void KernelLauncher::enqueue_kernel(Request &request) {
  KernelLaunch &launch = request.launch;
  cl_int status = CL_SUCCESS;
  const char *failed_call = "clSetKernelArg";
  // (A command buffer's arguments were set before; replayed kernels lock each enqueue.)
  std::unique_lock<std::mutex> objects;
  if (memory_objects_ && !launch.command_buffer && !launch.replayed) {
    objects = std::unique_lock<std::mutex>(*memory_objects_, std::try_to_lock);
    if (!objects.owns_lock()) {  // (a buffer made or freed meanwhile: page-locking takes long)
      PausedEnqueueing paused(*this);
      objects.lock();
    }
  }
  for (const KernelLaunch::Argument &argument : launch.arguments) {
    status = clSetKernelArg(launch.kernel, argument.index, argument.size,
                            argument.at == KernelLaunch::kLocal
                                ? nullptr
                                : static_cast<const void *>(launch.values.data() + argument.at));
    if (status != CL_SUCCESS) break;
  }
  cl_event made = nullptr;
  std::string failure;
  if (status == CL_SUCCESS && launch.command_buffer) {
    failed_call = "clEnqueueCommandBufferKHR";
    PausedEnqueueing paused(*this);  // (it may wait for the buffer's last run)
    status = enqueue_command_buffer(launch, made);
  } else if (status == CL_SUCCESS && launch.replayed) {
    failed_call = "clEnqueueNDRangeKernel";
    PausedEnqueueing paused(*this);  // (thousands of enqueues, perhaps)
    status = enqueue_replayed(launch, made, failure);
  } else if (status == CL_SUCCESS) {
    failed_call = "clEnqueueNDRangeKernel";
    status = clEnqueueNDRangeKernel(queue_, launch.kernel, launch.dims, nullptr, launch.global,
                                    launch.has_local ? launch.local : nullptr,
                                    static_cast<cl_uint>(launch.waits.size()),
                                    launch.waits.empty() ? nullptr : launch.waits.data(),
                                    request.closes ? &made : nullptr);
  }
  if (objects) objects.unlock();
  for (cl_event wait : launch.waits) clReleaseEvent(wait);
  launch.waits.clear();
  if (status == CL_SUCCESS && request.closes && !made &&
      (launch.command_buffer || launch.replayed)) {  // (nothing enqueued: no replay asked)
    close_with_marker(request.mark);
    return;
  }
  if (status != CL_SUCCESS) {
    // (Commands of a replay enqueued before the failure run on: the task's data is released
    // once it is reported failed, so they end first.)
    if (launch.command_buffer || launch.replayed) {
      PausedEnqueueing paused(*this);
      clFinish(queue_);
    }
    LaunchMark &mark = *request.mark;
    mark.failures[request.index] =
        !failure.empty() ? failure
                         : "launching kernel '" + std::string(launch.kernel_name) + "' failed: " +
                               failed_call + " returned " + error_name(status);
    mark.failed.fetch_or(std::uint32_t{1} << request.index, std::memory_order_release);
    wake();
    if (request.closes) close_with_marker(request.mark);
    return;
  }
  if (request.closes) close(request.mark, made);
}

cl_int KernelLauncher::enqueue_command_buffer(KernelLaunch &launch, cl_event &last) {
  const CommandBufferApi &api = *launch.command_buffers;
  cl_int status = CL_SUCCESS;
  for (std::uint64_t k = 0; k < launch.launches && status == CL_SUCCESS; ++k) {
    // (The queue is in order: the first waits for the launch's events, the rest follow it.)
    const bool first = k == 0;
    const cl_uint waits = first ? static_cast<cl_uint>(launch.waits.size()) : 0;
    const cl_event *wait_list = waits ? launch.waits.data() : nullptr;
    cl_event made = nullptr;
    status = api.enqueue(0, nullptr, launch.command_buffer, waits, wait_list, &made);
    if (status == CL_INVALID_OPERATION) {
      // Still pending from the enqueue before (no simultaneous use; the first: from an
      // earlier launch task's): once that one ends.
      if (last)
        clWaitForEvents(1, &last);
      else
        clFinish(queue_);
      status = api.enqueue(0, nullptr, launch.command_buffer, waits, wait_list, &made);
    }
    if (status != CL_SUCCESS) break;
    if (last) clReleaseEvent(last);
    last = made;
  }
  if (status != CL_SUCCESS && last) {  // (the mark ends with a marker instead)
    clReleaseEvent(last);
    last = nullptr;
  }
  return status;
}

cl_int KernelLauncher::enqueue_replayed(KernelLaunch &launch, cl_event &last,
                                        std::string &failure) {
  // (The queue is in order: the first kernel waits for the launch's events, the rest follow.)
  const std::vector<ReplayedKernel> &kernels = *launch.replayed;
  cl_int status = CL_SUCCESS;
  for (std::uint64_t k = 0; k < launch.launches && status == CL_SUCCESS; ++k)
    for (std::size_t i = 0; i < kernels.size() && status == CL_SUCCESS; ++i) {
      const ReplayedKernel &kernel = kernels[i];
      const bool first = k == 0 && i == 0;
      const bool final = k + 1 == launch.launches && i + 1 == kernels.size();
      std::unique_lock<std::mutex> objects;  // (per enqueue: a replay may be long)
      if (memory_objects_) objects = std::unique_lock<std::mutex>(*memory_objects_);
      status = clEnqueueNDRangeKernel(
          queue_, kernel.kernel, kernel.dims, nullptr, kernel.global,
          kernel.has_local ? kernel.local : nullptr,
          first ? static_cast<cl_uint>(launch.waits.size()) : 0,
          first && !launch.waits.empty() ? launch.waits.data() : nullptr, final ? &last : nullptr);
      if (status != CL_SUCCESS)
        failure = "replaying kernel '" + std::string(kernel.name) + "' (kernel " +
                  std::to_string(i + 1) + " of the " + std::to_string(kernels.size()) +
                  " recorded, replay " + std::to_string(k + 1) + " of " +
                  std::to_string(launch.launches) +
                  ") failed: clEnqueueNDRangeKernel returned " + error_name(status) +
                  "; the kernels before it ran";
    }
  if (status != CL_SUCCESS && last) {  // (the mark ends with a marker instead)
    clReleaseEvent(last);
    last = nullptr;
  }
  return status;
}

void KernelLauncher::close_with_marker(const std::shared_ptr<LaunchMark> &mark) {
  cl_event marker = nullptr;
  if (clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &marker) == CL_SUCCESS) {
    close(mark, marker);
    return;
  }
  // (The driver is out of resources.) Waited for here instead; a failure of one of these
  // kernels shows in the commands after them.
  clFinish(queue_);
  mark->done.store(true, std::memory_order_release);
  wake();
}

void KernelLauncher::close(const std::shared_ptr<LaunchMark> &mark, cl_event event) {
  clFlush(queue_);
  mark->closed_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count(),
                        std::memory_order_relaxed);
  mark->event.store(event, std::memory_order_release);
  // (With a launcher thread, every close is made there until it ends.)
  if (tracking_.load(std::memory_order_relaxed) && !stopped_) in_flight_.push_back(mark);
  if (mark->watch.fetch_or(2) == 1) watch_when_idle(mark);  // asked for before the event was made
}

void KernelLauncher::watch(const std::shared_ptr<LaunchMark> &mark) {
  std::erase_if(watched_, [](const std::shared_ptr<LaunchMark> &m) {
    return m->called_back.load(std::memory_order_acquire);
  });
  watched_.push_back(mark);
  callbacks_pending_.fetch_add(1, std::memory_order_relaxed);
  // The callback holds a reference of its own: the mark (and its reference) may go while the
  // driver is still inside the callback, which the driver may not guard against.
  cl_event event = mark->event.load(std::memory_order_acquire);
  clRetainEvent(event);
  if (clSetEventCallback(event, CL_COMPLETE, &KernelLauncher::completed, mark.get()) !=
      CL_SUCCESS) {
    clReleaseEvent(event);
    callbacks_pending_.fetch_sub(1, std::memory_order_relaxed);
    mark->unwatchable.store(true, std::memory_order_release);
    mark->called_back.store(true, std::memory_order_release);  // (none will come)
    wake();  // a manager asleep on it polls instead
  }
}

void CL_CALLBACK KernelLauncher::completed(cl_event event, cl_int status, void *arg) {
  auto *mark = static_cast<LaunchMark *>(arg);
  KernelLauncher *self = mark->owner;  // (outlives its pending callbacks)
  mark->status.store(status, std::memory_order_relaxed);
  mark->done.store(true, std::memory_order_release);
  mark->called_back.store(true, std::memory_order_release);  // the mark may go from here on
  self->wake();
  clReleaseEvent(event);  // watch()'s reference (not blocking: allowed in a callback)
  self->callbacks_pending_.fetch_sub(1, std::memory_order_release);
}

}  // namespace nanort::rt::opencl
