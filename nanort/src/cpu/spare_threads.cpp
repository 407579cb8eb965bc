#include "spare_threads.hpp"

#include <chrono>
#include <cstdint>
#include <new>
#include <system_error>
#include <utility>

#include "../observe/observer.hpp"

namespace nanort::rt {

SpareThreads::SpareThreads(IdleWaiters &spare_idle, const std::atomic<bool> &stopping,
                           RunTasks run_tasks)
    : spare_idle_(spare_idle), stopping_(stopping), run_tasks_(std::move(run_tasks)) {}

bool SpareThreads::hand_over_worker(bool in_task) {
  // A task's thread hands its place to a spare thread: the blocked call may wait for a task
  // that has yet to run (a receive whose send is a later task), however few the workers.
  if (!in_task) return false;
  blocked_.fetch_add(1);
  std::lock_guard<std::mutex> guard(spares_mutex_);
  if (parked_spares_ > woken_spares_) {  // one not yet claimed by another blocked task
    ++woken_spares_;
    spare_wanted_.notify_one();
    return true;
  }
  try {
    spares_.emplace_back([this] { spare_loop(); });
  } catch (const std::system_error &) {  // no thread to be had: wait holding the worker
    blocked_.fetch_sub(1);
    return false;
  } catch (const std::bad_alloc &) {
    blocked_.fetch_sub(1);
    return false;
  }
  return true;
}

void SpareThreads::take_back_worker(bool handed_over) {
  if (!handed_over) return;
  blocked_.fetch_sub(1);
  spare_idle_.notify_all();  // a spare beyond what is needed leaves (the workers sleep on)
}

void SpareThreads::block_until(int (*ready)(void *), void *arg, bool in_task, long poll_us) {
  if (ready(arg)) return;
  const bool handed_over = hand_over_worker(in_task);
  // Poll without pause for poll_us (MPI progresses a transfer only inside its calls,
  // and its own blocking calls poll without pause), yielding the core to the spare between
  // polls; past that, in short sleeps: a long wait then costs little CPU time.
  const std::uint64_t deadline =
      Observer::now_ns() + static_cast<std::uint64_t>(poll_us) * 1000;
  int sleeps = 0;
  for (unsigned polls = 0; !ready(arg); ++polls) {
    if (sleeps == 0 && ((polls & 15) != 15 || Observer::now_ns() < deadline)) {
      std::this_thread::yield();
    } else {
      if (sleeps < 1000) ++sleeps;
      std::this_thread::sleep_for(std::chrono::microseconds(sleeps < 1000 ? 20 : 100));
    }
  }
  take_back_worker(handed_over);
}

void SpareThreads::blocking_call(void (*call)(void *), void *arg, bool in_task) {
  const bool handed_over = hand_over_worker(in_task);
  try {
    call(arg);
  } catch (...) {
    take_back_worker(handed_over);
    throw;
  }
  take_back_worker(handed_over);
}

void SpareThreads::spare_loop() {
  std::unique_lock<std::mutex> lock(spares_mutex_);
  for (;;) {
    ++parked_spares_;
    spare_wanted_.wait(lock, [this] {
      return stopping_.load() || running_spares_.load() < blocked_.load();
    });
    --parked_spares_;
    if (woken_spares_ > 0) --woken_spares_;
    if (stopping_.load()) return;
    running_spares_.fetch_add(1);
    lock.unlock();
    // Run tasks until fewer threads are blocked than spares run (then this one leaves, once).
    bool left = false;
    // It sleeps apart from the workers, so that the end of a blocked call wakes it alone.
    const auto leave = [this, &left] {
      if (left) return true;
      for (int r = running_spares_.load(); r > blocked_.load();)
        if (running_spares_.compare_exchange_weak(r, r - 1)) return left = true;
      if (stopping_.load(std::memory_order_relaxed)) {
        running_spares_.fetch_sub(1);
        return left = true;
      }
      return false;
    };
    run_tasks_(leave);
    lock.lock();
  }
}

void SpareThreads::stop() {
  {
    std::lock_guard<std::mutex> guard(spares_mutex_);
    spare_wanted_.notify_all();
  }
  for (std::thread &spare : spares_) spare.join();  // (no task is left: none blocks now)
  spares_.clear();
}

}  // namespace nanort::rt
