#include "dependencies.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "prefetch.hpp"

namespace nanort::rt {

namespace {
bool joinable(nanort_access_mode mode) {
  return mode == NANORT_IN || mode == NANORT_CONCURRENT || mode == NANORT_COMMUTATIVE;
}
// Whether tasks ordered after 'task' must not run: it failed, was not run itself, or ran on a
// device behind a kernel that failed. (Not an internal 'taskwait on' marker: that taskwait
// reports the failure, and the program may go on with the data it named.)
bool poisons(const Task *task) {
  return task->failed || task->ran_behind_failure || (task->not_run_after && task->site);
}
void mark_not_run(Task *successor, const Task *predecessor) {
  if (successor->early_released) {
    // Launched behind the failed kernel, it runs (or fails with it) on the device; the tasks
    // after it are not run. (A flag of its own: not_run_after of a task handed out already is
    // read outside the lock.)
    successor->ran_behind_failure = true;
    return;
  }
  if (successor->not_run_after) return;
  const char *why = predecessor->failed               ? ", which failed"
                    : predecessor->ran_behind_failure ? ", which ran behind a failed task"
                                                      : ", which was not run";
  successor->not_run_after = std::make_unique<std::string>(predecessor->describe() + why);
}
// A group of readers (or a reduction's members) can grow without bound; past this size,
// members that are done are dropped when the next one joins.
constexpr std::size_t kPruneEvery = 64;
// Drops the members that are done, but one failed or unrun one stays, so that the access
// after the group (a writer, or the one that closes a reduction) is not run.
template <class Members>
void prune(Members &members) {
  bool poison_kept = false;
  members.erase_if([&poison_kept](Task *member) {
    if (!member->released.load(std::memory_order_acquire)) return false;
    if (poisons(member) && !poison_kept) {
      poison_kept = true;
      return false;
    }
    member->drop_ref();
    return true;
  });
}
}  // namespace

void DependencyDomain::Group::reset() {
  for (Task *member : members) member->drop_ref();
  members.clear();
}

void DependencyDomain::Group::assign(const Group &other) {
  members = other.members;
  mode = other.mode;
  for (Task *member : members) member->add_ref();
}

DependencyDomain::Fragment::Fragment(const Fragment &other)
    : commutative_owner(other.commutative_owner), reduction(other.reduction) {
  previous.assign(other.previous);
  current.assign(other.current);
}

DependencyDomain::Fragment::~Fragment() {
  previous.reset();
  current.reset();
}

namespace {
std::atomic<std::uint64_t> retired_edges{0};
constexpr std::uint64_t kForgetEvery = 16;  // registrations between two looks at forget_list_
constexpr std::uint32_t kForgetBatch = 64;  // a release making forget_list_ this long empties it
}

std::uint64_t DependencyDomain::total_edges() { return retired_edges.load(); }

void DependencyDomain::retire_edge_count() {
  retired_edges.fetch_add(edges_, std::memory_order_relaxed);
  edges_ = 0;
}

DependencyDomain::~DependencyDomain() {
  forget_deferred();
  finish_open_reductions();
  retire_edge_count();
  fragments_.clear();
  blocks_.clear();
}

void DependencyDomain::register_task(Task *task, ReadyList &ready) {
  task->in_domain = true;
  task->plain_successor =
      !task->has_commutative && (!task->impl || task->impl->device == NANORT_DEVICE_SMP);
  std::lock_guard<SpinLock> guard(lock_);
  // Now and then: every look takes the list's line from the workers that push to it.
  if (++registrations_ % kForgetEvery == 0) forget_deferred();
  for (const Access &access : task->accesses) {
    if (access.mode == kReductionAccess) {
      add_reduction_access(task, access);
      continue;
    }
    if (!open_reductions_.empty())
      access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
        close_overlapping(task, start, end, nullptr);
      });
    add_access(task, access);
  }
  const bool plain = task->plain_successor;  // (read first: see release_locked)
  if (task->pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
    make_ready(task, ready);
  else if (!plain)
    try_early(task, ready);
}

