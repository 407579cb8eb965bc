// RecentMarks: the OpenCL launcher's test of whether the device is behind, on marks ended at
// known times (no device, no clock: the times are given).
#include "opencl/recent_marks.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace {

using nanort::rt::RecentMarks;
using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;

using nanort::rt::MarkState;

struct Mark {
  bool done = false;
  bool known = true;  // false: its owner cannot tell yet
  int asked = 0;      // how often its state was asked
};

MarkState ask(Mark &mark) {
  ++mark.asked;
  if (!mark.known) return MarkState::unknown;
  return mark.done ? MarkState::done : MarkState::running;
}

TEST(RecentMarks, NothingEndedMeansNotBehind) {
  RecentMarks<Mark> recent;
  EXPECT_FALSE(recent.device_behind(Clock::now(), ask));
}

TEST(RecentMarks, AMarkEndedLessThanTheBacklogAgoIsNotAskedAbout) {
  RecentMarks<Mark> recent;
  const Clock::time_point t0 = Clock::now();
  auto mark = std::make_shared<Mark>();
  recent.ended(mark, t0);
  EXPECT_FALSE(recent.device_behind(t0 + microseconds(19), ask));
  EXPECT_EQ(mark->asked, 0);
}

TEST(RecentMarks, AnOldMarkStillRunningMeansBehindUntilItIsDone) {
  RecentMarks<Mark> recent;
  const Clock::time_point t0 = Clock::now();
  auto mark = std::make_shared<Mark>();
  recent.ended(mark, t0);
  EXPECT_TRUE(recent.device_behind(t0 + microseconds(20), ask));
  EXPECT_TRUE(recent.device_behind(t0 + microseconds(30), ask));
  mark->done = true;
  EXPECT_FALSE(recent.device_behind(t0 + microseconds(40), ask));
  // Once seen done, not asked again.
  const int asked = mark->asked;
  EXPECT_FALSE(recent.device_behind(t0 + microseconds(50), ask));
  EXPECT_EQ(mark->asked, asked);
}

TEST(RecentMarks, AMarkItsOwnerCannotTellOfIsNotBehindAndAskedAgain) {
  RecentMarks<Mark> recent;
  const Clock::time_point t0 = Clock::now();
  auto mark = std::make_shared<Mark>();
  mark->known = false;  // (its end not enqueued yet: the launcher is behind)
  recent.ended(mark, t0);
  EXPECT_FALSE(recent.device_behind(t0 + microseconds(25), ask));
  EXPECT_EQ(mark->asked, 1);
  mark->known = true;  // enqueued now, and running: not taken for done before
  EXPECT_TRUE(recent.device_behind(t0 + microseconds(30), ask));
  EXPECT_EQ(mark->asked, 2);
}

TEST(RecentMarks, TheNewestOldMarkIsTheOneAsked) {
  RecentMarks<Mark> recent;
  const Clock::time_point t0 = Clock::now();
  auto first = std::make_shared<Mark>(), second = std::make_shared<Mark>(),
       third = std::make_shared<Mark>();
  first->done = true;  // an early mark done says nothing of the later ones
  recent.ended(first, t0);
  recent.ended(second, t0 + microseconds(10));
  recent.ended(third, t0 + microseconds(25));
  // At 35 us: 'second' (25 us old) is the newest old enough; 'third' (10 us) is not yet.
  EXPECT_TRUE(recent.device_behind(t0 + microseconds(35), ask));
  EXPECT_EQ(first->asked, 0);
  EXPECT_EQ(second->asked, 1);
  EXPECT_EQ(third->asked, 0);
  EXPECT_EQ(recent.size(), 2u);  // 'first' is let go
  second->done = true;
  EXPECT_FALSE(recent.device_behind(t0 + microseconds(40), ask));
  // At 50 us 'third' is old enough, and running.
  EXPECT_TRUE(recent.device_behind(t0 + microseconds(50), ask));
  EXPECT_EQ(recent.size(), 1u);
}

TEST(RecentMarks, MarksEndedWithoutAQuestionDoNotPileUp) {
  // Every kernel waiting for copies ends its own mark and never asks: the old marks still go.
  RecentMarks<Mark> recent;
  const Clock::time_point t0 = Clock::now();
  for (int k = 0; k < 1000; ++k) recent.ended(std::make_shared<Mark>(), t0 + microseconds(5 * k));
  // Those of the last 20 us, and the newest before them.
  EXPECT_LE(recent.size(), 6u);
  EXPECT_GE(recent.size(), 4u);
}

TEST(RecentMarks, ClearLetsTheMarksGo) {
  RecentMarks<Mark> recent;
  auto mark = std::make_shared<Mark>();
  recent.ended(mark, Clock::now());
  EXPECT_EQ(mark.use_count(), 2);
  recent.clear();
  EXPECT_EQ(mark.use_count(), 1);
  EXPECT_FALSE(recent.device_behind(Clock::now() + microseconds(100), ask));
}

}  // namespace
