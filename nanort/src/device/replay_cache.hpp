// What a device keeps for taskiter replays (CUDA Graphs, OpenCL command buffers), by
// recording (TaskIter::id: later recordings have larger ids, so the map is oldest first).
// An entry carries the signature of what it was made from (each kernel, its launch shape and
// its arguments' bytes): a new recording with the same signature (the same loop run again by
// the program's next repetition) takes over an earlier one's entry instead of making its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace nanort::rt {

using ReplaySignature = std::vector<unsigned char>;

inline void append_signature(ReplaySignature &signature, const void *bytes, std::size_t n) {
  const auto *first = static_cast<const unsigned char *>(bytes);
  signature.insert(signature.end(), first, first + n);
}

// Entry: has 'signature' and made() (it holds what replays launch: a graph, or kernels).
template <class Entry>
class ReplayCache {
 public:
  explicit ReplayCache(std::size_t capacity) : capacity_(capacity) {}

  // The entry of recording 'key': its own; else an earlier recording's made from the same
  // signature, taken over; else a new one (past the capacity, the oldest go through 'release'
  // first). The caller makes it, or makes it again, where its signature differs.
  template <class Release>
  Entry &entry(std::uint64_t key, const ReplaySignature &signature, Release &&release) {
    if (auto it = entries_.find(key); it != entries_.end()) return it->second;
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->second.made() && it->second.signature == signature) {
        Entry same = std::move(it->second);
        entries_.erase(it);
        return entries_.emplace(key, std::move(same)).first->second;
      }
    while (entries_.size() >= capacity_) {
      release(entries_.begin()->second);
      entries_.erase(entries_.begin());
    }
    return entries_[key];
  }
  template <class Release>
  void clear(Release &&release) {
    for (auto &[key, entry] : entries_) release(entry);
    entries_.clear();
  }

 private:
  std::size_t capacity_;
  std::map<std::uint64_t, Entry> entries_;
};

}  // namespace nanort::rt
