// The ready path of CPU tasks (nanort/src/ready/): the per-thread ring, stealing, the overflow
// queue, priorities, the hand-off of a released successor, and the wake-up of a sleeper. Driven
// by hand, without the runtime: tasks are bare Task objects that nothing runs.
#include <ready/local_queue.hpp>
#include <ready/ready_path.hpp>
#include <dependencies.hpp>
#include <reduction.hpp>
#include <task.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using nanort::rt::IdleWaiters;
using nanort::rt::LocalQueue;
using nanort::rt::ReadyPath;
using nanort::rt::Task;

// LocalQueue never looks inside a task: numbers stand for them.
Task *fake(std::uintptr_t i) { return reinterpret_cast<Task *>((i + 1) * 64); }
std::uintptr_t number(Task *task) { return reinterpret_cast<std::uintptr_t>(task) / 64 - 1; }

TEST(LocalQueue, OwnerTakesOldestFirst) {
  LocalQueue queue;
  for (std::uintptr_t i = 0; i < 5; ++i) ASSERT_TRUE(queue.push(fake(i), false));
  EXPECT_EQ(queue.size(), 5u);
  for (std::uintptr_t i = 0; i < 5; ++i) EXPECT_EQ(number(queue.pop()), i);
  EXPECT_EQ(queue.pop(), nullptr);
}

TEST(LocalQueue, AThiefTakesTheOlderHalf) {
  LocalQueue queue;
  for (std::uintptr_t i = 0; i < 9; ++i) ASSERT_TRUE(queue.push(fake(i), false));
  Task *stolen[16];
  ASSERT_EQ(queue.grab(stolen, 16), 5u);  // half, rounded up
  for (std::uintptr_t i = 0; i < 5; ++i) EXPECT_EQ(number(stolen[i]), i);
  EXPECT_EQ(queue.size(), 4u);
  ASSERT_EQ(queue.grab(stolen, 1), 1u);  // at most as many as asked for
  EXPECT_EQ(number(stolen[0]), 5u);
  EXPECT_EQ(number(queue.pop()), 6u);
}

TEST(LocalQueue, AFullRingRefusesMore) {
  LocalQueue queue;
  for (std::uintptr_t i = 0; i < LocalQueue::kCapacity; ++i) ASSERT_TRUE(queue.push(fake(i), true));
  EXPECT_FALSE(queue.push(fake(LocalQueue::kCapacity), true));
  EXPECT_EQ(number(queue.pop()), 0u);
  EXPECT_TRUE(queue.push(fake(LocalQueue::kCapacity), true));  // the slot freed is reused
}

// An owner that takes from its queue publishes its pushes in batches once the queue is long:
// thieves do not see the last ones until the owner publishes them (before it takes) or a
// thread about to sleep does (publish_pending).
TEST(LocalQueue, PushesPublishedLaterAreSeenByThievesOnceSomeonePublishesThem) {
  LocalQueue queue;
  for (std::uintptr_t i = 0; i < 20; ++i) ASSERT_TRUE(queue.push(fake(i), true));
  const std::uint32_t seen = queue.size();
  EXPECT_LT(seen, 20u) << "a long queue publishes in batches";
  EXPECT_GT(seen, 0u) << "a short queue publishes each push";
  Task *stolen[32];
  std::uint32_t taken = 0;
  while (std::uint32_t n = queue.grab(stolen, 32)) {
    for (std::uint32_t i = 0; i < n; ++i) EXPECT_EQ(number(stolen[i]), taken + i);
    taken += n;
  }
  EXPECT_EQ(taken, seen) << "thieves take only what was published";
  EXPECT_TRUE(queue.publish_pending()) << "there were tasks pushed but not published";
  EXPECT_FALSE(queue.publish_pending()) << "nothing left to publish";
  EXPECT_EQ(queue.size(), 20u - seen);
  ASSERT_EQ(queue.grab(stolen, 1), 1u);
  EXPECT_EQ(number(stolen[0]), seen);
  // The owner publishes before it takes: the rest comes out in order, from either end.
  ASSERT_TRUE(queue.push(fake(20), true));
  for (std::uintptr_t i = seen + 1; i <= 20; ++i) EXPECT_EQ(number(queue.pop()), i);
  EXPECT_EQ(queue.pop(), nullptr);
  EXPECT_FALSE(queue.publish_pending());
}