void DependencyDomain::add_access(Task *task, const Access &access) {
  const nanort_access_mode mode = access.mode;
  if (Fragment *block = block_for(access.region)) {
    add_to_fragment(task, mode, *block);
    return;
  }
  if (!blocks_.empty()) demote_blocks(access.region);
  access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
    fragments_.cover(start, end, [&](std::uintptr_t, std::uintptr_t, Fragment &fragment) {
      add_to_fragment(task, mode, fragment);
    });
  });
}

void DependencyDomain::add_to_fragment(Task *task, nanort_access_mode mode, Fragment &fragment) {
  Group &current = fragment.current;
  if (joinable(mode) && current.mode == mode) {
    // Join the current group: wait for what it waits for.
    for (Task *predecessor : fragment.previous.members) link(predecessor, task);
    if (current.members.empty() || current.members.back() != task) {
      if (current.members.size() % kPruneEvery == kPruneEvery - 1) prune(current.members);
      task->add_ref();
      current.members.push_back(task);
    }
    return;
  }
  // Start a new group after the current one.
  for (Task *predecessor : current.members) link(predecessor, task);
  fragment.reduction = 0;
  fragment.previous.reset();
  if (joinable(mode)) {
    fragment.previous.members.swap(current.members);
    fragment.previous.mode = current.mode;
  } else {
    current.reset();
  }
  current.mode = mode;
  task->add_ref();
  current.members.push_back(task);
}

DependencyDomain::Fragment *DependencyDomain::block_for(const dc::Region &region) {
  // Blocks never share a byte with each other or with the row fragments: the block itself
  // is all there is to find there.
  if (Fragment *block = blocks_.find(region)) return block;
  if (!blocks_.accepts(region)) return nullptr;
  if (fragments_.any_overlapping(region.first(), region.last_end())) {
    bool rows_there = false;  // some of its bytes are tracked row by row: it joins them
    region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
      rows_there = rows_there || fragments_.any_overlapping(start, end);
    });
    if (rows_there) return nullptr;
  }
  blocks_.intersecting(region, found_blocks_);
  if (!found_blocks_.empty()) return nullptr;  // it overlaps other blocks partly
  return &blocks_.insert(region);
}

void DependencyDomain::demote_blocks(const dc::Region &region) {
  blocks_.intersecting(region, found_blocks_);
  for (const dc::Region &block : found_blocks_) {
    Fragment *whole = blocks_.find(block);
    block.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
      fragments_.cover(start, end, [&](std::uintptr_t, std::uintptr_t, Fragment &row) {
        // (A gap until now: a fresh fragment, since blocks and rows never overlap.)
        row.previous.assign(whole->previous);
        row.current.assign(whole->current);
        row.commutative_owner = whole->commutative_owner;
        row.reduction = whole->reduction;
      });
    });
    blocks_.erase(block);
  }
}

template <class Visit>
void DependencyDomain::for_each_fragment(const dc::Region &region, Visit &&visit) {
  if (Fragment *block = blocks_.find(region)) {
    visit(*block);
    return;
  }
  region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
    fragments_.overlapping(start, end,
                           [&](std::uintptr_t, std::uintptr_t, Fragment &fragment) { visit(fragment); });
  });
}

