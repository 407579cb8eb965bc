// The calls a device task makes: stage, finish, commit at launch, abandon (directory.cpp).
#include "directory_internals.hpp"

#include <nanort/dc/invariant.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>

namespace nanort::dc {

// The usual case of a task whose data is on the device already: each access lies in one
// allocation there and every byte it reads is valid there. One lookup of each kind per
// access, nothing allocated, nothing copied. False (and 'out' as it was) when that is not so.
bool Directory::stage_in_place(SpaceId id, std::span<const DataAccess> accesses, Staging &out) {
  Space &space = spaces_[id];
  const std::size_t alignment = std::max<std::size_t>(1, space.memory->argument_alignment());
  std::vector<Allocation *> &found = scratch_found_;
  found.clear();
  bool in_place = true;
  for (std::size_t i = 0; i < accesses.size() && in_place; ++i) {
    const DataAccess &access = accesses[i];
    if (access.region.empty()) return false;
    const std::uintptr_t first = access.region.first(), end = access.region.last_end();
    auto it = space.allocations.upper_bound(first);
    if (it == space.allocations.begin()) return false;
    Allocation &allocation = *std::prev(it)->second;
    if (allocation.end < end || (first - allocation.start) % alignment != 0) return false;
    if (access.reads)
      access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t stop) {
        std::uintptr_t covered = start;  // the fragments must tile the range, all valid here
        fragments_.overlapping(start, stop, [&](std::uintptr_t s, std::uintptr_t e, FragmentState &f) {
          if (s > covered || !(f.valid & bit(id))) in_place = false;
          covered = std::max(covered, e);
          for (const auto &[space_id, completion] : f.pending)
            if (space_id == id && !completion->poll())
              out.ready.push_back(DeferredCompletion::settled(completion));
        });
        if (covered < stop) in_place = false;
      });
    out.placements[i] = {allocation.buffer, first - allocation.start};
    found.push_back(&allocation);
  }
  if (!in_place) {
    out.ready.clear();
    return false;
  }
  for (std::size_t i = 0; i < accesses.size(); ++i) {
    Allocation *allocation = found[i];
    if (allocation->pins++ == 0) ++space.pinned;
    allocation->last_use = ++tick_;
    out.pinned.push_back(allocation);
    if (accesses[i].reads) ++space.counters.hits;
  }
  return true;
}

