// KernelLauncher: who makes a device's enqueue calls on its in-order compute queue (the
// device's manager thread, or with NANORT_OPENCL_LAUNCH=thread a thread of its own), and the
// completions of the kernels it launches.
//
// NVIDIA's OpenCL takes about 5 us per clEnqueueNDRangeKernel, as long as the device
// manager's own work for a task (staging its data, handing on its successors, retiring it).
// Done on one thread, the two add up; with a thread of its own the manager prepares a launch
// (finds the kernel, checks and places its arguments: whatever can fail for the program's
// reasons fails there, naming the task) and hands it over, and this thread sets the arguments
// and enqueues while the manager goes on with the next task. Without one (the default), the
// same requests are made at once on the calling thread.
//
// NVIDIA's OpenCL serializes its calls: with a launcher thread, the manager's polls and event
// releases beside the thread's enqueues took 4 to 18 us each and slowed the enqueues from 5.4
// to 7.2 us (docs/results.md). So while the thread enqueues, the manager does not ask: the
// thread polls the marks in flight after each batch of enqueues, releases the events of marks
// that went, and registers the callbacks the manager asked for before it sleeps only once it
// is idle, or about to block (a lock, a long replay). Otherwise the manager polls as without
// it.
//
// Kernels launched since the last event share one mark, with or without a launcher thread.
// An event and a clFlush per kernel cost more than the launch itself (NVIDIA's OpenCL: a
// small kernel task took 13 to 16 us with them, 7 to 10 with a mark per 8 kernels, against
// 4.2 to 6 for a raw in-order loop; docs/results.md); on an in-order queue a later command's
// event covers every earlier kernel, so only a mark's last kernel gets an event (the
// kKernelsPerMark-th), or a marker is enqueued after the open mark's kernels when the manager
// has nothing more to launch (seal), when the manager was busy elsewhere for 50 us (staging a
// large copy: no launch came for that long; with a launcher thread the mark ends then, without
// one at the next launch), or when someone must wait for one of them (a copy on another
// queue).
// A kernel ends its mark at once where sharing would make its end seen late
// (recent_marks.hpp): it waits for copies or other devices, or the device is behind (a mark
// enqueued 20 us ago or more is still running). A mark's completion is polled (clGetEventInfo,
// about 0.2 us); a callback on its event wakes the manager only once it asks to sleep.
#pragma once

#include <nanort/dc/memory_space.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../idle_waiters.hpp"
#include "opencl_api.hpp"
#include "opencl_command_buffer.hpp"
#include "recent_marks.hpp"

namespace nanort::rt::opencl {

// Calls 'done' (on a thread of the driver's) once 'event' completes; false when the driver
// cannot say.
bool call_when_complete(cl_event event, std::function<void()> done);

class KernelLauncher;

constexpr std::uint32_t kKernelsPerMark = 8;

// Kernels that share one event.
struct LaunchMark {
  std::atomic<cl_event> event{nullptr};  // set once, where it ends (under the launcher's lock
                                         // without a launcher thread)
  std::atomic<std::uint32_t> kernels{0};  // in it (written under the launcher's lock)
  std::atomic<bool> done{false};         // complete, or failed (status < 0)
  std::atomic<cl_int> status{CL_COMPLETE};
  // A callback on the event, to wake the manager, is registered once it is both asked for
  // (on_done: bit 1) and possible (the event made: bit 2), by whoever comes second. Only
  // then: on NVIDIA's OpenCL, registered callbacks slow every later enqueue of the process.
  std::atomic<unsigned> watch{0};
  std::atomic<bool> unwatchable{false};  // the driver refused the callback: polled
  // When its end was enqueued (steady clock, ns; set before 'event').
  std::atomic<std::int64_t> closed_ns{0};
  // Its callback is over (or will not come): the mark may go. (Not 'done': a poll may see the
  // event complete before the driver calls back.)
  std::atomic<bool> called_back{false};
  KernelLauncher *owner = nullptr;
  // Kernels whose enqueue failed (bit i: the i-th of the mark), and why.
  std::atomic<std::uint32_t> failed{0};
  std::string failures[kKernelsPerMark];
  ~LaunchMark();  // (its event released by the launcher thread where there is one)
};

// A taskiter's recorded kernel replayed by enqueuing it again: a kernel object of its own,
// its arguments set once when recorded (their bytes kept, as KernelLaunch::values lays them
// out), and its launch shape.
struct ReplayedKernel {
  cl_kernel kernel = nullptr;
  const char *name = nullptr;  // static storage (the task site's)
  std::vector<unsigned char> values;
  cl_uint dims = 0;
  std::size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
  bool has_local = false;
};

// One kernel handed to the launcher: what its enqueue needs, the arguments' values copied.
struct KernelLaunch {
  struct Argument {
    cl_uint index = 0;
    std::size_t size = 0;
    std::size_t at = 0;  // of its value in 'values'; kLocal: local memory of 'size' bytes
    bool memory = false;  // a cl_mem (a replay sets it again even where its bytes are the same)
  };
  static constexpr std::size_t kLocal = ~std::size_t{0};