TEST(LocalQueue, AnOwnerThatDoesNotTakePublishesEachPush) {
  LocalQueue queue;
  for (std::uintptr_t i = 0; i < 100; ++i) ASSERT_TRUE(queue.push(fake(i), false));
  EXPECT_EQ(queue.size(), 100u);
  EXPECT_FALSE(queue.publish_pending());
}

// One owner pushing and taking, three thieves (which also publish what the owner has not,
// as a thread about to sleep does): every task is taken exactly once, with the owner
// publishing each push or in batches.
class LocalQueueConcurrent : public ::testing::TestWithParam<bool> {};

TEST_P(LocalQueueConcurrent, EveryTaskIsTakenOnceUnderConcurrentStealing) {
  const bool batch = GetParam();
  constexpr std::uintptr_t kTasks = 300000;
  LocalQueue queue;
  std::vector<std::uint8_t> taken(kTasks, 0);
  std::atomic<bool> pushed_all{false};
  std::atomic<std::uintptr_t> total{0};
  auto take = [&](Task *task) {
    taken[number(task)]++;  // (each index by one thread only, if the queue is right)
    total.fetch_add(1);
  };
  std::vector<std::thread> thieves;
  for (int t = 0; t < 3; ++t)
    thieves.emplace_back([&] {
      Task *stolen[64];
      for (;;) {
        const bool last_look = pushed_all.load();
        const std::uint32_t n = queue.grab(stolen, 64);
        for (std::uint32_t i = 0; i < n; ++i) take(stolen[i]);
        if (n == 0 && !queue.publish_pending() && last_look) return;
      }
    });
  for (std::uintptr_t i = 0; i < kTasks; ++i) {
    while (!queue.push(fake(i), batch))
      if (Task *task = queue.pop()) take(task);
    if (i % 7 == 0)
      if (Task *task = queue.pop()) take(task);
  }
  pushed_all.store(true);
  while (Task *task = queue.pop()) take(task);
  for (std::thread &thief : thieves) thief.join();
  EXPECT_EQ(total.load(), kTasks);
  std::uintptr_t wrong = 0;
  for (std::uint8_t count : taken) wrong += count != 1;
  EXPECT_EQ(wrong, 0u) << "tasks taken zero times or more than once";
}

INSTANTIATE_TEST_SUITE_P(Publication, LocalQueueConcurrent, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? std::string("InBatches") : std::string("EachPush");
                         });

struct Tasks {
  std::vector<std::unique_ptr<Task>> all;
  Task *make(int priority = 0) {
    all.push_back(std::make_unique<Task>());
    all.back()->priority = priority;
    return all.back().get();
  }
};

struct Path {
  IdleWaiters idle, spares;
  ReadyPath path{4, 0, idle, spares};  // four workers, no pool threads: every thread external
};

TEST(ReadyPath, PositivePrioritiesFirstThenOldestThenNegative) {
  Path p;
  Tasks tasks;
  Task *zero1 = tasks.make(0), *minus = tasks.make(-3), *high = tasks.make(9),
       *zero2 = tasks.make(0), *low = tasks.make(2);
  for (Task *task : {zero1, minus, high, zero2, low}) EXPECT_TRUE(p.path.push(task, -1));
  EXPECT_EQ(p.path.take(-1), high);
  EXPECT_EQ(p.path.take(-1), low);
  EXPECT_EQ(p.path.take(-1), zero1);
  EXPECT_EQ(p.path.take(-1), zero2);
  EXPECT_EQ(p.path.take(-1), minus);
  EXPECT_EQ(p.path.take(-1), nullptr);
  EXPECT_FALSE(p.path.any_work());
}

