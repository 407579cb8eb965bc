// BlockMap: a state per 2-D block of a row-major matrix, one entry per block.
//
// The dependency graph keeps a state per byte range (dc::IntervalMap); a 2-D block there is
// one fragment per row, so a task on three 64 x 64 tiles registers and matches 192 ranges.
// Tiled programs name the same tiles over and over, so a block can be one entry instead:
// this map holds blocks of one row stride, found by their exact shape, with an index of the
// cells of a grid (the size of the first block) to find the blocks that a range or another
// block touches. Its owner keeps every entry apart from the bytes it tracks row by row, and
// turns an entry into rows (demotes it) when something overlaps it without being it.
//
// A block lies in the plane of its stride S, whose columns start at the first block's first
// byte: byte a is row (a - o) / S, column (a - o) % S, where o is that byte's address modulo S.
// (A matrix's rows rarely start at a multiple of S; measured from there, one column of its
// tiles would wrap.) Blocks whose rows wrap past a column S are not taken (accepts()). Not
// thread-safe: the owner locks.
#pragma once

#include <nanort/dc/region.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory_resource>
#include <unordered_map>
#include <vector>

#include "small_vector.hpp"

namespace nanort::rt {

template <class Value>
class BlockMap {
 public:
  BlockMap() : entries_(&pool_), cells_(&pool_) {}
  BlockMap(const BlockMap &) = delete;
  BlockMap &operator=(const BlockMap &) = delete;

  // Whether 'region' can be an entry: a block (2 rows or more) of this map's stride (any
  // stride while the map has none yet) whose rows do not wrap, covering few enough cells.
  bool accepts(const dc::Region &region) const {
    if (region.rows < 2 || region.stride == 0) return false;
    if (stride_ == 0) return region.row_bytes <= region.stride;  // (it will set the plane)
    if (region.stride != stride_) return false;
    if (column(region.address) + region.row_bytes > stride_) return false;
    const Rect r = rect(region);
    return (r.y1 / cell_rows_ - r.y0 / cell_rows_ + 1) *
               ((r.x1 - 1) / cell_bytes_ - r.x0 / cell_bytes_ + 1) <=
           kMaxCells;
  }

  // The entry of exactly this block, or nullptr.
  Value *find(const dc::Region &region) {
    if (region.stride != stride_ || region.rows < 2) return nullptr;
    auto it = entries_.find(Key{region.address, region.row_bytes, region.rows});
    return it == entries_.end() ? nullptr : &it->second;
  }

  // A new entry with a default value; 'region' is accepted and has none yet.
  Value &insert(const dc::Region &region) {
    if (stride_ == 0) {  // the first block sets the plane and its grid
      stride_ = region.stride;
      shift_ = stride_ - region.address % stride_;  // (its first byte: column 0)
      cell_rows_ = region.rows;
      cell_bytes_ = region.row_bytes;
      // A row of cells starts at its first row too: blocks of its shape in line with it (the
      // tiles of one matrix) each fill one cell.
      row_shift_ = 0;
      row_shift_ = (cell_rows_ - row(region.address) % cell_rows_) % cell_rows_;
    }
    const Key key{region.address, region.row_bytes, region.rows};
    auto [it, made] = entries_.try_emplace(key);
    for_each_cell(rect(region), [&](std::uint64_t cell) { cells_[cell].push_back(key); });
    return it->second;
  }

  void erase(const dc::Region &region) {
    const Key key{region.address, region.row_bytes, region.rows};
    for_each_cell(rect(region), [&](std::uint64_t cell) {
      auto it = cells_.find(cell);
      it->second.erase_if([&](const Key &other) { return other == key; });
      if (it->second.empty()) cells_.erase(it);
    });
    entries_.erase(key);
    if (entries_.empty()) stride_ = 0;  // the next block sets the plane and grid afresh
  }