Directory::StageResult Directory::stage(SpaceId id, std::span<const DataAccess> accesses,
                                        Staging &out) {
  NANORT_INVARIANT(id != kHost && id < space_count(),
                   "directory: stage() needs a device memory space");
  // The wait for the lock, for the statistics (devices' managers staging at once queue here):
  // timed only when the lock is taken.
  std::unique_lock<std::mutex> guard(mutex_, std::try_to_lock);
  out.lock_wait_ns = 0;
  if (!guard.owns_lock()) {
    const auto before_lock = std::chrono::steady_clock::now();
    guard.lock();
    out.lock_wait_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                             before_lock)
            .count());
  }
  Space &space = spaces_[id];
  out.space = id;
  out.placements.assign(accesses.size(), Placement{});
  out.ready.clear();
  out.pinned.clear();
  out.committed = false;
  out.bytes_in = 0;
  if (stage_in_place(id, accesses, out)) return StageResult::Staged;
  const std::size_t alignment = std::max<std::size_t>(1, space.memory->argument_alignment());

  // 1. Allocations: one for each group of accesses whose ranges overlap each other or a
  // common allocation already there.
  struct Group {
    std::uintptr_t start, end;          // with the allocations it overlaps
    std::uintptr_t own_start, own_end;  // its accesses alone
    std::size_t first, count;           // its accesses: order[first, first + count)
  };
  // Scratch reused from call to call (under the lock): staging allocates nothing of its own
  // in the usual case.
  std::vector<std::size_t> &order = scratch_order_;
  order.resize(accesses.size());
  std::iota(order.begin(), order.end(), 0);
  if (order.size() > 1)
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return accesses[a].region.first() < accesses[b].region.first();
    });
  auto widen = [&](Group &group) {  // to the allocations it overlaps
    auto it = space.allocations.upper_bound(group.start);
    if (it != space.allocations.begin() && std::prev(it)->second->end > group.start) --it;
    bool covered = it != space.allocations.end() && it->first <= group.start &&
                   it->second->end >= group.end;
    if (covered) return;
    for (; it != space.allocations.end() && it->first < group.end; ++it) {
      group.start = std::min(group.start, it->first);
      group.end = std::max(group.end, it->second->end);
    }
  };
  for (const DataAccess &access : accesses)
    if (!access.region.empty()) drop_stale(id, access.region.first(), access.region.last_end());
  // Empty regions last: the accesses of a group are then consecutive in 'order'.
  auto not_empty = [&](std::size_t index) { return !accesses[index].region.empty(); };
  if (!std::all_of(order.begin(), order.end(), not_empty))
    std::stable_partition(order.begin(), order.end(), not_empty);
  // What the task holds on the device at once: its ranges, overlapping ones as one.
  std::size_t needed = 0;
  {
    std::uintptr_t start = 0, end = 0;
    for (std::size_t index : order) {
      const Region &region = accesses[index].region;
      if (region.empty()) break;
      if (region.first() < end) {
        end = std::max(end, region.last_end());
        continue;
      }
      needed += end - start;
      start = region.first();
      end = region.last_end();
    }
    needed += end - start;
  }
  auto limit_source = [&] {
    return space.limit_source.empty() ? std::string() : " (" + space.limit_source + ")";
  };
  if (needed > space.capacity) {
    const auto [need, limit] = sizes_apart(needed, space.capacity);
    throw DataTooLargeError("needs " + need + " at once on " + space.memory->name() +
                            ", more than the device's memory limit of " + limit + limit_source());
  }
  static thread_local std::vector<Group> groups;  // scratch, as 'order'
  // A second attempt after evicting everything, when the first fails with no other task
  // holding memory here: allocations cached from earlier tasks may be larger than this task's
  // own ranges, and only its own ranges must fit.
  for (bool first_attempt = true;; first_attempt = false) {
    groups.clear();
    for (std::size_t k = 0; k < order.size(); ++k) {
      const Region &region = accesses[order[k]].region;
      if (region.empty()) break;
      Group group{region.first(), region.last_end(), region.first(), region.last_end(), k, 1};
      widen(group);
      // Accesses that only share an allocation already there (their own ranges apart) go in
      // one group only where kernels can be given both starts: an aligned distance.
      const bool joins =
          !groups.empty() && group.start < groups.back().end &&
          (region.first() < groups.back().own_end ||
           (region.first() - groups.back().own_start) % alignment == 0);
      if (joins) {
        Group &last = groups.back();
        last.end = std::max(last.end, group.end);
        last.own_end = std::max(last.own_end, group.own_end);
        ++last.count;
        widen(last);
      } else {
        groups.push_back(group);
      }
    }
    bool placed_all = true;
    std::size_t placed = 0;  // of the task's own ranges
    try {
      for (const Group &group : groups) {
        Allocation *allocation = place(id, group.start, group.end, group.own_start, group.own_end);
        if (!allocation) {
          unpin(out);
          if (space.pinned) return StageResult::Busy;  // running tasks hold the memory
          if (first_attempt && !space.allocations.empty()) {
            while (evict_one(id, {})) {
            }
            placed_all = false;
            break;
          }
          // Within the limit, nothing else here: the device itself has less memory free.
          const std::string piece = human_size(group.own_end - group.own_start);
          throw DataTooLargeError(
              "needs " + human_size(needed) + " at once on " + space.memory->name() +
              ", within the device's memory limit of " + human_size(space.capacity) +
              limit_source() + ", but the device refused " +
              (placed ? piece + " more with " + human_size(placed) + " of it placed"
                      : "a piece of " + piece) +
              " and nothing else held there: it has less free memory than the limit (other "
              "programs use it, or the limit is above its size)");
        }
        if (allocation->pins++ == 0) ++space.pinned;
        out.pinned.push_back(allocation);
        placed += group.own_end - group.own_start;
        for (std::size_t k = group.first; k < group.first + group.count; ++k)
          out.placements[order[k]] = {allocation->buffer,
                                      accesses[order[k]].region.first() - allocation->start};
      }
    } catch (...) {
      unpin(out);
      throw;
    }
    if (placed_all) break;
  }

  // 2. Fragments cut at every range boundary first, so that planning below splits nothing
  // (it keeps pointers to fragments until the copies are issued).
  for (const DataAccess &access : accesses)
    access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
      fragments_.cover(start, end, [](std::uintptr_t, std::uintptr_t, FragmentState &) {});
    });

  // 3. Copies of what the task reads. A fragment neither the host nor a direct peer holds
  // comes through the host: those copies to the host complete first.
  std::vector<PlannedCopy> to_host, to_space;
  for (const DataAccess &access : accesses) {
    if (!access.reads || access.region.empty()) continue;
    bool hit = true;
    access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
      fragments_.cover(start, end, [&](std::uintptr_t s, std::uintptr_t e, FragmentState &f) {
        const Transition t = coherence_transition(coherence_of(f), CoherenceEvent::Read, id,
                                                  EventContext{.direct = space.direct});
        if (t.hit) {  // the task waits for the copy arriving here, if any
          for (const auto &[space, completion] : f.pending)  // (no vector: the usual case)
            if ((t.wait & bit(space)) && !completion->poll())
              out.ready.push_back(DeferredCompletion::settled(completion));
          return;
        }
        hit = false;
        if (t.copies == 2) plan(to_host, t.copy[0].from, kHost, s, e, f);
        plan(to_space, t.copy[t.copies - 1].from, id, s, e, f);
        take(f, t);
      });
    });
    ++(hit ? space.counters.hits : space.counters.misses);
  }
  // Copies through the host (no direct path from where the bytes are valid), and copies from
  // the host that wait for their bytes to be page-locked first, are made after the lock is
  // released: they wait for the device, the staging buffers or the locking, and the other
  // devices' managers should not wait for them too.
  std::vector<DeferredCopy> deferred;
  try {
    defer_through_host(to_host, to_space, deferred, out);
    // Copies from the host wait for the write-backs into it still in flight (write_back).
    for (PlannedCopy &copy : to_space)
      std::erase_if(copy.after, [](const CompletionPtr &c) { return c->poll(); });
    for (const PlannedCopy &copy : to_space) out.bytes_in += copy.end - copy.start;
    for (CompletionPtr &done : issue(to_space)) out.ready.push_back(std::move(done));
  } catch (...) {
    // Recorded as made: whoever waits for them learns that they never will be.
    for (DeferredCopy &job : deferred) job.done->fail(std::current_exception());
    throw;
  }
  tracked_.store(fragments_.size(), std::memory_order_release);
  if (!deferred.empty()) {
    guard.unlock();
    run_deferred(deferred);
    // A copy that failed fails the task, as one made under the lock does (whoever else
    // waits for it learns it from its completion).
    for (const DeferredCopy &job : deferred)
      if (std::exception_ptr error = job.done->error()) {
        abandon(out);
        std::rethrow_exception(error);
      }
    // The task waits for the copies made, which a backend may wait for on the device.
    for (CompletionPtr &ready : out.ready) ready = DeferredCompletion::settled(ready);
  }
  return StageResult::Staged;
}

