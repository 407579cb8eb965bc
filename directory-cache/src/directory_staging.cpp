// Copies of ordinary host memory through the pinned staging buffers (directory.cpp).
#include "directory_internals.hpp"

#include <algorithm>
#include <cstring>

#include "parallel_memcpy.hpp"

namespace nanort::dc {

CompletionPtr Directory::write_staged(Space &space, DeviceBuffer target, std::size_t offset,
                                      const void *source, std::size_t bytes,
                                      Dependencies after, bool may_lock) {
  if (!space.memory->wants_staging() || bytes < options_.staging_threshold ||
      space.memory->is_page_locked(source, bytes) ||
      (may_lock && space.memory->lock_for_copy(source, bytes)))
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

}  // namespace nanort::dc
