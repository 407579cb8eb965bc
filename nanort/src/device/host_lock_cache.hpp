// HostLockCache: ordinary host memory page-locked by the runtime itself.
//
// A GPU copies page-locked host memory at the bus's speed; ordinary (malloc'd) memory goes
// through pinned staging buffers at about half of it. OmpSs programs allocate with malloc and
// call nothing but their kernels, so the runtime locks what moves often: a range of host
// memory that the directory copies through staging a second time (a time step's arrays, a
// result read back every iteration) is locked by a helper thread, while the copies go on
// through staging, and later copies of it go direct. Locking is slow (3-20 GB/s for memory
// in use, 2 GB/s where it still has to be faulted in; a staged copy goes at 30 GB/s and more),
// which is why a range is locked only once it has moved twice, and never on the copying
// thread. A large range is locked at its first copy to a device, which waits for it
// (lock_now): a registration holds the driver, so a staged copy would wait for it as well.
//
// Locked ranges are whole pages (the driver locks pages; a byte once), but where memory the
// program locked itself (nanort_host_register, reserve()) cuts a page. A range is locked
// together with every range waiting to be locked that touches it or shares a page with it
// (blocks of one array), so that an array is mostly one registration; a range that shares
// pages with ranges locked already locks only the pages still unlocked. A copy over several
// locked ranges is made in pieces, one per range (cuts()): the driver refuses an asynchronous
// copy across two registrations. The locked bytes stay under a limit; past it, ranges stay
// ordinary.
//
// No stale entry: memory the program gives back must not stay locked under a new use of its
// address. The runtime's memory hooks (memory_hooks.cpp) see free, realloc, munmap, mremap,
// madvise, mmap over a mapping, brk/sbrk and shmdt, and forget() the entries they touch, before
// the memory is given back: forget() returns once none of its pages is locked, also where
// another thread is unlocking them or the helper is locking them. A free that touches no
// locked, waiting or unlocking bytes (nearly all) returns without the lock. The cache is used
// only where every hook is in effect (hooks_in_effect(): no allocator or sanitizer in front of
// them).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nanort::rt {

class HostLockCache {
 public:
  // What locks pages (one device of each lock scope: host_registration.cpp; tests use their
  // own).
  class Locker {
   public:
    virtual ~Locker() = default;
    // Locks [address, address + bytes) (whole pages); false with 'why' if it cannot.
    virtual bool lock(void *address, std::size_t bytes, std::string &why) = 0;
    virtual bool unlock(void *address) = 0;  // a range lock() locked; false if it failed
  };

  struct Options {
    std::size_t limit = 0;                         // locked bytes at most
    std::size_t min_bytes = std::size_t(256) << 10;  // smaller ranges are not locked
    int moves_before_lock = 2;                     // copies of a range before it is locked
    // A range this large is locked at its first copy (lock_now, or the first staged one):
    // the locking (3-20 GB/s for memory in use) is then done by the time the program comes
    // back to it.
    std::size_t large_bytes = std::size_t(8) << 20;
    // Locked in registrations of at most this many bytes (0: a range at once): copies that
    // other threads start wait for a registration in progress.
    std::size_t piece_bytes = 0;
    // A large range's first copy to a device waits for its locking (lock_now) and goes
    // direct, instead of going through staging while the helper locks it (a registration
    // holds the driver, and the staged copies' enqueues wait behind it all the same).
    bool wait_for_large = true;
  };

  struct Stats {
    std::size_t locked_bytes = 0;
    std::size_t entries = 0;
    std::uint64_t locks = 0, unlocks = 0;
    std::uint64_t refused = 0;  // over the limit, or the locker said no
    std::string last_refusal;   // why, the last time
    std::uint64_t unlock_failures = 0;
    // forget() calls that waited for pages to be unlocked by another (or by the helper, which
    // was locking them): it returns only once they are.
    std::uint64_t waits = 0;
    // Lockings that waited for a copy in progress over their bytes (begin_copy).
    std::uint64_t copy_waits = 0;
    // Copies that waited for their range to be locked (lock_now).
    std::uint64_t lock_waits = 0;
  };

  HostLockCache(Locker &locker, Options options);
  ~HostLockCache();  // unlocks every entry (the caller has no copy in flight any more)
  HostLockCache(const HostLockCache &) = delete;
  HostLockCache &operator=(const HostLockCache &) = delete;