void Directory::defer_through_host(std::vector<PlannedCopy> &to_host,
                                   std::vector<PlannedCopy> &to_space,
                                   std::vector<DeferredCopy> &deferred, Staging &out) {
  // Each copy is recorded now as if made (counters, the fragments' pending copies, the
  // allocations' users), with a completion that the copy it makes later resolves: whoever
  // reads those bytes meanwhile waits for it.
  auto set_up = [&](const PlannedCopy &copy, SpaceId device, bool to_host_side) {
    DeferredCopy job;
    job.device = device;
    job.to_host = to_host_side;
    const Allocation *allocation = to_host_side ? copy.source : copy.target;
    job.buffer = allocation->buffer;
    job.offset = copy.start - allocation->start;
    job.start = copy.start;
    job.end = copy.end;
    job.after = copy.after;
    job.done = std::make_shared<DeferredCompletion>();
    record_copy(copy, job.done, true);
    deferred.push_back(std::move(job));
  };
  std::vector<std::pair<const FragmentState *, CompletionPtr>> read_out;
  for (const PlannedCopy &copy : to_host) {
    set_up(copy, copy.from, true);
    for (const FragmentState *fragment : copy.fragments)
      read_out.emplace_back(fragment, deferred.back().done);
  }
  to_host.clear();
  // A copy into the device of bytes read out above, or of bytes another thread's deferred
  // copy brings home, waits for that copy: it is made after it, unlocked too.
  auto waits_for_deferred = [](const CompletionPtr &c) {
    return dynamic_cast<DeferredCompletion *>(c.get()) && !c->poll();
  };
  // So does one whose host bytes the device's memory space locks first (it waits for that).
  auto locks_first = [&](const PlannedCopy &copy) {
    MemorySpace &memory = *spaces_[copy.to].memory;
    const std::size_t bytes = copy.end - copy.start;
    const auto *host = reinterpret_cast<const void *>(copy.start);
    return memory.wants_staging() && bytes >= options_.staging_threshold &&
           memory.locks_before_copy(host, bytes) && !memory.is_page_locked(host, bytes);
  };
  std::erase_if(to_space, [&](PlannedCopy &copy) {
    if (copy.from != kHost) return false;  // between devices, directly
    for (const FragmentState *fragment : copy.fragments)
      for (const auto &[read, done] : read_out)
        if (read == fragment && std::find(copy.after.begin(), copy.after.end(), done) == copy.after.end())
          copy.after.push_back(done);
    if (std::none_of(copy.after.begin(), copy.after.end(), waits_for_deferred) &&
        !locks_first(copy))
      return false;
    set_up(copy, copy.to, false);
    out.ready.push_back(deferred.back().done);
    out.bytes_in += copy.end - copy.start;
    return true;
  });
}

