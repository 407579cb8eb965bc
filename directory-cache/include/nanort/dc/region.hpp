// Region: the bytes a task names, either one contiguous range or a 2-D block of a row-major
// matrix ('rows' rows of 'row_bytes' bytes, 'stride' bytes apart).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nanort::dc {

struct Region {
  std::uintptr_t address = 0;
  std::size_t row_bytes = 0;
  std::size_t rows = 1;
  std::size_t stride = 0;

  static Region contiguous(const void *address, std::size_t bytes) {
    return {reinterpret_cast<std::uintptr_t>(address), bytes, 1, bytes};
  }
  static Region block(const void *address, std::size_t row_bytes, std::size_t rows,
                      std::size_t stride) {
    // A block whose rows touch is one range: keep it as such.
    if (rows <= 1 || stride == row_bytes) return contiguous(address, row_bytes * rows);
    return {reinterpret_cast<std::uintptr_t>(address), row_bytes, rows, stride};
  }

  bool is_contiguous() const { return rows <= 1; }
  bool empty() const { return row_bytes == 0 || rows == 0; }
  std::size_t bytes() const { return row_bytes * rows; }
  // The smallest range holding every byte of the region.
  std::uintptr_t first() const { return address; }
  std::uintptr_t last_end() const { return address + (rows - 1) * stride + row_bytes; }

  // Calls visit(start, end) for each contiguous piece, in address order.
  template <class Visit>
  void for_each_range(Visit &&visit) const {
    for (std::size_t r = 0; r < rows; ++r) {
      std::uintptr_t start = address + r * stride;
      visit(start, start + row_bytes);
    }
  }
};

}  // namespace nanort::dc
