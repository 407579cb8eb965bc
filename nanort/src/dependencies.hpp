// DependencyDomain: the dependency graph among the children of one task.
//
// For every fragment of memory that a sibling named, the domain remembers two groups of
// tasks: the current group (the latest accessors, all of one mode) and the group before it.
// A new access either joins the current group -- readers join readers, concurrent joins
// concurrent, commutative joins commutative, and then waits for the group before -- or starts
// a new group and waits for every member of the current one. Writers (out, inout) always
// start a new group. Fragments come from dc::IntervalMap, so partial overlaps between ranges
// are exact: a reader of [512,1536) after writers of [0,1024) and [1024,2048) waits for both.
//
// Commutative tasks of a group become ready together but must run one at a time: before a
// task with commutative accesses is released to the scheduler it takes ownership of every
// fragment it names (all or nothing, under the domain lock, so there is no deadlock); a task
// that cannot waits in the domain and is retried when an owner completes.
//
// When a task completes, fragments whose accessors have all completed are dropped, so the
// domain holds about as many fragments as there are live tasks.
//
// A 2-D block (a tile of a row-major matrix) is one fragment, not one per row, as long as
// nothing overlaps it without being exactly that block (BlockMap): tiled programs name the
// same tiles again and again. An access that overlaps a block partly (a row, another tile
// shape, a reduction) first turns the block into rows, each with the block's state, and the
// domain goes on exactly as above. Blocks and row fragments never share a byte.
//
// Reductions (OmpSs-2): a reduction access starts a group of its own, like a writer, with a
// ReductionInfo (the private copies, reduction.hpp); a later reduction access with the same
// operator inside the same bytes joins it, also after every member has ended (the domain keeps
// the reductions open for that). Any other access of those bytes (or a reduction with another
// operator or over other bytes) closes it: the new access, and every later one of any of its
// bytes (the fragments over them take every member still running), waits for every member,
// and the last member to be released combines the copies into the target before it releases
// its successors (or the access that closes it does so at once when every member is done). A
// taskwait, and the end of the parent, combine the reductions still open (clear(), the
// destructor).
//
// One lock per domain guards it all, with one exception, the common release: a task that
// took part in no reduction, held nothing commutative, launched no kernel and did not fail,
// and whose successors are all plain CPU tasks, releases them without the domain lock (the
// creator registering siblings holds it, and releases by many workers at once would queue
// on it): under its own successors_lock it marks itself released and takes its successors
// (a registration links to a predecessor under that lock too, so an edge is either taken or
// never made), then counts each successor down atomically. Its fragments are forgotten
// later, under the domain lock, by a registration (one in 16), a release that takes it, or
// the release that makes that list 64 long (a lock-free list of such tasks: each holds its
// memory until then, and memory that is reused soon is still in the caches); or at once when
// the thread releasing it is the one that registers the siblings (the lock is then most
// likely free).

#pragma once

#include <nanort/dc/interval_map.hpp>

#include <cstdint>
#include <vector>

#include "block_map.hpp"
#include "reduction.hpp"
#include "small_vector.hpp"
#include "spin_lock.hpp"
#include "task.hpp"

namespace nanort::rt {

using ReadyList = SmallVector<Task *, 8>;

class DependencyDomain {
 public:
  DependencyDomain() = default;
  DependencyDomain(const DependencyDomain &) = delete;
  DependencyDomain &operator=(const DependencyDomain &) = delete;
  ~DependencyDomain();

  // Links 'task' after the siblings it depends on. Appends it to 'ready' if it can run now.
  void register_task(Task *task, ReadyList &ready);
  // Called once 'task' is complete: successors whose last predecessor it was go to 'ready'.
  // 'by_registrar': the caller is the thread that registers the siblings (it runs their
  // parent's body): the domain's lock is then most likely free, and its fragments are
  // forgotten at once rather than through the list (see below).
  void release(Task *task, ReadyList &ready, bool by_registrar = false);
  // Some task submitted after 'task' waits for it (a snapshot).
  bool has_successors(const Task *task);
  // Called once the kernel of 'task' is enqueued on device 'device' (a manager's number),
  // whose kernels run one after another in launch order. A successor of the same device kind
  // whose every unfinished predecessor was launched there can be launched behind them at
  // once: it goes to 'ready' with early_released set and early_device naming the device.
  void launched(Task *task, int device, ReadyList &ready);
  // Device kinds (a bit per nanort_device_kind) whose devices wait for each other's kernels on
  // the device and copy between each other directly: a successor of kernels launched on
  // several of them is released early too (early_device kEarlyAnyDevice), to any device of
  // the kind, and waits there for those kernels (Task::early_after). Set by the runtime.
  static void set_early_across_kinds(std::uint32_t kinds);
  // Forgets all history; only valid when no sibling is live (after a taskwait). Combines the
  // reductions still open first.
  void clear();
  // Reductions still open (tests).
  std::size_t open_reduction_count();

