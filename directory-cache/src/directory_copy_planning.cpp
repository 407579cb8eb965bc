// Copies planned from the fragments' valid sets, issued and recorded (directory.cpp).
#include "directory_internals.hpp"

#include <nanort/dc/invariant.hpp>

#include <algorithm>

namespace nanort::dc {

std::vector<CompletionPtr> Directory::pending_of(const FragmentState &fragment, SpaceId id) {
  std::vector<CompletionPtr> pending;
  for (const auto &[space, completion] : fragment.pending)
    if (space == id && !completion->poll()) pending.push_back(completion);
  return pending;
}

FragmentCoherence Directory::coherence_of(const FragmentState &fragment) {
  FragmentCoherence state{fragment.valid, 0};
  for (const auto &[space, completion] : fragment.pending) {
    NANORT_INVARIANT(!(state.arriving & bit(space)), "directory: two copies in flight into one space");
    state.arriving |= bit(space);
  }
  return state;
}

void Directory::take(FragmentState &fragment, const Transition &t) {
  fragment.valid = t.valid;
  if (t.new_version) ++fragment.version;
  const SpaceMask keep = t.new_version ? t.arriving & kHostOnly : t.arriving;
  std::erase_if(fragment.pending, [keep](const auto &p) { return !(keep & bit(p.first)); });
}

void Directory::wait_arriving(const FragmentState &fragment, SpaceMask spaces) {
  for (const auto &[space, completion] : fragment.pending)
    if (spaces & bit(space)) completion->wait();
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
    // Arriving into the host (the transition that planned it made the host valid, or keeps
    // it so); it waits for any earlier write-back of the same bytes, so it alone needs keeping.
    for (FragmentState *fragment : copy.fragments) {
      std::erase_if(fragment->pending, [](const auto &p) { return p.first == kHost; });
      forget_done_pending(*fragment);
      fragment->pending.emplace_back(kHost, done);
    }
  }
}

}  // namespace nanort::dc
