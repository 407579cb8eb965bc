#include "host_lock_cache.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
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
  const int saved_errno = errno;  // (free keeps errno)
  // (Sequentially consistent with set_active: either it sees this hook, or this hook sees
  // its null.)
  in_hooks.fetch_add(1, std::memory_order_seq_cst);
  if (HostLockCache *cache = active.load(std::memory_order_seq_cst))
    cache->forget(start, end, pages ? HostLockCache::Scope::pages : HostLockCache::Scope::bytes);
  in_hooks.fetch_sub(1, std::memory_order_release);
  errno = saved_errno;
}

bool HostLockCache::hooks_in_effect(std::string &why) { return hooks::in_effect(why); }

void HostLockCache::set_active(HostLockCache *cache) {
  // A child made by fork has no helper, and its parent's locks: it forgets the cache.
  static std::once_flag at_fork;
  std::call_once(at_fork, [] {
    pthread_atfork(nullptr, nullptr, [] {
      active.store(nullptr, std::memory_order_relaxed);
      watched_hi.store(0, std::memory_order_relaxed);
    });
  });
  active.store(cache, std::memory_order_seq_cst);
  if (!cache)
    while (in_hooks.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
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
  copies_done_.notify_all();
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

bool HostLockCache::unlock_counted(std::uintptr_t page) {
  const bool done = locker_.unlock(reinterpret_cast<void *>(page));
  if (!done) {
    std::lock_guard<std::mutex> guard(mutex_);
    ++counts_.unlock_failures;
  }
  return done;
}

void HostLockCache::widen_bounds(std::uintptr_t start, std::uintptr_t end) {
  // (Only widened while the cache knows something; never narrowed but when it knows nothing.)
  std::uintptr_t lo = watched_lo.load(std::memory_order_relaxed);
  while (start < lo && !watched_lo.compare_exchange_weak(lo, start)) {}
  std::uintptr_t hi = watched_hi.load(std::memory_order_relaxed);
  while (end > hi && !watched_hi.compare_exchange_weak(hi, end)) {}
}

bool HostLockCache::covers_locked(std::uintptr_t start, std::uintptr_t end) const {
  // Entries never overlap: walk those that follow each other from the one holding 'start'.
  auto it = entries_.upper_bound(start);
  if (it == entries_.begin()) return false;
  --it;
  std::uintptr_t reached = start;
  while (it != entries_.end() && it->first <= reached) {
    reached = std::max(reached, it->second.page_end);
    if (reached >= end) return true;
    ++it;
  }
  return false;
}

bool HostLockCache::cuts(const void *address, std::size_t bytes,
                         std::vector<std::uintptr_t> &out) {
  out.clear();
  Inside here;
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t end = start + bytes;
  std::lock_guard<std::mutex> guard(mutex_);
  if (entries_.empty() && reserved_.empty()) return false;
  auto it = entries_.upper_bound(start);
  if (it != entries_.begin()) --it;
  for (; it != entries_.end() && it->first < end; ++it)
    for (std::uintptr_t edge : {it->first, it->second.page_end})
      if (start < edge && edge < end) out.push_back(edge);
  // And at the edges of the program's own registrations (nanort_host_register).
  auto mine = reserved_.upper_bound(start);  // (never overlapping: the driver refuses that)
  if (mine != reserved_.begin()) --mine;
  for (; mine != reserved_.end() && mine->first < end; ++mine)
    for (std::uintptr_t edge : {mine->first, mine->second})
      if (start < edge && edge < end) out.push_back(edge);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return !entries_.empty() && covers_locked(start, end);
}

bool HostLockCache::begin_copy(const void *host, std::size_t bytes,
                               std::vector<std::uintptr_t> &edges) {
  if (cuts(host, bytes, edges) || bytes == 0) return false;  // (locked pages stay locked)
  Inside here;  // (copying_ may free its old storage under the lock)
  const auto start = reinterpret_cast<std::uintptr_t>(host);
  const std::uintptr_t end = start + bytes;
  std::unique_lock<std::mutex> lock(mutex_);
  // Waits for a locking of its bytes in progress, then cuts again with its entries known.
  registered_.wait(lock, [&] { return !(registering_.first < end && start < registering_.second); });
  copying_.emplace_back(start, end);
  lock.unlock();
  try {
    cuts(host, bytes, edges);
  } catch (...) {
    end_copy(host, bytes);
    throw;
  }
  return true;
}

void HostLockCache::end_copy(const void *host, std::size_t bytes) {
  Inside here;
  const auto start = reinterpret_cast<std::uintptr_t>(host);
  std::lock_guard<std::mutex> guard(mutex_);
  const auto it = std::find(copying_.begin(), copying_.end(), std::make_pair(start, start + bytes));
  if (it != copying_.end()) copying_.erase(it);
  copies_done_.notify_all();
}

bool HostLockCache::copying(std::uintptr_t start, std::uintptr_t end) const {
  return std::any_of(copying_.begin(), copying_.end(),
                     [&](const auto &range) { return range.first < end && start < range.second; });
}

bool HostLockCache::covers(const void *address, std::size_t bytes) {
  return coverage(address, bytes) == Coverage::locked;
}

HostLockCache::Coverage HostLockCache::coverage(const void *address, std::size_t bytes) {
  if (bytes == 0) return Coverage::unknown;
  Inside here;
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard<std::mutex> guard(mutex_);
  if (!entries_.empty() && covers_locked(start, start + bytes)) return Coverage::locked;
  const std::uintptr_t end = start + bytes;
  const auto move = moves_.find(start);
  if (move == moves_.end() || move->second.end != end || move->second.count != kAsked)
    return Coverage::unknown;
  const bool queued = std::find(queue_.begin(), queue_.end(), std::make_pair(start, end)) !=
                      queue_.end();
  const bool being_locked = busy_ && locking_.first < end && start < locking_.second;
  return queued || being_locked ? Coverage::waiting : Coverage::unknown;
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
    if (++move.count >= options_.moves_before_lock || bytes >= options_.large_bytes) {
      move.count = kAsked;
      queue_.emplace_back(start, end);
      publish_watched();
      ask = true;
    }
  }
  if (ask) wake_helper_.notify_one();
}

bool HostLockCache::lockable_now(std::uintptr_t start, std::uintptr_t end) {
  if (!options_.wait_for_large || end - start < options_.large_bytes || covers_locked(start, end))
    return false;
  const auto move = moves_.find(start);
  if (move != moves_.end() && move->second.end == end && move->second.count == kRefused)
    return false;
  // (The program's own registration would leave part of it unlocked for ever.)
  return !touches_reserved(start, end);
}

bool HostLockCache::wants_lock_now(const void *address, std::size_t bytes) {
  Inside here;
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard<std::mutex> guard(mutex_);
  return lockable_now(start, start + bytes);
}

bool HostLockCache::lock_now(const void *address, std::size_t bytes) {
  Inside here;
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t end = start + bytes;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!lockable_now(start, end)) return covers_locked(start, end);
  if (moves_.size() >= 65536) moves_.clear();
  Move &move = moves_[start];
  if (move.end != end) move = Move{end, 0};
  longest_move_ = std::max(longest_move_, bytes);
  widen_bounds(start, end);
  // First in the queue: this copy waits for it now (a range asked for already, by a staged
  // copy, moves up).
  const std::pair<std::uintptr_t, std::uintptr_t> range{start, end};
  std::erase(queue_, range);
  if (!(busy_ && locking_.first <= start && end <= locking_.second))  // (not being locked now)
    queue_.insert(queue_.begin(), range);
  move.count = kAsked;
  ++counts_.lock_waits;
  publish_watched();
  wake_helper_.notify_one();
  // Until the helper has taken this entry and dealt with it (locked, refused, or forgotten by
  // a free); it notifies 'unlocked_' after each range. (A range next to it locked meanwhile
  // may leave its count at 0 with the entry still queued: it waits on for the entry.)
  unlocked_.wait(lock, [&] {
    if (stopping_ || covers_locked(start, end)) return true;
    const auto it = moves_.find(start);
    if (it == moves_.end() || it->second.end != end || it->second.count == kRefused) return true;
    const bool queued = std::find(queue_.begin(), queue_.end(), range) != queue_.end();
    return !queued && !(busy_ && locking_.first < end && start < locking_.second);
  });
  return covers_locked(start, end);
}