void DependencyDomain::add_reduction_access(Task *task, const Access &access) {
  // (A reduction's region is one range: nanort_task_reduction names contiguous bytes.)
  std::uintptr_t start = 0, end = 0;
  access.region.for_each_range([&](std::uintptr_t s, std::uintptr_t e) {
    if (end == 0) start = s;
    end = e;
  });
  ReductionEntry *entry = task->reductions->find(start);
  ReductionInfo *info = nullptr;
  for (ReductionInfo *open : open_reductions_)
    if (open->key() <= start && end <= open->key_end() && open->op().same_as(entry->op)) {
      info = open;
      break;
    }
  if (!info) {
    close_overlapping(task, start, end, nullptr);
    auto made = std::make_unique<ReductionInfo>(start, end - start, entry->target, entry->op);
    made->id = next_reduction_id_++;
    open_reductions_.push_back(made.get());
    info = made.release();
  } else if (info->members.size() % kPruneEvery == kPruneEvery - 1) {
    prune(info->members);
  }
  entry->info = info;
  entry->in_domain = true;
  ++info->active;
  task->add_ref();
  info->members.push_back(task);
  // Ordered like a joinable group: after the accesses before it, the members together.
  const std::uint64_t id = info->id;
  if (!blocks_.empty())
    demote_blocks(dc::Region::contiguous(reinterpret_cast<const void *>(start), end - start));
  fragments_.cover(start, end, [&](std::uintptr_t, std::uintptr_t, Fragment &fragment) {
    Group &current = fragment.current;
    if (current.mode == kReductionAccess && fragment.reduction == id) {
      for (Task *predecessor : fragment.previous.members) link(predecessor, task);
    } else {
      for (Task *predecessor : current.members) link(predecessor, task);
      fragment.previous.reset();
      fragment.previous.members.swap(current.members);
      fragment.previous.mode = current.mode;
      current.mode = kReductionAccess;
      fragment.reduction = id;
    }
    if (current.members.empty() || current.members.back() != task) {
      task->add_ref();
      current.members.push_back(task);
    }
  });
}

void DependencyDomain::close_overlapping(Task *task, std::uintptr_t start, std::uintptr_t end,
                                         const ReductionInfo *except) {
  for (std::size_t i = 0; i < open_reductions_.size();) {
    ReductionInfo *open = open_reductions_[i];
    if (open == except || open->key_end() <= start || end <= open->key()) {
      ++i;
      continue;
    }
    // The task waits for every member, also those over bytes it does not name: the
    // combination writes the whole reduction at once.
    for (Task *member : open->members) link(member, task);
    close(open);  // (removes it from open_reductions_)
  }
}

void DependencyDomain::close(ReductionInfo *reduction) {
  reduction->closed = true;
  open_reductions_.erase(std::find(open_reductions_.begin(), open_reductions_.end(), reduction));
  if (reduction->active == 0) {
    finish(reduction);
    return;
  }
  // The combination writes all its bytes when the last member is released: from now on every
  // access of any of them (not only of the bytes that member named) waits for every member
  // still running, and is not run after a failed one.
  const std::uint64_t id = reduction->id;
  if (!blocks_.empty())
    demote_blocks(dc::Region::contiguous(reinterpret_cast<const void *>(reduction->key()),
                                         reduction->key_end() - reduction->key()));
  fragments_.cover(reduction->key(), reduction->key_end(),
                   [&](std::uintptr_t, std::uintptr_t, Fragment &fragment) {
                     Group &current = fragment.current;
                     const bool ours = current.mode == kReductionAccess && fragment.reduction == id;
                     if (!ours && !current.members.empty()) return;  // (not reached)
                     if (!ours) {  // forgotten since its members there ended
                       fragment.previous.reset();
                       current.mode = kReductionAccess;
                       fragment.reduction = id;
                     }
                     for (Task *member : reduction->members) {
                       if (member->released.load(std::memory_order_acquire) &&
                           !poisons(member))
                         continue;
                       if (std::find(current.members.begin(), current.members.end(), member) !=
                           current.members.end())
                         continue;
                       member->add_ref();
                       current.members.push_back(member);
                     }
                   });
}

void DependencyDomain::finish(ReductionInfo *reduction) {
  if (!reduction->participant_failed.load(std::memory_order_relaxed)) reduction->combine();
  for (Task *member : reduction->members) member->drop_ref();
  delete reduction;
}