  // Whether every byte of [address, address + bytes) is on a page this cache locked.
  bool covers(const void *address, std::size_t bytes);
  // The same, and if not, whether the range waits for the helper (or is being locked): the
  // program did not lock it then (no need to ask the driver, whose calls wait for the
  // helper's locking).
  enum class Coverage { locked, waiting, unknown };
  Coverage coverage(const void *address, std::size_t bytes);
  // The edges of locked ranges, and of the program's own registrations (reserve()), strictly
  // inside [address, address + bytes), in order: the driver refuses an asynchronous copy that
  // spans two registrations (or one and ordinary memory), even where they touch, so a copy is
  // made in pieces cut there. True if every byte is locked here.
  bool cuts(const void *address, std::size_t bytes, std::vector<std::uintptr_t> &out);
  // Calls copy(at, n) for the pieces of host [host, host + bytes) that lie each in one range
  // 'locks' locked, or in none (cut at cuts()); one piece when 'locks' is null. Where some of
  // it is ordinary memory, the helper locks none of its bytes until the pieces are enqueued
  // (and they wait for a locking of their bytes in progress): a page locked between the cuts
  // and the copy would leave a piece that starts in a registration and ends outside it.
  // With 'align_from' (0: never), a piece of at least that many bytes whose host bytes start
  // inside a page of kCopyAlignment bytes is made as two, the bytes up to the next such page
  // and the rest (CudaMemory: NANORT_CUDA_COPY_ALIGN).
  static constexpr std::size_t kCopyAlignment = 4096;
  template <class Copy>
  static void for_each_piece(HostLockCache *locks, const void *host, std::size_t bytes,
                             Copy &&copy, std::size_t align_from = 0) {
    const auto start = reinterpret_cast<std::uintptr_t>(host);
    const auto piece = [&](std::size_t at, std::size_t n) {
      std::size_t head = (kCopyAlignment - (start + at) % kCopyAlignment) % kCopyAlignment;
      if (!align_from || n < align_from || head >= n) head = 0;
      if (head) copy(at, head);
      copy(at + head, n - head);
    };
    if (!locks) return piece(std::size_t(0), bytes);
    thread_local std::vector<std::uintptr_t> edges;
    struct Copying {  // (ends the copy also when 'copy' throws)
      HostLockCache *locks;
      const void *host;
      std::size_t bytes;
      ~Copying() {
        if (locks) locks->end_copy(host, bytes);
      }
    } copying{locks->begin_copy(host, bytes, edges) ? locks : nullptr, host, bytes};
    std::size_t at = 0;
    for (std::uintptr_t edge : edges) {
      piece(at, edge - start - at);
      at = edge - start;
    }
    piece(at, bytes - at);
  }
  // The directory copies these bytes through staging (they are not locked): counted, and
  // locked by the helper thread once they moved often enough (each staged copy counts once).
  void moved(const void *address, std::size_t bytes);
  // A range of at least Options::large_bytes about to be copied to a device, not locked yet
  // (with Options::wait_for_large): wants_lock_now() says whether lock_now() would lock it
  // (not for a smaller range, one refused before (the limit, the driver), or one that
  // memory the program locked itself cuts); lock_now() asks the helper to lock it before
  // every other range waiting, and waits until the helper has dealt with it. True if its
  // bytes are then locked (the copy goes direct).
  bool wants_lock_now(const void *address, std::size_t bytes);
  bool lock_now(const void *address, std::size_t bytes);
  // The program gives [start, end) back. Bytes (free, realloc): entries whose own bytes share
  // one with it; pages (munmap and the like): entries whose pages do. Unlocked before return,
  // also when another thread unlocks them or the helper is locking them at that moment.
  enum class Scope { bytes, pages };
  void forget(std::uintptr_t start, std::uintptr_t end, Scope scope);
  // The program page-locks [start, end) itself next (nanort_host_register): no page of it
  // stays locked here, and the helper locks none of its bytes until release(). (Locked ranges
  // of the cache then stop at its edges, which need not be page boundaries: the driver takes
  // two registrations that share a page, not two that share a byte.)
  void reserve(std::uintptr_t start, std::uintptr_t end);
  void release(std::uintptr_t start, std::uintptr_t end);

