// nanort_block_until: tasks that block on something outside the runtime (here a flag that a
// later task sets, as a receive waits for a send) do not hold the CPU workers: with one worker
// (the main thread in taskwait) and four tasks blocked before the four that release them, all
// finish, whether they poll (nanort_block_until) or wait inside a call (nanort_block_call).
// Without spare threads this deadlocks (ctest's time limit says so).
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

// The same with nanort_block_call: the call itself waits (as a blocking MPI collective does).
void wait_for_flag(void *arg) {
  while (!flag_is_set(arg)) std::this_thread::yield();
}

TEST(Block, BlockingCallsDoNotHoldTheWorkers) {
  constexpr int kPairs = 4;
  std::atomic<int> flags[kPairs] = {};
  std::atomic<int> waited{0};
  long order[kPairs] = {};
  for (int i = 0; i < kPairs; ++i)
    nanort::task("caller").inout(&order[i]).spawn([&, i] {
      ASSERT_EQ(nanort_block_call(wait_for_flag, &flags[i]), NANORT_SUCCESS);
      ++waited;
    });
  for (int i = kPairs - 1; i >= 0; --i)
    nanort::task("releaser").spawn([&, i] { flags[i].store(1); });
  nanort::taskwait();
  EXPECT_EQ(waited.load(), kPairs);
  std::atomic<int> set{1};  // outside a task: just the call
  EXPECT_EQ(nanort_block_call(wait_for_flag, &set), NANORT_SUCCESS);
  EXPECT_EQ(nanort_block_call(nullptr, nullptr), NANORT_ERROR_INVALID_ARGUMENT);
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
