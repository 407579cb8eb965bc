// Device allocations: placing a task's data, the cache of free buffers, eviction (directory.cpp).
#include "directory_internals.hpp"

#include <algorithm>
#include <iterator>

namespace nanort::dc {

Directory::Allocation *Directory::place(SpaceId id, std::uintptr_t start, std::uintptr_t end,
                                        std::uintptr_t own_start, std::uintptr_t own_end) {
  Space &space = spaces_[id];
  auto it = space.allocations.upper_bound(start);
  if (it != space.allocations.begin() && std::prev(it)->second->end > start) --it;
  const std::size_t alignment = std::max<std::size_t>(1, space.memory->argument_alignment());
  // The usual case: one allocation holds the range (allocations never overlap, so no other
  // one touches it).
  if (it != space.allocations.end() && it->first <= start && it->second->end >= end &&
      (own_start - it->first) % alignment == 0) {
    it->second->last_use = ++tick_;
    return it->second.get();
  }
  std::vector<Allocation *> overlaps;
  for (; it != space.allocations.end() && it->first < end; ++it)
    overlaps.push_back(it->second.get());
  if (overlaps.size() == 1 && overlaps[0]->start <= start && overlaps[0]->end >= end &&
      (own_start - overlaps[0]->start) % alignment == 0) {
    overlaps[0]->last_use = ++tick_;
    return overlaps[0];
  }
  // A range a flush left (recent_ranges) that holds this one, whose buffer is free: the
  // allocation covers that range again, and the allocations made in it since move in.
  std::uintptr_t low = own_start, high = own_end;
  bool hinted = false;
  if (auto hint = space.recent_ranges.upper_bound(start); hint != space.recent_ranges.begin()) {
    --hint;
    const std::uintptr_t range_start = hint->first, range_end = hint->second;
    if (range_start <= start && range_end >= end && (own_start - range_start) % alignment == 0 &&
        space.free_buffers.count(range_end - range_start)) {
      hinted = true;
      low = range_start;
      high = range_end;
      overlaps.clear();
      auto in = space.allocations.upper_bound(low);
      if (in != space.allocations.begin() && std::prev(in)->second->end > low) --in;
      for (; in != space.allocations.end() && in->first < high; ++in) {
        overlaps.push_back(in->second.get());
        low = std::min(low, in->second->start);
        high = std::max(high, in->second->end);
      }
    }
  }
  // A new allocation covering the range and every allocation it overlaps, which move into
  // it: bytes stay where the valid sets say they are.
  for (Allocation *old : overlaps)
    if (old->pins) return nullptr;  // in use by a staged task: try again after it
  for (Allocation *old : overlaps) {
    low = std::min(low, old->start);
    high = std::max(high, old->end);
  }
  DeviceBuffer buffer;
  // The task's data must start at an offset kernels can be given (OpenCL sub-buffers need
  // aligned ones); else the old allocations go, as when their union does not fit.
  if (high - low <= space.capacity && (own_start - low) % alignment == 0) {
    try {
      buffer = allocate(id, high - low, overlaps);
    } catch (const DataTooLargeError &) {
      // A buffer that large the device refuses (OpenCL's largest buffer): the task's own range
      // alone may do.
    }
  }
  if (!buffer && hinted) {
    // The recent range's union does not fit: as without it.
    overlaps.clear();
    auto in = space.allocations.upper_bound(start);
    if (in != space.allocations.begin() && std::prev(in)->second->end > start) --in;
    for (; in != space.allocations.end() && in->first < end; ++in) overlaps.push_back(in->second.get());
    for (Allocation *old : overlaps)
      if (old->pins) return nullptr;  // (as above)
    low = own_start;
    high = own_end;
    for (Allocation *old : overlaps) {
      low = std::min(low, old->start);
      high = std::max(high, old->end);
    }
    if (high - low <= space.capacity && (own_start - low) % alignment == 0) {
      try {
        buffer = allocate(id, high - low, overlaps);
      } catch (const DataTooLargeError &) {
      }
    }
  }
  if (!buffer) {
    // No room for the old allocations and their union side by side: evict the old ones
    // (bytes valid only there go back to the host) and allocate the task's own range.
    for (Allocation *old : overlaps) evict(id, old);
    overlaps.clear();
    low = own_start;
    high = own_end;
    buffer = allocate(id, high - low, overlaps);
    if (!buffer) return nullptr;
  }
  // Only the bytes valid here move; stale ones (after a flush, say) are not worth a copy.
  std::vector<CompletionPtr> moves;
  for (Allocation *old : overlaps)
    fragments_.overlapping(old->start, old->end,
                           [&](std::uintptr_t s, std::uintptr_t e, FragmentState &fragment) {
                             if (!(fragment.valid & bit(id))) return;
                             std::vector<CompletionPtr> after = pending_of(fragment, id);
                             after.insert(after.end(), old->users.begin(), old->users.end());
                             moves.push_back(space.memory->copy(old->buffer, s - old->start,
                                                                buffer, s - low, e - s, after));
                           });
  for (const CompletionPtr &move : moves) move->wait();
  for (Allocation *old : overlaps) drop_allocation(id, old);
  // The recent ranges it overlaps are taken (or cut into) by it: none is a hint any more.
  auto hint = space.recent_ranges.upper_bound(low);
  if (hint != space.recent_ranges.begin() && std::prev(hint)->second > low) --hint;
  while (hint != space.recent_ranges.end() && hint->first < high) hint = space.recent_ranges.erase(hint);
  auto allocation = std::make_unique<Allocation>();
  allocation->start = low;
  allocation->end = high;
  allocation->buffer = buffer;
  allocation->last_use = ++tick_;
  Allocation *made = allocation.get();
  space.allocations.emplace(low, std::move(allocation));
  return made;
}

DeviceBuffer Directory::allocate(SpaceId id, std::size_t bytes,
                                 std::span<Allocation *const> keep) {
  Space &space = spaces_[id];
  // Never fits: stage() says why, from the task's whole data.
  if (bytes > space.capacity) return {};
  if (auto reuse = space.free_buffers.find(bytes); reuse != space.free_buffers.end()) {
    DeviceBuffer buffer = reuse->second;
    space.free_buffers.erase(reuse);
    return buffer;
  }
  // Room is made from free buffers first (largest first), then by evicting.
  auto make_room = [&] {
    if (!space.free_buffers.empty()) {
      auto largest = std::prev(space.free_buffers.end());
      release(id, largest->second, largest->first);
      space.free_buffers.erase(largest);
      return true;
    }
    return evict_one(id, keep);
  };
  for (;;) {
    while (space.used + bytes > space.capacity)
      if (!make_room()) return {};
    if (DeviceBuffer buffer = space.memory->allocate(bytes)) {
      space.used += bytes;
      ++space.counters.allocations;
      space.counters.peak_bytes = std::max<std::uint64_t>(space.counters.peak_bytes, space.used);
      return buffer;
    }
    // The device has less free memory than the limit says (other allocations, other
    // programs): make room below the limit too.
    if (!make_room()) return {};
  }
}

void Directory::release(SpaceId id, DeviceBuffer buffer, std::size_t bytes) {
  spaces_[id].memory->free(buffer);
  spaces_[id].used -= bytes;
}

bool Directory::evict_one(SpaceId id, std::span<Allocation *const> keep) {
  Space &space = spaces_[id];
  Allocation *victim = nullptr;
  for (auto &[start, allocation] : space.allocations) {
    if (allocation->pins || std::find(keep.begin(), keep.end(), allocation.get()) != keep.end())
      continue;
    if (!victim || allocation->last_use < victim->last_use) victim = allocation.get();
  }
  if (!victim) return false;
  evict(id, victim);
  return true;
}

void Directory::evict(SpaceId id, Allocation *victim) {
  Space &space = spaces_[id];
  // Bytes valid only here go back to the host first.
  std::vector<PlannedCopy> write_backs;
  fragments_.overlapping(victim->start, victim->end,
                         [&](std::uintptr_t start, std::uintptr_t end, FragmentState &fragment) {
                           if (!(fragment.valid & bit(id))) return;
                           // (Copies arriving here finish before the buffer is reused:
                           // drop_allocation waits for its users.)
                           const Transition t = coherence_transition(
                               coherence_of(fragment), CoherenceEvent::Evict, id, {});
                           if (t.copies) plan(write_backs, id, kHost, start, end, fragment);
                           take(fragment, t);
                         });
  for (const CompletionPtr &done : issue(write_backs)) done->wait();
  ++space.counters.evictions;
  forget_host_only(victim->start, victim->end);
  drop_allocation(id, victim);
}

void Directory::drop_stale(SpaceId id, std::uintptr_t start, std::uintptr_t end) {
  // Allocations holding nothing valid here (after a flush, the host memory they mirrored may
  // belong to other data now) are only buffers to recycle, not ranges to keep or merge.
  auto &allocations = spaces_[id].allocations;
  auto it = allocations.upper_bound(start);
  if (it != allocations.begin() && std::prev(it)->second->end > start) --it;
  std::vector<Allocation *> stale;
  for (; it != allocations.end() && it->first < end; ++it)
    if (!it->second->pins && !holds_valid_bytes(id, *it->second)) stale.push_back(it->second.get());
  auto &recent = spaces_[id].recent_ranges;
  for (Allocation *allocation : stale) {
    recent[allocation->start] = allocation->end;
    drop_allocation(id, allocation);
  }
  while (recent.size() > kRecentRanges) recent.erase(recent.begin());
}

bool Directory::holds_valid_bytes(SpaceId id, const Allocation &allocation) {
  bool valid = false;
  fragments_.overlapping(allocation.start, allocation.end,
                         [&](std::uintptr_t, std::uintptr_t, FragmentState &fragment) {
                           valid = valid || (fragment.valid & bit(id));
                         });
  return valid;
}

void Directory::drop_allocation(SpaceId id, Allocation *allocation) {
  Space &space = spaces_[id];
  for (const CompletionPtr &user : allocation->users) user->wait();
  space.free_buffers.emplace(allocation->bytes(), allocation->buffer);
  space.allocations.erase(allocation->start);
}

Directory::Allocation &Directory::allocation_holding(SpaceId id, std::uintptr_t start,
                                                     std::uintptr_t end) {
  auto &allocations = spaces_[id].allocations;
  auto it = allocations.upper_bound(start);
  NANORT_INVARIANT(it != allocations.begin() && std::prev(it)->second->end >= end,
                   "directory: bytes valid on " + spaces_[id].memory->name() +
                       " lie in no allocation of it");
  return *std::prev(it)->second;
}

void Directory::unpin(Staging &staging) {
  Space &space = spaces_[staging.space];
  for (Allocation *allocation : staging.pinned) {
    if (--allocation->pins == 0) --space.pinned;
    allocation->last_use = ++tick_;
  }
  staging.pinned.clear();
}

}  // namespace nanort::dc