void DependencyDomain::finish_open_reductions() {
  std::vector<ReductionInfo *> open;
  open.swap(open_reductions_);
  for (ReductionInfo *reduction : open) {
    reduction->closed = true;
    if (reduction->active == 0) finish(reduction);  // (no sibling is live: always)
  }
}

std::size_t DependencyDomain::open_reduction_count() {
  std::lock_guard<SpinLock> guard(lock_);
  return open_reductions_.size();
}

void DependencyDomain::link(Task *predecessor, Task *successor) {
  if (predecessor == successor) return;
  {
    // (Against a release without the domain lock: the edge is made before it, or not at all.)
    std::lock_guard<SpinLock> guard(predecessor->successors_lock);
    if (!predecessor->released.load(std::memory_order_relaxed)) {
      // All edges into one successor are added in one go: a duplicate is always the last one.
      if (!predecessor->successors.empty() && predecessor->successors.back() == successor)
        return;
      predecessor->successors.push_back(successor);
      predecessor->has_successors = true;
      // (Registration holds one count until its end: this cannot make it ready meanwhile.)
      successor->pending.fetch_add(1, std::memory_order_relaxed);
      ++edges_;
      if (predecessor->launched_on >= 0) count_launched(successor, predecessor);
      return;
    }
  }
  // Done already; a failed one stays in the domain until the taskwait, so that every task
  // ordered after it is not run, whenever it was submitted. (A failed task is released under
  // the domain lock, which is held here: its flags are settled.)
  if (poisons(predecessor)) mark_not_run(successor, predecessor);
}

namespace {
std::atomic<std::uint32_t> early_across_kinds{0};
}

void DependencyDomain::set_early_across_kinds(std::uint32_t kinds) {
  early_across_kinds.store(kinds, std::memory_order_relaxed);
}

// Each edge is counted once: here when the predecessor was launched before the edge was made,
// else by launched().
void DependencyDomain::count_launched(Task *successor, const Task *predecessor) {
  if (successor->early_device == kEarlyNever) return;
  const bool same_kind = successor->impl && predecessor->impl &&
                         successor->impl->device == predecessor->impl->device &&
                         successor->impl->device != NANORT_DEVICE_SMP;
  // (Without the end of its kernel, nothing could make the successor's kernel wait for it.)
  if (!same_kind || successor->has_commutative || !predecessor->launch_done) {
    successor->early_device = kEarlyNever;
    return;
  }
  const int device = predecessor->launched_on;
  const bool across =
      (early_across_kinds.load(std::memory_order_relaxed) >> successor->impl->device) & 1u;
  const bool elsewhere = (successor->placed_device >= 0 && successor->placed_device != device) ||
                         (successor->early_device >= 0 && successor->early_device != device) ||
                         successor->early_device == kEarlyAnyDevice;
  if (elsewhere && !across) {
    successor->early_device = kEarlyNever;
    return;
  }
  successor->early_device = elsewhere ? kEarlyAnyDevice : device;
  ++successor->pending_launched;
  // Its kernel waits for each of them on the device it runs on.
  successor->early_after.emplace_back(device, predecessor->launch_done);
}

void DependencyDomain::try_early(Task *task, ReadyList &ready) {
  // (One not to run is ended once its last predecessor is released: make_ready.)
  if (task->early_released || task->not_run_after || task->early_device == kEarlyNone ||
      task->early_device == kEarlyNever ||
      task->pending.load(std::memory_order_relaxed) != task->pending_launched)
    return;
  task->early_released = true;
  // It may end before its predecessors are released: launched behind kernels of other
  // devices, whose managers see them end later; or failing at its launch (a launch the driver
  // refuses), at once. It stays alive until its last predecessor released it (release()).
  task->add_ref();
  ready.push_back(task);
}

void DependencyDomain::launched(Task *task, int device, ReadyList &ready) {
  std::lock_guard<SpinLock> guard(lock_);
  task->launched_on = device;
  for (Task *successor : task->successors) {
    count_launched(successor, task);
    try_early(successor, ready);
  }
}

