// The directory: which memory spaces hold a valid copy of each fragment of host memory, the
// device allocations that mirror it, and the copies that keep them coherent. Its source files,
// one concern each:
//   directory.cpp               construction, the end, and what tests and tools inspect
//   directory_allocations.cpp   device allocations: placing, the buffer cache, eviction
//   directory_copy_planning.cpp copies planned from the fragments, issued and recorded
//   directory_staging.cpp       copies of ordinary host memory through pinned staging buffers
//   directory_tasks.cpp         the calls a device task makes: stage, finish, commit, abandon
//   directory_host.cpp          the host side: acquire for CPU tasks, write-backs, flushes
// directory_internals.hpp holds the types they share.
#include "directory_internals.hpp"

#include <algorithm>

#include "parallel_memcpy.hpp"  // (the packer goes with the directory)

namespace nanort::dc {

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
        for (const CompletionPtr &user : allocation->users) {
          try {
            user->wait();
          } catch (const std::exception &) {
            // A copy that failed uses the buffer no more (a failing device fails the free).
          }
        }
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

// What the scheduler, tests and tools look up.

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
