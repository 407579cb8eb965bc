// Directory: which memory spaces hold valid copies of which bytes of host memory, where the
// device copies live, and the copies that keep them coherent.
//
// Space 0 is the host; spaces 1..n are devices, each seen through a MemorySpace. For every
// byte ever named by a device task, a fragment records its valid set (coherence.hpp) and the
// copies into a space that are still in flight. Each device keeps a cache of allocations:
// each mirrors one host range, allocations of a space never overlap, and every byte valid on
// a device lies inside one of its allocations. A device's allocations count against its
// capacity; when a new one does not fit, free buffers are released, then the least recently
// used allocations no task is using are evicted (their only valid bytes written back first).
//
// Use by a device's manager: stage() a task's data (allocations pinned, copies enqueued, the
// completions to wait for returned), run the task after them, finish() once it is done (its
// writes become the only valid copies, the allocations unpinned). CPU tasks call
// acquire_host() first; taskwait calls flush(). All calls are thread-safe (one lock).
#pragma once

#include <nanort/dc/coherence.hpp>
#include <nanort/dc/interval_map.hpp>
#include <nanort/dc/memory_space.hpp>
#include <nanort/dc/region.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace nanort::dc {

// One data access of a task as the directory sees it.
struct DataAccess {
  Region region;
  bool reads = true;   // the task needs the current values
  bool writes = true;  // the task changes them
};

// Where an access's first byte lives on the device.
struct Placement {
  DeviceBuffer buffer;
  std::size_t offset = 0;  // from the start of 'buffer'
};

// Counted per memory space; for the host, only hits and misses.
struct TransferCounters {
  std::uint64_t bytes_to_device = 0;  // host -> this space
  std::uint64_t bytes_to_host = 0;    // this space -> host
  std::uint64_t bytes_from_peer = 0;  // another device -> this space, directly
  std::uint64_t copies = 0;           // copy commands into or out of this space
  std::uint64_t hits = 0;             // accesses that found every byte valid in place
  std::uint64_t misses = 0;           // accesses that needed a copy
  std::uint64_t evictions = 0;
  std::uint64_t allocations = 0;      // device allocations made (reuse not counted)
  std::uint64_t peak_bytes = 0;       // the most allocated at once
};

// A task's data cannot fit in a device's memory even with nothing else there. Made from what
// the task does, without a subject ("needs 260 KiB at once on ..."): what() reads "a task
// needs ...", and predicate() lets a caller that knows the task name it instead.
class DataTooLargeError : public std::runtime_error {
 public:
  explicit DataTooLargeError(const std::string &predicate)
      : std::runtime_error(std::string(kSubject) + predicate) {}
  const char *predicate() const noexcept { return what() + sizeof kSubject - 1; }

 private:
  static constexpr char kSubject[] = "a task ";
};

struct SpaceSettings {
  MemorySpace *memory = nullptr;  // not owned; outlives the directory
  std::size_t capacity = 0;       // bytes this space may hold; 0: its memory size
  std::string limit_source = {};  // what set the capacity, for messages ("NANORT_DEVICE_MEMORY")
};

struct DirectoryOptions {
  std::size_t staging_chunk = std::size_t(4) << 20;      // bytes per staging buffer (at most
                                                         // one chunk of a staged copy)
  std::size_t staging_threshold = std::size_t(256) << 10;  // smaller copies go direct
  int staging_threads = 4;  // threads packing and unpacking staging buffers
};

// Where a task's data lives in one memory space (Directory::locate).
struct LocatedBytes {
  std::uint64_t valid = 0;  // bytes the task reads that are valid there
  std::uint64_t owned = 0;  // bytes the task writes whose only valid copy is there (a device)
};

// What the directory knows of one fragment (for tests and messages).
struct FragmentInfo {
  SpaceMask valid = kHostOnly;
  std::uint64_t version = 0;
};

// Observes the copies the directory makes (statistics, trace).
class ParallelMemcpy;

class CopyListener {
 public:
  virtual ~CopyListener() = default;
  virtual void copy_started(SpaceId from, SpaceId to, std::size_t bytes) = 0;
};

class Directory {
 public:
  struct Allocation;

  // The data of one task staged in one space.
  struct Staging {
    SpaceId space = kHost;
    std::vector<Placement> placements;  // one per access, in order
    std::vector<CompletionPtr> ready;   // the task starts once these are done
    std::vector<Allocation *> pinned;   // held until finish()
    bool committed = false;             // commit_launched() recorded the writes
    std::size_t bytes_in = 0;           // copied into the space for this task
    std::uint64_t lock_wait_ns = 0;     // stage() waited this long for the directory's lock
  };
  enum class StageResult { Staged, Busy };

  // Device spaces 1..n in the order given.
  explicit Directory(std::vector<SpaceSettings> spaces, DirectoryOptions options = {});
  ~Directory();  // releases every device buffer and staging buffer; writes nothing back
  Directory(const Directory &) = delete;
  Directory &operator=(const Directory &) = delete;