void DependencyDomain::make_ready(Task *task, ReadyList &ready) {
  if (task->has_commutative && !try_take_commutative(task)) {
    waiting_for_commutative_.push_back(task);
    return;
  }
  ready.push_back(task);
}

bool DependencyDomain::try_take_commutative(Task *task) {
  bool free = true;
  for (const Access &access : task->accesses) {
    if (access.mode != NANORT_COMMUTATIVE) continue;
    for_each_fragment(access.region, [&](Fragment &f) {
      if (f.commutative_owner && f.commutative_owner != task) free = false;
    });
  }
  if (!free) return false;
  for (const Access &access : task->accesses)
    if (access.mode == NANORT_COMMUTATIVE)
      for_each_fragment(access.region, [&](Fragment &f) { f.commutative_owner = task; });
  return true;
}

void DependencyDomain::give_back_commutative(Task *task) {
  for (const Access &access : task->accesses)
    if (access.mode == NANORT_COMMUTATIVE)
      for_each_fragment(access.region, [&](Fragment &f) {
        if (f.commutative_owner == task) f.commutative_owner = nullptr;
      });
}

bool DependencyDomain::has_successors(const Task *task) {
  std::lock_guard<SpinLock> guard(task->successors_lock);
  return !task->successors.empty();
}

void DependencyDomain::take_successors(Task *task, SmallVector<Task *, 2> &successors) {
  // (Under the task's own lock: a registration linking to it either made its edge before
  // this, or sees it released and makes none.)
  std::lock_guard<SpinLock> guard(task->successors_lock);
  task->released.store(true, std::memory_order_release);
  if (task->has_successors) successors.swap(task->successors);  // (else that line untouched)
}

void DependencyDomain::release(Task *task, ReadyList &ready, bool by_registrar) {
  SmallVector<Task *, 2> successors;
  if (!task->reductions && !task->has_commutative && task->launched_on < 0 && !poisons(task)) {
    // The common case, without the domain lock unless a successor needs it.
    take_successors(task, successors);
    bool plain = true;
    for (Task *successor : successors) plain = plain && successor->plain_successor;
    if (plain) {
      for (Task *successor : successors)
        if (successor->pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
          ready.push_back(successor);
      // Only its own reference left: no fragment remembers it (a later access replaced it in
      // each, and a task joins fragments only at its registration), so there is nothing of it
      // to forget. The usual case when its creator runs ahead.
      if (task->refs.load(std::memory_order_acquire) > 1) {
        if (by_registrar) {
          std::lock_guard<SpinLock> guard(lock_);
          forget_deferred();
          forget_done_fragments(task);
        } else {
          forget_later(task);
        }
      }
      return;
    }
    std::lock_guard<SpinLock> guard(lock_);
    release_locked(task, successors, ready);
    return;
  }
  std::lock_guard<SpinLock> guard(lock_);
  take_successors(task, successors);
  if (task->reductions) {
    // The last member of a closed reduction combines it before its successors (the access
    // that closed it among them) may run.
    for (ReductionEntry &entry : task->reductions->entries) {
      if (!entry.in_domain) continue;
      ReductionInfo *info = entry.info;
      entry.info = nullptr;
      entry.in_domain = false;
      if (poisons(task)) info->participant_failed.store(true, std::memory_order_relaxed);
      if (--info->active == 0 && info->closed) finish(info);
    }
  }
  release_locked(task, successors, ready);
}

void DependencyDomain::release_locked(Task *task, SmallVector<Task *, 2> &successors,
                                      ReadyList &ready) {
  forget_deferred();
  // A failed task's successors, and theirs in turn, are not run: they would compute on data
  // the failure left undefined (docs/devices.md, "Errors"). (One launched behind its kernel
  // already waits for it on the device and fails with it there.)
  const bool failed = poisons(task);
  for (Task *successor : successors) {
    if (failed) mark_not_run(successor, task);
    // (Every launched predecessor was counted, unless the successor can never go early.)
    if (task->launched_on >= 0 && (successor->early_device == task->launched_on ||
                                   successor->early_device == kEarlyAnyDevice))
      --successor->pending_launched;
    const bool plain = successor->plain_successor;
    if (successor->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (!successor->early_released)
        make_ready(successor, ready);
      else
        successor->drop_ref();  // try_early's reference: no predecessor refers to it now
    } else if (!plain) {
      // (Only the lock's holders count a successor that is not plain down. A plain one may
      // have been made ready by a release without the lock by now, run and freed: it is not
      // touched after its count, and a CPU task is never launched early anyway.)
      try_early(successor, ready);
    }
  }
  task->launch_done.reset();  // done; the successors that wait for it hold their own
  task->early_after.clear();   // launched or failed by now
  if (task->has_commutative) {
    give_back_commutative(task);
    auto still_waiting = waiting_for_commutative_.begin();
    for (Task *waiting : waiting_for_commutative_) {
      if (try_take_commutative(waiting))
        ready.push_back(waiting);
      else
        *still_waiting++ = waiting;
    }
    waiting_for_commutative_.erase(still_waiting, waiting_for_commutative_.end());
  }
  forget_done_fragments(task);
}

void DependencyDomain::forget_done_fragments(const Task *task) {
  // Forget fragments whose accessors are all done: a later access there waits for nothing.
  // This keeps the map as small as the live tasks and frees finished tasks early.
  const auto all_done = [](Fragment &fragment) {
    const auto &members = fragment.current.members;
    if (!members.empty() && !members.back()->released.load(std::memory_order_acquire))
      return false;  // the usual case
    for (Task *member : members)
      if (!member->released.load(std::memory_order_acquire) || poisons(member)) return false;
    return true;
  };
  for (const Access &access : task->accesses) {
    if (Fragment *block = blocks_.find(access.region)) {
      if (all_done(*block)) blocks_.erase(access.region);
      continue;
    }
    access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
      fragments_.erase_overlapping_if(start, end, all_done);
    });
  }
}

