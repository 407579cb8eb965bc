// DeviceManager: the host thread that drives one accelerator.
//
// It takes ready tasks for its device, stages their data through the directory (copies
// enqueued, allocations held), launches their kernels to start after those copies, and polls
// for completions. Up to 'in_flight' tasks are staged or running at once, so that the inputs
// of the next tasks move while the device computes. A task whose data does not fit while
// others hold device memory waits until one of them finishes.
#pragma once

#include <nanort/dc/directory.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "../idle_waiters.hpp"
#include "../scheduler/task_costs.hpp"
#include "../spin_lock.hpp"

namespace nanort::rt {

class Accelerator;
class DeviceWork;
class Topology;
struct Task;

class DeviceManager {
 public:
  // 'work': where it takes tasks and reports on them; 'topology': to run near its device;
  // 'timing': the statistics' breakdown of its tasks' time (NANORT_STATS); 'device' and
  // 'index_in_kind': the device's number and its index in its kind (device_numbering.hpp).
  DeviceManager(DeviceWork &work, const Topology &topology, bool timing, Accelerator &accelerator,
                dc::Directory &directory, int device, int index_in_kind, int lane, int in_flight);
  ~DeviceManager();  // stops once every task it took is done
  DeviceManager(const DeviceManager &) = delete;
  DeviceManager &operator=(const DeviceManager &) = delete;

  // Wakes the thread if it sleeps (new ready work, or stopping).
  void notify() {
    wakeup_->pushes.fetch_add(1);
    wakeup_->idle.notify_all();
  }
  // A task for this device alone: one launched behind the kernels it depends on (they run
  // here, in launch order), or one placed here by the program. Taken before the tasks of the
  // shared queue.
  void push_own(Task *task);
  // dmda: the expected time of the work placed here and not yet done.
  void add_expected_work(std::int64_t nanoseconds) {
    expected_work_ns_.fetch_add(nanoseconds, std::memory_order_relaxed);
  }
  double expected_work_s() const {
    return static_cast<double>(expected_work_ns_.load(std::memory_order_relaxed)) * 1e-9;
  }
  // dmda: seconds per byte of the copies into this device as staging them took (a moving
  // average over the tasks that copied at least 64 KiB; 16 GB/s until one did).
  double seconds_per_byte() const { return seconds_per_byte_.load(std::memory_order_relaxed); }
  // Tasks it took from its kind's shared queue that have not ended (staged, running, or held).
  std::size_t shared_load() const { return shared_count_.load(std::memory_order_relaxed); }
  // Where it stands with the tasks it took from the shared queue (TaskCosts::Pace; read and
  // written by Runtime::pop_device_task, in this manager's thread alone).
  TaskCosts::Pace &shared_pace() { return shared_pace_; }
  // Tasks waiting in this device's own queue or running on it, for placement decisions.
  double load() const {
    return static_cast<double>(early_count_.load(std::memory_order_relaxed) +
                               running_count_.load(std::memory_order_relaxed));
  }
  void request_stop();

 private:
  struct Running {
    Task *task = nullptr;
    std::vector<dc::DataAccess> data;
    dc::Directory::Staging staging;
    dc::CompletionPtr done;
    std::uint64_t start_ns = 0;   // taken: staging begins
    std::uint64_t launch_ns = 0;  // staged: the launch begins
    bool watched = false;         // its completion will wake the thread (on_done)
  };
  // What the thread sleeps on: new work, stopping, or a completion's callback (which may come
  // after the manager is gone, hence shared).
  struct Wakeup {
    IdleWaiters idle;
    std::atomic<std::uint64_t> completions{0};
    std::atomic<std::uint64_t> pushes{0};  // notify(): new work, or stopping
  };
  enum class Started { Yes, Busy, Failed };

  void run();
  Started start(Task *task);
  Task *pop_early();
  bool work_waiting() const;
  void complete(Running &running, std::uint64_t ran_ns);
  void recycle(Running &running);
  // Asks each running task's completion to wake the thread when it ends; false when one
  // cannot (the thread then polls).
  bool watch_running();
  // "task 'x' (file:line) failed on opencl0: what"
  std::string failed_here(Task *task, const std::string &what) const;
  void fail(Task *task, std::string message, std::uint64_t start_ns);
  [[noreturn]] void stop_program(Task *task, const std::string &what);

  DeviceWork &work_;  // the runtime, as far as the manager knows it
  const Topology &topology_;
  Accelerator &accelerator_;
  dc::Directory &directory_;
  const int device_;         // the device's number (device_numbering.hpp)
  const dc::SpaceId space_;  // its memory space in the directory: space_of(device_)
  const int index_;          // among the devices of its kind
  const int lane_;           // in statistics and the trace
  const std::size_t in_flight_;
  const bool in_order_;  // the accelerator completes its launches in order
  // NANORT_STATS: where the thread's time goes, summed over its tasks (printed at the end).
  struct Timing {
    std::uint64_t tasks = 0, stage_ns = 0, launch_ns = 0, hand_on_ns = 0, complete_ns = 0,
                  waiting_ns = 0;  // polling or asleep with nothing done
    std::uint64_t stage_lock_ns = 0, longest_stage_ns = 0;  // of stage_ns
    std::uint64_t early = 0, early_across = 0;  // launched behind running kernels (of others)
  };
  const bool timing_;
  Timing timing_sums_;
  std::deque<Running> running_;  // oldest first
  std::vector<Running> spare_;   // records of finished tasks, for reuse
  Task *held_ = nullptr;  // waits for device memory
  SpinLock early_lock_;
  std::deque<Task *> early_;  // guarded by early_lock_
  std::atomic<std::size_t> early_count_{0};
  std::atomic<std::size_t> shared_count_{0};  // shared_load()
  TaskCosts::Pace shared_pace_;
  std::atomic<std::size_t> running_count_{0};  // running_.size(), for other threads
  std::atomic<std::int64_t> expected_work_ns_{0};
  std::atomic<double> seconds_per_byte_{1.0 / 16e9};
  std::uint64_t last_done_ns_ = 0;  // when the latest completions were seen
  std::atomic<bool> stopping_{false};
  std::shared_ptr<Wakeup> wakeup_ = std::make_shared<Wakeup>();
  bool can_watch_ = true;  // the backend's completions can wake the thread (on_done)
  std::thread thread_;
};

}  // namespace nanort::rt