  SpaceId space_count() const { return static_cast<SpaceId>(spaces_.size()); }
  MemorySpace &memory(SpaceId space) const { return *spaces_.at(space).memory; }
  std::size_t capacity(SpaceId space) const { return spaces_.at(space).capacity; }
  // Copies from device space 'from' into device space 'to' go directly (CUDA peers, one
  // OpenCL context), not through the host.
  bool copies_directly(SpaceId from, SpaceId to) const {
    return (spaces_.at(to).direct & bit(from)) != 0;
  }
  void set_listener(CopyListener *listener) { listener_ = listener; }

  // Makes room for a task's accesses in 'space' and enqueues the copies of what it reads.
  // Busy: not enough memory while other tasks hold theirs; nothing is held, try again once
  // one of them finished. Throws DataTooLargeError when the data cannot fit at all: more
  // than the capacity at once, or the device refuses the memory with nothing else held.
  StageResult stage(SpaceId space, std::span<const DataAccess> accesses, Staging &out);
  // The task staged in 'staging' is done: what it wrote is valid there alone.
  void finish(std::span<const DataAccess> accesses, Staging &staging);
  // For a device that runs its kernels in launch order: the task staged in 'staging' was
  // launched and 'done' completes with it. Its writes are recorded now, valid in that space
  // alone and pending until 'done' (copies out of the space wait for it), so that the tasks
  // after it can be staged and launched behind it on the same device before it ends.
  // finish() then only unpins.
  void commit_launched(std::span<const DataAccess> accesses, Staging &staging,
                       const CompletionPtr &done);
  // Unpins without recording writes (the task never ran).
  void abandon(Staging &staging);

  // Before a CPU task: the bytes it reads are made valid on the host (waits for the copies);
  // the bytes it writes are then valid on the host alone.
  void acquire_host(std::span<const DataAccess> accesses);
  // Starts copying home what 'accesses' wrote that only 'space' holds, without waiting and
  // without dropping the device's copy: for results no later task is known to need, so that
  // the flush at taskwait finds them home. Only copies that go direct and asynchronously
  // (page-locked host memory, or a space that needs no staging) are started: a staged copy,
  // or a GPU driver's copy into ordinary memory, would hold the caller. The host's copy counts as valid at once; whoever reads host memory, or writes
  // it back again, waits for these copies first.
  void write_back(std::span<const DataAccess> accesses, SpaceId space);
  // Host memory gets the latest values of every byte (or of 'region') and devices drop
  // their copies; waits for the copies. Allocations stay cached for reuse.
  void flush();
  void flush(const Region &region);

  // True when no byte is valid anywhere but on the host: CPU tasks need no directory work.
  bool host_holds_everything() const { return tracked_.load(std::memory_order_acquire) == 0; }

  // Where the data of 'accesses' lives, one entry per space (0 is the host; bytes the
  // directory does not track are valid on the host): for placing a task. A snapshot.
  void locate(std::span<const DataAccess> accesses, std::vector<LocatedBytes> &per_space);

  TransferCounters counters(SpaceId space) const;
  std::size_t used_bytes(SpaceId space) const;
  FragmentInfo fragment_at(const void *address) const;

 private:
  // Its valid set, version and forgotten copies in flight follow coherence_transition
  // (take()); the copies a transition plans are recorded as arriving once issued (record_copy).
  struct FragmentState {
    SpaceMask valid = kHostOnly;
    std::uint64_t version = 0;
    // Copies into a space still in flight (the space's copy is valid once they are done): the
    // spaces arriving. At most one per space.
    std::vector<std::pair<SpaceId, CompletionPtr>> pending;
  };
  struct Space {
    MemorySpace *memory = nullptr;
    std::size_t capacity = 0;
    std::string limit_source;  // SpaceSettings::limit_source
    std::size_t used = 0;  // live allocations plus free buffers
    std::map<std::uintptr_t, std::unique_ptr<Allocation>> allocations;  // by host start
    std::multimap<std::size_t, DeviceBuffer> free_buffers;              // by size
    // The ranges of allocations a flush left holding nothing valid (drop_stale), by start: a
    // task that touches part of one again gets its whole range back while a free buffer of
    // that size is left (tasks over neighbouring parts of an array then share one allocation
    // again, instead of each merging the ones before it). At most kRecentRanges.
    std::map<std::uintptr_t, std::uintptr_t> recent_ranges;
    SpaceMask direct = 0;  // spaces that copy into this one directly
    int pinned = 0;        // allocations held by staged tasks
    TransferCounters counters;
    // The staging buffers, made at the first large copy, and what uses them: guarded by
    // staging_mutex (copies through the host run outside the directory's lock, stage()).
    std::mutex staging_mutex;
    PinnedBuffer staging[2];
    CompletionPtr staging_busy[2];
    bool staging_failed = false;
  };

  struct PlannedCopy;
  struct DeferredCopy;
  class DeferredCompletion;

