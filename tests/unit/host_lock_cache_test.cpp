// HostLockCache: what the runtime page-locks by itself, and that memory given back never stays
// locked under a new use. The locker here only records what it is asked (the real one is a
// CUDA GPU's); the program's frees and unmappings reach the cache through the runtime's memory
// hooks, as in a program.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../../nanort/src/device/host_lock_cache.hpp"

namespace nanort::rt {
namespace {

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// Records the locked ranges; refuses when told to; may hold the next lock() (with its pages
// recorded as locked, as in the driver) or unlock() (not unlocked yet) until released.
class RecordingLocker final : public HostLockCache::Locker {
 public:
  bool lock(void *address, std::size_t bytes, std::string &why) override {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      ++lock_calls;
      if (refuse) {
        why = "refused by the test";
        return false;
      }
      const auto start = reinterpret_cast<std::uintptr_t>(address);
      const std::uintptr_t end = start + bytes;
      // Whole pages, but where the program's own registration cuts them.
      EXPECT_TRUE(start % kPage == 0 || cuts.count(start)) << "not a page's start";
      EXPECT_TRUE(end % kPage == 0 || cuts.count(end)) << "not a page's end";
      for (const auto &[s, e] : locked)  // the driver refuses a byte locked twice
        EXPECT_TRUE(end <= s || e <= start) << "bytes locked twice";
      locked[start] = end;
      order.push_back(start);
    }
    wait_if_held(hold_);
    return true;
  }
  bool unlock(void *address) override {
    wait_if_held(hold_unlock_);
    std::lock_guard<std::mutex> guard(mutex_);
    EXPECT_EQ(locked.erase(reinterpret_cast<std::uintptr_t>(address)), 1u)
        << "unlocking what was not locked";
    ++unlock_calls;
    return true;
  }
  std::size_t count() {  // the cache's registrations (not the program's)
    std::lock_guard<std::mutex> guard(mutex_);
    return locked.size() - program.size();
  }
  // The program's own registration (nanort_host_register), as the driver sees it: false where
  // a byte of it is locked already.
  bool program_lock(const void *address, std::size_t bytes) {
    const auto start = reinterpret_cast<std::uintptr_t>(address);
    std::lock_guard<std::mutex> guard(mutex_);
    for (const auto &[s, e] : locked)
      if (s < start + bytes && start < e) return false;
    locked[start] = program[start] = start + bytes;
    return true;
  }
  void program_unlock(const void *address) {
    const auto start = reinterpret_cast<std::uintptr_t>(address);
    std::lock_guard<std::mutex> guard(mutex_);
    EXPECT_EQ(program.erase(start), 1u);
    locked.erase(start);
  }
  // As the driver takes an asynchronous copy: its host bytes lie in one registration, or in
  // none (CUDA_ERROR_INVALID_VALUE otherwise).
  bool copy_accepted(std::uintptr_t start, std::size_t bytes) {
    std::lock_guard<std::mutex> guard(mutex_);
    for (const auto &[s, e] : locked)
      if (s < start + bytes && start < e) return s <= start && start + bytes <= e;
    return true;
  }
  // Whether any locked page is in [start, end).
  bool any_locked(const void *start, std::size_t bytes) {
    const auto s0 = reinterpret_cast<std::uintptr_t>(start);
    std::lock_guard<std::mutex> guard(mutex_);
    for (const auto &[s, e] : locked)
      if (s < s0 + bytes && s0 < e) return true;
    return false;
  }
  // The next lock() (unlock()) waits for 'until'; the returned future is ready once it waits.
  std::future<void> hold(std::shared_future<void> until) { return hold_.set(std::move(until)); }
  std::future<void> hold_unlock(std::shared_future<void> until) {
    return hold_unlock_.set(std::move(until));
  }

  std::map<std::uintptr_t, std::uintptr_t> locked;   // all: the cache's and the program's
  std::map<std::uintptr_t, std::uintptr_t> program;  // the program's
  std::set<std::uintptr_t> cuts;  // the edges of ranges reserved for the program (set first)
  std::vector<std::uintptr_t> order;  // the starts of the ranges locked, in the order asked
  int lock_calls = 0, unlock_calls = 0;
  bool refuse = false;

 private:
  struct Hold {
    std::optional<std::shared_future<void>> until;
    std::promise<void> entered;
    std::future<void> set(std::shared_future<void> f) {
      until = std::move(f);
      entered = std::promise<void>();  // (a hold may be set again after the last one)
      return entered.get_future();
    }
  };
  static void wait_if_held(Hold &hold) {
    if (!hold.until) return;  // (the next call only)
    std::shared_future<void> until = *hold.until;
    hold.until.reset();
    hold.entered.set_value();
    until.wait();
  }
  std::mutex mutex_;
  Hold hold_, hold_unlock_;
};

// Three mappings: 'other' locked by the helper, held inside lock() until 'go'; 'waiting'
// queued behind it; 'memory', a large range not asked for yet.
struct QueueBehindTheHelper {
  char *memory, *waiting, *other;
  std::promise<void> go;
  // The order in which the helper must lock them once a copy waits for 'memory'.
  std::vector<std::uintptr_t> expected_order() const {
    const auto at = [](const void *p) { return reinterpret_cast<std::uintptr_t>(p); };
    return {at(other), at(memory), at(waiting)};
  }
};

class HostLockCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!HostLockCache::hooks_in_effect(why)) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
      GTEST_SKIP() << "SKIP: the sanitizer's free and munmap come first (" << why
                   << "); the runtime locks nothing by itself there";
#else
      FAIL() << "the memory hooks are not in effect: " << why;