TEST(ReadyPath, AReleasedSuccessorRunsNextUnlessOutranked) {
  Path p;
  Tasks tasks;
  Task *next = nullptr;
  Task *first = tasks.make(0);
  EXPECT_FALSE(p.path.push(first, -1, &next)) << "handed on, not queued";
  EXPECT_EQ(next, first);
  Task *second = tasks.make(0);
  EXPECT_TRUE(p.path.push(second, -1, &next));  // the slot is taken: queued
  EXPECT_EQ(next, first);
  Task *urgent = tasks.make(5);
  EXPECT_TRUE(p.path.push(urgent, -1, &next));  // displaces 'first', which is queued
  EXPECT_EQ(next, urgent);
  EXPECT_EQ(p.path.take(-1), second);
  EXPECT_EQ(p.path.take(-1), first);

  // A task of priority 7 waits: a successor of priority 0 or 5 does not overtake it.
  Task *waiting = tasks.make(7);
  p.path.push(waiting, -1);
  Task *next2 = nullptr;
  Task *plain = tasks.make(0), *five = tasks.make(5), *eight = tasks.make(8);
  EXPECT_TRUE(p.path.push(plain, -1, &next2));
  EXPECT_TRUE(p.path.push(five, -1, &next2));
  EXPECT_EQ(next2, nullptr);
  EXPECT_FALSE(p.path.push(eight, -1, &next2));  // outranks everything waiting
  EXPECT_EQ(next2, eight);
  // A negative priority is never handed on: tasks of priority 0 may wait elsewhere.
  Task *next3 = nullptr;
  EXPECT_TRUE(p.path.push(tasks.make(-1), -1, &next3));
  EXPECT_EQ(next3, nullptr);
  EXPECT_EQ(p.path.take(-1), waiting);
  EXPECT_EQ(p.path.take(-1), five);
  EXPECT_EQ(p.path.take(-1), plain);
}

TEST(ReadyPath, AnIdleThreadStealsHalfIntoItsOwnQueue) {
  Path p;
  Tasks tasks;
  std::vector<Task *> made;
  for (int i = 0; i < 100; ++i) made.push_back(tasks.make());
  std::vector<Task *> seen;
  bool thief_has_49 = false;
  bool creator_saw_100 = false, creator_sees_none = false;
  std::thread creator([&] {  // a thread that never took a task: it publishes each push
    for (Task *task : made) p.path.push(task, -1);  // its own queue
    creator_saw_100 = p.path.queued_near_more_than(-1, 99) && !p.path.queued_near_more_than(-1, 100);
    std::thread thief([&] {
      seen.push_back(p.path.take(-1));  // steals 50: runs the oldest, keeps 49
      thief_has_49 = p.path.queued_near_more_than(-1, 48) && !p.path.queued_near_more_than(-1, 49);
      while (Task *task = p.path.take(-1)) seen.push_back(task);
    });
    thief.join();
    // It last saw 100 waiting; it reads the head again and sees none.
    creator_sees_none = !p.path.queued_near_more_than(-1, 0);
  });
  creator.join();
  EXPECT_TRUE(creator_saw_100);
  EXPECT_TRUE(thief_has_49);
  EXPECT_TRUE(creator_sees_none);
  ASSERT_EQ(seen.size(), 100u) << "the thief steals again once its own queue is empty";
  EXPECT_EQ(seen.front(), made.front());
  EXPECT_EQ(std::set<Task *>(seen.begin(), seen.end()).size(), 100u);
  EXPECT_EQ(p.path.approximate_size(), 0u);
}

TEST(ReadyPath, AFullQueueOverflowsAndNothingIsLost) {
  Path p;
  Tasks tasks;
  const std::size_t count = LocalQueue::kCapacity + 1000;
  std::vector<Task *> made;
  for (std::size_t i = 0; i < count; ++i) made.push_back(tasks.make());
  std::thread creator([&] {  // a thread that never took a task: it publishes each push
    for (Task *task : made) p.path.push(task, -1);
  });
  creator.join();
  EXPECT_EQ(p.path.approximate_size(), count);
  std::set<Task *> seen;
  std::thread other([&] {  // another thread takes them all, through stealing and the overflow
    while (Task *task = p.path.take(-1)) seen.insert(task);
  });
  other.join();
  EXPECT_EQ(seen.size(), count);
  EXPECT_FALSE(p.path.any_work());
}