void HostLockCache::helper_loop() {
  inside = true;  // (its own thread: nothing it frees is the program's)
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_helper_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) break;
    // (Watched from the queue to the end of its locking: a free meanwhile forgets it.)
    const auto [start, end] = queue_.front();
    queue_.erase(queue_.begin());
    busy_ = true;
    lock_range(lock, start, end);
    settle_moves(locking_.first, locking_.second);
    locking_ = {0, 0};
    publish_watched();
    unlocked_.notify_all();  // (a forget() may wait for this range)
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
  busy_ = false;
  idle_.notify_all();
}

void HostLockCache::lock_range(std::unique_lock<std::mutex> &lock,
                               const std::uintptr_t asked_start, const std::uintptr_t asked_end) {
  // (Called and returns with the lock held; let go only around the locker's calls.)
  locking_ = {asked_start, asked_end};
  locking_forgotten_ = false;
  std::map<std::uintptr_t, Move>::iterator move;
  std::uintptr_t start = 0, end = 0, first = 0, last = 0;
  for (;;) {
    move = moves_.find(asked_start);
    // Forgotten meanwhile, or refused already (an entry asked for twice).
    if (move == moves_.end() || move->second.end != asked_end || move->second.count == kRefused)
      return;
    // Blocks of one array share their edge pages: the range grows by every range waiting to
    // be locked that touches it or shares a page with it (other blocks of the array), and all
    // are locked as one. (Only those: they are watched, so a free of one has forgotten it; a
    // range that moved once may have been freed since, and its pages given back unseen.)
    start = asked_start;
    end = asked_end;
    for (bool grew = true; grew;) {
      grew = false;
      const std::uintptr_t from =
          start > longest_move_ + page_ ? start - longest_move_ - page_ : 0;
      for (auto it = moves_.lower_bound(from); it != moves_.end() && it->first < end + page_;
           ++it)
        if (it->second.count == kAsked && it->second.end + page_ > start &&
            (it->first < start || it->second.end > end)) {
          start = std::min(start, it->first);
          end = std::max(end, it->second.end);
          grew = true;
        }
    }
    locking_ = {start, end};  // (settle_moves() goes over all of it afterwards)
    first = start / page_ * page_;
    last = (end + page_ - 1) / page_ * page_;
    // Pages a forget() took out of the entries but has not unlocked yet are still locked: the
    // driver would refuse them. Wait for that (a driver call), then look again.
    const bool clear = std::none_of(unlocking_.begin(), unlocking_.end(), [&](const auto &range) {
      return range.first < last && first < range.second;
    });
    if (clear) break;
    unlocked_.wait(lock);
    if (locking_forgotten_) return;
  }
  // The pages not locked yet, in runs, each locked on its own (the driver refuses a range that
  // overlaps one it locked).
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> gaps;
  std::uintptr_t at = first;
  auto it = entries_.upper_bound(first);
  if (it != entries_.begin()) --it;
  for (; it != entries_.end() && it->first < last; ++it) {
    if (it->second.page_end <= at) continue;
    if (it->first > at) gaps.emplace_back(at, it->first);
    at = it->second.page_end;
  }
  if (at < last) gaps.emplace_back(at, last);
  // Less the bytes the program locks itself (nanort_host_register): the driver refuses a
  // range that overlaps one of its registrations.
  for (const auto &[r_start, r_end] : reserved_) {
    if (r_start >= last || r_end <= first) continue;
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> rest;
    for (const auto &[s, e] : gaps) {
      if (r_end <= s || e <= r_start) {
        rest.emplace_back(s, e);
        continue;
      }
      if (s < r_start) rest.emplace_back(s, r_start);
      if (r_end < e) rest.emplace_back(r_end, e);
    }
    gaps.swap(rest);
  }
  std::size_t wanted = 0;
  for (const auto &[s, e] : gaps) wanted += e - s;
  if (locked_bytes_ + wanted > options_.limit) {
    move->second.count = kRefused;
    ++counts_.refused;
    counts_.last_refusal = std::to_string(wanted) + " bytes more would pass the limit of " +
                           std::to_string(options_.limit);
    return;
  }
  // In pieces of at most options_.piece_bytes (0: whole), cut at multiples of it: a
  // registration holds the driver, and the copies other threads start wait behind it.
  if (options_.piece_bytes) {
    const std::uintptr_t piece = std::max<std::uintptr_t>(page_, options_.piece_bytes / page_ * page_);
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> pieces;
    for (const auto &[s, e] : gaps)
      for (std::uintptr_t at = s; at < e;) {
        const std::uintptr_t next = std::min(e, (at / piece + 1) * piece);
        pieces.emplace_back(at, next);
        at = next;
      }
    gaps.swap(pieces);
  }
  // From here until the end a free of any of these bytes marks them forgotten.
  publish_watched();
  for (const auto &[s, e] : gaps) {
    // Not while a copy over these bytes is between its cuts and its enqueues (begin_copy):
    // it would start in the new registration and end outside it.
    // From here until the pages are in the entries (or unlocked again), new copies over them
    // wait (so that a stream of them cannot hold the locking back for ever).
    registering_ = {s, e};
    const auto registered = [this] {
      registering_ = {0, 0};
      registered_.notify_all();
    };
    if (copying(s, e)) {
      ++counts_.copy_waits;
      copies_done_.wait(lock, [&] { return !copying(s, e) || locking_forgotten_ || stopping_; });
    }
    if (locking_forgotten_ || stopping_) {
      registered();
      return;
    }
    lock.unlock();
    std::string why;
    const bool locked = locker_.lock(reinterpret_cast<void *>(s), e - s, why);
    lock.lock();
    if (!locked) {
      registered();
      move = moves_.find(asked_start);
      if (move != moves_.end()) move->second.count = kRefused;
      ++counts_.refused;
      counts_.last_refusal = why;
      return;
    }
    if (locking_forgotten_) {  // given back while it was being locked
      lock.unlock();
      unlock_counted(s);
      lock.lock();
      registered();
      ++counts_.unlocks;
      return;
    }
    entries_[s] = Entry{e, std::max(start, s), std::min(end, e)};
    registered();
    locked_bytes_ += e - s;
    ++counts_.locks;
    widen_bounds(s, e);
  }
}