#endif
    }
  }
  void make(std::size_t limit = std::size_t(1) << 30, std::size_t piece = 0, bool wait = true) {
    HostLockCache::Options options;
    options.limit = limit;
    options.piece_bytes = piece;
    options.wait_for_large = wait;
    cache = std::make_unique<HostLockCache>(locker, options);
    HostLockCache::set_active(cache.get());
  }
  void TearDown() override {
    if (cache) {  // what the driver has locked is what the cache knows
      cache->drain();
      EXPECT_EQ(locker.count(), cache->stats().entries);
    }
    HostLockCache::set_active(nullptr);
    cache.reset();
  }
  // lock_now on another thread, returned once it waits for the helper (or has returned).
  std::future<bool> lock_now_waiting(const void *address, std::size_t bytes) {
    const std::uint64_t before = cache->stats().lock_waits;
    auto done = std::async(std::launch::async, [=, this] { return cache->lock_now(address, bytes); });
    while (cache->stats().lock_waits == before &&
           done.wait_for(std::chrono::milliseconds(1)) == std::future_status::timeout) {
    }
    return done;
  }
  void queue_behind_the_helper(QueueBehindTheHelper &q) {
    q.memory = map_pages(kLargeMapping);
    q.waiting = map_pages(128);
    q.other = map_pages(128);
    hold_helper_locking(q.other, 128, q.go);
    move_twice_queued(q.waiting, 128 * kPage);
  }
  static void unmap(QueueBehindTheHelper &q) {
    munmap(q.memory, kLargeMapping * kPage);
    munmap(q.waiting, 128 * kPage);
    munmap(q.other, 128 * kPage);
  }
  void move_twice_queued(const void *address, std::size_t bytes) {  // (not waiting for it)
    cache->moved(address, bytes);
    cache->moved(address, bytes);
  }
  // The helper locking 'pages' at 'memory', held inside lock() (the pages locked) until 'go'.
  void hold_helper_locking(char *memory, std::size_t pages, std::promise<void> &go) {
    std::future<void> entered = locker.hold(go.get_future().share());
    move_twice_queued(memory, pages * kPage);
    entered.wait();
  }
  // A malloc'd block of 'bytes' that moved twice: locked.
  char *locked_block(std::size_t bytes) {
    auto *block = static_cast<char *>(std::malloc(bytes));
    if (!block) ADD_FAILURE() << "malloc failed";
    move_twice(block, bytes);
    return block;
  }
  void move_twice(const void *address, std::size_t bytes) {
    cache->moved(address, bytes);
    cache->moved(address, bytes);
    cache->drain();
  }
  // A mapping of its own: between two inaccessible pages, so that the kernel does not merge
  // it with a neighbour (the cache may lock a whole mapping). The guards stay (a page each).
  static char *map_pages(std::size_t pages) {
    void *memory = mmap(nullptr, (pages + 2) * kPage, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(memory, MAP_FAILED);
    char *base = static_cast<char *>(memory);
    EXPECT_EQ(mprotect(base, kPage, PROT_NONE), 0);
    EXPECT_EQ(mprotect(base + (pages + 1) * kPage, kPage, PROT_NONE), 0);
    return base + kPage;
  }
  // A mapping far larger than the ranges moved in it: only their own pages are locked.
  static constexpr std::size_t kLargeMapping = 16384;

  RecordingLocker locker;
  std::unique_ptr<HostLockCache> cache;
};

