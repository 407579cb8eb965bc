#include <nanort/dc/directory.hpp>
#include <nanort/dc/human_size.hpp>
#include <nanort/dc/invariant.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <numeric>

#include "parallel_memcpy.hpp"

namespace nanort::dc {

struct Directory::Allocation {
  std::uintptr_t start = 0, end = 0;  // the host range it mirrors
  DeviceBuffer buffer;
  int pins = 0;                        // staged tasks using it
  std::uint64_t last_use = 0;
  std::vector<CompletionPtr> users;    // copies out of it still in flight
  std::size_t bytes() const { return end - start; }
};

namespace {

void forget_done(std::vector<CompletionPtr> &completions) {
  std::erase_if(completions, [](const CompletionPtr &c) { return c->poll(); });
}

// Two sizes a message compares ("needs A, more than B"): exact byte counts where the readable
// forms would look the same.
std::pair<std::string, std::string> sizes_apart(std::size_t a, std::size_t b) {
  std::string first = human_size(a), second = human_size(b);
  if (first == second && a != b) {
    first = std::to_string(a) + " bytes";
    second = std::to_string(b) + " bytes";
  }
  return {first, second};
}

}  // namespace

// A copy made after the directory's lock is released (stage()): done once it was made, by the
// thread that planned it, and the copy it made is done. Waiters sleep until it was made.
class Directory::DeferredCompletion final : public Completion {
 public:
  void resolve(CompletionPtr made) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      made_ = std::move(made);
      resolved_ = true;
    }
    ready_.notify_all();
  }
  void fail(std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      error_ = std::move(error);
      resolved_ = true;
    }
    ready_.notify_all();
  }
  // The copy it made, once made without error (else null).
  CompletionPtr made() {
    std::lock_guard<std::mutex> guard(mutex_);
    return resolved_ && !error_ ? made_ : nullptr;
  }
  bool poll() override {
    CompletionPtr made;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (!resolved_) return false;
      if (error_) return true;  // wait() reports it
      made = made_;
    }
    return made->poll();
  }
  void wait() override {
    CompletionPtr made;
    {
      std::unique_lock<std::mutex> guard(mutex_);
      ready_.wait(guard, [&] { return resolved_; });
      if (error_) std::rethrow_exception(error_);
      made = made_;
    }
    made->wait();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  bool resolved_ = false;
  CompletionPtr made_;
  std::exception_ptr error_;
};

// A copy between a device and the host that stage() planned and defer_through_host() set up,
// to be made by run_deferred() without the directory's lock.
struct Directory::DeferredCopy {
  SpaceId device = kHost;  // the device end
  bool to_host = false;    // device -> host, else host -> device
  DeviceBuffer buffer;     // the device end's allocation (kept alive: 'done' is a user)
  std::size_t offset = 0;
  std::uintptr_t start = 0, end = 0;  // the host end
  std::vector<CompletionPtr> after;
  std::shared_ptr<DeferredCompletion> done;
};

// One copy to make, gathered from contiguous fragments with the same source and target.
struct Directory::PlannedCopy {
  SpaceId from = kHost, to = kHost;
  std::uintptr_t start = 0, end = 0;
  Allocation *source = nullptr, *target = nullptr;  // device sides
  std::vector<CompletionPtr> after;
  std::vector<FragmentState *> fragments;  // to mark pending once issued
};

Directory::Directory(std::vector<SpaceSettings> spaces, DirectoryOptions options)
    : spaces_(spaces.size() + 1), options_(options) {
  if (spaces_.size() > kMaxSpaces)
    throw std::invalid_argument("directory: at most " + std::to_string(kMaxSpaces - 1) +
                                " device memory spaces");
  for (std::size_t i = 0; i < spaces.size(); ++i) {
    Space &space = spaces_[i + 1];
    space.memory = spaces[i].memory;
    if (!space.memory) throw std::invalid_argument("directory: a memory space is missing");
    space.capacity = spaces[i].capacity ? spaces[i].capacity : space.memory->memory_size();
    space.limit_source = spaces[i].limit_source;
  }
  for (SpaceId to = 1; to < space_count(); ++to)
    for (SpaceId from = 1; from < space_count(); ++from)
      if (from != to && spaces_[to].memory->can_copy_from(*spaces_[from].memory))
        spaces_[to].direct |= bit(from);
}

