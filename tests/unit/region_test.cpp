// Region: one contiguous range, or a 2-D block of a row-major matrix.
#include <nanort/dc/region.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace {

using nanort::dc::Region;
using Range = std::pair<std::uintptr_t, std::uintptr_t>;

std::vector<Range> ranges(const Region &region) {
  std::vector<Range> all;
  region.for_each_range([&](std::uintptr_t s, std::uintptr_t e) { all.emplace_back(s, e); });
  return all;
}

alignas(64) unsigned char memory[4096];
const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(memory);

TEST(Region, Contiguous) {
  Region r = Region::contiguous(memory + 8, 100);
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.address, base + 8);
  EXPECT_EQ(r.bytes(), 100u);
  EXPECT_EQ(r.first(), base + 8);
  EXPECT_EQ(r.last_end(), base + 108);
  EXPECT_EQ(ranges(r), (std::vector<Range>{{base + 8, base + 108}}));
}

TEST(Region, TwoDimensionalBlock) {
  // 4 rows of 16 bytes, 64 bytes apart: columns [16, 32) of a 64-byte-wide matrix.
  Region r = Region::block(memory + 16, 16, 4, 64);
  EXPECT_FALSE(r.is_contiguous());
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.rows, 4u);
  EXPECT_EQ(r.row_bytes, 16u);
  EXPECT_EQ(r.stride, 64u);
  EXPECT_EQ(r.bytes(), 64u);
  EXPECT_EQ(r.first(), base + 16);
  EXPECT_EQ(r.last_end(), base + 16 + 3 * 64 + 16);
  EXPECT_EQ(ranges(r), (std::vector<Range>{{base + 16, base + 32},
                                           {base + 80, base + 96},
                                           {base + 144, base + 160},
                                           {base + 208, base + 224}}));
}

TEST(Region, BlockWhoseRowsTouchCollapsesToContiguous) {
  Region r = Region::block(memory, 32, 8, 32);
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_EQ(r.bytes(), 256u);
  EXPECT_EQ(r.last_end(), base + 256);
  EXPECT_EQ(ranges(r), (std::vector<Range>{{base, base + 256}}));
}

TEST(Region, BlockOfOneRowIsContiguousWhateverTheStride) {
  Region r = Region::block(memory + 4, 12, 1, 1000);
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_EQ(r.bytes(), 12u);
  EXPECT_EQ(ranges(r), (std::vector<Range>{{base + 4, base + 16}}));
}

TEST(Region, EmptyRegions) {
  EXPECT_TRUE(Region::contiguous(memory, 0).empty());
  EXPECT_TRUE(Region::block(memory, 0, 4, 64).empty());
  EXPECT_TRUE(Region::block(memory, 16, 0, 64).empty());
  EXPECT_EQ(Region::block(memory, 16, 0, 64).bytes(), 0u);
}

TEST(Region, RangesOfABlockAreDisjointAndInAddressOrder) {
  for (std::size_t rows = 2; rows < 9; ++rows)
    for (std::size_t row_bytes = 1; row_bytes < 40; row_bytes += 7)
      for (std::size_t stride = row_bytes + 1; stride < 100; stride += 13) {
        Region r = Region::block(memory, row_bytes, rows, stride);
        std::vector<Range> all = ranges(r);
        ASSERT_EQ(all.size(), rows);
        std::size_t total = 0;
        for (std::size_t i = 0; i < all.size(); ++i) {
          EXPECT_EQ(all[i].first, base + i * stride);
          EXPECT_EQ(all[i].second - all[i].first, row_bytes);
          if (i) {
            EXPECT_GE(all[i].first, all[i - 1].second);
          }
          total += all[i].second - all[i].first;
        }
        EXPECT_EQ(total, r.bytes());
        EXPECT_EQ(all.back().second, r.last_end());
      }
}

}  // namespace
