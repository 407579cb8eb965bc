#include "host_registration.hpp"

#include <nanort/dc/directory.hpp>

#include <iterator>
#include <stdexcept>
#include <string>

#include "accelerator.hpp"

namespace nanort::rt {

void HostRegistration::add(void *address, std::size_t bytes,
                           const std::vector<std::unique_ptr<Accelerator>> &accelerators) {
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard<std::mutex> guard(host_locked_mutex_);
  auto next = host_locked_.lower_bound(start);
  const bool overlaps = (next != host_locked_.end() && next->first < start + bytes) ||
                        (next != host_locked_.begin() && std::prev(next)->second > start);
  if (overlaps)
    throw std::invalid_argument("nanort_host_register: the " + std::to_string(bytes) +
                                " bytes overlap memory that nanort_host_register locked already");
  for (const auto &accelerator : accelerators)
    if (accelerator->kind() == NANORT_DEVICE_CUDA) {
      accelerator->register_host(address, bytes);
      break;
    }
  host_locked_.emplace(start, start + bytes);
}

void HostRegistration::remove(void *address, dc::Directory *directory,
                              const std::vector<std::unique_ptr<Accelerator>> &accelerators) {
  std::lock_guard<std::mutex> guard(host_locked_mutex_);
  const auto found = host_locked_.find(reinterpret_cast<std::uintptr_t>(address));
  if (found == host_locked_.end())
    throw std::invalid_argument("nanort_host_unregister: not an address nanort_host_register "
                                "locked (or unlocked already)");
  // Device data of the range comes home first, and copies into it still in flight (results
  // going home early) end, before the memory stops being page-locked.
  if (directory)
    directory->flush(dc::Region::contiguous(reinterpret_cast<const void *>(found->first),
                                            found->second - found->first));
  for (const auto &accelerator : accelerators)
    if (accelerator->kind() == NANORT_DEVICE_CUDA) {
      accelerator->unregister_host(address);
      break;
    }
  host_locked_.erase(found);
}

}  // namespace nanort::rt