void DependencyDomain::forget_later(Task *task) {
  task->add_ref();  // (until its fragments are looked at)
  Task *head = forget_list_.load(std::memory_order_relaxed);
  do {
    task->prune_next = head;
  } while (!forget_list_.compare_exchange_weak(head, task, std::memory_order_release,
                                               std::memory_order_relaxed));
  // A long list: forget them now, under the lock (once in kForgetBatch releases), so that
  // tasks go back to the pool while their memory is warm.
  if (forget_count_.fetch_add(1, std::memory_order_relaxed) + 1 >= kForgetBatch) {
    std::lock_guard<SpinLock> guard(lock_);
    forget_deferred();
  }
}

void DependencyDomain::forget_deferred() {
  if (!forget_list_.load(std::memory_order_relaxed)) return;
  Task *task = forget_list_.exchange(nullptr, std::memory_order_acquire);
  forget_count_.store(0, std::memory_order_relaxed);  // (a push in between: a later batch)
  while (task) {
    Task *const next = task->prune_next;
    if (next) {
      // Its lines were written last by the thread that ran it: asked for now, they come while
      // this one is forgotten (the first line for writing: its reference is dropped).
      prefetch_for_write(next);
      prefetch_for_read(&next->accesses);
    }
    forget_done_fragments(task);
    task->drop_ref();
    task = next;
  }
}

void DependencyDomain::clear() {
  std::lock_guard<SpinLock> guard(lock_);
  forget_deferred();
  finish_open_reductions();
  retire_edge_count();
  fragments_.clear();
  blocks_.clear();
}

std::size_t DependencyDomain::fragment_count() {
  std::lock_guard<SpinLock> guard(lock_);
  forget_deferred();
  return fragments_.size() + blocks_.size();
}

}  // namespace nanort::rt
