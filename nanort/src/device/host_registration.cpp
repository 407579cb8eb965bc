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
  // What the runtime locked by itself of these pages gives way, and it locks none of these
  // bytes while they are the program's (the driver locks a byte once).
  if (auto_) auto_->reserve(start, start + bytes);
  try {
    for (const auto &accelerator : accelerators)
      if (accelerator->kind() == NANORT_DEVICE_CUDA) {
        accelerator->register_host(address, bytes);
        break;
      }
  } catch (...) {
    if (auto_) auto_->release(start, start + bytes);
    throw;
  }
  host_locked_.emplace(start, start + bytes);
}

namespace {
// Locks through a GPU's portable registration (for every context).
class AcceleratorLocker final : public HostLockCache::Locker {
 public:
  explicit AcceleratorLocker(Accelerator &gpu) : gpu_(gpu) {}
  bool lock(void *address, std::size_t bytes, std::string &why) override {
    try {
      gpu_.register_host(address, bytes);
      return true;
    } catch (const std::exception &e) {
      why = e.what();
      return false;
    }
  }
  bool unlock(void *address) override {
    try {
      gpu_.unregister_host(address);
      return true;
    } catch (const std::exception &) {
      return false;  // (counted by the cache)
    }
  }

 private:
  Accelerator &gpu_;
};
}  // namespace

void HostRegistration::start_auto(std::size_t limit, std::size_t large,
                                  const std::vector<std::unique_ptr<Accelerator>> &accelerators,
                                  std::vector<std::string> &warnings) {
  Accelerator *gpu = nullptr;
  for (const auto &accelerator : accelerators)
    if (accelerator->kind() == NANORT_DEVICE_CUDA) {
      gpu = accelerator.get();
      break;
    }
  if (!gpu) return;
  std::string why;
  if (!HostLockCache::hooks_in_effect(why)) {
    warnings.push_back("NANORT_HOST_REGISTER=auto does not lock ordinary memory: " + why +
                       "; its copies go through staging (nanort_host_register still locks)");
    return;
  }
  locker_ = std::make_unique<AcceleratorLocker>(*gpu);
  HostLockCache::Options options;
  options.limit = limit;
  options.large_bytes = large;
  auto_ = std::make_unique<HostLockCache>(*locker_, options);
  HostLockCache::set_active(auto_.get());
  for (const auto &accelerator : accelerators) accelerator->use_host_locks(auto_.get());
}

void HostRegistration::stop_auto(const std::vector<std::unique_ptr<Accelerator>> &accelerators) {
  if (!auto_) return;
  for (const auto &accelerator : accelerators) accelerator->use_host_locks(nullptr);
  HostLockCache::set_active(nullptr);
  auto_.reset();
  locker_.reset();
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
  if (auto_) auto_->release(found->first, found->second);
  host_locked_.erase(found);
}

}  // namespace nanort::rt
