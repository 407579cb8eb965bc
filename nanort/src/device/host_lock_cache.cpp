#include "host_lock_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iterator>

#include "../hot_tls.hpp"
#include "memory_hooks.hpp"

namespace nanort::rt {

namespace {
// The cache the hooks report to, and the span of addresses it knows of: a free outside it
// (nearly all of them) costs two loads. Hooks count themselves in 'in_hooks' while they use
// the cache, so that set_active(nullptr) can wait for them to leave.
std::atomic<HostLockCache *> active{nullptr};
std::atomic<std::uintptr_t> watched_lo{UINTPTR_MAX}, watched_hi{0};
std::atomic<int> in_hooks{0};

// Set while this thread is inside the cache: the frees of its own maps, and the driver's
// inside lock/unlock, are not the program's and must not come back in.
NANORT_HOT_TLS thread_local bool inside = false;
struct Inside {
  bool was = inside;
  Inside() { inside = true; }
  ~Inside() { inside = was; }
};
}  // namespace

bool hooks::may_hold(std::uintptr_t start) {
  // (Nothing watched: hi is 0, and the thread-local is not read.)
  return start < watched_hi.load(std::memory_order_relaxed) && !inside;
}

void hooks::program_gives_back(std::uintptr_t start, std::uintptr_t end, bool pages) {
  if (start >= end || end <= watched_lo.load(std::memory_order_relaxed) ||
      start >= watched_hi.load(std::memory_order_relaxed) || inside)
    return;
  in_hooks.fetch_add(1, std::memory_order_acquire);
  if (HostLockCache *cache = active.load(std::memory_order_acquire))
    cache->forget(start, end, pages ? HostLockCache::Scope::pages : HostLockCache::Scope::bytes);
  in_hooks.fetch_sub(1, std::memory_order_release);
}

bool HostLockCache::hooks_in_effect(std::string &why) { return hooks::in_effect(why); }

void HostLockCache::set_active(HostLockCache *cache) {
  active.store(cache, std::memory_order_release);
  if (!cache)
    while (in_hooks.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

HostLockCache::HostLockCache(Locker &locker, Options options)
    : locker_(locker), options_(options),
      page_(static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE))) {
  helper_ = std::thread([this] { helper_loop(); });
}

HostLockCache::~HostLockCache() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  wake_helper_.notify_all();
  helper_.join();
  Inside here;
  std::map<std::uintptr_t, Entry> entries;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    entries.swap(entries_);
    moves_.clear();
  }
  for (const auto &[start, entry] : entries) locker_.unlock(reinterpret_cast<void *>(start));
}

void HostLockCache::widen_bounds(std::uintptr_t start, std::uintptr_t end) {
  // (Only widened while the cache knows something; never narrowed but when it knows nothing.)
  std::uintptr_t lo = watched_lo.load(std::memory_order_relaxed);
  while (start < lo && !watched_lo.compare_exchange_weak(lo, start)) {}
  std::uintptr_t hi = watched_hi.load(std::memory_order_relaxed);
  while (end > hi && !watched_hi.compare_exchange_weak(hi, end)) {}
}

bool HostLockCache::covers_locked(std::uintptr_t start, std::uintptr_t end) const {
  // Within one entry: the driver refuses an asynchronous copy that spans two registrations
  // (CUDA_ERROR_INVALID_VALUE), even where they touch.
  auto it = entries_.upper_bound(start);
  if (it == entries_.begin()) return false;
  --it;
  return it->second.page_end >= end;
}

bool HostLockCache::covers(const void *address, std::size_t bytes) {
  if (bytes == 0) return false;
  Inside here;
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard<std::mutex> guard(mutex_);
  return !entries_.empty() && covers_locked(start, start + bytes);
}

void HostLockCache::moved(const void *address, std::size_t bytes) {
  if (bytes < options_.min_bytes) return;
  Inside here;
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t end = start + bytes;
  bool ask = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (covers_locked(start, end)) return;
    // A program names a bounded set of arrays; a pathological one (a new range every time)
    // must not grow this without end.
    if (moves_.size() >= 65536) moves_.clear();
    Move &move = moves_[start];
    if (move.end != end) move = Move{end, 0};  // another range from the same byte: afresh
    longest_move_ = std::max(longest_move_, bytes);
    widen_bounds(start, end);
    if (move.count < 0) return;  // refused, or asked for already
    if (++move.count >= options_.moves_before_lock) {
      move.count = kAsked;
      queue_.emplace_back(start, end);
      ask = true;
    }
  }
  if (ask) wake_helper_.notify_one();
}

