// MemorySpace: what the directory needs from a device's memory, and nothing more. Each
// backend (OpenCL, CUDA) implements it for each of its devices; HostSpace (host_space.hpp)
// implements it over ordinary memory for tests.
//
// Every copy is asynchronous: it returns a Completion at once and starts after the
// completions it is given ('after'). Completions of one backend may be handed to another: a
// backend that cannot make its own commands wait for a foreign completion waits for it on the
// host before it enqueues.
#pragma once

#include <nanort/dc/invariant.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nanort::dc {

// A device allocation as the backend names it (an OpenCL cl_mem, a CUdeviceptr ...).
struct DeviceBuffer {
  std::uintptr_t handle = 0;
  explicit operator bool() const { return handle != 0; }
  bool operator==(const DeviceBuffer &) const = default;
};

// An operation in flight: a copy, or a kernel that copies wait for.
class Completion {
 public:
  virtual ~Completion() = default;
  // True once done; never blocks.
  virtual bool poll() = 0;
  // Blocks until done. Throws if the operation failed.
  virtual void wait() = 0;
  // Has 'done' called once, from any thread, when the operation ends (however it ends), so
  // that a waiter may sleep instead of polling; false when the backend cannot (then 'done' is
  // never called and the caller polls).
  virtual bool on_done(std::function<void()> /*done*/) { return false; }
  // Why the operation never ran, when a backend that enqueues later (on a thread of its own)
  // found that it could not; null otherwise. Such an operation is done at once: waiting for
  // it returns (it touches no memory), and whoever ran it reports this.
  virtual const std::string *not_run() const { return nullptr; }
};
using CompletionPtr = std::shared_ptr<Completion>;
using Dependencies = std::span<const CompletionPtr>;

// Page-locked host memory of a backend, for staging copies of ordinary memory.
struct PinnedBuffer {
  void *host = nullptr;
  std::uintptr_t handle = 0;  // the backend's own name for it
  std::size_t bytes = 0;
};

class MemorySpace {
 public:
  virtual ~MemorySpace() = default;

  // For messages and statistics, e.g. "opencl0 (NVIDIA H100 80GB HBM3)".
  virtual std::string name() const = 0;
  // Bytes of device memory; a device cache's capacity is at most this.
  virtual std::size_t memory_size() const = 0;
  // An offset inside an allocation can be given to a kernel as an argument of its own when
  // it is a multiple of this (OpenCL sub-buffers need aligned origins; pointers do not).
  virtual std::size_t argument_alignment() const { return 1; }
  // True when copies from ordinary (pageable) host memory run slower than from pinned
  // memory, so that going through pinned staging buffers pays (GPUs; not CPU devices).
  virtual bool wants_staging() const { return false; }
  // True when the host bytes [address, address + bytes) are page-locked for this device (the
  // program or nanort_host_register locked them): copies then go direct, unstaged.
  virtual bool is_page_locked(const void * /*address*/, std::size_t /*bytes*/) { return false; }
  // The directory copies these host bytes through its staging buffers (they are not locked):
  // a backend that locks memory that moves often counts them here.
  virtual void staged(const void * /*address*/, std::size_t /*bytes*/) {}
  // These host bytes, not page-locked, are to be copied to the device: whether a backend that
  // locks memory by itself wants to lock them first (a large range's first copy, whose
  // locking would otherwise hold the driver while its staged copy waits behind it). Asked
  // with the directory's lock held: answers at once.
  virtual bool locks_before_copy(const void * /*address*/, std::size_t /*bytes*/) {
    return false;
  }
  // Then, without the directory's lock: locks them, waiting, and answers true if they are
  // locked (the copy then goes direct).
  virtual bool lock_for_copy(const void * /*address*/, std::size_t /*bytes*/) { return false; }

  // An allocation of 'bytes', or an empty buffer when the device is out of memory.
  virtual DeviceBuffer allocate(std::size_t bytes) = 0;
  // The buffer is no longer used by any operation when this is called.
  virtual void free(DeviceBuffer buffer) = 0;

  // Host memory -> device. 'source' stays valid and unchanged until the completion is done.
  virtual CompletionPtr write(DeviceBuffer target, std::size_t offset, const void *source,
                              std::size_t bytes, Dependencies after) = 0;
  // Device -> host memory.
  virtual CompletionPtr read(DeviceBuffer source, std::size_t offset, void *target,
                             std::size_t bytes, Dependencies after) = 0;
  // Inside this space.
  virtual CompletionPtr copy(DeviceBuffer source, std::size_t source_offset,
                             DeviceBuffer target, std::size_t target_offset, std::size_t bytes,
                             Dependencies after) = 0;

  // Direct copies from another space into this one (same OpenCL context, CUDA peers).
  virtual bool can_copy_from(const MemorySpace & /*other*/) const { return false; }
  virtual CompletionPtr copy_from(MemorySpace & /*other*/, DeviceBuffer /*source*/,
                                  std::size_t /*source_offset*/, DeviceBuffer /*target*/,
                                  std::size_t /*target_offset*/, std::size_t /*bytes*/,
                                  Dependencies /*after*/) {
    // (The directory copies directly only where can_copy_from said yes.)
    NANORT_UNREACHABLE_STATE(name() + " has no direct copy from another memory space");
  }

  // Pinned host memory for staging; an empty buffer when the backend has none.
  virtual PinnedBuffer allocate_pinned(std::size_t /*bytes*/) { return {}; }
  virtual void free_pinned(PinnedBuffer /*buffer*/) {}
};

// A completion that is done from the start (copies of zero bytes, synchronous backends).
class DoneCompletion final : public Completion {
 public:
  bool poll() override { return true; }
  void wait() override {}
};

// Done when all of its parts are done.
class AllCompletion final : public Completion {
 public:
  explicit AllCompletion(std::vector<CompletionPtr> parts) : parts_(std::move(parts)) {}
  bool poll() override {
    for (const CompletionPtr &part : parts_)
      if (!part->poll()) return false;
    return true;
  }
  void wait() override {
    for (const CompletionPtr &part : parts_) part->wait();
  }

 private:
  std::vector<CompletionPtr> parts_;
};

}  // namespace nanort::dc