  cl_kernel kernel = nullptr;
  const char *kernel_name = nullptr;  // static storage (the task site's)
  cl_uint dims = 0;
  std::size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
  bool has_local = false;
  std::vector<Argument> arguments;
  std::vector<unsigned char> values;
  std::vector<cl_event> waits;  // retained: released once enqueued
  // Instead of the kernel: a taskiter's replays, 'launches' times (its own mark) this command
  // buffer, or else these kernels enqueued in order (the device's owner keeps them alive).
  cl_command_buffer_khr command_buffer = nullptr;
  std::uint64_t launches = 0;
  const CommandBufferApi *command_buffers = nullptr;
  std::shared_ptr<const std::vector<ReplayedKernel>> replayed;

  void clear() {
    dims = 0;
    for (int d = 0; d < 3; ++d) global[d] = local[d] = 1;
    has_local = false;
    arguments.clear();
    values.clear();
    waits.clear();
    command_buffer = nullptr;
    launches = 0;
    replayed.reset();
  }
  void add_value(cl_uint index, const void *value, std::size_t size);
  void add_memory(cl_uint index, cl_mem memory) {
    add_value(index, &memory, sizeof memory);
    arguments.back().memory = true;
  }
  void add_local(cl_uint index, std::size_t size) { arguments.push_back({index, size, kLocal}); }
};

// A kernel in flight: the mark it shares with the kernels launched next to it.
class KernelCompletion final : public dc::Completion {
 public:
  KernelCompletion(std::shared_ptr<KernelLauncher> launcher, std::shared_ptr<LaunchMark> mark,
                   std::uint32_t index, cl_context context, const char *kernel_name)
      : launcher_(std::move(launcher)), mark_(std::move(mark)), index_(index),
        context_(context), kernel_name_(kernel_name) {}

  bool poll() override;
  void wait() override;
  bool on_done(std::function<void()> done) override;
  const KernelLauncher *launcher() const { return launcher_.get(); }
  // The event of its mark (after it is enqueued), null once known done.
  cl_event event();
  cl_context context() const { return context_; }

  // What the driver said if its enqueue failed.
  const std::string *not_run() const override {
    return failed() ? &mark_->failures[index_] : nullptr;
  }

 private:
  // Its enqueue failed (the message, made where it was enqueued, names the kernel).
  bool failed() const {
    return mark_->failed.load(std::memory_order_acquire) & (std::uint32_t{1} << index_);
  }

  std::shared_ptr<KernelLauncher> launcher_;
  std::shared_ptr<LaunchMark> mark_;
  std::uint32_t index_;  // in its mark
  cl_context context_;
  const char *kernel_name_;
};

class KernelLauncher {
 public:
  // With 'own_thread' false, every call enqueues at once on the calling thread (the device's
  // manager), which seals the open mark whenever it pauses.
  // 'memory_objects': held while a launcher thread enqueues (see Context::memory_objects).
  KernelLauncher(cl_command_queue queue, bool own_thread, std::mutex *memory_objects = nullptr);
  ~KernelLauncher();  // enqueues what it holds, then waits for the queue
  KernelLauncher(const KernelLauncher &) = delete;
  KernelLauncher &operator=(const KernelLauncher &) = delete;

  // Hands 'launch' over (its contents are taken) and returns the kernel's completion.
  std::shared_ptr<KernelCompletion> launch(const std::shared_ptr<KernelLauncher> &self,
                                           KernelLaunch &launch, cl_context context);
  // Ends the open mark, if there are kernels in it (the manager has nothing more to launch).
  void seal();
  // The mark's event once enqueued, sealing it now if it was open (any thread; waits for the
  // launcher thread). Null: done without one.
  cl_event event(LaunchMark &mark);
  // Kernels launched after this start once 'gate' completes (a barrier; takes a reference).
  void hold_behind(cl_event gate);
  // Returns once everything handed over before the call is enqueued.
  void drain();
  // The device goes: what was handed over is enqueued, the open mark sealed, the thread
  // joined; later requests are made at once on the caller's thread.
  void stop();
  // stop(), then returns once the queue's commands ended and no callback of the driver's on
  // them is running (it may still call back while their events complete).
  void quiesce();
  bool threaded() const { return own_thread_; }
  // The launcher thread is enqueueing: the marks' events are not asked meanwhile (it polls
  // them after).
  bool enqueueing() const { return enqueueing_.load(std::memory_order_acquire); }
  // Hands 'event' to the launcher thread to release (false: none, release it yourself).
  bool release_later(cl_event event);
  // 'wake' is called whenever a mark is done from now on (the manager's wake-up; the first
  // one given stays: every caller is the same manager).
  void wake_with(std::function<void()> wake);
  void wake();