void HostLockCache::helper_loop() {
  inside = true;  // (its own thread: nothing it frees is the program's)
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_helper_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) break;
    const auto [start, end] = queue_.front();
    queue_.erase(queue_.begin());
    busy_ = true;
    lock.unlock();
    lock_range(start, end);
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
  busy_ = false;
  idle_.notify_all();
}

void HostLockCache::lock_range(std::uintptr_t start, std::uintptr_t end) {
  const std::uintptr_t first = start / page_ * page_;
  const std::uintptr_t last = (end + page_ - 1) / page_ * page_;
  // The pages not locked yet, in runs, each locked on its own (the driver refuses a range that
  // overlaps one it locked).
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> gaps;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto move = moves_.find(start);
    if (move == moves_.end() || move->second.end != end) return;  // forgotten meanwhile
    std::uintptr_t at = first;
    auto it = entries_.upper_bound(first);
    if (it != entries_.begin()) --it;
    for (; it != entries_.end() && it->first < last; ++it) {
      if (it->second.page_end <= at) continue;
      if (it->first > at) gaps.emplace_back(at, it->first);
      at = it->second.page_end;
    }
    if (at < last) gaps.emplace_back(at, last);
    std::size_t wanted = 0;
    for (const auto &[s, e] : gaps) wanted += e - s;
    if (locked_bytes_ + wanted > options_.limit) {
      move->second.count = kRefused;
      ++counts_.refused;
      return;
    }
  }
  for (const auto &[s, e] : gaps) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      locking_ = {s, e};
      locking_forgotten_ = false;
    }
    std::string why;
    const bool locked = locker_.lock(reinterpret_cast<void *>(s), e - s, why);
    bool undo = false;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      locking_ = {0, 0};
      auto move = moves_.find(start);
      if (!locked) {
        if (move != moves_.end()) move->second.count = kRefused;
        ++counts_.refused;
        return;
      }
      if (locking_forgotten_) {
        undo = true;  // given back while it was being locked
      } else {
        entries_[s] = Entry{e, std::max(start, s), std::min(end, e)};
        locked_bytes_ += e - s;
        ++counts_.locks;
        widen_bounds(s, e);
      }
    }
    if (undo) {
      locker_.unlock(reinterpret_cast<void *>(s));
      std::lock_guard<std::mutex> guard(mutex_);
      ++counts_.unlocks;
      return;
    }
  }
}

void HostLockCache::forget(std::uintptr_t start, std::uintptr_t end, Scope scope) {
  Inside here;
  std::vector<std::uintptr_t> to_unlock;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    // Ranges that moved, from here on new memory: counted afresh.
    const std::uintptr_t from = start > longest_move_ ? start - longest_move_ : 0;
    // (A queued one too: the helper finds it gone and skips it.)
    for (auto it = moves_.lower_bound(from); it != moves_.end() && it->first < end;)
      it = it->second.end > start ? moves_.erase(it) : std::next(it);
    if (locking_.first < end && start < locking_.second) locking_forgotten_ = true;
    auto it = entries_.upper_bound(start);
    if (it != entries_.begin()) --it;
    while (it != entries_.end() && it->first < end) {
      const Entry &entry = it->second;
      const bool touched = scope == Scope::pages
                               ? entry.page_end > start
                               : entry.data_start < end && start < entry.data_end;
      if (!touched) {
        ++it;
        continue;
      }
      to_unlock.push_back(it->first);
      locked_bytes_ -= entry.page_end - it->first;
      ++counts_.unlocks;
      it = entries_.erase(it);
    }
    if (entries_.empty() && moves_.empty() && !busy_ && queue_.empty()) {
      watched_lo.store(UINTPTR_MAX, std::memory_order_relaxed);
      watched_hi.store(0, std::memory_order_relaxed);
    }
  }
  for (std::uintptr_t page : to_unlock) locker_.unlock(reinterpret_cast<void *>(page));
}

void HostLockCache::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return stopping_ || (queue_.empty() && !busy_); });
}

HostLockCache::Stats HostLockCache::stats() {
  std::lock_guard<std::mutex> guard(mutex_);
  Stats stats = counts_;
  stats.locked_bytes = locked_bytes_;
  stats.entries = entries_.size();
  return stats;
}

}  // namespace nanort::rt