TEST_F(HostLockCacheTest, ARangeIsLockedOnceItMovedTwice) {
  make();
  char *memory = map_pages(kLargeMapping);
  const std::size_t bytes = 200 * kPage + 100;
  cache->moved(memory + 10, bytes);
  cache->drain();
  EXPECT_FALSE(cache->covers(memory + 10, bytes));
  EXPECT_EQ(locker.count(), 0u);
  cache->moved(memory + 10, bytes);
  cache->drain();
  EXPECT_TRUE(cache->covers(memory + 10, bytes));
  EXPECT_TRUE(cache->covers(memory, 201 * kPage));  // whole pages
  EXPECT_FALSE(cache->covers(memory, 202 * kPage));
  ASSERT_EQ(locker.count(), 1u);
  EXPECT_EQ(locker.locked.begin()->first, reinterpret_cast<std::uintptr_t>(memory));
  EXPECT_EQ(cache->stats().locked_bytes, 201 * kPage);
  munmap(memory, kLargeMapping * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

// A large range is locked at its first copy (locking takes long: it should be done before
// the program comes back to the range). Until it is, lookups say it waits (no need to ask the
// driver whether the program locked it).
TEST_F(HostLockCacheTest, ALargeRangeIsLockedAtItsFirstCopy) {
  make();
  char *memory = map_pages(kLargeMapping);
  const std::size_t large = HostLockCache::Options{}.large_bytes;
  std::promise<void> go;
  char *other = map_pages(128);
  hold_helper_locking(other, 128, go);
  cache->moved(memory, large);
  EXPECT_EQ(cache->coverage(memory, large), HostLockCache::Coverage::waiting);
  EXPECT_EQ(cache->coverage(memory, large - kPage), HostLockCache::Coverage::unknown);
  cache->moved(memory + large, large - kPage);  // smaller: not yet
  go.set_value();
  cache->drain();
  EXPECT_EQ(cache->coverage(memory, large), HostLockCache::Coverage::locked);
  EXPECT_FALSE(cache->covers(memory + large, large - kPage));
  munmap(memory, kLargeMapping * kPage);
  munmap(other, 128 * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

// A large range's first copy may wait for its locking and go direct (lock_now): the helper
// takes it before the ranges that were waiting already.
TEST_F(HostLockCacheTest, ALargeRangesFirstCopyIsLockedAheadOfTheRangesWaiting) {
  make();
  const std::size_t large = HostLockCache::Options{}.large_bytes;
  QueueBehindTheHelper q;
  queue_behind_the_helper(q);
  auto copy = lock_now_waiting(q.memory, large);
  EXPECT_EQ(copy.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout)
      << "lock_now returned before the range was locked";
  q.go.set_value();
  EXPECT_TRUE(copy.get());
  EXPECT_TRUE(cache->covers(q.memory, large));
  cache->drain();
  EXPECT_EQ(locker.order, q.expected_order());
  EXPECT_TRUE(cache->lock_now(q.memory, large));  // locked: at once
  EXPECT_EQ(locker.lock_calls, 3);
  unmap(q);
  EXPECT_EQ(locker.count(), 0u);
}

// A range a staged read-back asked for already (at the back of the queue) moves up when a
// copy to the device waits for it.
TEST_F(HostLockCacheTest, ARangeAskedForAlreadyMovesUpWhenACopyWaitsForIt) {
  make();
  const std::size_t large = HostLockCache::Options{}.large_bytes;
  QueueBehindTheHelper q;
  queue_behind_the_helper(q);
  cache->moved(q.memory, large);  // queued behind 'waiting'
  auto copy = lock_now_waiting(q.memory, large);
  q.go.set_value();
  EXPECT_TRUE(copy.get());
  cache->drain();
  EXPECT_EQ(locker.order, q.expected_order());
  unmap(q);
}

// The helper is locking a range that overlaps the one a copy waits for: when that ends, the
// waiting range is not locked whole yet (the pass resets its count), and the copy waits on
// for its own turn instead of going through staging.
TEST_F(HostLockCacheTest, ACopyWaitsOnWhenARangeOverlappingItsIsLockedFirst) {
  make();
  const std::size_t large = HostLockCache::Options{}.large_bytes;
  char *memory = map_pages(kLargeMapping);
  std::promise<void> go, go_on;
  hold_helper_locking(memory + 16 * kPage, 128, go);  // overlaps [memory, memory + large)
  auto copy = lock_now_waiting(memory, large);
  // The range's own locking is held in turn: meanwhile the copy must still be waiting.
  std::future<void> second = locker.hold(go_on.get_future().share());
  go.set_value();
  second.wait();
  EXPECT_EQ(copy.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "lock_now returned before its range was locked";
  go_on.set_value();
  EXPECT_TRUE(copy.get());
  EXPECT_TRUE(cache->covers(memory, large));
  munmap(memory, kLargeMapping * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

// Memory the program locked itself cuts the range: it can never be locked whole here, so the
// copy does not wait for a pass that cannot lock it.
TEST_F(HostLockCacheTest, LockNowLeavesARangeThatTheProgramLockedPartlyToStaging) {
  make();
  const std::size_t large = HostLockCache::Options{}.large_bytes;
  char *memory = map_pages(kLargeMapping);
  cache->reserve(reinterpret_cast<std::uintptr_t>(memory + large / 2),
                 reinterpret_cast<std::uintptr_t>(memory + large / 2 + kPage));
  ASSERT_TRUE(locker.program_lock(memory + large / 2, kPage));
  EXPECT_FALSE(cache->wants_lock_now(memory, large));
  EXPECT_FALSE(cache->lock_now(memory, large));
  EXPECT_TRUE(cache->wants_lock_now(memory + large, large));  // next to it: wanted
  EXPECT_EQ(locker.lock_calls, 0);
  cache->release(reinterpret_cast<std::uintptr_t>(memory + large / 2),
                 reinterpret_cast<std::uintptr_t>(memory + large / 2 + kPage));
  locker.program_unlock(memory + large / 2);
  munmap(memory, kLargeMapping * kPage);
}

TEST_F(HostLockCacheTest, LockNowLeavesSmallRefusedAndUnwantedRangesToStaging) {
  const std::size_t large = HostLockCache::Options{}.large_bytes;
  char *memory = map_pages(kLargeMapping);
  make(std::size_t(1) << 30, 0, /*wait=*/false);
  EXPECT_FALSE(cache->wants_lock_now(memory, large));
  EXPECT_FALSE(cache->lock_now(memory, large));  // not asked to
  make();
  EXPECT_TRUE(cache->wants_lock_now(memory, large));
  EXPECT_FALSE(cache->wants_lock_now(memory, large - kPage));
  EXPECT_FALSE(cache->lock_now(memory, large - kPage));  // smaller than large
  EXPECT_EQ(locker.lock_calls, 0);
  locker.refuse = true;
  EXPECT_FALSE(cache->lock_now(memory, large));  // the driver says no
  EXPECT_FALSE(cache->lock_now(memory, large));  // and is not asked again
  EXPECT_FALSE(cache->wants_lock_now(memory, large));
  EXPECT_EQ(locker.lock_calls, 1);
  locker.refuse = false;
  make(large / 2);
  EXPECT_FALSE(cache->lock_now(memory, large));  // past the limit
  EXPECT_EQ(cache->stats().refused, 1u);
  EXPECT_EQ(locker.count(), 0u);
  munmap(memory, kLargeMapping * kPage);
}

TEST_F(HostLockCacheTest, ALargeRangeFreedWhileItsCopyWaitsIsNotLocked) {
  make();
  const std::size_t large = HostLockCache::Options{}.large_bytes;
  std::promise<void> go;
  char *other = map_pages(128);
  hold_helper_locking(other, 128, go);
  char *memory = map_pages(large / kPage);
  auto copy = lock_now_waiting(memory, large);
  munmap(memory, large);  // given back before the helper takes it
  go.set_value();
  EXPECT_FALSE(copy.get());
  cache->drain();
  EXPECT_EQ(locker.lock_calls, 1);
  EXPECT_FALSE(locker.any_locked(memory, large));
  munmap(other, 128 * kPage);
}

TEST_F(HostLockCacheTest, BlocksOfOneArrayWaitingTogetherAreLockedAsOne) {
  make();
  // As a malloc'd array in blocks: the data a little past a page's start, blocks that share
  // their edge pages. The helper is kept busy on another range while 15 blocks each move
  // twice (all waiting) and the last one once.
  std::promise<void> go;
  char *other = map_pages(128);
  hold_helper_locking(other, 128, go);
  char *memory = map_pages(kLargeMapping);
  char *array = memory + 16;
  const std::size_t block = 64 * kPage;
  for (int b = 0; b < 15; ++b) move_twice_queued(array + b * block, block);
  cache->moved(array + 15 * block, block);
  go.set_value();
  cache->drain();
  ASSERT_EQ(locker.count(), 2u);  // the other range, and blocks 0 to 14 as one
  EXPECT_EQ(cache->stats().locked_bytes, 128 * kPage + 15 * block + kPage);
  for (int b = 0; b < 15; ++b) EXPECT_TRUE(cache->covers(array + b * block, block)) << b;
  EXPECT_TRUE(cache->covers(array, 15 * block));  // one registration: any copy inside
  std::vector<std::uintptr_t> edges;
  cache->cuts(array, 15 * block, edges);
  EXPECT_TRUE(edges.empty());
  EXPECT_FALSE(cache->covers(array + 15 * block, block));  // moved once: not taken along
  // A heap block freed next to the array (its bytes outside the array's) leaves it locked;
  // the array freed unlocks it.
  cache->forget(reinterpret_cast<std::uintptr_t>(array + 15 * block),
                reinterpret_cast<std::uintptr_t>(array + 15 * block + 64),
                HostLockCache::Scope::bytes);
  EXPECT_EQ(locker.count(), 2u);
  cache->forget(reinterpret_cast<std::uintptr_t>(array),
                reinterpret_cast<std::uintptr_t>(array) + 16 * block, HostLockCache::Scope::bytes);
  EXPECT_EQ(locker.count(), 1u);
  munmap(memory, kLargeMapping * kPage);
  munmap(other, 128 * kPage);
}

TEST_F(HostLockCacheTest, SmallRangesAreNotLocked) {
  make();
  const std::size_t pages = (std::size_t(256) << 10) / kPage + 1;
  char *memory = map_pages(pages);
  move_twice(memory, (std::size_t(256) << 10) - 1);  // under 256K
  EXPECT_FALSE(cache->covers(memory, kPage));
  EXPECT_EQ(locker.lock_calls, 0);
  munmap(memory, pages * kPage);
}

TEST_F(HostLockCacheTest, FreedMemoryIsUnlockedBeforeItCanBeUsedAgain) {
  make();
  const std::size_t bytes = std::size_t(4) << 20;
  char *block = locked_block(bytes);
  ASSERT_TRUE(cache->covers(block, bytes));
  std::free(block);  // (the hook, as in any program)
  EXPECT_EQ(locker.count(), 0u);
  EXPECT_EQ(locker.unlock_calls, 1);
  auto *again = static_cast<char *>(std::malloc(bytes));  // quite likely the same address
  ASSERT_NE(again, nullptr);
  EXPECT_FALSE(cache->covers(again, bytes));
  cache->moved(again, bytes);  // counted afresh: one move is not enough
  cache->drain();
  EXPECT_FALSE(cache->covers(again, bytes));
  cache->moved(again, bytes);
  cache->drain();
  EXPECT_TRUE(cache->covers(again, bytes));
  std::free(again);
  EXPECT_EQ(locker.count(), 0u);
}

TEST_F(HostLockCacheTest, ReallocUnlocksTheOldBlock) {
  make();
  const std::size_t bytes = std::size_t(2) << 20;
  char *block = locked_block(bytes);
  ASSERT_EQ(locker.count(), 1u);
  auto *grown = static_cast<char *>(std::realloc(block, 4 * bytes));
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(locker.count(), 0u);
  EXPECT_FALSE(cache->covers(grown, bytes));
  std::free(grown);
}

TEST_F(HostLockCacheTest, UnmappingPartOfALockedRangeUnlocksIt) {
  make();
  char *memory = map_pages(128);
  move_twice(memory, 128 * kPage);
  ASSERT_TRUE(cache->covers(memory, 128 * kPage));
  munmap(memory + 60 * kPage, 4 * kPage);  // a hole in the middle
  EXPECT_EQ(locker.count(), 0u);
  EXPECT_FALSE(cache->covers(memory, kPage));
  munmap(memory, 60 * kPage);
  munmap(memory + 64 * kPage, 64 * kPage);
}

TEST_F(HostLockCacheTest, DroppedPagesAreUnlocked) {
  make();
  char *memory = map_pages(128);
  move_twice(memory, 128 * kPage);
  ASSERT_EQ(locker.count(), 1u);
  madvise(memory, 8 * kPage, MADV_WILLNEED);  // keeps the pages: stays locked
  EXPECT_EQ(locker.count(), 1u);
  madvise(memory + 8 * kPage, 8 * kPage, MADV_DONTNEED);  // new pages at the next touch
  EXPECT_EQ(locker.count(), 0u);
  EXPECT_FALSE(cache->covers(memory, kPage));
  munmap(memory, 128 * kPage);
}

TEST_F(HostLockCacheTest, AMappingOverALockedRangeUnlocksIt) {
  make();
  char *memory = map_pages(128);
  move_twice(memory, 128 * kPage);
  ASSERT_EQ(locker.count(), 1u);
  void *over = mmap(memory + 4 * kPage, kPage, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_NE(over, MAP_FAILED);
  EXPECT_EQ(locker.count(), 0u);
  munmap(memory, 128 * kPage);
}

TEST_F(HostLockCacheTest, OverlappingRangesLockOnlyThePagesNotLockedYet) {
  make();
  char *memory = map_pages(kLargeMapping);
  // a: pages 0..99 and part of page 100; b: from inside page 100 to page 199.
  char *a = memory, *b = memory + 100 * kPage + kPage / 2;
  move_twice(a, 100 * kPage + kPage / 4);
  move_twice(b, 99 * kPage);
  ASSERT_EQ(locker.count(), 2u);  // checked by the locker: no page twice
  EXPECT_TRUE(cache->covers(memory, 200 * kPage));  // one run of locked pages
  // Two registrations: a copy over both is cut where they meet, and where ordinary memory
  // begins.
  std::vector<std::uintptr_t> edges;
  cache->cuts(memory + kPage, 250 * kPage, edges);
  const auto at = [&](std::size_t pages) { return reinterpret_cast<std::uintptr_t>(memory) + pages * kPage; };
  EXPECT_EQ(edges, (std::vector<std::uintptr_t>{at(101), at(200)}));
  cache->cuts(memory + kPage, 10 * kPage, edges);
  EXPECT_TRUE(edges.empty());
  EXPECT_EQ(cache->stats().locked_bytes, 200 * kPage);
  // Freeing a's bytes (a heap block) unlocks a's pages only; b's own stay locked.
  cache->forget(reinterpret_cast<std::uintptr_t>(a),
                reinterpret_cast<std::uintptr_t>(a) + 100 * kPage + kPage / 4,
                HostLockCache::Scope::bytes);
  EXPECT_EQ(locker.count(), 1u);
  EXPECT_FALSE(cache->covers(a, kPage));
  EXPECT_TRUE(cache->covers(memory + 101 * kPage, 99 * kPage));
  munmap(memory, kLargeMapping * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

TEST_F(HostLockCacheTest, ManyRangesGrowTheCache) {
  make();
  constexpr int kRanges = 64;
  char *memory = map_pages(kRanges * 100);
  for (int r = 0; r < kRanges; ++r) move_twice(memory + r * 100 * kPage, 80 * kPage);
  EXPECT_EQ(cache->stats().entries, static_cast<std::size_t>(kRanges));
  EXPECT_EQ(cache->stats().locked_bytes, kRanges * 80 * kPage);
  for (int r = 0; r < kRanges; ++r) EXPECT_TRUE(cache->covers(memory + r * 100 * kPage, 80 * kPage));
  EXPECT_FALSE(cache->covers(memory + 80 * kPage, kPage));
  munmap(memory, kRanges * 100 * kPage);
  EXPECT_EQ(cache->stats().entries, 0u);
  EXPECT_EQ(locker.count(), 0u);
}

TEST_F(HostLockCacheTest, NothingIsLockedPastTheLimit) {
  make(150 * kPage);
  char *memory = map_pages(kLargeMapping);
  move_twice(memory, 100 * kPage);
  move_twice(memory + 128 * kPage, 100 * kPage);  // would make 200 pages
  EXPECT_TRUE(cache->covers(memory, 100 * kPage));
  EXPECT_FALSE(cache->covers(memory + 128 * kPage, 100 * kPage));
  EXPECT_EQ(cache->stats().refused, 1u);
  EXPECT_EQ(cache->stats().locked_bytes, 100 * kPage);
  munmap(memory, kLargeMapping * kPage);
}

TEST_F(HostLockCacheTest, ARangeTheLockerRefusedIsNotAskedAgain) {
  make();
  locker.refuse = true;
  char *memory = map_pages(128);
  for (int i = 0; i < 10; ++i) cache->moved(memory, 128 * kPage);
  cache->drain();
  EXPECT_EQ(locker.lock_calls, 1);
  EXPECT_FALSE(cache->covers(memory, 128 * kPage));
  munmap(memory, 128 * kPage);
}

TEST_F(HostLockCacheTest, ARangeFreedWhileItWaitsForTheHelperIsNotLocked) {
  make();
  std::promise<void> go;
  char *memory = map_pages(128);
  hold_helper_locking(memory, 128, go);
  const std::size_t bytes = std::size_t(2) << 20;
  auto *block = static_cast<char *>(std::malloc(bytes));
  ASSERT_NE(block, nullptr);
  cache->moved(block, bytes);
  cache->moved(block, bytes);  // queued behind the first
  std::free(block);            // given back before the helper takes it
  go.set_value();
  cache->drain();
  EXPECT_EQ(locker.lock_calls, 1);
  EXPECT_FALSE(cache->covers(block, bytes));
  munmap(memory, 128 * kPage);
}

TEST_F(HostLockCacheTest, FreesOfOtherMemoryLeaveTheLockedRangesAlone) {
  make();
  char *memory = map_pages(kLargeMapping);
  move_twice(memory, 100 * kPage);
  ASSERT_EQ(locker.count(), 1u);
  for (int i = 0; i < 1000; ++i) {
    void *other = std::malloc(static_cast<std::size_t>(64 + i));
    std::free(other);
  }
  EXPECT_EQ(locker.count(), 1u);
  EXPECT_TRUE(cache->covers(memory, 100 * kPage));
  munmap(memory, kLargeMapping * kPage);
}

// Without the hooks (so also under the sanitizers): threads that copy, look up and give back
// ranges at once, as device managers and the program do, while the helper locks. The locker
// checks that no page is locked twice and that only locked ranges are unlocked; at the end
// nothing is left locked. (The memory is never touched: only its addresses are.)
TEST(HostLockCacheThreads, CopiesLookupsAndGivingBackAtOnce) {
  RecordingLocker locker;
  HostLockCache::Options options;
  options.limit = std::size_t(1) << 30;
  auto cache = std::make_unique<HostLockCache>(locker, options);
  char *memory = static_cast<char *>(mmap(nullptr, 4096 * kPage, PROT_NONE,
                                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  ASSERT_NE(memory, MAP_FAILED);
  constexpr int kThreads = 4, kRounds = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::uintptr_t> edges;
      unsigned seed = 12345u + static_cast<unsigned>(t);
      for (int i = 0; i < kRounds; ++i) {
        seed = seed * 1103515245u + 12345u;
        const std::size_t block = (seed >> 8) % 60;  // 60 blocks of 64 pages (and a bit)
        char *start = memory + block * 64 * kPage + 16;
        const std::size_t bytes = 64 * kPage;
        switch ((seed >> 20) % 4) {
          case 0:
          case 1: cache->moved(start, bytes); break;
          case 2: cache->covers(start, bytes); cache->cuts(start, 3 * bytes, edges); break;
          default:
            cache->forget(reinterpret_cast<std::uintptr_t>(start),
                          reinterpret_cast<std::uintptr_t>(start) + bytes,
                          (seed >> 24) % 2 ? HostLockCache::Scope::bytes
                                           : HostLockCache::Scope::pages);
        }
      }
    });
  for (std::thread &thread : threads) thread.join();
  cache->drain();
  EXPECT_EQ(locker.count(), cache->stats().entries);  // what the driver has is what it knows
  EXPECT_GT(locker.lock_calls, 0);
  cache.reset();
  munmap(memory, 4096 * kPage);
}

TEST_F(HostLockCacheTest, AFreedNeighbourIsNotLockedWithTheRangeNextToIt) {
  make();
  char *memory = map_pages(kLargeMapping);
  char *p = memory + 16, *q = memory + 16 + 100 * kPage;  // sharing a page
  cache->moved(p, 100 * kPage);  // once: not locked
  cache->forget(reinterpret_cast<std::uintptr_t>(p), reinterpret_cast<std::uintptr_t>(p) + 100 * kPage,
                HostLockCache::Scope::bytes);  // p freed (its pages may go, unseen)
  move_twice(q, 100 * kPage);
  EXPECT_TRUE(cache->covers(q, 100 * kPage));
  EXPECT_FALSE(cache->covers(p, kPage));
  EXPECT_FALSE(locker.any_locked(memory, 100 * kPage));  // all of p's own pages
  munmap(memory, kLargeMapping * kPage);
}

TEST_F(HostLockCacheTest, AnUnmappingWaitsForTheLockInProgressToBeUndone) {
  make();
  std::promise<void> go;
  char *memory = map_pages(128);
  hold_helper_locking(memory, 128, go);
  bool locked_after_return = true;
  std::thread program([&] {
    munmap(memory, 128 * kPage);
    locked_after_return = locker.any_locked(memory, 128 * kPage);
  });
  while (cache->stats().waits == 0) std::this_thread::yield();  // munmap waits in forget()
  go.set_value();
  program.join();
  EXPECT_FALSE(locked_after_return) << "munmap returned with its pages still locked";
  cache->drain();
  EXPECT_EQ(locker.count(), 0u);
}

TEST_F(HostLockCacheTest, TwoFreesOfOneLockedRangeBothReturnOnceItIsUnlocked) {
  make();
  char *memory = map_pages(kLargeMapping);
  char *a = memory, *b = memory + 64 * kPage;  // two blocks locked as one range
  // Both wait while the helper is busy elsewhere, so that they are locked together (were a
  // locked before b asked, each would be a range of its own, and b's free would not wait).
  std::promise<void> busy;
  char *other = map_pages(128);
  hold_helper_locking(other, 128, busy);
  move_twice_queued(a, 64 * kPage);
  move_twice_queued(b, 64 * kPage);
  busy.set_value();
  cache->drain();
  ASSERT_TRUE(cache->covers(a, 128 * kPage));
  ASSERT_EQ(cache->stats().entries, 2u) << "a and b not locked as one range";
  std::promise<void> go;
  std::future<void> unlocking = locker.hold_unlock(go.get_future().share());
  std::thread free_a([&] {
    cache->forget(reinterpret_cast<std::uintptr_t>(a), reinterpret_cast<std::uintptr_t>(a) + 64 * kPage,
                  HostLockCache::Scope::bytes);
  });
  unlocking.wait();  // a's free is unlocking the range
  bool locked_after_return = true;
  std::thread free_b([&] {
    cache->forget(reinterpret_cast<std::uintptr_t>(b), reinterpret_cast<std::uintptr_t>(b) + 64 * kPage,
                  HostLockCache::Scope::bytes);
    locked_after_return = locker.any_locked(b, 64 * kPage);
  });
  while (cache->stats().waits == 0) std::this_thread::yield();  // b's free waits for it
  go.set_value();
  free_a.join();
  free_b.join();
  EXPECT_FALSE(locked_after_return) << "the second free returned with its pages still locked";
  munmap(memory, kLargeMapping * kPage);
  munmap(other, 128 * kPage);
}

// The program page-locks blocks of an array itself (nanort_host_register) after the cache
// locked the whole array: reserve() takes the cache's pages away first, and the cache locks the
// other blocks again only up to the program's bytes (the blocks share pages), never over them,
// even while the helper locks queued neighbours at the moment the program registers.
TEST_F(HostLockCacheTest, TheProgramsOwnRegistrationsAreLeftToIt) {
  make();
  char *memory = map_pages(kLargeMapping);
  char *array = memory + 16;
  const std::size_t block = 64 * kPage;
  {  // (all four waiting while the helper is busy elsewhere: locked as one range)
    std::promise<void> busy;
    char *other = map_pages(128);
    hold_helper_locking(other, 128, busy);
    for (int b = 0; b < 4; ++b) move_twice_queued(array + b * block, block);
    busy.set_value();
    cache->drain();
    munmap(other, 128 * kPage);
  }
  ASSERT_TRUE(cache->covers(array, 4 * block));
  ASSERT_EQ(cache->stats().entries, 1u);
  const auto at = [&](int b) { return reinterpret_cast<std::uintptr_t>(array + b * block); };
  for (int b = 1; b <= 3; ++b) locker.cuts.insert(at(b));
  // Block 1 is the program's: no page of it stays locked here, and the driver takes it.
  cache->reserve(at(1), at(2));
  EXPECT_FALSE(locker.any_locked(array + block, block));
  ASSERT_TRUE(locker.program_lock(array + block, block));
  // Blocks 0, 2 and 3 move on: locked again, up to block 1's bytes and from its end.
  for (int b : {0, 2, 3}) move_twice(array + b * block, block);
  EXPECT_TRUE(cache->covers(array, block));
  EXPECT_TRUE(cache->covers(array + 2 * block, 2 * block));
  EXPECT_FALSE(cache->covers(array + block, block));  // (the program's: the driver knows it)
  EXPECT_EQ(locker.locked.count(at(2)), 1u) << "block 2 not locked from block 1's end";
  // While the helper locks blocks 2 and 3 (held inside the driver), the program registers
  // block 2: it waits for that lock to be undone, and then the driver takes its block.
  cache->forget(at(2), at(4), HostLockCache::Scope::bytes);
  std::promise<void> go;
  std::future<void> entered = locker.hold(go.get_future().share());
  for (int b : {2, 3}) move_twice_queued(array + b * block, block);
  entered.wait();
  std::thread program([&] { cache->reserve(at(2), at(3)); });
  while (cache->stats().waits == 0) std::this_thread::yield();
  go.set_value();
  program.join();
  cache->drain();
  EXPECT_TRUE(locker.program_lock(array + 2 * block, block)) << "a byte of block 2 still locked";
  move_twice(array + 3 * block, block);  // block 3 alone, from block 2's end
  EXPECT_TRUE(cache->covers(array + 3 * block, block));
  for (int b : {1, 2}) {
    locker.program_unlock(array + b * block);
    cache->release(at(b), at(b + 1));
  }
  munmap(memory, kLargeMapping * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

// A range partly the program's is locked where it can be, and, not covered, is asked of the
// driver rather than said to wait for ever; once the program's part is released it is locked
// whole.
TEST_F(HostLockCacheTest, ARangePartlyTheProgramsIsNotLeftWaiting) {
  make();
  char *memory = map_pages(kLargeMapping);
  const std::size_t bytes = 64 * kPage;
  const auto at = reinterpret_cast<std::uintptr_t>(memory);
  cache->reserve(at + 16 * kPage, at + 32 * kPage);
  move_twice(memory, bytes);
  EXPECT_EQ(cache->coverage(memory, bytes), HostLockCache::Coverage::unknown);
  EXPECT_TRUE(cache->covers(memory, 16 * kPage));  // the parts not the program's
  EXPECT_TRUE(cache->covers(memory + 32 * kPage, 32 * kPage));
  EXPECT_FALSE(locker.any_locked(memory + 16 * kPage, 16 * kPage));
  cache->release(at + 16 * kPage, at + 32 * kPage);
  move_twice(memory, bytes);
  EXPECT_TRUE(cache->covers(memory, bytes));
  munmap(memory, kLargeMapping * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

// With more locked ranges than the list that frees read without the lock, every free takes
// the lock: releasing a reservation (which frees a node of the cache's own) must not come back
// into the cache while it holds the lock.
TEST_F(HostLockCacheTest, ReleasingAReservationWithManyLockedRangesReturns) {
  make();
  constexpr int ranges = 40;  // more than the watched list holds
  std::vector<char *> mappings;
  for (int i = 0; i < ranges; ++i) {
    mappings.push_back(map_pages(64));
    move_twice(mappings.back(), 64 * kPage);
  }
  ASSERT_EQ(cache->stats().entries, static_cast<std::size_t>(ranges));
  // A range below the heap moved once: the span the hooks look at covers the heap too, so
  // the cache's own nodes' frees reach it, as they do when arrays lie in the heap.
  static char below_the_heap[std::size_t(512) << 10];
  cache->moved(below_the_heap, sizeof below_the_heap);
  char *memory = map_pages(64);
  const auto at = reinterpret_cast<std::uintptr_t>(memory);
  auto done = std::async(std::launch::async, [&] {
    cache->reserve(at, at + 64 * kPage);
    cache->release(at, at + 64 * kPage);
  });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "release() did not return (it waits for its own lock)";
  for (char *mapping : mappings) munmap(mapping, 64 * kPage);
  munmap(memory, 64 * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

// With a piece size, a range is locked in registrations of at most that size, cut at its
// multiples; a copy over them is made in pieces, and freeing the range unlocks them all.
TEST_F(HostLockCacheTest, ARangeIsLockedInPiecesWhenAskedTo) {
  const std::size_t piece = 32 * kPage;
  make(std::size_t(1) << 30, piece);
  char *memory = map_pages(kLargeMapping);
  char *range = memory + 4 * kPage + 100;  // 101 pages, from inside a piece
  const std::size_t bytes = 100 * kPage;
  move_twice(range, bytes);
  EXPECT_TRUE(cache->covers(range, bytes));
  const std::size_t pieces = locker.count();
  EXPECT_GE(pieces, 4u);  // (4 or 5: where the mapping lies against multiples of a piece)
  for (const auto &[start, end] : locker.locked) {
    EXPECT_LE(end - start, piece);
    EXPECT_TRUE(end % piece == 0 || end == reinterpret_cast<std::uintptr_t>(memory) + 105 * kPage);
  }
  std::vector<std::uintptr_t> edges;
  cache->cuts(range, bytes, edges);
  EXPECT_EQ(edges.size(), pieces - 1);
  cache->forget(reinterpret_cast<std::uintptr_t>(range), reinterpret_cast<std::uintptr_t>(range) + bytes,
                HostLockCache::Scope::bytes);
  EXPECT_EQ(locker.count(), 0u);
  munmap(memory, kLargeMapping * kPage);
}

// A copy of ordinary memory whose first bytes share a page with a range being locked (the
// small last block of an array, copied without staging): cut where the registration will end,
// once it is made. Uncut, the piece would start in the registration and end outside it.
TEST_F(HostLockCacheTest, ACopyWaitsForTheLockingOfItsBytesInProgress) {
  make();
  char *memory = map_pages(kLargeMapping);
  char *array = memory + 16;
  const std::size_t block = 64 * kPage;
  std::promise<void> go;
  hold_helper_locking(array, 64, go);  // block 0 (locker called: its pages locked)
  const auto tail = reinterpret_cast<std::uintptr_t>(array + block);  // block 1, ordinary
  const std::size_t bytes = 10 * kPage;
  std::vector<std::pair<std::uintptr_t, std::size_t>> pieces;
  auto copy = std::async(std::launch::async, [&] {
    HostLockCache::for_each_piece(cache.get(), array + block, bytes, [&](std::size_t at, std::size_t n) {
      EXPECT_TRUE(locker.copy_accepted(tail + at, n)) << "piece at " << at << " of " << n;
      pieces.emplace_back(at, n);
    });
  });
  EXPECT_EQ(copy.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the copy did not wait for the locking of its first page";
  go.set_value();
  copy.get();
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(tail + pieces[1].first, (tail + kPage - 1) / kPage * kPage);
  cache->drain();
  munmap(memory, kLargeMapping * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

// The helper locks no byte of a copy between its cuts and its enqueues: it waits for it.
TEST_F(HostLockCacheTest, NoByteOfACopyInProgressIsLocked) {
  make();
  char *memory = map_pages(kLargeMapping);
  char *array = memory + 16;
  const std::size_t block = 64 * kPage;
  std::promise<void> entered, leave;
  auto copy = std::async(std::launch::async, [&] {
    HostLockCache::for_each_piece(cache.get(), array + block, block, [&](std::size_t, std::size_t) {
      entered.set_value();
      leave.get_future().wait();
    });
  });
  entered.get_future().wait();
  move_twice_queued(array, block);  // block 0: shares a page with the copy's bytes
  // The helper either waits for the copy (counted) or locks: whichever comes first.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (cache->stats().copy_waits == 0 && locker.count() == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(locker.count(), 0u) << "a page of the copy in progress was locked";
  EXPECT_EQ(cache->stats().copy_waits, 1u);
  leave.set_value();
  copy.get();
  cache->drain();
  EXPECT_TRUE(cache->covers(array, block));
  EXPECT_TRUE(locker.copy_accepted(reinterpret_cast<std::uintptr_t>(array), block));
  munmap(memory, kLargeMapping * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

// A locking undone because the program gave the memory back meanwhile: until the pages are
// unlocked again, a copy over them waits as for a locking in progress (they are locked in
// the driver, and in no entry).
TEST_F(HostLockCacheTest, ACopyWaitsForALockingBeingUndone) {
  make();
  char *memory = map_pages(kLargeMapping);
  char *array = memory + 16;
  const std::size_t block = 64 * kPage;
  std::promise<void> go, unlock_go;
  hold_helper_locking(array, 64, go);  // block 0, in the locker
  std::future<void> unlocking = locker.hold_unlock(unlock_go.get_future().share());
  auto freed = std::async(std::launch::async, [&] {  // a byte of block 0 given back
    cache->forget(reinterpret_cast<std::uintptr_t>(array + 100),
                  reinterpret_cast<std::uintptr_t>(array + 101), HostLockCache::Scope::bytes);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (cache->stats().waits == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(cache->stats().waits, 1u) << "the free did not wait for the locking in progress";
  go.set_value();
  unlocking.wait();  // the helper undoes its locking: the pages are still locked
  const auto tail = reinterpret_cast<std::uintptr_t>(array + block);
  const std::size_t bytes = 10 * kPage;
  auto copy = std::async(std::launch::async, [&] {
    HostLockCache::for_each_piece(cache.get(), array + block, bytes, [&](std::size_t at, std::size_t n) {
      EXPECT_TRUE(locker.copy_accepted(tail + at, n)) << "piece at " << at << " of " << n;
    });
  });
  EXPECT_EQ(copy.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the copy did not wait for the pages being unlocked";
  unlock_go.set_value();
  copy.get();
  freed.get();
  cache->drain();
  EXPECT_EQ(locker.count(), 0u);
  munmap(memory, kLargeMapping * kPage);
}

// A copy across the edge of memory the program locked itself is cut there too.
TEST_F(HostLockCacheTest, ACopyIsCutAtTheProgramsOwnRegistrations) {
  make();
  char *memory = map_pages(kLargeMapping);
  char *mine = memory + 8 * kPage + 40;
  const std::size_t bytes = 16 * kPage;
  cache->reserve(reinterpret_cast<std::uintptr_t>(mine), reinterpret_cast<std::uintptr_t>(mine) + bytes);
  ASSERT_TRUE(locker.program_lock(mine, bytes));
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  HostLockCache::for_each_piece(cache.get(), memory, 32 * kPage, [&](std::size_t at, std::size_t n) {
    EXPECT_TRUE(locker.copy_accepted(reinterpret_cast<std::uintptr_t>(memory) + at, n))
        << "piece at " << at << " of " << n;
    pieces.emplace_back(at, n);
  });
  EXPECT_EQ(pieces.size(), 3u);
  locker.program_unlock(mine);
  cache->release(reinterpret_cast<std::uintptr_t>(mine), reinterpret_cast<std::uintptr_t>(mine) + bytes);
  munmap(memory, kLargeMapping * kPage);
}

// With align_from (CudaMemory: NANORT_CUDA_COPY_ALIGN), a piece at least that large whose
// host bytes start inside a page goes as two: the bytes up to the next page, then the rest.
TEST(HostLockCacheCopies, ALargePieceStartingInsideAPageGoesAsTwoWhenAsked) {
  constexpr std::size_t page = HostLockCache::kCopyAlignment, mib = std::size_t(1) << 20;
  const std::uintptr_t at_page = std::uintptr_t(1) << 30;  // (no byte is touched)
  using Pieces = std::vector<std::pair<std::size_t, std::size_t>>;
  const auto pieces = [&](std::uintptr_t host, std::size_t bytes, std::size_t align_from) {
    Pieces made;
    HostLockCache::for_each_piece(
        nullptr, reinterpret_cast<const void *>(host), bytes,
        [&](std::size_t at, std::size_t n) { made.emplace_back(at, n); }, align_from);
    return made;
  };
  EXPECT_EQ(pieces(at_page + 16, 2 * mib, mib),
            (Pieces{{0, page - 16}, {page - 16, 2 * mib - page + 16}}));
  EXPECT_EQ(pieces(at_page + page - 8, mib, mib), (Pieces{{0, 8}, {8, mib - 8}}));
  EXPECT_EQ(pieces(at_page + 16, mib - 1, mib), (Pieces{{0, mib - 1}}));  // smaller
  EXPECT_EQ(pieces(at_page + 16, 2 * mib, 0), (Pieces{{0, 2 * mib}}));    // not asked
  EXPECT_EQ(pieces(at_page, 2 * mib, mib), (Pieces{{0, 2 * mib}}));       // at a page already
}

// Pieces cut at the program's own registrations, which may start anywhere in a page: each is
// cut again at its own next page, and every piece stays in one registration or in none.
TEST_F(HostLockCacheTest, PiecesCutAtTheProgramsRegistrationsAreAlignedEachOnItsOwn) {
  if (kPage != HostLockCache::kCopyAlignment)
    GTEST_SKIP() << "SKIP: pages of " << kPage << " bytes";
  make();
  char *memory = map_pages(kLargeMapping);
  char *mine = memory + 8 * kPage + 40;
  const std::size_t bytes = 16 * kPage;
  const auto mine_at = reinterpret_cast<std::uintptr_t>(mine);
  cache->reserve(mine_at, mine_at + bytes);
  ASSERT_TRUE(locker.program_lock(mine, bytes));
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  HostLockCache::for_each_piece(
      cache.get(), memory, 32 * kPage,
      [&](std::size_t at, std::size_t n) {
        EXPECT_TRUE(locker.copy_accepted(reinterpret_cast<std::uintptr_t>(memory) + at, n))
            << "piece at " << at << " of " << n;
        pieces.emplace_back(at, n);
      },
      4 * kPage);
  const std::size_t p = kPage;
  EXPECT_EQ(pieces, (std::vector<std::pair<std::size_t, std::size_t>>{
                        {0, 8 * p + 40},           // from a page: as it is
                        {8 * p + 40, p - 40},      // the program's: up to its next page
                        {9 * p, 15 * p + 40},      // and the rest
                        {24 * p + 40, p - 40},     // after it, the same
                        {25 * p, 7 * p}}));
  locker.program_unlock(mine);
  cache->release(mine_at, mine_at + bytes);
  munmap(memory, kLargeMapping * kPage);
}

// Once the helper waits for a copy over the pages it locks next, new copies over them wait
// for the locking: a stream of copies cannot hold it back, and they are cut where it ends.
TEST_F(HostLockCacheTest, NewCopiesWaitBehindALockingThatWaitsForACopy) {
  make();
  char *memory = map_pages(kLargeMapping);
  char *array = memory + 16;
  const std::size_t block = 64 * kPage;
  const auto tail = reinterpret_cast<std::uintptr_t>(array + block);
  const std::size_t bytes = 10 * kPage;
  std::promise<void> entered, leave;
  auto first = std::async(std::launch::async, [&] {
    HostLockCache::for_each_piece(cache.get(), array + block, bytes, [&](std::size_t, std::size_t) {
      entered.set_value();
      leave.get_future().wait();
    });
  });
  entered.get_future().wait();
  move_twice_queued(array, block);  // block 0: its last page is the copies' first
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (cache->stats().copy_waits == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(cache->stats().copy_waits, 1u);
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  auto second = std::async(std::launch::async, [&] {
    HostLockCache::for_each_piece(cache.get(), array + block, bytes, [&](std::size_t at, std::size_t n) {
      EXPECT_TRUE(locker.copy_accepted(tail + at, n)) << "piece at " << at << " of " << n;
      pieces.emplace_back(at, n);
    });
  });
  EXPECT_EQ(second.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "a new copy went ahead of the locking that waits";
  leave.set_value();
  first.get();
  second.get();
  ASSERT_EQ(pieces.size(), 2u);  // cut where block 0's registration ends
  EXPECT_EQ(tail + pieces[1].first, (tail + kPage - 1) / kPage * kPage);
  cache->drain();
  munmap(memory, kLargeMapping * kPage);
  EXPECT_EQ(locker.count(), 0u);
}

}  // namespace
}  // namespace nanort::rt