  // Waits until the helper has dealt with every range asked for so far (tests, statistics).
  void drain();
  Stats stats();

  // Whether the hooks see the program's frees and unmappings (memory_hooks.cpp): only then may
  // a cache be made. 'why' says what is in front of them otherwise.
  static bool hooks_in_effect(std::string &why);
  // The cache the hooks report to (at most one at a time; null: none).
  static void set_active(HostLockCache *cache);

 private:
  struct Entry {  // locked [key, page_end): whole pages, but where a reserved range cuts them;
                  // the bytes of the ranges that asked for them
    std::uintptr_t page_end;
    std::uintptr_t data_start, data_end;
  };
  struct Move {  // a range that moved: how often (kRefused: never to be locked)
    std::uintptr_t end;
    int count;
  };
  static constexpr int kRefused = -1;
  static constexpr int kAsked = -2;  // queued for the helper

  // The byte ranges a free must tell the cache of (the entries' own bytes, and the pages being
  // locked), readable without the lock: most frees touch none of them and return at once.
  // Rewritten under the lock after every change; read under a sequence count.
  bool frees_may_touch(std::uintptr_t start, std::uintptr_t end) const;
  void publish_watched();
  static constexpr int kWatchedMax = 32;  // more ranges: every free takes the lock

  void give_back(std::uintptr_t start, std::uintptr_t end, Scope scope, bool reserve);
  bool unlock_counted(std::uintptr_t page);  // (without the lock)
  void helper_loop();
  void lock_range(std::unique_lock<std::mutex> &lock, std::uintptr_t asked_start,
                  std::uintptr_t asked_end);
  bool covers_locked(std::uintptr_t start, std::uintptr_t end) const;
  // A copy over [host, host + bytes) begins: its cuts in 'edges'; true if some of it is
  // ordinary memory, then counted in copying_ until end_copy().
  bool begin_copy(const void *host, std::size_t bytes, std::vector<std::uintptr_t> &edges);
  void end_copy(const void *host, std::size_t bytes);
  bool copying(std::uintptr_t start, std::uintptr_t end) const;
  void settle_moves(std::uintptr_t start, std::uintptr_t end);
  bool within_reserved(std::uintptr_t start, std::uintptr_t end) const;
  bool touches_reserved(std::uintptr_t start, std::uintptr_t end) const;
  bool lockable_now(std::uintptr_t start, std::uintptr_t end);  // (wants_lock_now, locked)
  void widen_bounds(std::uintptr_t start, std::uintptr_t end);

  Locker &locker_;
  const Options options_;
  const std::uintptr_t page_;

  std::mutex mutex_;
  std::map<std::uintptr_t, Entry> entries_;  // by first page; never overlapping
  std::map<std::uintptr_t, Move> moves_;     // by first byte
  std::map<std::uintptr_t, std::uintptr_t> reserved_;  // the program's own: start -> end
  std::uintptr_t longest_move_ = 0;          // bytes of the longest range in moves_
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> queue_;  // for the helper
  std::pair<std::uintptr_t, std::uintptr_t> locking_{0, 0};  // bytes the helper locks now
  bool locking_forgotten_ = false;  // forget() touched them meanwhile
  // Pages forget() took out of entries_ and is unlocking now (outside the lock): the helper
  // locks none of them until they are unlocked.
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> unlocking_;
  std::condition_variable unlocked_;
  // Copies of partly ordinary memory between their cuts and their last enqueue (the helper
  // locks none of their bytes meanwhile), and the pages the helper locks next or now (new
  // such copies over them wait).
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> copying_;
  std::pair<std::uintptr_t, std::uintptr_t> registering_{0, 0};
  std::condition_variable copies_done_, registered_;
  bool busy_ = false;               // the helper works on a range
  bool stopping_ = false;
  std::size_t locked_bytes_ = 0;
  Stats counts_;
  std::atomic<unsigned> watched_sequence_{0};
  std::atomic<int> watched_count_{0};  // -1: more than kWatchedMax
  std::atomic<std::uintptr_t> watched_start_[kWatchedMax] = {}, watched_end_[kWatchedMax] = {};
  std::condition_variable wake_helper_, idle_;
  std::thread helper_;
};

}  // namespace nanort::rt