  static constexpr std::size_t kRecentRanges = 256;
  bool stage_in_place(SpaceId space, std::span<const DataAccess> accesses, Staging &out);
  // The allocation for [start, end), which covers the allocations it overlaps; when their
  // union does not fit, or would put [own_start, own_end) at an offset kernels cannot be
  // given, those are evicted and [own_start, own_end) alone is allocated.
  Allocation *place(SpaceId space, std::uintptr_t start, std::uintptr_t end,
                    std::uintptr_t own_start, std::uintptr_t own_end);
  DeviceBuffer allocate(SpaceId space, std::size_t bytes, std::span<Allocation *const> keep);
  void release(SpaceId space, DeviceBuffer buffer, std::size_t bytes);
  bool evict_one(SpaceId space, std::span<Allocation *const> keep);
  void evict(SpaceId space, Allocation *victim);
  void drop_allocation(SpaceId space, Allocation *allocation);
  bool holds_valid_bytes(SpaceId space, const Allocation &allocation);
  void drop_stale(SpaceId space, std::uintptr_t start, std::uintptr_t end);
  Allocation &allocation_holding(SpaceId space, std::uintptr_t start, std::uintptr_t end);
  void unpin(Staging &staging);
  // The bytes 'accesses' write are valid in 'id' alone, once 'until' is done (if given).
  void record_writes(std::span<const DataAccess> accesses, SpaceId id, const CompletionPtr &until);

  // Copies are planned fragment by fragment (contiguous ones with the same ends join) and
  // then issued; issuing marks copies into devices as pending on their fragments.
  void plan(std::vector<PlannedCopy> &copies, SpaceId from, SpaceId to, std::uintptr_t start,
            std::uintptr_t end, FragmentState &fragment);
  // host_pending: copies into the host are not waited for by the caller, and are recorded as
  // pending on their fragments (write_back).
  std::vector<CompletionPtr> issue(std::vector<PlannedCopy> &copies, bool host_pending = false);
  // What issuing 'copy' changes here, 'done' completing it: counters, the allocations' users
  // and the fragments' pending copies (issue(); copies made after unlocking, stage()).
  void record_copy(const PlannedCopy &copy, const CompletionPtr &done, bool host_pending);
  bool goes_direct_to_host(SpaceId from, std::uintptr_t start, std::uintptr_t end);
  // 'may_lock': not under the directory's lock, so the copy may wait for the memory space to
  // lock its source (MemorySpace::lock_for_copy).
  CompletionPtr write_staged(Space &space, DeviceBuffer target, std::size_t offset,
                             const void *source, std::size_t bytes, Dependencies after,
                             bool may_lock = false);
  CompletionPtr read_staged(Space &space, DeviceBuffer source, std::size_t offset, void *target,
                            std::size_t bytes, Dependencies after);
  bool staging_ready(Space &space);  // with space.staging_mutex held
  void pack(void *target, const void *source, std::size_t bytes);  // by the packer threads
  // Copies through the host planned by stage(), done after it unlocks (see there).
  void defer_through_host(std::vector<PlannedCopy> &to_host, std::vector<PlannedCopy> &to_space,
                          std::vector<DeferredCopy> &jobs, Staging &out);
  void run_deferred(std::vector<DeferredCopy> &jobs);
  std::size_t staging_chunk_for(std::size_t bytes) const;  // bytes per chunk of one copy
  static std::vector<CompletionPtr> pending_of(const FragmentState &fragment, SpaceId space);
  static void forget_done_pending(FragmentState &fragment);
  // The fragment as the coherence function sees it, and the transition's new state taken:
  // its valid set and version; its copies in flight into spaces no longer arriving dropped
  // (after a write, those into the writer too: it read them; a launched writer's own
  // completion is recorded by the caller). The caller has dealt with t.wait.
  static FragmentCoherence coherence_of(const FragmentState &fragment);
  static void take(FragmentState &fragment, const Transition &t);
  static void wait_arriving(const FragmentState &fragment, SpaceMask spaces);
  void write_back_and_drop(std::uintptr_t start, std::uintptr_t end);
  void forget_host_only(std::uintptr_t start, std::uintptr_t end);

  mutable std::mutex mutex_;
  std::vector<std::size_t> scratch_order_;  // stage(), under the lock
  std::vector<Allocation *> scratch_found_;  // stage_in_place(), under the lock
  std::vector<Space> spaces_;  // [0] is the host
  DirectoryOptions options_;
  IntervalMap<FragmentState> fragments_;
  std::atomic<std::size_t> tracked_{0};  // fragments_.size(), readable without the lock
  std::uint64_t tick_ = 0;               // LRU clock
  CopyListener *listener_ = nullptr;
  std::mutex packer_mutex_;                 // one copy at a time (after staging_mutex)
  std::unique_ptr<ParallelMemcpy> packer_;  // made with the first staging buffers
};

}  // namespace nanort::dc