void Directory::run_deferred(std::vector<DeferredCopy> &deferred) {
  // In planning order: reads out of devices before the copies into devices that wait for them.
  for (DeferredCopy &job : deferred) {
    try {
      Space &space = spaces_[job.device];
      const std::size_t bytes = job.end - job.start;
      job.done->resolve(job.to_host
                            ? read_staged(space, job.buffer, job.offset,
                                          reinterpret_cast<void *>(job.start), bytes, job.after)
                            : write_staged(space, job.buffer, job.offset,
                                           reinterpret_cast<const void *>(job.start), bytes,
                                           job.after, true));
    } catch (...) {
      // Whoever waits for it fails with this (the task's launch, a later reader).
      job.done->fail(std::current_exception());
    }
  }
}

void Directory::finish(std::span<const DataAccess> accesses, Staging &staging) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!staging.committed) record_writes(accesses, staging.space, nullptr);
  unpin(staging);
  tracked_.store(fragments_.size(), std::memory_order_release);
}

void Directory::commit_launched(std::span<const DataAccess> accesses, Staging &staging,
                                const CompletionPtr &done) {
  std::lock_guard<std::mutex> guard(mutex_);
  record_writes(accesses, staging.space, done);
  staging.committed = true;
  tracked_.store(fragments_.size(), std::memory_order_release);
}

void Directory::record_writes(std::span<const DataAccess> accesses, SpaceId id,
                              const CompletionPtr &until) {
  for (const DataAccess &access : accesses) {
    if (!access.writes) continue;
    access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
      fragments_.cover(start, end, [&](std::uintptr_t, std::uintptr_t, FragmentState &f) {
        // The copies into 'id' the writer waited for came before it. Write-backs into the
        // host still in flight stay: a later write-back of the new values must land after them.
        take(f, coherence_transition(coherence_of(f), CoherenceEvent::Write, id,
                                     EventContext{.launched = until != nullptr}));
        if (until) f.pending.emplace_back(id, until);  // (arriving: the kernel's results)
      });
    });
  }
}

void Directory::abandon(Staging &staging) {
  std::lock_guard<std::mutex> guard(mutex_);
  unpin(staging);
}

}  // namespace nanort::dc
