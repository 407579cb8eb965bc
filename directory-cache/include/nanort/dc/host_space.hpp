// HostSpace: a MemorySpace over ordinary host memory, standing in for a device in tests.
//
// Its "device" buffers come from the heap. Copies run in order on a thread of its own, after
// their dependencies, so that tests see truly asynchronous completions; a test holds them
// back (hold_copies) to see them in flight, and a delay per copy widens the windows in which
// a fault could show. Spaces made with the same peer group copy between each other directly.
#pragma once

#include <nanort/dc/memory_space.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace nanort::dc {

struct HostSpaceOptions {
  std::string name = "host-space";
  std::size_t memory_size = std::size_t(1) << 30;  // allocations past this total fail
  std::size_t argument_alignment = 1;
  bool wants_staging = false;
  int peer_group = -1;                  // >= 0: direct copies with spaces of the same group
  std::chrono::microseconds copy_delay{0};
};

class HostSpace final : public MemorySpace {
 public:
  explicit HostSpace(HostSpaceOptions options = {});
  ~HostSpace() override;

  std::string name() const override { return options_.name; }
  std::size_t memory_size() const override { return options_.memory_size; }
  std::size_t argument_alignment() const override { return options_.argument_alignment; }
  bool wants_staging() const override { return options_.wants_staging; }

  DeviceBuffer allocate(std::size_t bytes) override;
  void free(DeviceBuffer buffer) override;
  CompletionPtr write(DeviceBuffer target, std::size_t offset, const void *source,
                      std::size_t bytes, Dependencies after) override;
  CompletionPtr read(DeviceBuffer source, std::size_t offset, void *target, std::size_t bytes,
                     Dependencies after) override;
  CompletionPtr copy(DeviceBuffer source, std::size_t source_offset, DeviceBuffer target,
                     std::size_t target_offset, std::size_t bytes, Dependencies after) override;
  bool can_copy_from(const MemorySpace &other) const override;
  CompletionPtr copy_from(MemorySpace &other, DeviceBuffer source, std::size_t source_offset,
                          DeviceBuffer target, std::size_t target_offset, std::size_t bytes,
                          Dependencies after) override;
  PinnedBuffer allocate_pinned(std::size_t bytes) override;
  void free_pinned(PinnedBuffer buffer) override;

  // Where a device buffer's bytes are, so that a test can play the kernel.
  static unsigned char *bytes_of(DeviceBuffer buffer) {
    return reinterpret_cast<unsigned char *>(buffer.handle);
  }
  std::size_t allocated_bytes() const { return allocated_.load(); }
  std::size_t live_buffers() const { return live_.load(); }
  std::size_t copies_made() const { return copies_.load(); }
  // While held, the space starts no copy: those enqueued wait (their completions stay
  // pending) until release_copies(), so that a test sees copies in flight for as long as it
  // needs, whatever the machine's load. The destructor releases them.
  void hold_copies();
  void release_copies();

 private:
  CompletionPtr enqueue(std::function<void()> work, Dependencies after);
  void run();

  HostSpaceOptions options_;
  std::atomic<std::size_t> allocated_{0}, live_{0}, copies_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  bool held_ = false;
  std::thread worker_;
};

}  // namespace nanort::dc
