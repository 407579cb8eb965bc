// nanort_block_until: tasks that block on something outside the runtime (here a flag that a
// later task sets, as a receive waits for a send) do not hold the CPU workers: with one worker
// (the main thread in taskwait) and four tasks blocked before the four that release them, all
// finish. Without spare threads this deadlocks (ctest's time limit says so).
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

int flag_is_set(void *arg) { return static_cast<std::atomic<int> *>(arg)->load() != 0; }

TEST(Block, BlockedTasksDoNotHoldTheWorkers) {
  constexpr int kPairs = 4;
  std::atomic<int> flags[kPairs] = {};
  std::atomic<int> inside_task{0}, waited{0};
  long order[kPairs] = {};  // only to give each waiter a dependence of its own
  for (int i = 0; i < kPairs; ++i)
    nanort::task("waiter").inout(&order[i]).spawn([&, i] {
      inside_task += nanort_in_task();
      ASSERT_EQ(nanort_block_until(flag_is_set, &flags[i]), NANORT_SUCCESS);
      ++waited;
    });
  for (int i = kPairs - 1; i >= 0; --i)
    nanort::task("releaser").spawn([&, i] { flags[i].store(1); });
  nanort::taskwait();
  EXPECT_EQ(waited.load(), kPairs);
  EXPECT_EQ(inside_task.load(), kPairs) << "nanort_in_task inside a task body";
  EXPECT_EQ(nanort_in_task(), 0) << "outside any task";
}

TEST(Block, OutsideATaskItPollsAndChecksItsArgument) {
  std::atomic<int> flag{0};
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    flag.store(1);
  });
  EXPECT_EQ(nanort_block_until(flag_is_set, &flag), NANORT_SUCCESS);
  setter.join();
  EXPECT_EQ(nanort_block_until(nullptr, nullptr), NANORT_ERROR_INVALID_ARGUMENT);
}

}  // namespace