  std::size_t fragment_count();
  // Edges ever added by domains that were cleared or destroyed since the start.
  static std::uint64_t total_edges();

 private:
  struct Group {
    SmallVector<Task *, 2> members;  // each holds a reference
    nanort_access_mode mode = NANORT_IN;
    void reset();
    void assign(const Group &other);
  };
  struct Fragment {
    Group previous;              // the group the current one waits for (joinable modes)
    Group current;
    Task *commutative_owner = nullptr;
    std::uint64_t reduction = 0;  // the current group's ReductionInfo::id, if a reduction
    Fragment() = default;
    Fragment(const Fragment &other);
    Fragment &operator=(const Fragment &) = delete;
    ~Fragment();
  };

  void add_access(Task *task, const Access &access);
  void add_to_fragment(Task *task, nanort_access_mode mode, Fragment &fragment);
  // The block entry that an access of 'region' joins (made if needed), or nullptr when the
  // region goes row by row (then blocks overlapping it must be demoted first).
  Fragment *block_for(const dc::Region &region);
  // Turns every block sharing a byte with 'region' into row fragments with its state.
  void demote_blocks(const dc::Region &region);
  // Calls visit(fragment&) for the fragments that hold the bytes of 'region': its block
  // entry, or the row fragments overlapping it.
  template <class Visit>
  void for_each_fragment(const dc::Region &region, Visit &&visit);
  // Reductions: a reduction access joins or starts one; any access first closes the open
  // reductions over its bytes that it does not join (and waits for their members).
  void add_reduction_access(Task *task, const Access &access);
  void close_overlapping(Task *task, std::uintptr_t start, std::uintptr_t end,
                         const ReductionInfo *except);
  void close(ReductionInfo *reduction);
  static void finish(ReductionInfo *reduction);  // combines (unless failed) and frees it
  void finish_open_reductions();
  void link(Task *predecessor, Task *successor);
  static void count_launched(Task *successor, const Task *predecessor);
  static void try_early(Task *task, ReadyList &ready);
  void make_ready(Task *task, ReadyList &ready);
  bool try_take_commutative(Task *task);
  void give_back_commutative(Task *task);
  void retire_edge_count();
  // Marks 'task' released and moves its successors into 'successors'.
  static void take_successors(Task *task, SmallVector<Task *, 2> &successors);
  // The release under the domain lock, and what it shares with the one without.
  void release_locked(Task *task, SmallVector<Task *, 2> &successors, ReadyList &ready);
  // Drops the fragments of 'task' whose accessors are all done (under the lock).
  void forget_done_fragments(const Task *task);
  void forget_later(Task *task);  // (no lock: for the next holder of the lock)
  void forget_deferred();         // (under the lock)

  SpinLock lock_;
  dc::IntervalMap<Fragment> fragments_;
  BlockMap<Fragment> blocks_;  // 2-D blocks tracked whole (never overlapping fragments_)
  std::vector<dc::Region> found_blocks_;  // scratch for BlockMap::intersecting
  std::vector<ReductionInfo *> open_reductions_;  // owned until closed
  std::uint64_t next_reduction_id_ = 1;
  std::vector<Task *> waiting_for_commutative_;
  std::uint64_t edges_ = 0;
  std::uint64_t registrations_ = 0;
  // Tasks released without the lock whose fragments are still to be forgotten (linked by
  // Task::prune_next, each holding a reference). On a line of its own: workers push to it.
  alignas(64) std::atomic<Task *> forget_list_{nullptr};
  std::atomic<std::uint32_t> forget_count_{0};  // about how many are on it (never more)
};

}  // namespace nanort::rt