  // The entries sharing a byte with 'region' (a range, a block of this stride or of another),
  // as regions; the caller may then erase them.
  void intersecting(const dc::Region &region, std::vector<dc::Region> &found) const {
    found.clear();
    if (entries_.empty()) return;
    if (region.is_contiguous() || region.stride != stride_ ||
        column(region.address) + region.row_bytes > stride_) {
      region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
        add_hits_of_range(start, end, found);
      });
      return;
    }
    const Rect query = rect(region);
    visit_candidates(query, [&](const Key &key) {
      if (overlaps(query, rect_of(key))) add_unique(found, key);
    });
  }

  template <class Visit>  // visit(region, value&) for every entry
  void for_each(Visit &&visit) {
    for (auto &[key, value] : entries_) visit(region_of(key), value);
  }

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() {
    cells_.clear();
    entries_.clear();
    stride_ = 0;
    shift_ = 0;
    row_shift_ = 0;
  }

 private:
  // A block bigger than this many cells of the grid is kept row by row (its cells would cost
  // more than its rows).
  static constexpr std::uint64_t kMaxCells = 64;

  struct Key {
    std::uintptr_t address;
    std::size_t row_bytes, rows;
    bool operator==(const Key &) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key &k) const {
      return std::hash<std::uintptr_t>()(k.address) ^ (k.row_bytes * 0x9e3779b97f4a7c15ull) ^
             (k.rows << 17);
    }
  };
  // Rows y0..y1 (both included), columns [x0, x1), in the plane of the map's stride.
  struct Rect {
    std::uint64_t y0, y1, x0, x1;
  };

  // A byte's row and column in the plane (the map has a stride).
  std::uint64_t row(std::uintptr_t address) const {
    return (address + shift_) / stride_ + row_shift_;
  }
  std::uint64_t column(std::uintptr_t address) const { return (address + shift_) % stride_; }

  Rect rect(const dc::Region &region) const {  // (a region of the map's stride)
    return {row(region.address), row(region.address) + region.rows - 1, column(region.address),
            column(region.address) + region.row_bytes};
  }
  Rect rect_of(const Key &key) const {
    return rect(dc::Region{key.address, key.row_bytes, key.rows, stride_});
  }
  dc::Region region_of(const Key &key) const {
    return dc::Region{key.address, key.row_bytes, key.rows, stride_};
  }
  static bool overlaps(const Rect &a, const Rect &b) {
    return a.y0 <= b.y1 && b.y0 <= a.y1 && a.x0 < b.x1 && b.x0 < a.x1;
  }
  // Whether the bytes [start, end) share one with the block 'b'.
  bool range_hits(std::uintptr_t start, std::uintptr_t end, const Rect &b) const {
    const std::uint64_t y0 = row(start), y1 = row(end - 1);
    const std::uint64_t lo = std::max(y0, b.y0), hi = std::min(y1, b.y1);
    if (lo > hi) return false;
    for (std::uint64_t y : {lo, hi}) {  // the rows in common at each end; any between is whole
      const std::uint64_t from = y == y0 ? column(start) : 0;
      const std::uint64_t to = y == y1 ? column(end - 1) + 1 : stride_;
      if (from < b.x1 && b.x0 < to) return true;
    }
    return hi - lo >= 2;  // a row between lo and hi is covered whole
  }
  void add_hits_of_range(std::uintptr_t start, std::uintptr_t end,
                         std::vector<dc::Region> &found) const {
    const std::uint64_t y0 = row(start), y1 = row(end - 1);
    const Rect span{y0, y1, y0 == y1 ? column(start) : 0,
                    y0 == y1 ? column(end - 1) + 1 : stride_};
    visit_candidates(span, [&](const Key &key) {
      if (range_hits(start, end, rect_of(key))) add_unique(found, key);
    });
  }
  void add_unique(std::vector<dc::Region> &found, const Key &key) const {
    const dc::Region region = region_of(key);
    for (const dc::Region &other : found)
      if (other.address == region.address && other.row_bytes == region.row_bytes &&
          other.rows == region.rows)
        return;
    found.push_back(region);
  }

  // Calls visit(key) for the entries in the cells of 'r' (some more than once), or for every
  // entry when there are fewer entries than cells to look at.
  template <class Visit>
  void visit_candidates(const Rect &r, Visit &&visit) const {
    const std::uint64_t cells = (r.y1 / cell_rows_ - r.y0 / cell_rows_ + 1) *
                                ((r.x1 - 1) / cell_bytes_ - r.x0 / cell_bytes_ + 1);
    if (cells > entries_.size()) {
      for (const auto &entry : entries_) visit(entry.first);
      return;
    }
    for_each_cell(r, [&](std::uint64_t cell) {
      auto it = cells_.find(cell);
      if (it == cells_.end()) return;
      for (std::size_t i = 0; i < it->second.size(); ++i) visit(it->second[i]);
    });
  }
  template <class Visit>
  void for_each_cell(const Rect &r, Visit &&visit) const {
    for (std::uint64_t cy = r.y0 / cell_rows_; cy <= r.y1 / cell_rows_; ++cy)
      for (std::uint64_t cx = r.x0 / cell_bytes_; cx <= (r.x1 - 1) / cell_bytes_; ++cx)
        visit(cy * 0x100000001b3ull + cx);  // (cx < stride, so distinct rows stay apart)
  }

  std::size_t stride_ = 0;  // 0 until the first block
  std::size_t shift_ = 0;   // added to an address so that the plane's column 0 is at 0 mod S
  std::uint64_t row_shift_ = 0;  // added to a row so that the grid's rows start at the first's
  std::size_t cell_rows_ = 1, cell_bytes_ = 1;
  std::pmr::unsynchronized_pool_resource pool_;  // declared first: outlives the maps
  std::pmr::unordered_map<Key, Value, KeyHash> entries_;
  std::pmr::unordered_map<std::uint64_t, SmallVector<Key, 2>> cells_;
};

}  // namespace nanort::rt
