// The CUDA backend's events and kernel launches: a pool of reusable events, the completions
// of copies (an event each) and of kernels (a mark shared by the kernels launched next to
// each other), and KernelLauncher, who makes a GPU's calls on its kernel streams.
//
// cuLaunchKernel takes about 3.5 us of the host's time on an H100, as long as the device
// manager's own work for a task (staging its data, handing on its successors, retiring it).
// On one thread the two add up. With NANORT_CUDA_LAUNCH=thread the manager prepares a launch
// (finds the kernel, checks and places its parameters: whatever can fail for the program's
// reasons fails there, naming the task) and hands it to a launcher thread of the GPU's,
// which makes the stream calls in the order they were handed over while the manager goes on
// with the next task. With NANORT_CUDA_LAUNCH=manager the same requests are made at once on
// the calling thread.
//
// Kernels launched on one stream since the last event share one mark: an event recorded
// after the last of them. Recording an event per kernel costs about as much as the launch
// itself; in one stream a later event covers every earlier kernel, so the event is recorded
// when the mark is full, when the manager has nothing more to launch for now (seal), or when
// someone must wait for one of its kernels (a copy, a stream of another GPU). Polling an open
// mark records nothing: its kernels are not done.
#pragma once

#include <nanort/dc/memory_space.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda_api.hpp"

namespace nanort::rt::cuda {

// Makes a context current on the calling thread: every thread that reaches the backend (the
// device's manager, its launcher, a thread flushing in taskwait) sets it before its calls.
// Asking first is cheaper than setting, and on those threads it is usually current already.
void make_current(const Driver &cu, CUcontext context);
// The same where a failure cannot be reported (destructors, clean-up).
inline void set_current(const Driver &cu, CUcontext context) { cu.cuCtxSetCurrent(context); }

// Events of one context, reused: creating one per operation costs more than the operation's
// own launch. Shared by the device's memory space, its launcher and every completion they
// made, so that the last of them destroys the events.
class EventPool {
 public:
  EventPool(const Driver &cu, CUcontext context) : cu_(cu), context_(context) {}
  ~EventPool();
  // An event recorded on 'stream' now.
  CUevent record(CUstream stream);
  void give_back(CUevent event);
  CUcontext context() const { return context_; }

 private:
  const Driver &cu_;
  CUcontext context_;
  std::mutex mutex_;
  std::vector<CUevent> free_;
};

// An operation in flight: an event recorded after it on its stream.
class EventCompletion final : public dc::Completion {
 public:
  EventCompletion(const Driver &cu, std::shared_ptr<EventPool> pool, CUevent event,
                  std::string what)
      : cu_(cu), pool_(std::move(pool)), event_(event), what_(std::move(what)) {}
  // A recorded event may be recorded again at once: the driver keeps this use's place.
  ~EventCompletion() override { pool_->give_back(event_); }

  bool poll() override;
  void wait() override;
  CUevent event() const { return event_; }

 private:
  const Driver &cu_;
  std::shared_ptr<EventPool> pool_;
  CUevent event_;
  std::string what_;
  bool done_ = false;
};

constexpr std::uint32_t kKernelsPerMark = 8;

// Kernels of one stream that share one event.
struct LaunchMark {
  std::shared_ptr<EventPool> pool;
  int stream = 0;  // the launcher's stream index
  std::atomic<CUevent> event{nullptr};   // recorded after its last kernel, by the launcher
  std::atomic<std::uint32_t> kernels{0};  // in it (written under the launcher's lock)
  std::atomic<bool> done{false};  // seen complete, or waited for without an event
  // Its event could not be recorded and waiting for the stream failed: the driver's code
  // (set before 'done').
  std::atomic<CUresult> error{CUDA_SUCCESS};
  // Kernels whose launch failed (bit i: the i-th of the mark), why, and the driver's code.
  std::atomic<std::uint32_t> failed{0};
  std::string failures[kKernelsPerMark];
  CUresult codes[kKernelsPerMark] = {};
  ~LaunchMark() {
    if (CUevent recorded = event.load()) pool->give_back(recorded);
  }
};

// One kernel (or a CUDA Graph's launches) handed to the launcher: its parameters' values
// copied, the events its stream waits for first.
struct KernelLaunch {
  CUfunction function = nullptr;
  const char *kernel_name = nullptr;  // static storage (the task site's)
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<std::uint32_t> at;      // where each parameter's value starts in 'values'
  std::vector<unsigned char> values;  // (8-byte aligned starts)
  CUgraphExec graph = nullptr;  // instead of a kernel: this graph, 'graph_launches' times
  std::uint64_t graph_launches = 0;
  std::size_t graph_kernels = 0;  // (for its error message)
  // What the stream waits for: an event (kept alive by 'keep'), or a mark of the launcher's
  // other stream, whose event is read when the launch is made (recorded before it).
  struct Wait {
    CUevent event = nullptr;
    std::shared_ptr<LaunchMark> mark;
    dc::CompletionPtr keep;
  };
  std::vector<Wait> waits;

