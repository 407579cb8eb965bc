// IntervalMap: fragments that tile every range ever named, split exactly where ranges cut them.
#include <nanort/dc/interval_map.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

namespace {

using nanort::dc::IntervalMap;
using Piece = std::tuple<std::uintptr_t, std::uintptr_t, int>;  // start, end, value

// What cover() or overlapping() visited, in order.
template <class Map>
std::vector<Piece> cover(Map &map, std::uintptr_t start, std::uintptr_t end) {
  std::vector<Piece> seen;
  map.cover(start, end, [&](std::uintptr_t s, std::uintptr_t e, int &v) { seen.emplace_back(s, e, v); });
  return seen;
}

template <class Map>
std::vector<Piece> overlapping(Map &map, std::uintptr_t start, std::uintptr_t end) {
  std::vector<Piece> seen;
  map.overlapping(start, end,
                  [&](std::uintptr_t s, std::uintptr_t e, int &v) { seen.emplace_back(s, e, v); });
  return seen;
}

std::vector<Piece> contents(const IntervalMap<int> &map) {
  std::vector<Piece> all;
  for (const auto &[start, fragment] : map.fragments())
    all.emplace_back(start, fragment.end, fragment.value);
  return all;
}

void set(IntervalMap<int> &map, std::uintptr_t start, std::uintptr_t end, int value) {
  map.cover(start, end, [&](std::uintptr_t, std::uintptr_t, int &v) { v = value; });
}

TEST(IntervalMap, CoverOfAnEmptyMapCreatesOneDefaultFragment) {
  IntervalMap<int> map;
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(cover(map, 100, 200), (std::vector<Piece>{{100, 200, 0}}));
  EXPECT_EQ(map.size(), 1u);
  EXPECT_FALSE(map.empty());
}

TEST(IntervalMap, EmptyOrInvertedRangeVisitsNothing) {
  IntervalMap<int> map;
  EXPECT_TRUE(cover(map, 10, 10).empty());
  EXPECT_TRUE(cover(map, 20, 10).empty());
  EXPECT_TRUE(map.empty());
  set(map, 0, 100, 1);
  EXPECT_TRUE(overlapping(map, 50, 50).empty());
  EXPECT_TRUE(overlapping(map, 60, 40).empty());
}

TEST(IntervalMap, CoverOfAnExactMatchVisitsTheSameFragment) {
  IntervalMap<int> map;
  set(map, 10, 20, 5);
  map.cover(10, 20, [](std::uintptr_t, std::uintptr_t, int &v) { v += 1; });
  EXPECT_EQ(cover(map, 10, 20), (std::vector<Piece>{{10, 20, 6}}));
  EXPECT_EQ(map.size(), 1u);
}

TEST(IntervalMap, CoverInsideAFragmentSplitsItAtBothEnds) {
  IntervalMap<int> map;
  set(map, 0, 100, 7);
  EXPECT_EQ(cover(map, 30, 60), (std::vector<Piece>{{30, 60, 7}}));
  set(map, 30, 60, 8);
  EXPECT_EQ(contents(map), (std::vector<Piece>{{0, 30, 7}, {30, 60, 8}, {60, 100, 7}}));
}

TEST(IntervalMap, CoverSplitsOnlyTheEndThatIsInside) {
  IntervalMap<int> map;
  set(map, 0, 100, 1);
  set(map, 0, 40, 2);  // same start
  EXPECT_EQ(contents(map), (std::vector<Piece>{{0, 40, 2}, {40, 100, 1}}));
  set(map, 70, 100, 3);  // same end
  EXPECT_EQ(contents(map), (std::vector<Piece>{{0, 40, 2}, {40, 70, 1}, {70, 100, 3}}));
}

TEST(IntervalMap, CoverAcrossSeveralFragmentsSplitsTheOuterOnes) {
  IntervalMap<int> map;
  set(map, 0, 100, 1);
  set(map, 100, 200, 2);
  set(map, 200, 300, 3);
  EXPECT_EQ(cover(map, 50, 250), (std::vector<Piece>{{50, 100, 1}, {100, 200, 2}, {200, 250, 3}}));
  EXPECT_EQ(contents(map), (std::vector<Piece>{
                               {0, 50, 1}, {50, 100, 1}, {100, 200, 2}, {200, 250, 3}, {250, 300, 3}}));
}

TEST(IntervalMap, GapsAreFilledWithDefaultValuesInAddressOrder) {
  IntervalMap<int> map;
  set(map, 10, 20, 1);
  set(map, 30, 40, 2);
  EXPECT_EQ(cover(map, 0, 50),
            (std::vector<Piece>{{0, 10, 0}, {10, 20, 1}, {20, 30, 0}, {30, 40, 2}, {40, 50, 0}}));
  EXPECT_EQ(map.size(), 5u);
}

TEST(IntervalMap, GapBeforeTheFirstAndAfterTheLastFragment) {
  IntervalMap<int> map;
  set(map, 100, 200, 9);
  EXPECT_EQ(cover(map, 50, 150), (std::vector<Piece>{{50, 100, 0}, {100, 150, 9}}));
  EXPECT_EQ(cover(map, 150, 250), (std::vector<Piece>{{150, 200, 9}, {200, 250, 0}}));
  EXPECT_EQ(contents(map),
            (std::vector<Piece>{{50, 100, 0}, {100, 150, 9}, {150, 200, 9}, {200, 250, 0}}));
}

TEST(IntervalMap, ValuesAreCopiedOnSplitNotShared) {
  IntervalMap<std::vector<int>> map;
  map.cover(0, 100, [](std::uintptr_t, std::uintptr_t, std::vector<int> &v) { v = {1, 2, 3}; });
  // Split at 50 and change only the upper half.
  map.cover(50, 100, [](std::uintptr_t, std::uintptr_t, std::vector<int> &v) { v.push_back(4); });
  std::vector<std::vector<int>> values;
  for (const auto &[start, fragment] : map.fragments()) values.push_back(fragment.value);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0], (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(values[1], (std::vector<int>{1, 2, 3, 4}));
}

TEST(IntervalMap, OverlappingNeitherSplitsNorCreates) {
  IntervalMap<int> map;
  set(map, 0, 100, 1);
  set(map, 200, 300, 2);
  EXPECT_EQ(overlapping(map, 50, 250), (std::vector<Piece>{{0, 100, 1}, {200, 300, 2}}));
  EXPECT_EQ(map.size(), 2u);
  EXPECT_EQ(overlapping(map, 120, 180), std::vector<Piece>{});  // a gap only
  EXPECT_EQ(overlapping(map, 250, 260), (std::vector<Piece>{{200, 300, 2}}));
  EXPECT_EQ(map.size(), 2u);
  EXPECT_EQ(contents(map), (std::vector<Piece>{{0, 100, 1}, {200, 300, 2}}));
}

TEST(IntervalMap, OverlappingRespectsHalfOpenEnds) {
  IntervalMap<int> map;
  set(map, 100, 200, 1);
  EXPECT_TRUE(overlapping(map, 0, 100).empty());    // ends where the fragment starts
  EXPECT_TRUE(overlapping(map, 200, 300).empty());  // starts where the fragment ends
  EXPECT_EQ(overlapping(map, 99, 101).size(), 1u);
  EXPECT_EQ(overlapping(map, 199, 200).size(), 1u);
}

TEST(IntervalMap, OverlappingLetsTheVisitorChangeValues) {
  IntervalMap<int> map;
  set(map, 0, 10, 1);
  set(map, 10, 20, 2);
  map.overlapping(5, 15, [](std::uintptr_t, std::uintptr_t, int &v) { v *= 10; });
  EXPECT_EQ(contents(map), (std::vector<Piece>{{0, 10, 10}, {10, 20, 20}}));
}

TEST(IntervalMap, EraseIfRemovesExactlyTheChosenFragments) {
  IntervalMap<int> map;
  for (int i = 0; i < 10; ++i) set(map, i * 10, i * 10 + 10, i);
  map.erase_if([](int &v) { return v % 3 == 0; });
  std::vector<Piece> expected;
  for (int i = 0; i < 10; ++i)
    if (i % 3 != 0) expected.emplace_back(i * 10, i * 10 + 10, i);
  EXPECT_EQ(contents(map), expected);
  // The erased bytes are gaps again.
  EXPECT_EQ(cover(map, 0, 10), (std::vector<Piece>{{0, 10, 0}}));
  map.erase_if([](int &) { return true; });
  EXPECT_TRUE(map.empty());
}

// erase_overlapping_if (where the map has it): only fragments overlapping the range, and of
// those only the chosen ones; nothing is split.
template <class Map>
constexpr bool has_erase_overlapping_if =
    requires(Map &m) { m.erase_overlapping_if(0, 1, [](int &) { return true; }); };

TEST(IntervalMap, EraseOverlappingIfRemovesChosenFragmentsInTheRangeOnly) {
  if constexpr (has_erase_overlapping_if<IntervalMap<int>>) {
    IntervalMap<int> map;
    for (int i = 0; i < 10; ++i) set(map, i * 10, i * 10 + 10, i);
    // [25, 65) overlaps fragments 2..6; of those, drop the even ones.
    map.erase_overlapping_if(25, 65, [](int &v) { return v % 2 == 0; });
    std::vector<Piece> expected;
    for (int i = 0; i < 10; ++i)
      if (!(i >= 2 && i <= 6 && i % 2 == 0)) expected.emplace_back(i * 10, i * 10 + 10, i);
    EXPECT_EQ(contents(map), expected);
    // Half-open: a range ending where a fragment starts does not touch it.
    map.erase_overlapping_if(0, 10, [](int &v) { return v == 1; });
    EXPECT_EQ(contents(map), expected);
    map.erase_overlapping_if(40, 40, [](int &) { return true; });  // empty range
    EXPECT_EQ(contents(map), expected);
    map.erase_overlapping_if(0, 1000, [](int &) { return true; });
    EXPECT_TRUE(map.empty());
  } else {
    GTEST_SKIP() << "this IntervalMap has no erase_overlapping_if";
  }
}

TEST(IntervalMap, ClearForgetsEverything) {
  IntervalMap<int> map;
  set(map, 0, 10, 1);
  set(map, 20, 30, 1);
  map.clear();
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(cover(map, 0, 30), (std::vector<Piece>{{0, 30, 0}}));
}

// Random covers against a byte-by-byte model: the fragments always tile what was named, in
// order, disjoint, and every byte has the value of the last cover that named it.
TEST(IntervalMap, RandomCoversMatchAByteModel) {
  constexpr int kBytes = 512;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    IntervalMap<int> map;
    std::vector<int> model(kBytes, -1);  // -1: never named
    for (int step = 1; step <= 300; ++step) {
      std::uintptr_t a = rng() % kBytes, b = rng() % kBytes;
      if (a > b) std::swap(a, b);
      if (a == b) continue;
      const bool write = rng() % 4 != 0;
      std::uintptr_t cursor = a;
      map.cover(a, b, [&](std::uintptr_t s, std::uintptr_t e, int &v) {
        ASSERT_EQ(s, cursor);  // tiles the range, in order
        ASSERT_LT(s, e);
        for (std::uintptr_t i = s; i < e; ++i) ASSERT_EQ(model[i] < 0 ? 0 : model[i], v) << i;
        if (write) v = step;
        cursor = e;
      });
      ASSERT_EQ(cursor, b);
      for (std::uintptr_t i = a; i < b; ++i) model[i] = write ? step : std::max(model[i], 0);
      // Invariants of the whole map.
      std::uintptr_t previous_end = 0;
      for (const auto &[start, fragment] : map.fragments()) {
        ASSERT_LT(start, fragment.end);
        ASSERT_GE(start, previous_end);
        previous_end = fragment.end;
        for (std::uintptr_t i = start; i < fragment.end; ++i) ASSERT_EQ(model[i], fragment.value);
      }
      std::size_t named = 0;
      for (int v : model) named += v >= 0;
      std::size_t covered = 0;
      for (const auto &[start, fragment] : map.fragments()) covered += fragment.end - start;
      ASSERT_EQ(named, covered);
      // overlapping() sees the same fragments that intersect a random range.
      std::uintptr_t c = rng() % kBytes, d = rng() % kBytes;
      if (c > d) std::swap(c, d);
      const std::size_t before = map.size();
      std::size_t expected = 0;
      for (const auto &[start, fragment] : map.fragments())
        expected += start < d && fragment.end > c;
      std::size_t seen = 0;
      map.overlapping(c, d, [&](std::uintptr_t s, std::uintptr_t e, int &) {
        ASSERT_TRUE(s < d && e > c);
        ++seen;
      });
      ASSERT_EQ(seen, c < d ? expected : 0u);
      ASSERT_EQ(map.size(), before);
    }
  }
}

}  // namespace
