#include "task_costs.hpp"

#include <algorithm>
#include <mutex>

#include "../task.hpp"

namespace nanort::rt {

std::size_t TaskCosts::KeyHash::operator()(const Key &key) const {
  const std::size_t a = std::hash<const void *>()(key.site);
  const std::size_t b = std::hash<std::uintptr_t>()(key.data);
  return a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2)) ^ static_cast<std::size_t>(key.kind);
}

// The task's pragma and the first byte of the first data it writes (else of the first it
// reads): what names "the same task" from one step of a loop to the next.
bool TaskCosts::key_of(const Task &task, nanort_device_kind kind, Key &key) {
  if (!task.site) return false;
  const Access *named = nullptr;
  for (const Access &access : task.accesses)
    if (access.mode != NANORT_IN) {
      named = &access;
      break;
    }
  if (!named && !task.accesses.empty()) named = &task.accesses[0];
  if (!named && !task.copies.empty()) named = &task.copies[0];
  if (!named) return false;
  key = Key{task.site, named->region.first(), static_cast<int>(kind)};
  return true;
}

void TaskCosts::record(const Task &task, nanort_device_kind kind, std::uint64_t nanoseconds) {
  Key key;
  if (!key_of(task, kind, key)) return;
  std::lock_guard<SpinLock> guard(lock_);
  if (mean_ns_.size() >= kMaxEntries && !mean_ns_.contains(key)) mean_ns_.clear();
  auto [entry, added] = mean_ns_.try_emplace(key, nanoseconds);
  if (!added) entry->second = (entry->second + nanoseconds) / 2;  // the recent runs weigh most
}

std::uint64_t TaskCosts::expected_ns(const Task &task, nanort_device_kind kind) const {
  Key key;
  if (!key_of(task, kind, key)) return 0;
  std::lock_guard<SpinLock> guard(lock_);
  const auto found = mean_ns_.find(key);
  return found == mean_ns_.end() ? 0 : std::max<std::uint64_t>(found->second, 1);
}

std::size_t TaskCosts::size() const {
  std::lock_guard<SpinLock> guard(lock_);
  return mean_ns_.size();
}

}  // namespace nanort::rt
