#include "device_manager.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <sys/prctl.h>

#include "../observe/observer.hpp"
#include "../task.hpp"
#include "../topology/topology.hpp"
#include "accelerator.hpp"
#include "device_numbering.hpp"
#include "device_work.hpp"

namespace nanort::rt {

DeviceManager::DeviceManager(DeviceWork &work, const Topology &topology, bool timing,
                             Accelerator &accelerator, dc::Directory &directory,
                             int device, int index_in_kind, int lane, int in_flight)
    : work_(work), topology_(topology), accelerator_(accelerator), directory_(directory),
      device_(device), space_(space_of(device)), index_(index_in_kind), lane_(lane),
      in_flight_(static_cast<std::size_t>(in_flight)),
      in_order_(accelerator.completes_in_order()), timing_(timing) {
  thread_ = std::thread([this] { run(); });
}

DeviceManager::~DeviceManager() {
  request_stop();
  if (thread_.joinable()) thread_.join();
  if (timing_ && timing_sums_.tasks > 0) {
    const Timing &t = timing_sums_;
    const double per_task = 1e-3 / static_cast<double>(t.tasks);
    std::fprintf(stderr,
                 "nanort: %s's manager thread, %llu tasks, us per task: staging %.2f (of it "
                 "waiting for the directory %.2f; the longest staging %.2f), launch %.2f, "
                 "handing on %.2f, completion %.2f, waiting %.2f; launched behind running "
                 "kernels %llu (behind other devices' %llu)\n",
                 accelerator_.name().c_str(), static_cast<unsigned long long>(t.tasks),
                 t.stage_ns * per_task, t.stage_lock_ns * per_task, t.longest_stage_ns * 1e-3,
                 t.launch_ns * per_task, t.hand_on_ns * per_task, t.complete_ns * per_task,
                 t.waiting_ns * per_task, static_cast<unsigned long long>(t.early),
                 static_cast<unsigned long long>(t.early_across));
  }
}

void DeviceManager::request_stop() {
  stopping_.store(true);
  notify();
}

void DeviceManager::push_own(Task *task) {
  {
    std::lock_guard<SpinLock> guard(early_lock_);
    early_.push_back(task);
    early_count_.store(early_.size(), std::memory_order_relaxed);
  }
  notify();
}

Task *DeviceManager::pop_early() {
  if (early_count_.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard<SpinLock> guard(early_lock_);
  if (early_.empty()) return nullptr;
  Task *task = early_.front();
  early_.pop_front();
  early_count_.store(early_.size(), std::memory_order_relaxed);
  return task;
}

bool DeviceManager::work_waiting() const {
  return early_count_.load() > 0 || work_.device_work_waiting(accelerator_.kind());
}

void DeviceManager::run() {
  // Near the device: its copies and completions involve the memory and the PCIe root of
  // that socket (hwloc; nothing happens where the device's place is unknown).
  topology_.bind_thread_near(accelerator_.pci_bus_id());
  // Its short sleeps while a CUDA GPU works (below) end when asked, not up to the kernel's
  // default 50 us of timer slack later: that is how late a completion is seen.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  const nanort_device_kind kind = accelerator_.kind();
  std::uint64_t idle_since = 0;  // when polling last found nothing to do
  // A task held back (its data cannot be placed while running tasks pin what it needs) is
  // tried again when a task ends, or after 2 ms (memory other work frees): not at every turn,
  // which would take a core staging it over and over from a CPU device and the workers.
  std::uint64_t held_retry_ns = 0;
  for (;;) {
    // Read before looking at the completions: one that ends after this look bumps it.
    const std::uint64_t completions_seen = wakeup_->completions.load();
    const std::uint64_t pushes_seen = wakeup_->pushes.load();
    bool progress = false;
    if (in_order_) {
      // The oldest ones that are done. They share the time since the previous ones were seen
      // done (or since the first of them was launched, its data staged): on an in-order device
      // that is what each took, as nearly as the host can tell (their completion is one event).
      std::size_t done = 0;
      while (done < running_.size() && running_[done].done->poll()) ++done;
      if (done > 0) {
        const std::uint64_t now = Observer::now_ns();
        const std::uint64_t begin = std::max(running_.front().launch_ns, last_done_ns_);
        const std::uint64_t share = now > begin ? (now - begin) / done : 0;
        last_done_ns_ = now;
        for (std::size_t k = 0; k < done; ++k) {
          Running finished = std::move(running_.front());
          running_.pop_front();
          running_count_.store(running_.size(), std::memory_order_relaxed);
          complete(finished, share);
          recycle(finished);
        }
        progress = true;
      }
    } else {
      for (std::size_t i = 0; i < running_.size();) {
        if (!running_[i].done->poll()) {
          ++i;
          continue;
        }
        Running finished = std::move(running_[i]);
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
        running_count_.store(running_.size(), std::memory_order_relaxed);
        complete(finished, Observer::now_ns() - finished.launch_ns);
        recycle(finished);
        progress = true;
      }
    }
    const bool may_start = !held_ || progress || Observer::now_ns() >= held_retry_ns;
    while (may_start && running_.size() < in_flight_) {
      Task *task = held_ ? held_ : pop_early();
      if (!task) {
        task = work_.pop_device_task(kind, index_, static_cast<std::size_t>(device_));
        if (!task) break;
        task->from_shared_queue = true;
        shared_count_.fetch_add(1, std::memory_order_relaxed);
      }
      held_ = nullptr;
      const Started started = start(task);
      if (started == Started::Busy) {
        held_ = task;  // memory frees up when a running task completes
        held_retry_ns = Observer::now_ns() + 2'000'000;
        break;
      }
      progress = true;
    }
    if (progress) {
      idle_since = 0;
      continue;
    }
    // Nothing more to launch and nothing done: what the backend holds back goes now (once per
    // pause; while work flows it groups launches).
    if (idle_since == 0 && !running_.empty()) accelerator_.flush_launches();
    if (running_.empty() && !held_) {
      if (stopping_.load() && !work_waiting()) return;
      wakeup_->idle.sleep_unless([&] { return stopping_.load() || work_waiting(); });
      continue;
    }
    // Kernels or copies in flight: poll, yielding, for a short while (completions of short
    // kernels come soon); then sleep until one ends where the backend says so (OpenCL event
    // callbacks: a CPU device such as PoCL gets every core meanwhile), else poll in short
    // sleeps that leave the cores to CPU devices and workers.
    const std::uint64_t now = Observer::now_ns();
    if (idle_since == 0) idle_since = now;
    const bool can_take = !held_ && running_.size() < in_flight_;
    if (now - idle_since < 50'000) {
      std::this_thread::yield();
    } else if (!(can_take && work_waiting()) && !running_.empty() && watch_running()) {
      // Until a completion, or new work it can take; every 2 ms at the latest (a backend
      // whose callbacks came late would cost no more).
      wakeup_->idle.sleep_unless_for(
          [&] {
            return wakeup_->completions.load() != completions_seen ||
                   (can_take && wakeup_->pushes.load() != pushes_seen);
          },
          2'000'000);
    } else {
      // Work queued that this device may take once another one's load changes, or a backend
      // that cannot say when its work ends (CUDA): polled.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    if (timing_) timing_sums_.waiting_ns += Observer::now_ns() - now;
  }
}

DeviceManager::Started DeviceManager::start(Task *task) {
  // A finished task's record, reused: its vectors keep their memory.
  Running running;
  if (!spare_.empty()) {
    running = std::move(spare_.back());
    spare_.pop_back();
  }
  running.task = task;
  work_.device_data(*task, running.data);
  running.start_ns = Observer::now_ns();
  bool staged = false;
  try {
    if (directory_.stage(space_, running.data, running.staging) ==
        dc::Directory::StageResult::Busy) {
      recycle(running);
      return Started::Busy;
    }
    staged = true;
    const std::uint64_t staged_ns = Observer::now_ns();
    running.launch_ns = staged_ns;
    if (running.staging.bytes_in >= (64u << 10)) {
      const double sample = static_cast<double>(staged_ns - running.start_ns) * 1e-9 /
                            static_cast<double>(running.staging.bytes_in);
      seconds_per_byte_.store(0.8 * seconds_per_byte_.load(std::memory_order_relaxed) + 0.2 * sample,
                              std::memory_order_relaxed);
    }
    // Launched behind its predecessors' kernels, here or on other devices: it waits for
    // them on the device (its data's copies from other devices wait for their writers
    // already), so it starts after all of them end, as if it had waited on the host.
    bool behind_others = false;
    if (task->early_released)
      for (const auto &[device, done] : task->early_after)
        if (!done->poll()) {
          running.staging.ready.push_back(done);
          behind_others = behind_others || device != device_;
        }
    running.done = accelerator_.launch(*task, *task->impl, running.data, running.staging);
    task->early_after.clear();
    const std::uint64_t launched_ns = timing_ ? Observer::now_ns() : 0;
    if (in_order_) {
      // The tasks after this one may be launched behind it now: its writes are recorded, and
      // its successors that can run here (or, across devices that wait for each other's
      // kernels, anywhere of its kind) are released.
      directory_.commit_launched(running.data, running.staging, running.done);
      task->launch_done = running.done;
      work_.device_task_launched(task, device_);
    }
    if (timing_) {
      ++timing_sums_.tasks;
      timing_sums_.early += task->early_released ? 1 : 0;
      timing_sums_.early_across += behind_others ? 1 : 0;
      timing_sums_.stage_ns += staged_ns - running.start_ns;
      timing_sums_.stage_lock_ns += running.staging.lock_wait_ns;
      timing_sums_.longest_stage_ns =
          std::max(timing_sums_.longest_stage_ns, staged_ns - running.start_ns);
      timing_sums_.launch_ns += launched_ns - staged_ns;
      timing_sums_.hand_on_ns += Observer::now_ns() - launched_ns;
    }
  } catch (const std::exception &e) {
    if (accelerator_.is_fatal(e)) stop_program(task, e.what());
    if (staged) directory_.abandon(running.staging);
    if (task->from_shared_queue) shared_count_.fetch_sub(1, std::memory_order_relaxed);
    // The directory's "needs 260 KiB at once on ..." reads as a sentence about the task.
    const auto *too_large = dynamic_cast<const dc::DataTooLargeError *>(&e);
    fail(task,
         too_large ? task->describe() + " " + too_large->predicate() : failed_here(task, e.what()),
         running.start_ns);
    recycle(running);
    return Started::Failed;
  }
  running_.push_back(std::move(running));
  running_count_.store(running_.size(), std::memory_order_relaxed);
  return Started::Yes;
}

bool DeviceManager::watch_running() {
  if (!can_watch_) return false;
  for (Running &running : running_) {
    if (running.watched) continue;
    std::shared_ptr<Wakeup> wakeup = wakeup_;
    try {
      running.watched = running.done->on_done([wakeup] {
        wakeup->completions.fetch_add(1);
        wakeup->idle.notify_all();
      });
    } catch (const std::bad_alloc &) {
      return false;  // poll this time
    }
    if (!running.watched) {
      can_watch_ = false;  // the backend cannot tell (CUDA): poll from now on
      return false;
    }
  }
  return true;
}

void DeviceManager::recycle(Running &running) {
  if (spare_.size() >= in_flight_) return;
  running.task = nullptr;
  running.watched = false;
  running.done.reset();
  running.staging.ready.clear();  // completions: not kept alive by a spare record
  spare_.push_back(std::move(running));
}

void DeviceManager::complete(Running &running, std::uint64_t ran_ns) {
  const std::uint64_t start_ns = timing_ ? Observer::now_ns() : 0;
  struct AddTime {  // on every way out
    DeviceManager &manager;
    std::uint64_t start_ns;
    ~AddTime() {
      if (manager.timing_) manager.timing_sums_.complete_ns += Observer::now_ns() - start_ns;
    }
  } add_time{*this, start_ns};
  std::string failure;
  try {
    running.done->wait();  // done: this only reports a failure
    if (const std::string *why = running.done->not_run()) failure = *why;
  } catch (const std::exception &e) {
    if (accelerator_.is_fatal(e)) stop_program(running.task, e.what());
    failure = e.what();
  }
  directory_.finish(running.data, running.staging);
  if (running.task->from_shared_queue) shared_count_.fetch_sub(1, std::memory_order_relaxed);
  if (!failure.empty()) {
    fail(running.task, failed_here(running.task, failure), running.start_ns);
    return;
  }
  // Results no task waits for go home now, on the copy-out stream, while the device goes on.
  if (work_.write_back_now(running.task)) {
    try {
      directory_.write_back(running.data, space_);
    } catch (const std::exception &e) {  // nothing lost: the results stay here for the flush
      std::fprintf(stderr, "nanort: warning: results of %s could not start home early: %s\n",
                   running.task->describe().c_str(), e.what());
    }
  }
  work_.device_task_measured(*running.task, device_, ran_ns, true);
  work_.device_task_done(running.task, lane_, running.start_ns, false);
}

void DeviceManager::stop_program(Task *task, const std::string &what) {
  std::fprintf(stderr,
               "nanort: %s failed on %s: %s\n"
               "nanort: the device cannot run anything after this error; the program stops\n",
               task->describe().c_str(), accelerator_.name().c_str(), what.c_str());
  work_.report_before_fatal_exit();  // statistics and trace of what ran so far
  std::fflush(nullptr);
  std::_Exit(EXIT_FAILURE);
}

std::string DeviceManager::failed_here(Task *task, const std::string &what) const {
  return task->describe() + " failed on " + accelerator_.name() + ": " + what;
}

void DeviceManager::fail(Task *task, std::string message, std::uint64_t start_ns) {
  task->parent->record_error(std::move(message));
  work_.device_task_measured(*task, device_, 0, false);
  work_.device_task_done(task, lane_, start_ns, true);
}

}  // namespace nanort::rt
