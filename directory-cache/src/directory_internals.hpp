// The directory's own types, shared by its source files (directory.cpp says which holds what).
// Not installed: nothing outside src/ sees them.
#pragma once

#include <nanort/dc/directory.hpp>
#include <nanort/dc/human_size.hpp>

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nanort::dc {

struct Directory::Allocation {
  std::uintptr_t start = 0, end = 0;  // the host range it mirrors
  DeviceBuffer buffer;
  int pins = 0;                        // staged tasks using it
  std::uint64_t last_use = 0;
  std::vector<CompletionPtr> users;    // copies out of it still in flight
  std::size_t bytes() const { return end - start; }
};

inline void forget_done(std::vector<CompletionPtr> &completions) {
  std::erase_if(completions, [](const CompletionPtr &c) { return c->poll(); });
}

// Two sizes a message compares ("needs A, more than B"): exact byte counts where the readable
// forms would look the same.
inline std::pair<std::string, std::string> sizes_apart(std::size_t a, std::size_t b) {
  std::string first = human_size(a), second = human_size(b);
  if (first == second && a != b) {
    first = std::to_string(a) + " bytes";
    second = std::to_string(b) + " bytes";
  }
  return {first, second};
}

// A copy made after the directory's lock is released (stage()): done once it was made, by the
// thread that planned it, and the copy it made is done. Waiters sleep until it was made.
class Directory::DeferredCompletion final : public Completion {
 public:
  void resolve(CompletionPtr made) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      made_ = std::move(made);
      resolved_ = true;
    }
    ready_.notify_all();
  }
  void fail(std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      error_ = std::move(error);
      resolved_ = true;
    }
    ready_.notify_all();
  }
  // The copy it made, once made without error (else null).
  CompletionPtr made() {
    std::lock_guard<std::mutex> guard(mutex_);
    return resolved_ && !error_ ? made_ : nullptr;
  }
  // Why it was not made, once it failed (else null).
  std::exception_ptr error() {
    std::lock_guard<std::mutex> guard(mutex_);
    return error_;
  }
  // What a task waits for: the copy made, once it is (a backend waits for that on the
  // device), else 'completion' itself.
  static CompletionPtr settled(const CompletionPtr &completion) {
    if (auto *deferred = dynamic_cast<DeferredCompletion *>(completion.get()))
      if (CompletionPtr made = deferred->made()) return made;
    return completion;
  }
  bool poll() override {
    CompletionPtr made;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (!resolved_) return false;
      if (error_) return true;  // wait() reports it
      made = made_;
    }
    return made->poll();
  }
  void wait() override {
    CompletionPtr made;
    {
      std::unique_lock<std::mutex> guard(mutex_);
      ready_.wait(guard, [&] { return resolved_; });
      if (error_) std::rethrow_exception(error_);
      made = made_;
    }
    made->wait();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  bool resolved_ = false;
  CompletionPtr made_;
  std::exception_ptr error_;
};

// A copy between a device and the host that stage() planned and defer_through_host() set up,
// to be made by run_deferred() without the directory's lock.
struct Directory::DeferredCopy {
  SpaceId device = kHost;  // the device end
  bool to_host = false;    // device -> host, else host -> device
  DeviceBuffer buffer;     // the device end's allocation (kept alive: 'done' is a user)
  std::size_t offset = 0;
  std::uintptr_t start = 0, end = 0;  // the host end
  std::vector<CompletionPtr> after;
  std::shared_ptr<DeferredCompletion> done;
};

// One copy to make, gathered from contiguous fragments with the same source and target.
struct Directory::PlannedCopy {
  SpaceId from = kHost, to = kHost;
  std::uintptr_t start = 0, end = 0;
  Allocation *source = nullptr, *target = nullptr;  // device sides
  std::vector<CompletionPtr> after;
  std::vector<FragmentState *> fragments;  // to mark pending once issued
};

}  // namespace nanort::dc
