// HostRegistration: nanort_host_register / nanort_host_unregister. One GPU registers for all
// (CUDA's portable registration); other kinds copy through their staging buffers and need
// nothing. The ranges are kept, so that a wrong call is an error that says what is wrong
// without a failing driver call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace nanort::dc {
class Directory;
}

namespace nanort::rt {

class Accelerator;

class HostRegistration {
 public:
  // Page-locks 'bytes' at 'address' for the devices; std::invalid_argument if they overlap
  // memory registered already.
  void add(void *address, std::size_t bytes,
           const std::vector<std::unique_ptr<Accelerator>> &accelerators);
  // Unlocks what add() locked at 'address', once device data of the range has come home
  // ('directory' null without devices); std::invalid_argument if add() locked nothing there.
  void remove(void *address, dc::Directory *directory,
              const std::vector<std::unique_ptr<Accelerator>> &accelerators);

 private:
  std::mutex host_locked_mutex_;
  std::map<std::uintptr_t, std::uintptr_t> host_locked_;  // start -> end
};

}  // namespace nanort::rt