 private:
  struct Request {
    enum class Kind { kernel, seal, barrier, watch } kind = Kind::kernel;
    KernelLaunch launch;
    // kernel: its mark; seal: the mark to end; watch: the mark to watch. (Requests hold no
    // completion: the last
    // reference to the launcher must not go on its own thread.)
    std::shared_ptr<LaunchMark> mark;
    std::uint32_t index = 0;  // kernel: in its mark
    bool closes = false;      // kernel: the last of its mark
    cl_event gate = nullptr;  // barrier
  };

  void run();
  // Launcher thread, nothing to enqueue: waits for the next request awake for a while, then
  // seals the open mark, or sleeps.
  void idle();
  // Launcher thread: the marks in flight that are done, oldest first, marked so (the manager
  // woken if any).
  void poll_marks();
  // watch(mark) now, or with a launcher thread once it is idle.
  void watch_when_idle(const std::shared_ptr<LaunchMark> &mark);
  // Launcher thread: releases the events of marks gone meanwhile.
  void release_gone();
  void enqueue_kernel(Request &request);
  // The launch's command buffer, enqueued its number of times; 'last' gets the last one's event.
  cl_int enqueue_command_buffer(KernelLaunch &launch, cl_event &last);
  // The launch's replayed kernels, in order, its number of times; 'last': the last one's event.
  // On a failure, 'failure' says which kernel of which replay.
  cl_int enqueue_replayed(KernelLaunch &launch, cl_event &last, std::string &failure);
  // The mark ends with 'event' (its last kernel's, or a marker after it).
  void close(const std::shared_ptr<LaunchMark> &mark, cl_event event);
  void close_with_marker(const std::shared_ptr<LaunchMark> &mark);
  // Registers the mark's callback (its event is made; launcher thread), once: the watch
  // bits make one of close() and watch_later() ask.
  void watch(const std::shared_ptr<LaunchMark> &mark);
  // Has the launcher thread register it (once idle: watch_when_idle). (Without a launcher
  // thread, the calls are made under the launcher's lock by whoever makes them: the manager,
  // or a thread that seals a mark.)
  void watch_later(std::shared_ptr<LaunchMark> mark);
  friend class KernelCompletion;
  void push_locked(Request &&request);
  static void CL_CALLBACK completed(cl_event event, cl_int status, void *arg);

  void process(Request &request);
  // Hands over the end of the open mark, if there is one (under mutex_).
  void seal_locked();
  // Whether the mark's kernels ran (RecentMarks); unknown while its end is not enqueued or was
  // enqueued less than RecentMarks' backlog ago (the launcher thread is behind, not the device).
  MarkState state(LaunchMark &mark);
  // Launcher thread: the watches asked for, for the marks still running (see watch_when_idle).
  void watch_asked();
  // Launcher thread, before a call that may block (a lock, a long replay, clFinish): the
  // manager may poll meanwhile, and the marks asked for are watched.
  class PausedEnqueueing;

  cl_command_queue queue_;
  const bool own_thread_;
  std::mutex *memory_objects_;
  std::mutex mutex_;  // the requests, the open mark, the spare launches
  IdleWaiters idle_;  // the launcher thread's sleep
  std::deque<Request> requests_;
  std::vector<KernelLaunch> spare_;  // (their vectors keep their memory)
  std::shared_ptr<LaunchMark> open_;
  RecentMarks<LaunchMark> recent_;  // marks ended lately (under mutex_)
  std::chrono::steady_clock::time_point last_launch_;  // (under mutex_)
  // No thread any more: requests are made at once (set under mutex_ where the thread ends;
  // read under it, or by the thread itself).
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};  // (set under mutex_)
  std::atomic<bool> enqueueing_{false};
  // own_thread_, until stop(): in_flight_, to_watch_ and releases_ kept
  std::atomic<bool> tracking_;
  // Launcher thread only: the marks ended and not seen done yet, oldest first.
  std::deque<std::shared_ptr<LaunchMark>> in_flight_;
  std::vector<std::shared_ptr<LaunchMark>> to_watch_;  // (launcher thread only)
  std::mutex releases_mutex_;
  std::vector<cl_event> releases_;  // events of marks gone, for the launcher thread
  std::atomic<std::size_t> pending_{0};  // requests not yet taken
  std::atomic<std::uint64_t> pushed_{0}, enqueued_{0};  // requests handed over, and done
  // Launcher thread (or manager) only: marks with a callback to come, kept until it came (the
  // callback has their address only).
  std::vector<std::shared_ptr<LaunchMark>> watched_;
  std::atomic<int> callbacks_pending_{0};
  std::atomic<std::function<void()> *> wake_{nullptr};
  std::thread thread_;
};

}  // namespace nanort::rt::opencl