// A thread that takes tasks too (a worker, a creator that waits) publishes a long queue's
// pushes in batches; another thread finds them all the same, the last ones once it looks
// for work before sleeping (any_work publishes them), or after the owner took from its queue.
TEST(ReadyPath, TasksPushedButNotYetPublishedAreFoundBeforeSleeping) {
  Path p;
  Tasks tasks;
  std::vector<Task *> made;
  for (int i = 0; i < 100; ++i) made.push_back(tasks.make());
  std::set<Task *> seen;
  std::size_t before_looking = 0;
  std::thread creator([&] {
    EXPECT_EQ(p.path.take(-1), nullptr);  // from now on it is a thread that takes
    for (Task *task : made) p.path.push(task, -1);
    std::thread other([&] {
      while (Task *task = p.path.take(-1)) seen.insert(task);
      before_looking = seen.size();
      EXPECT_TRUE(p.path.any_work()) << "the tasks not published yet";
      while (Task *task = p.path.take(-1)) seen.insert(task);
      EXPECT_FALSE(p.path.any_work());
    });
    other.join();
  });
  creator.join();
  EXPECT_LT(before_looking, made.size()) << "a long queue publishes in batches";
  EXPECT_EQ(seen.size(), made.size());
}

// A sleeper (as Runtime::help_until sleeps) is woken by a push when nobody spins, and not
// left asleep when the push comes while it goes to sleep.
TEST(ReadyPath, APushWakesASleeper) {
  Path p;
  Tasks tasks;
  for (int round = 0; round < 200; ++round) {
    std::atomic<bool> got{false};
    std::thread sleeper([&] {
      for (;;) {
        if (Task *task = p.path.take(-1)) {
          got.store(task != nullptr);
          return;
        }
        p.idle.sleep_unless([&] { return p.path.any_work(); });
        p.path.woken();
      }
    });
    if (round % 2) std::this_thread::sleep_for(std::chrono::microseconds(200));
    Task *task = tasks.make();
    ASSERT_TRUE(p.path.push(task, -1));
    p.path.wake();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!got.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    ASSERT_TRUE(got.load()) << "round " << round << ": the sleeper was never woken";
    sleeper.join();
  }
}

// A task that queued several tasks at once wakes that many sleepers at once: none of them
// wakes another here (they do not spin), so one woken at a time would leave tasks behind.
TEST(ReadyPath, SeveralTasksQueuedAtOnceWakeAsManySleepers) {
  Path p;
  Tasks tasks;
  constexpr int kSleepers = 3;
  std::atomic<int> taken{0};
  std::vector<std::thread> sleepers;
  for (int i = 0; i < kSleepers; ++i)
    sleepers.emplace_back([&] {
      for (;;) {
        if (p.path.take(-1)) {
          taken.fetch_add(1);
          return;
        }
        p.idle.sleep_unless([&] { return p.path.any_work(); });
        p.path.woken();
      }
    });
  // All asleep (announced, then a while to get into the futex) before the tasks come.
  while (p.idle.sleepers() < kSleepers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::thread pusher([&] {  // (its own queue, which the sleepers steal from)
    for (int i = 0; i < kSleepers; ++i) ASSERT_TRUE(p.path.push(tasks.make(), -1));
    p.path.wake(kSleepers);
  });
  pusher.join();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (taken.load() < kSleepers && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int seen = taken.load();
  if (seen < kSleepers) p.idle.notify_all();  // (let the test end)
  for (std::thread &sleeper : sleepers) sleeper.join();
  EXPECT_EQ(seen, kSleepers) << "sleepers left asleep with tasks waiting";
}

TEST(ReadyPath, AtMostHalfTheWorkersSpin) {
  Path p;
  Tasks tasks;
  ASSERT_TRUE(p.path.start_spinning());
  ASSERT_TRUE(p.path.start_spinning());
  EXPECT_FALSE(p.path.start_spinning()) << "at most half the workers spin";
  p.path.stop_spinning(false, false);
  p.path.stop_spinning(false, false);
}

}  // namespace