Directory::~Directory() {
  for (SpaceId id = 1; id < space_count(); ++id) {
    Space &space = spaces_[id];
    try {
      for (auto &[start, allocation] : space.allocations) {
        for (const CompletionPtr &user : allocation->users) user->wait();
        space.memory->free(allocation->buffer);
      }
      for (auto &[bytes, buffer] : space.free_buffers) space.memory->free(buffer);
      for (int b = 0; b < 2; ++b) {
        if (space.staging_busy[b]) space.staging_busy[b]->wait();
        if (space.staging[b].host) space.memory->free_pinned(space.staging[b]);
      }
    } catch (...) {
      // A failing device at exit: its memory goes with the process.
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Allocations

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
  // A new allocation covering the range and every allocation it overlaps, which move into
  // it: bytes stay where the valid sets say they are.
  for (Allocation *old : overlaps)
    if (old->pins) return nullptr;  // in use by a staged task: try again after it
  std::uintptr_t low = own_start, high = own_end;
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
                           const Transition t =
                               coherence_transition(fragment.valid, CoherenceEvent::Evict, id, 0);
                           if (t.copies) plan(write_backs, id, kHost, start, end, fragment);
                           fragment.valid = t.valid;
                           std::erase_if(fragment.pending,
                                         [id](const auto &p) { return p.first == id; });
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
  for (Allocation *allocation : stale) drop_allocation(id, allocation);
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

// ---------------------------------------------------------------------------------------------
// Copies

std::vector<CompletionPtr> Directory::pending_of(const FragmentState &fragment, SpaceId id) {
  std::vector<CompletionPtr> pending;
  for (const auto &[space, completion] : fragment.pending)
    if (space == id && !completion->poll()) pending.push_back(completion);
  return pending;
}

void Directory::plan(std::vector<PlannedCopy> &copies, SpaceId from, SpaceId to,
                     std::uintptr_t start, std::uintptr_t end, FragmentState &fragment) {
  Allocation *source = from == kHost ? nullptr : &allocation_holding(from, start, end);
  Allocation *target = to == kHost ? nullptr : &allocation_holding(to, start, end);
  std::vector<CompletionPtr> after = pending_of(fragment, from);
  if (to == kHost) {  // after an earlier write-back of these bytes still in flight
    std::vector<CompletionPtr> earlier = pending_of(fragment, kHost);
    after.insert(after.end(), earlier.begin(), earlier.end());
  }
  if (!copies.empty()) {
    PlannedCopy &last = copies.back();
    if (last.from == from && last.to == to && last.end == start && last.source == source &&
        last.target == target) {
      last.end = end;
      last.after.insert(last.after.end(), after.begin(), after.end());
      last.fragments.push_back(&fragment);
      return;
    }
  }
  copies.push_back(PlannedCopy{from, to, start, end, source, target, std::move(after),
                               {&fragment}});
}

std::vector<CompletionPtr> Directory::issue(std::vector<PlannedCopy> &copies, bool host_pending) {
  std::vector<CompletionPtr> issued;
  for (PlannedCopy &copy : copies) {
    const std::size_t bytes = copy.end - copy.start;
    CompletionPtr done;
    if (copy.from == kHost) {
      done = write_staged(spaces_[copy.to], copy.target->buffer, copy.start - copy.target->start,
                          reinterpret_cast<const void *>(copy.start), bytes, copy.after);
    } else if (copy.to == kHost) {
      done = read_staged(spaces_[copy.from], copy.source->buffer, copy.start - copy.source->start,
                         reinterpret_cast<void *>(copy.start), bytes, copy.after);
    } else {
      Space &source = spaces_[copy.from], &target = spaces_[copy.to];
      done = target.memory->copy_from(*source.memory, copy.source->buffer,
                                      copy.start - copy.source->start, copy.target->buffer,
                                      copy.start - copy.target->start, bytes, copy.after);
    }
    record_copy(copy, done, host_pending);
    issued.push_back(std::move(done));
  }
  copies.clear();
  return issued;
}

void Directory::record_copy(const PlannedCopy &copy, const CompletionPtr &done, bool host_pending) {
  const std::size_t bytes = copy.end - copy.start;
  if (listener_) listener_->copy_started(copy.from, copy.to, bytes);
  Space &counted = spaces_[copy.to == kHost ? copy.from : copy.to];
  (copy.from == kHost ? counted.counters.bytes_to_device
   : copy.to == kHost ? counted.counters.bytes_to_host
                      : counted.counters.bytes_from_peer) += bytes;
  ++counted.counters.copies;
  // Neither end's buffer may be freed before the copy is done.
  for (Allocation *end : {copy.source, copy.target})
    if (end) {
      forget_done(end->users);
      end->users.push_back(done);
    }
  if (copy.to != kHost) {
    for (FragmentState *fragment : copy.fragments) fragment->pending.emplace_back(copy.to, done);
  } else if (host_pending) {
    // The host's copy counts as valid now; this copy waits for any earlier write-back of
    // the same bytes, so it alone needs keeping.
    for (FragmentState *fragment : copy.fragments) {
      std::erase_if(fragment->pending, [](const auto &p) { return p.first == kHost; });
      forget_done_pending(*fragment);
      fragment->pending.emplace_back(kHost, done);
      fragment->valid |= bit(kHost);
    }
  }
}

CompletionPtr Directory::write_staged(Space &space, DeviceBuffer target, std::size_t offset,
                                      const void *source, std::size_t bytes,
                                      Dependencies after) {
  if (!space.memory->wants_staging() || bytes < options_.staging_threshold ||
      space.memory->is_page_locked(source, bytes))
    return space.memory->write(target, offset, source, bytes, after);
  space.memory->staged(source, bytes);
  // Host memory is read now, by the packer: a write-back into it still in flight comes first
  // (waited for before the staging buffers are taken: it may be a copy another thread makes
  // through them).
  for (const CompletionPtr &earlier : after) earlier->wait();
  std::lock_guard<std::mutex> staging_guard(space.staging_mutex);
  if (!staging_ready(space)) return space.memory->write(target, offset, source, bytes, after);
  // Chunks go through the two staging buffers in turn: while one is copied to the device,
  // the next chunk is packed into the other.
  const std::size_t chunk = staging_chunk_for(bytes);
  std::vector<CompletionPtr> parts;
  for (std::size_t done = 0, k = 0; done < bytes; ++k) {
    const std::size_t n = std::min(chunk, bytes - done);
    const int b = static_cast<int>(k % 2);
    if (space.staging_busy[b]) space.staging_busy[b]->wait();
    pack(space.staging[b].host, static_cast<const char *>(source) + done, n);
    space.staging_busy[b] =
        space.memory->write(target, offset + done, space.staging[b].host, n, after);
    parts.push_back(space.staging_busy[b]);
    done += n;
  }
  return std::make_shared<AllCompletion>(std::move(parts));
}

CompletionPtr Directory::read_staged(Space &space, DeviceBuffer source, std::size_t offset,
                                     void *target, std::size_t bytes, Dependencies after) {
  if (!space.memory->wants_staging() || bytes < options_.staging_threshold ||
      space.memory->is_page_locked(target, bytes))
    return space.memory->read(source, offset, target, bytes, after);
  space.memory->staged(target, bytes);
  // Copies another thread makes unlocked are waited for before the staging buffers are taken
  // (they may need them).
  for (const CompletionPtr &earlier : after)
    if (dynamic_cast<DeferredCompletion *>(earlier.get())) earlier->wait();
  std::lock_guard<std::mutex> staging_guard(space.staging_mutex);
  if (!staging_ready(space)) return space.memory->read(source, offset, target, bytes, after);
  // Two chunks in flight into the staging buffers; each is unpacked once it arrived and its
  // buffer takes the chunk after next. Done on return.
  const std::size_t chunk = staging_chunk_for(bytes);
  const std::size_t count = (bytes + chunk - 1) / chunk;
  auto length = [&](std::size_t k) { return std::min(chunk, bytes - k * chunk); };
  auto start = [&](std::size_t k) {
    const int b = static_cast<int>(k % 2);
    if (space.staging_busy[b]) space.staging_busy[b]->wait();
    space.staging_busy[b] =
        space.memory->read(source, offset + k * chunk, space.staging[b].host, length(k), after);
  };
  start(0);
  if (count > 1) start(1);
  for (std::size_t k = 0; k < count; ++k) {
    const int b = static_cast<int>(k % 2);
    space.staging_busy[b]->wait();
    pack(static_cast<char *>(target) + k * chunk, space.staging[b].host, length(k));
    if (k + 2 < count) start(k + 2);
  }
  return std::make_shared<DoneCompletion>();
}

std::size_t Directory::staging_chunk_for(std::size_t bytes) const {
  // A quarter of the copy (at least 1 MiB, in whole 64 KiB), so that a copy of a few times
  // the chunk still packs one part while another crosses the bus; at most a staging buffer.
  const std::size_t quarter = (bytes / 4 + 0xffff) & ~std::size_t(0xffff);
  return std::min(options_.staging_chunk, std::max(std::size_t(1) << 20, quarter));
}

bool Directory::staging_ready(Space &space) {
  if (space.staging[0].host && space.staging[1].host) return true;
  if (space.staging_failed) return false;
  for (int b = 0; b < 2; ++b)
    if (!space.staging[b].host) space.staging[b] = space.memory->allocate_pinned(options_.staging_chunk);
  space.staging_failed = !space.staging[0].host || !space.staging[1].host;
  std::lock_guard<std::mutex> guard(packer_mutex_);
  if (!packer_) packer_ = std::make_unique<ParallelMemcpy>(options_.staging_threads);
  return !space.staging_failed;
}

void Directory::pack(void *target, const void *source, std::size_t bytes) {
  std::lock_guard<std::mutex> guard(packer_mutex_);
  packer_->copy(target, source, bytes);
}

// ---------------------------------------------------------------------------------------------
// Tasks

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
            if (space_id == id && !completion->poll()) out.ready.push_back(completion);
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
      if (!groups.empty() && group.start < groups.back().end) {
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
        const Transition t = coherence_transition(f.valid, CoherenceEvent::Read, id, space.direct);
        if (t.hit) {
          for (const auto &[space, completion] : f.pending)  // (no vector: the usual case)
            if (space == id && !completion->poll()) out.ready.push_back(completion);
          return;
        }
        hit = false;
        if (t.copies == 2) plan(to_host, t.copy[0].from, kHost, s, e, f);
        plan(to_space, t.copy[t.copies - 1].from, id, s, e, f);
        f.valid = t.valid;
      });
    });
    ++(hit ? space.counters.hits : space.counters.misses);
  }
  // Copies through the host (no direct path from where the bytes are valid) are made after
  // the lock is released: they wait for the device and the staging buffers, and the other
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
    // The task waits for the copies made, which a backend may wait for on the device.
    for (CompletionPtr &ready : out.ready)
      if (auto *mine = dynamic_cast<DeferredCompletion *>(ready.get()))
        if (CompletionPtr made = mine->made()) ready = std::move(made);
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
  std::erase_if(to_space, [&](PlannedCopy &copy) {
    if (copy.from != kHost) return false;  // between devices, directly
    for (const FragmentState *fragment : copy.fragments)
      for (const auto &[read, done] : read_out)
        if (read == fragment && std::find(copy.after.begin(), copy.after.end(), done) == copy.after.end())
          copy.after.push_back(done);
    if (std::none_of(copy.after.begin(), copy.after.end(), waits_for_deferred)) return false;
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
                                           job.after));
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
        f.valid = coherence_transition(f.valid, CoherenceEvent::Write, id, 0).valid;
        ++f.version;
        // The copies into 'id' the writer waited for came before it. Write-backs into the
        // host still in flight stay: a later write-back of the new values must land after them.
        std::erase_if(f.pending, [](const auto &p) { return p.first != kHost; });
        if (until) f.pending.emplace_back(id, until);
      });
    });
  }
}