void HostLockCache::settle_moves(std::uintptr_t start, std::uintptr_t end) {
  // Ranges asked for in [start, end) that the pass left unlocked (refused, forgotten, partly
  // the program's) are no longer waiting: they count afresh, else coverage() would say they
  // wait for ever and nobody would ask the driver. One wholly inside memory the program locked
  // itself is never locked here.
  if (start >= end) return;
  const std::uintptr_t from = start > longest_move_ ? start - longest_move_ : 0;
  for (auto it = moves_.lower_bound(from); it != moves_.end() && it->first < end; ++it) {
    Move &move = it->second;
    if (move.count != kAsked || move.end <= start || covers_locked(it->first, move.end)) continue;
    move.count = within_reserved(it->first, move.end) ? kRefused : 0;
  }
}

bool HostLockCache::within_reserved(std::uintptr_t start, std::uintptr_t end) const {
  auto it = reserved_.upper_bound(start);
  if (it == reserved_.begin()) return false;
  --it;
  return it->second >= end;
}

bool HostLockCache::touches_reserved(std::uintptr_t start, std::uintptr_t end) const {
  auto it = reserved_.lower_bound(end);  // (never overlapping each other)
  if (it == reserved_.begin()) return false;
  --it;
  return it->second > start;
}

void HostLockCache::publish_watched() {
  // (Under mutex_: one writer at a time.)
  const unsigned sequence = watched_sequence_.load(std::memory_order_relaxed);
  watched_sequence_.store(sequence + 1, std::memory_order_relaxed);  // odd: being rewritten
  std::atomic_thread_fence(std::memory_order_release);
  int count = 0;
  const auto add = [&](std::uintptr_t start, std::uintptr_t end) {
    if (count < 0 || start >= end) return;
    if (count == kWatchedMax) {
      count = -1;
      return;
    }
    watched_start_[count].store(start, std::memory_order_relaxed);
    watched_end_[count].store(end, std::memory_order_relaxed);
    ++count;
  };
  for (const auto &[first, entry] : entries_) add(entry.data_start, entry.data_end);
  add(locking_.first, locking_.second);
  for (const auto &[start, end] : queue_) add(start, end);
  for (const auto &[start, end] : unlocking_) add(start, end);
  watched_count_.store(count, std::memory_order_relaxed);
  watched_sequence_.store(sequence + 2, std::memory_order_release);
}

