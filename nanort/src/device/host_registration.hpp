// HostRegistration: nanort_host_register / nanort_host_unregister, and the ranges the runtime
// locks by itself (NANORT_HOST_REGISTER=auto, host_lock_cache.hpp). One device of each lock
// scope registers for the others: CUDA's portable registration for every GPU, or, where the
// runtime has no CUDA GPU, an OpenCL context of NVIDIA GPUs for its devices. Other devices
// copy through their staging buffers. The program's ranges are kept, so that a wrong call is an error that says what is
// wrong without a failing driver call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "host_lock_cache.hpp"

namespace nanort::dc {
class Directory;
}

namespace nanort::rt {

class Accelerator;

class HostRegistration {
 public:
  HostRegistration() = default;
  HostRegistration(const HostRegistration &) = delete;
  HostRegistration &operator=(const HostRegistration &) = delete;
  ~HostRegistration() {
    if (auto_) HostLockCache::set_active(nullptr);  // (stop_auto() not reached)
  }
  // Page-locks 'bytes' at 'address' for the devices; std::invalid_argument if they overlap
  // memory registered already.
  void add(void *address, std::size_t bytes,
           const std::vector<std::unique_ptr<Accelerator>> &accelerators);
  // Unlocks what add() locked at 'address', once device data of the range has come home
  // ('directory' null without devices); std::invalid_argument if add() locked nothing there.
  void remove(void *address, dc::Directory *directory,
              const std::vector<std::unique_ptr<Accelerator>> &accelerators);

  // Starts the automatic locking for the devices that can use it (one_per_lock_scope), if
  // there are any and the memory hooks are in effect ('warnings' says why not when they are
  // not), with 'options' (the limit, large ranges, pieces).
  void start_auto(const HostLockCache::Options &options,
                  const std::vector<std::unique_ptr<Accelerator>> &accelerators,
                  std::vector<std::string> &warnings);
  // Unlocks what it locked; before the devices close, with no copy in flight.
  void stop_auto(const std::vector<std::unique_ptr<Accelerator>> &accelerators);
  HostLockCache *auto_locks() { return auto_.get(); }
  // One device of each host_lock_scope() that locks (CUDA's alone where there is a CUDA GPU),
  // in the order given.
  static std::vector<Accelerator *> one_per_lock_scope(
      const std::vector<std::unique_ptr<Accelerator>> &accelerators);

 private:
  std::unique_ptr<HostLockCache::Locker> locker_;
  std::unique_ptr<HostLockCache> auto_;
  std::mutex host_locked_mutex_;
  std::map<std::uintptr_t, std::uintptr_t> host_locked_;  // start -> end
};

}  // namespace nanort::rt