void Directory::abandon(Staging &staging) {
  std::lock_guard<std::mutex> guard(mutex_);
  unpin(staging);
}

// ---------------------------------------------------------------------------------------------
// Host

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
                                   f.valid, CoherenceEvent::Read, kHost, 0);
                               if (t.hit) {  // a write-back may still be on its way
                                 for (const CompletionPtr &c : pending_of(f, kHost)) c->wait();
                                 return;
                               }
                               hit = false;
                               plan(to_host, t.copy[0].from, kHost, s, e, f);
                               f.valid = t.valid;
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
        for (const auto &[space, pending] : f.pending) pending->wait();
        f.pending.clear();
        f.valid = kHostOnly;
        ++f.version;
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
  for (const auto &[start, end] : ranges) {
    fragments_.cut(start);
    fragments_.cut(end);
    fragments_.overlapping(start, end, [&](std::uintptr_t s, std::uintptr_t e, FragmentState &f) {
      if (f.valid == bit(space)) plan(to_host, space, kHost, s, e, f);  // else home already
    });
    // Issued range by range: joined with the next range, a copy could span memory that is
    // not all page-locked, and go staged (synchronously).
    issue(to_host, true);
  }
  tracked_.store(fragments_.size(), std::memory_order_release);
}

void Directory::write_back_and_drop(std::uintptr_t start, std::uintptr_t end) {
  std::vector<PlannedCopy> to_host;
  fragments_.overlapping(start, end, [&](std::uintptr_t s, std::uintptr_t e, FragmentState &f) {
    const Transition t = coherence_transition(f.valid, CoherenceEvent::Flush, kHost, 0);
    if (t.copies) plan(to_host, t.copy[0].from, kHost, s, e, f);
  });
  for (const CompletionPtr &done : issue(to_host)) done->wait();
  fragments_.overlapping(start, end, [&](std::uintptr_t, std::uintptr_t, FragmentState &f) {
    // Copies into devices read host memory, which the program may change after the flush.
    for (const auto &[space, pending] : f.pending) pending->wait();
    f.pending.clear();
    f.valid = kHostOnly;
  });
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
  std::erase_if(fragment.pending, [](const auto &p) { return p.second->poll(); });
}