  void clear();
  // Appends the next parameter's value.
  void add_value(const void *value, std::size_t size);
};

// cuLaunchKernel of 'launch' (a kernel, not a graph) on 'stream', and its failure's message.
CUresult launch_kernel_on(const Driver &cu, const KernelLaunch &launch, CUstream stream);
std::string launch_failure(const KernelLaunch &launch, CUresult status);

class KernelLauncher;

// A kernel in flight: the mark it shares with the kernels launched next to it.
class KernelCompletion final : public dc::Completion {
 public:
  KernelCompletion(std::shared_ptr<KernelLauncher> launcher, std::shared_ptr<LaunchMark> mark,
                   std::uint32_t index, const char *kernel_name)
      : launcher_(std::move(launcher)), mark_(std::move(mark)), index_(index),
        kernel_name_(kernel_name) {}

  bool poll() override;
  void wait() override;
  const std::string *not_run() const override {
    if (!failed()) return nullptr;
    static const std::string no_memory = "its launch failed: the host is out of memory";
    return mark_->failures[index_].empty() ? &no_memory : &mark_->failures[index_];
  }
  const KernelLauncher *launcher() const { return launcher_.get(); }
  int stream_index() const { return mark_->stream; }
  CUstream stream() const;
  // Its mark's event, recorded now if it was not yet (any thread); null if the kernels are
  // known done without one.
  CUevent event();
  const std::shared_ptr<LaunchMark> &mark() const { return mark_; }
  // Its launch failed: the driver's code.
  CUresult launch_error() const { return failed() ? mark_->codes[index_] : CUDA_SUCCESS; }

 private:
  bool failed() const {
    return mark_->failed.load(std::memory_order_acquire) & (std::uint32_t{1} << index_);
  }

  std::shared_ptr<KernelLauncher> launcher_;
  std::shared_ptr<LaunchMark> mark_;
  std::uint32_t index_;  // in its mark
  const char *kernel_name_;
};

class KernelLauncher {
 public:
  // 'streams': the GPU's kernel streams. With 'own_thread' false, every request is made at
  // once on the calling thread.
  KernelLauncher(const Driver &cu, CUcontext context, std::shared_ptr<EventPool> events,
                 std::vector<CUstream> streams, bool own_thread);
  ~KernelLauncher();
  KernelLauncher(const KernelLauncher &) = delete;
  KernelLauncher &operator=(const KernelLauncher &) = delete;

  // Hands 'launch' over for stream 'stream' (its contents are taken) and returns the
  // kernel's completion. The marks of the other stream it waits for are ended first.
  std::shared_ptr<KernelCompletion> launch(const std::shared_ptr<KernelLauncher> &self,
                                           KernelLaunch &launch, int stream);
  // Ends the open marks (every stream's, or one's), if there are kernels in them.
  void seal();
  void seal(int stream);
  // The mark's event once recorded, ending the mark now if it was open (any thread; waits for
  // the launcher thread). Null: done without one.
  CUevent event(LaunchMark &mark);
  // Runs 'call' where the launches are made, after everything handed over before, and
  // returns once it ran (rethrowing what it threw).
  void run_in_order(const std::function<void()> &call);
  // Returns once everything handed over before the call is made.
  void drain();
  // The GPU goes: what was handed over is made, the open marks ended, the thread joined;
  // later requests (an event asked for) are made at once on the caller's thread.
  void stop();
  bool threaded() const { return own_thread_; }
  const Driver &driver() const { return cu_; }
  CUstream stream(int index) const { return streams_[static_cast<std::size_t>(index)]; }

 private:
  struct Request {
    enum class Kind { kernel, seal, call } kind = Kind::kernel;
    KernelLaunch launch;
    std::shared_ptr<LaunchMark> mark;  // kernel: its mark; seal: the mark to end
    std::uint32_t index = 0;           // kernel: in its mark
    bool closes = false;               // kernel: the last of its mark
    const std::function<void()> *call = nullptr;  // call: the caller waits for it
    std::exception_ptr *error = nullptr;          // call: what it threw
  };

  void run();
  void process(Request &request);
  void launch_kernel(Request &request);
  void report_graph_time(const KernelLaunch &launch, CUevent times[2], CUstream stream);
  void record(const std::shared_ptr<LaunchMark> &mark);
  void push_locked(Request &&request);
  void seal_locked(int stream);

  const Driver &cu_;
  CUcontext context_;
  std::shared_ptr<EventPool> events_;
  std::vector<CUstream> streams_;
  const bool own_thread_;
  std::mutex mutex_;  // the requests, the open marks, the spare launches
  std::condition_variable wakeup_;
  std::deque<Request> requests_;
  std::vector<KernelLaunch> spare_;  // (their vectors keep their memory)
  std::vector<std::shared_ptr<LaunchMark>> open_;  // per stream
  bool asleep_ = false, stopping_ = false;
  bool stopped_ = false;  // stop(): no thread any more (under mutex_)
  std::atomic<std::size_t> pending_{0};  // requests not yet taken
  std::atomic<std::uint64_t> pushed_{0}, made_{0};  // requests handed over, and made
  std::thread thread_;
};

}  // namespace nanort::rt::cuda
