#include "host_registration.hpp"

#include <nanort/dc/directory.hpp>

#include <algorithm>
#include <exception>
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
  std::vector<Accelerator *> done;
  try {
    for (Accelerator *accelerator : one_per_lock_scope(accelerators)) {
      accelerator->register_host(address, bytes);
      done.push_back(accelerator);
    }
  } catch (...) {
    if (auto_) auto_->release(start, start + bytes);
    for (Accelerator *accelerator : done) {
      try {
        accelerator->unregister_host(address);
      } catch (const std::exception &) {  // (the first error is the one to report)
      }
    }
    throw;
  }
  host_locked_.emplace(start, start + bytes);
}

std::vector<Accelerator *> HostRegistration::one_per_lock_scope(
    const std::vector<std::unique_ptr<Accelerator>> &accelerators) {
  // One kind of lock per page: with a CUDA GPU, CUDA alone locks, and OpenCL devices copy
  // through staging (a CUDA registration does not speed up NVIDIA's OpenCL copies, and the two
  // kinds on the same memory were never measured to be right together).
  const bool cuda = std::any_of(accelerators.begin(), accelerators.end(), [](const auto &a) {
    return a->kind() == NANORT_DEVICE_CUDA && a->host_lock_scope();
  });
  std::vector<Accelerator *> chosen;
  std::vector<const void *> scopes;
  for (const auto &accelerator : accelerators) {
    const void *scope = accelerator->host_lock_scope();
    if (!scope || (cuda && accelerator->kind() != NANORT_DEVICE_CUDA) ||
        std::find(scopes.begin(), scopes.end(), scope) != scopes.end())
      continue;
    scopes.push_back(scope);
    chosen.push_back(accelerator.get());
  }
  return chosen;
}

namespace {
// Locks for every device that can use locked memory: through one device of each lock scope
// (CUDA's portable registration; an OpenCL context's buffer over the memory).
class AcceleratorLocker final : public HostLockCache::Locker {
 public:
  explicit AcceleratorLocker(std::vector<Accelerator *> devices) : devices_(std::move(devices)) {}
  bool lock(void *address, std::size_t bytes, std::string &why) override {
    std::size_t done = 0;
    try {
      for (; done < devices_.size(); ++done) devices_[done]->register_host(address, bytes);
      return true;
    } catch (const std::exception &e) {
      why = e.what();
      while (done > 0) unlock_quietly(*devices_[--done], address);
      return false;
    }
  }
  bool unlock(void *address) override {
    bool all = true;
    for (Accelerator *device : devices_) all = unlock_quietly(*device, address) && all;
    return all;  // (a failure is counted by the cache)
  }

 private:
  static bool unlock_quietly(Accelerator &device, void *address) {
    try {
      device.unregister_host(address);
      return true;
    } catch (const std::exception &) {
      return false;
    }
  }
  std::vector<Accelerator *> devices_;
};
}  // namespace

void HostRegistration::start_auto(const HostLockCache::Options &options,
                                  const std::vector<std::unique_ptr<Accelerator>> &accelerators,
                                  std::vector<std::string> &warnings) {
  std::vector<Accelerator *> lockers = one_per_lock_scope(accelerators);
  if (lockers.empty()) return;  // (no device copies faster from locked memory)
  std::string why;
  if (!HostLockCache::hooks_in_effect(why)) {
    warnings.push_back("NANORT_HOST_REGISTER=auto does not lock ordinary memory: " + why +
                       "; its copies go through staging (nanort_host_register still locks)");
    return;
  }
  locker_ = std::make_unique<AcceleratorLocker>(std::move(lockers));
  auto_ = std::make_unique<HostLockCache>(*locker_, options);
  HostLockCache::set_active(auto_.get());
  // (The devices whose copies it locks for: those sharing a scope with a locker.)
  std::vector<const void *> scopes;
  for (Accelerator *locker : one_per_lock_scope(accelerators))
    scopes.push_back(locker->host_lock_scope());
  for (const auto &accelerator : accelerators)
    if (std::find(scopes.begin(), scopes.end(), accelerator->host_lock_scope()) != scopes.end())
      accelerator->use_host_locks(auto_.get());
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
  // Every scope unlocks, and the range is the program's no more, whatever fails; the first
  // failure is reported.
  std::exception_ptr failure;
  for (Accelerator *accelerator : one_per_lock_scope(accelerators)) {
    try {
      accelerator->unregister_host(address);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (auto_) auto_->release(found->first, found->second);
  host_locked_.erase(found);
  if (failure) std::rethrow_exception(failure);
}

}  // namespace nanort::rt