// ---------------------------------------------------------------------------------------------
// Inspection

void Directory::locate(std::span<const DataAccess> accesses, std::vector<LocatedBytes> &per_space) {
  per_space.assign(spaces_.size(), LocatedBytes{});
  std::lock_guard<std::mutex> guard(mutex_);
  for (const DataAccess &access : accesses)
    access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
      std::uintptr_t tracked = 0;
      fragments_.overlapping(start, end, [&](std::uintptr_t s, std::uintptr_t e, FragmentState &f) {
        const std::uint64_t bytes = std::min(e, end) - std::max(s, start);
        tracked += bytes;
        for (SpaceId id = 0; id < spaces_.size(); ++id) {
          if (!(f.valid & bit(id))) continue;
          if (access.reads) per_space[id].valid += bytes;
          if (access.writes && id != kHost && f.valid == bit(id)) per_space[id].owned += bytes;
        }
      });
      if (access.reads) per_space[kHost].valid += (end - start) - tracked;
    });
}

TransferCounters Directory::counters(SpaceId id) const {
  std::lock_guard<std::mutex> guard(mutex_);
  return spaces_.at(id).counters;
}

std::size_t Directory::used_bytes(SpaceId id) const {
  std::lock_guard<std::mutex> guard(mutex_);
  return spaces_.at(id).used;
}

FragmentInfo Directory::fragment_at(const void *address) const {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  FragmentInfo info;
  auto &fragments = const_cast<IntervalMap<FragmentState> &>(fragments_);
  fragments.overlapping(at, at + 1, [&](std::uintptr_t, std::uintptr_t, FragmentState &f) {
    info.valid = f.valid;
    info.version = f.version;
  });
  return info;
}

}  // namespace nanort::dc
