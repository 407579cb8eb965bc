// The host side: acquiring data for CPU tasks, write-backs, flushes (directory.cpp).
#include "directory_internals.hpp"

#include <algorithm>

namespace nanort::dc {

void Directory::acquire_host(std::span<const DataAccess> accesses) {
  if (host_holds_everything()) return;
  std::lock_guard<std::mutex> guard(mutex_);
  if (fragments_.empty()) return;
  Space &host = spaces_[kHost];
  std::vector<PlannedCopy> to_host;
  for (const DataAccess &access : accesses) {
    if (!access.reads) continue;
    bool hit = true;
    access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
      fragments_.overlapping(start, end,
                             [&](std::uintptr_t s, std::uintptr_t e, FragmentState &f) {
                               const Transition t = coherence_transition(
                                   coherence_of(f), CoherenceEvent::Read, kHost, {});
                               if (t.hit) {  // a write-back may still be on its way
                                 if (t.wait & kHostOnly)  // (a failed one: reported to its own)
                                   for (const CompletionPtr &c : pending_of(f, kHost)) c->wait();
                                 return;
                               }
                               hit = false;
                               plan(to_host, t.copy[0].from, kHost, s, e, f);
                               take(f, t);
                             });
    });
    ++(hit ? host.counters.hits : host.counters.misses);
  }
  for (const CompletionPtr &done : issue(to_host)) done->wait();
  for (const DataAccess &access : accesses) {
    if (!access.writes) continue;
    access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
      fragments_.cut(start);
      fragments_.cut(end);
      fragments_.overlapping(start, end, [&](std::uintptr_t, std::uintptr_t, FragmentState &f) {
        // Copies into devices still reading these bytes finish before the task writes them.
        const Transition t = coherence_transition(coherence_of(f), CoherenceEvent::Write, kHost, {});
        wait_arriving(f, t.wait);
        take(f, t);
      });
      forget_host_only(start, end);
    });
  }
  tracked_.store(fragments_.size(), std::memory_order_release);
}

bool Directory::goes_direct_to_host(SpaceId from, std::uintptr_t start, std::uintptr_t end) {
  // Not small copies of ordinary memory either: a GPU driver copies those synchronously, which
  // would stall the thread that ends the task.
  MemorySpace &memory = *spaces_[from].memory;
  return !memory.wants_staging() ||
         memory.is_page_locked(reinterpret_cast<const void *>(start), end - start);
}

void Directory::write_back(std::span<const DataAccess> accesses, SpaceId space) {
  // The ranges that can go (asked of the memory space, not of the directory: no lock taken
  // when none can, as for every task on ordinary memory of a GPU).
  thread_local std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
  ranges.clear();
  for (const DataAccess &access : accesses)
    if (access.writes)
      access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
        if (goes_direct_to_host(space, start, end)) ranges.emplace_back(start, end);
      });
  if (ranges.empty()) return;
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<PlannedCopy> to_host;
  std::vector<std::pair<FragmentState *, Transition>> started;
  for (const auto &[start, end] : ranges) {
    fragments_.cut(start);
    fragments_.cut(end);
    fragments_.overlapping(start, end, [&](std::uintptr_t s, std::uintptr_t e, FragmentState &f) {
      const Transition t = coherence_transition(coherence_of(f), CoherenceEvent::WriteBack, space,
                                                EventContext{.host_locked = true});
      if (!t.copies) return;  // home already
      plan(to_host, space, kHost, s, e, f);
      started.emplace_back(&f, t);
    });
    // Issued range by range: joined with the next range, a copy could span memory that is
    // not all page-locked, and go staged (synchronously).
    issue(to_host, true);
    for (auto &[f, t] : started) take(*f, t);
    started.clear();
  }
  tracked_.store(fragments_.size(), std::memory_order_release);
}

void Directory::write_back_and_drop(std::uintptr_t start, std::uintptr_t end) {
  std::vector<PlannedCopy> to_host;
  std::vector<std::pair<FragmentState *, Transition>> flushed;
  fragments_.overlapping(start, end, [&](std::uintptr_t s, std::uintptr_t e, FragmentState &f) {
    const Transition t = coherence_transition(coherence_of(f), CoherenceEvent::Flush, kHost, {});
    if (t.copies) plan(to_host, t.copy[0].from, kHost, s, e, f);
    flushed.emplace_back(&f, t);
  });
  for (const CompletionPtr &done : issue(to_host)) done->wait();
  for (auto &[f, t] : flushed) {
    // Copies into devices read host memory, which the program may change after the flush.
    wait_arriving(*f, t.wait);
    take(*f, t);
  }
  fragments_.erase_overlapping_if(start, end, [](FragmentState &) { return true; });
  // The allocations left holding nothing valid are buffers to recycle from now on: the next
  // tasks on their data may run on other devices, which then take them rather than allocate
  // (cuMemAlloc takes a millisecond and more, on the path of the task that allocates).
  for (SpaceId id = 1; id < space_count(); ++id) drop_stale(id, start, end);
}

void Directory::flush() {
  if (host_holds_everything()) return;
  std::lock_guard<std::mutex> guard(mutex_);
  write_back_and_drop(0, UINTPTR_MAX);
  tracked_.store(fragments_.size(), std::memory_order_release);
}

void Directory::flush(const Region &region) {
  if (host_holds_everything()) return;
  std::lock_guard<std::mutex> guard(mutex_);
  region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
    fragments_.cut(start);
    fragments_.cut(end);
    write_back_and_drop(start, end);
  });
  tracked_.store(fragments_.size(), std::memory_order_release);
}

void Directory::forget_host_only(std::uintptr_t start, std::uintptr_t end) {
  fragments_.erase_overlapping_if(start, end, [](FragmentState &f) {
    forget_done_pending(f);
    return f.valid == kHostOnly && f.pending.empty();
  });
}

void Directory::forget_done_pending(FragmentState &fragment) {
  for (std::size_t i = 0; i < fragment.pending.size();) {
    const auto &[space, completion] = fragment.pending[i];
    if (!completion->poll()) {
      ++i;
      continue;
    }
    take(fragment, coherence_transition(coherence_of(fragment), CoherenceEvent::Landed, space, {}));
  }
}

}  // namespace nanort::dc
