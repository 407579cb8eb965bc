// SmallVector: elements kept in order whether inline or on the heap, and moves and swaps that
// take the other's heap block instead of copying it (the dependence release takes a task's
// successors that way).
#include "small_vector.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using nanort::rt::SmallVector;
using Vec = SmallVector<int, 2>;

Vec filled(int count, int first = 0) {
  Vec v;
  for (int i = 0; i < count; ++i) v.push_back(first + i);
  return v;
}
std::vector<int> items(const Vec &v) { return {v.begin(), v.end()}; }

TEST(SmallVector, KeepsOrderInlineAndOnTheHeap) {
  EXPECT_EQ(items(filled(2)), (std::vector<int>{0, 1}));
  EXPECT_EQ(items(filled(5)), (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(SmallVector, AMoveTakesTheHeapBlockAndLeavesTheOtherEmpty) {
  Vec heap = filled(5);
  const int *block = heap.begin();
  Vec taken(std::move(heap));
  EXPECT_EQ(taken.begin(), block) << "the block moved, not a copy of it";
  EXPECT_EQ(items(taken), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(heap.empty());
  heap.push_back(7);  // still usable, inline again
  EXPECT_EQ(items(heap), (std::vector<int>{7}));

  Vec small = filled(2, 10);
  Vec copied(std::move(small));
  EXPECT_EQ(items(copied), (std::vector<int>{10, 11}));
  EXPECT_TRUE(small.empty());
}

TEST(SmallVector, SwapsEveryMixOfInlineAndHeap) {
  for (int left : {0, 1, 2, 3, 6})
    for (int right : {0, 1, 2, 3, 6}) {
      Vec a = filled(left, 100), b = filled(right, 200);
      const int *a_block = left > 2 ? a.begin() : nullptr;
      a.swap(b);
      EXPECT_EQ(items(a), items(filled(right, 200))) << left << " <-> " << right;
      EXPECT_EQ(items(b), items(filled(left, 100))) << left << " <-> " << right;
      if (a_block) EXPECT_EQ(b.begin(), a_block) << "a heap block changes hands, uncopied";
    }
}

TEST(SmallVector, MoveAssignmentFreesWhatItHeld) {
  Vec target = filled(6);   // on the heap: freed by the assignment (ASan would see a leak)
  target = filled(3, 50);  // another heap block, taken
  EXPECT_EQ(items(target), (std::vector<int>{50, 51, 52}));
  target = filled(1, 9);   // inline
  EXPECT_EQ(items(target), (std::vector<int>{9}));
}

}  // namespace
