// IntervalMap: a state per byte range, kept as disjoint fragments.
//
// Both the dependency graph (which tasks last touched these bytes) and the directory (which
// memory spaces hold these bytes) need the same thing: a value for every byte ever named, where
// a later range may cut an earlier one anywhere. The map keeps disjoint half-open fragments
// [start, end); visiting a range first splits the fragments that straddle its ends (each half
// gets a copy of the value) and creates fragments with a default value in the gaps, so the
// visitor sees exactly the fragments that tile the range, in address order.
//
// The common case, a range equal to one existing fragment, is one ordered-map lookup and no
// allocation. Fragment nodes come from a pool owned by the map, so creating and dropping
// fragments at a high rate does not go to the system allocator. Not thread-safe: the owner
// locks.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <memory_resource>
#include <tuple>
#include <utility>

namespace nanort::dc {

template <class Value>
class IntervalMap {
 public:
  struct Fragment {
    std::uintptr_t end;
    Value value;
  };
  using Map = std::pmr::map<std::uintptr_t, Fragment>;

  IntervalMap() : fragments_(&pool_) {}
  IntervalMap(const IntervalMap &) = delete;
  IntervalMap &operator=(const IntervalMap &) = delete;

  // Calls visit(start, end, value&) for each fragment tiling [start, end), in order.
  template <class Visit>
  void cover(std::uintptr_t start, std::uintptr_t end, Visit &&visit) {
    if (start >= end) return;
    // One search: the first fragment that starts at 'start' or after.
    auto it = fragments_.lower_bound(start);
    const bool starts_there = it != fragments_.end() && it->first == start;
    if (starts_there && it->second.end == end) {  // exact match: the fast path
      visit(start, end, it->second.value);
      return;
    }
    if (!starts_there && it != fragments_.begin()) {  // one straddling 'start' is cut there
      auto prev = std::prev(it);
      if (prev->second.end > start) it = split(prev, start);
    }
    std::uintptr_t cursor = start;
    while (cursor < end) {
      if (it == fragments_.end() || it->first > cursor) {
        // A gap [cursor, next start or end): new fragment with a default value, made in place.
        std::uintptr_t gap_end = end;
        if (it != fragments_.end() && it->first < end) gap_end = it->first;
        it = fragments_.emplace_hint(it, std::piecewise_construct, std::forward_as_tuple(cursor),
                                     std::forward_as_tuple(gap_end));
      } else if (it->second.end > end) {
        split(it, end);
      }
      visit(it->first, it->second.end, it->second.value);
      cursor = it->second.end;
      ++it;
    }
  }

  // Calls visit(start, end, value&) for the existing fragments overlapping [start, end),
  // without splitting or creating any; the fragments may extend past the range.
  template <class Visit>
  void overlapping(std::uintptr_t start, std::uintptr_t end, Visit &&visit) {
    if (start >= end) return;
    for (auto it = first_overlapping(start); it != fragments_.end() && it->first < end; ++it)
      visit(it->first, it->second.end, it->second.value);
  }

  // Whether a fragment overlaps [start, end).
  bool any_overlapping(std::uintptr_t start, std::uintptr_t end) {
    if (start >= end) return false;
    auto it = first_overlapping(start);
    return it != fragments_.end() && it->first < end;
  }

  // Removes the fragments overlapping [start, end) for which drop(value&) returns true.
  template <class Drop>
  void erase_overlapping_if(std::uintptr_t start, std::uintptr_t end, Drop &&drop) {
    if (start >= end) return;
    auto it = first_overlapping(start);
    while (it != fragments_.end() && it->first < end)
      it = drop(it->second.value) ? fragments_.erase(it) : std::next(it);
  }

  // Removes fragments for which drop(value&) returns true.
  template <class Drop>
  void erase_if(Drop &&drop) {
    for (auto it = fragments_.begin(); it != fragments_.end();)
      it = drop(it->second.value) ? fragments_.erase(it) : std::next(it);
  }

  // Cuts the fragment containing 'at', if one straddles it, so that a fragment starts there.
  void cut(std::uintptr_t at) { split_at(at); }

  void clear() { fragments_.clear(); }
  std::size_t size() const { return fragments_.size(); }
  bool empty() const { return fragments_.empty(); }
  const Map &fragments() const { return fragments_; }

 private:
  // The first fragment that ends after 'start' (it may begin before it).
  typename Map::iterator first_overlapping(std::uintptr_t start) {
    auto it = fragments_.upper_bound(start);
    if (it != fragments_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > start) return prev;
    }
    return it;
  }

  // Splits the fragment containing 'at' (if it starts before 'at') and returns the first
  // fragment starting at or after 'at'.
  typename Map::iterator split_at(std::uintptr_t at) {
    auto it = fragments_.upper_bound(at);
    if (it == fragments_.begin()) return it;
    auto prev = std::prev(it);
    if (prev->first == at) return prev;
    if (prev->second.end <= at) return it;
    return split(prev, at);
  }

  // Cuts 'it' at 'at' (strictly inside it); returns the upper half.
  typename Map::iterator split(typename Map::iterator it, std::uintptr_t at) {
    Fragment upper{it->second.end, it->second.value};
    it->second.end = at;
    return fragments_.emplace_hint(std::next(it), at, std::move(upper));
  }

  std::pmr::unsynchronized_pool_resource pool_;  // declared first: outlives the map
  Map fragments_;
};

}  // namespace nanort::dc