bool HostLockCache::frees_may_touch(std::uintptr_t start, std::uintptr_t end) const {
  for (;;) {
    const unsigned before = watched_sequence_.load(std::memory_order_acquire);
    if (before & 1) return true;  // being rewritten: ask under the lock
    const int count = watched_count_.load(std::memory_order_relaxed);
    bool touches = count < 0;
    for (int i = 0; i < count && !touches; ++i)
      touches = watched_start_[i].load(std::memory_order_relaxed) < end &&
                start < watched_end_[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (watched_sequence_.load(std::memory_order_relaxed) == before) return touches;
  }
}

void HostLockCache::forget(std::uintptr_t start, std::uintptr_t end, Scope scope) {
  // A heap block that is none of the locked bytes: nothing to unlock. (Ranges that moved but
  // are not locked keep their counts: memory at that address moves on as it did.)
  if (scope == Scope::bytes && !frees_may_touch(start, end)) return;
  give_back(start, end, scope, false);
}

void HostLockCache::reserve(std::uintptr_t start, std::uintptr_t end) {
  give_back(start, end, Scope::pages, true);
}

void HostLockCache::release(std::uintptr_t start, std::uintptr_t end) {
  Inside here;  // (the map node's free must not come back in while the lock is held)
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = reserved_.find(start);
  if (it != reserved_.end() && it->second == end) reserved_.erase(it);
}

void HostLockCache::give_back(std::uintptr_t start, std::uintptr_t end, Scope scope,
                              bool reserve) {
  Inside here;
  std::vector<std::uintptr_t> to_unlock;
  // Pages: every page sharing a byte with [start, end) (a mapping goes by pages, and the
  // program's registration must find none of them locked here).
  const std::uintptr_t first = scope == Scope::pages ? start / page_ * page_ : start;
  const std::uintptr_t last = scope == Scope::pages ? (end + page_ - 1) / page_ * page_ : end;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (reserve) reserved_[start] = end;  // (from here on the helper locks none of it)
    // Ranges that moved, from here on new memory: counted afresh.
    const std::uintptr_t from = start > longest_move_ ? start - longest_move_ : 0;
    // (A queued one too: the helper finds it gone and skips it.)
    for (auto it = moves_.lower_bound(from); it != moves_.end() && it->first < end;)
      it = it->second.end > start ? moves_.erase(it) : std::next(it);
    // (Pages: the registration in progress takes whole pages.)
    const std::uintptr_t lock_first = scope == Scope::pages ? locking_.first / page_ * page_
                                                            : locking_.first;
    const std::uintptr_t lock_last =
        scope == Scope::pages ? (locking_.second + page_ - 1) / page_ * page_ : locking_.second;
    if (lock_first < last && first < lock_last) {
      locking_forgotten_ = true;
      copies_done_.notify_all();  // (the helper may wait for copies to lock them)
    }
    auto it = entries_.upper_bound(first);
    if (it != entries_.begin()) --it;
    while (it != entries_.end() && it->first < last) {
      const Entry &entry = it->second;
      const bool touched =
          scope == Scope::pages
              ? (entry.page_end + page_ - 1) / page_ * page_ > first &&
                    it->first / page_ * page_ < last
              : entry.data_start < end && start < entry.data_end;
      if (!touched) {
        ++it;
        continue;
      }
      // The other ranges locked with it are no longer: they count afresh (else, asked for
      // already, they would never be asked for again).
      // (A range may start before the entry's bytes: locked in several gaps.)
      const std::uintptr_t moves_from =
          entry.data_start > longest_move_ ? entry.data_start - longest_move_ : 0;
      for (auto move = moves_.lower_bound(moves_from);
           move != moves_.end() && move->first < entry.data_end; ++move)
        if (move->second.count == kAsked && move->second.end > entry.data_start)
          move->second.count = 0;
      to_unlock.push_back(it->first);
      unlocking_.emplace_back(it->first, entry.page_end);
      locked_bytes_ -= entry.page_end - it->first;
      ++counts_.unlocks;
      it = entries_.erase(it);
    }
    if (!to_unlock.empty()) publish_watched();
    if (entries_.empty() && moves_.empty() && !busy_ && queue_.empty() && unlocking_.empty()) {
      watched_lo.store(UINTPTR_MAX, std::memory_order_relaxed);
      watched_hi.store(0, std::memory_order_relaxed);
    }
  }
  for (std::uintptr_t page : to_unlock) unlock_counted(page);
  // Returns once no page of [start, end) is locked: those this call unlocked, those another
  // forget() is unlocking, and those the helper is locking (it undoes that: forgotten).
  std::unique_lock<std::mutex> lock(mutex_);
  if (!to_unlock.empty()) {
    std::erase_if(unlocking_, [&](const auto &range) {
      return std::find(to_unlock.begin(), to_unlock.end(), range.first) != to_unlock.end();
    });
    publish_watched();
    unlocked_.notify_all();
  }
  // (Whole pages whatever the scope: a page of these bytes that another forget() unlocks, or
  // the helper locks, must be unlocked before the program gives the bytes back.)
  const std::uintptr_t page_first = start / page_ * page_;
  const std::uintptr_t page_last = (end + page_ - 1) / page_ * page_;
  const auto settled = [&] {
    const bool unlocking = std::any_of(unlocking_.begin(), unlocking_.end(), [&](const auto &r) {
      return r.first < page_last && page_first < r.second;
    });
    const bool locking =
        locking_forgotten_ && locking_.first < page_last && page_first < locking_.second;
    return !unlocking && !locking;
  };
  if (!settled()) {
    ++counts_.waits;
    unlocked_.wait(lock, settled);
  }
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
