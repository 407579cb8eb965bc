// TaskCosts: the time each task of a repeated loop took, by its pragma and the data it writes,
// and the rule by which a device sharing its kind's queue takes its next task only shortly
// before it needs it; and two devices sharing a queue under that rule, simulated. Bare Task
// objects that nothing runs.
#include <scheduler/scheduler.hpp>
#include <scheduler/task_costs.hpp>
#include <dependencies.hpp>
#include <reduction.hpp>
#include <task.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

namespace {

using nanort::rt::SchedulerPolicy;
using nanort::rt::Task;
using nanort::rt::TaskCosts;

const nanort_task_site kSlice{NANORT_ABI_VERSION, "slice", "julia.c", 10, nullptr, 0, nullptr};
const nanort_task_site kOther{NANORT_ABI_VERSION, "other", "julia.c", 20, nullptr, 0, nullptr};

// A task of 'site' that writes 'bytes' at 'address' (and reads 'input', if given).
std::unique_ptr<Task> task_on(const nanort_task_site &site, const void *address,
                              std::size_t bytes = 64, const void *input = nullptr) {
  auto task = std::make_unique<Task>();
  task->site = &site;
  if (input) task->accesses.push_back({nanort::dc::Region::contiguous(input, 64), NANORT_IN});
  task->accesses.push_back({nanort::dc::Region::contiguous(address, bytes), NANORT_OUT});
  return task;
}

std::unique_ptr<SchedulerPolicy> queue() { return nanort::rt::make_scheduler("breadth-first"); }

TEST(TaskCosts, TheSameTaskOfALaterStepIsKnownByItsPragmaAndTheDataItWrites) {
  static char image[4096], input[64];
  TaskCosts costs;
  auto first = task_on(kSlice, image + 1024, 64, input);
  EXPECT_EQ(costs.expected_ns(*first, NANORT_DEVICE_CUDA), 0u);
  costs.record(*first, NANORT_DEVICE_CUDA, 9'000'000);

  // A new Task object of the next step: same pragma, same data written.
  auto next = task_on(kSlice, image + 1024, 64, input);
  EXPECT_EQ(costs.expected_ns(*next, NANORT_DEVICE_CUDA), 9'000'000u);
  // Another slice, another pragma on the same data, another kind of device: not known.
  EXPECT_EQ(costs.expected_ns(*task_on(kSlice, image + 2048, 64, input), NANORT_DEVICE_CUDA),
            0u);
  EXPECT_EQ(costs.expected_ns(*task_on(kOther, image + 1024, 64, input), NANORT_DEVICE_CUDA),
            0u);
  EXPECT_EQ(costs.expected_ns(*next, NANORT_DEVICE_OPENCL), 0u);
  // The data it reads does not name it: a task writing elsewhere from the same input differs.
  EXPECT_EQ(costs.expected_ns(*task_on(kSlice, image, 64, input), NANORT_DEVICE_CUDA),
            0u);
  // A task without a body's site (runtime-internal) is never known.
  Task bare;
  costs.record(bare, NANORT_DEVICE_CUDA, 5);
  EXPECT_EQ(costs.expected_ns(bare, NANORT_DEVICE_CUDA), 0u);
  EXPECT_EQ(costs.size(), 1u);
}

TEST(TaskCosts, RecentRunsWeighMost) {
  static char data[64];
  TaskCosts costs;
  auto task = task_on(kSlice, data);
  costs.record(*task, NANORT_DEVICE_CUDA, 1'000'000);
  costs.record(*task, NANORT_DEVICE_CUDA, 16'000'000);
  costs.record(*task, NANORT_DEVICE_CUDA, 16'000'000);
  // (1 + 16) / 2 = 8.5, then (8.5 + 16) / 2 = 12.25 ms
  EXPECT_EQ(costs.expected_ns(*task, NANORT_DEVICE_CUDA), 12'250'000u);
}

TEST(TaskCosts, AProgramMakingNewDataEveryStepDoesNotGrowItWithoutEnd) {
  static std::array<char, 16> anchor;
  TaskCosts costs;
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(anchor.data());
  for (std::size_t i = 0; i <= TaskCosts::kMaxEntries; ++i) {
    auto task = task_on(kSlice, reinterpret_cast<const void *>(base + 64 * i));
    costs.record(*task, NANORT_DEVICE_CUDA, 1000 + i);
    ASSERT_LE(costs.size(), TaskCosts::kMaxEntries);
  }
  EXPECT_EQ(costs.size(), 1u);  // started again at the entry past the limit
  auto last = task_on(kSlice, reinterpret_cast<const void *>(base + 64 * TaskCosts::kMaxEntries));
  EXPECT_NE(costs.expected_ns(*last, NANORT_DEVICE_CUDA), 0u);
}

TEST(TaskCosts, ADeviceTakesItsNextTaskJustBeforeItNeedsIt) {
  const std::uint64_t ms = 1'000'000;
  // Ahead by a share of the running task's time, at least kMinAheadNs.
  EXPECT_EQ(TaskCosts::ahead_of(10 * ms), 6 * ms);
  EXPECT_EQ(TaskCosts::ahead_of(ms / 10), TaskCosts::kMinAheadNs);
  // Taking a 9 ms task with nothing held: busy until 9 ms, the next taken from 3.6 ms on.
  const TaskCosts::Pace pace = TaskCosts::after_taking({}, 0, 0, 9 * ms, 0);
  EXPECT_EQ(pace.busy_until_ns, 9 * ms);
  EXPECT_FALSE(TaskCosts::take_next_now(ms, pace));
  EXPECT_FALSE(TaskCosts::take_next_now(3 * ms, pace));
  EXPECT_TRUE(TaskCosts::take_next_now(4 * ms, pace));
  EXPECT_TRUE(TaskCosts::take_next_now(10 * ms, pace));  // late
  // The next one, taken at 4 ms, starts when the first ends.
  const TaskCosts::Pace second = TaskCosts::after_taking(pace, 1, 4 * ms, 2 * ms, 0);
  EXPECT_EQ(second.busy_until_ns, 11 * ms);
  // Not paced: a task of unknown time, one with inputs to copy in, and whatever is taken
  // while an unpaced task is held.
  EXPECT_TRUE(TaskCosts::take_next_now(0, TaskCosts::after_taking({}, 0, 0, 0, 0)));
  EXPECT_TRUE(TaskCosts::take_next_now(
      0, TaskCosts::after_taking({}, 0, 0, 9 * ms, TaskCosts::kPacedReadBytes)));
  EXPECT_TRUE(TaskCosts::take_next_now(0, TaskCosts::after_taking({}, 1, 0, 9 * ms, 0)));
  EXPECT_TRUE(TaskCosts::take_next_now(0, TaskCosts::Pace{}));
}

// Two devices sharing the queue as the device managers do (Runtime::pop_device_task, with
// NANORT_DEVICE_LOOKAHEAD 2): each holds at most two tasks, the running one and the next,
// launched behind it; a device with room looks at the queue every 20 us. With 'paced', a
// device that holds a task takes its next only when TaskCosts::take_next_now says so, from the
// times the tasks took in the step before ('before', in ms); without it, at once. The tasks of
// the step are all waiting at the start (submitted within microseconds); 'first' says which
// device looks first. Returns when the last task ends, in ms.
double makespan(const std::vector<double> &cost, const std::vector<double> &before, bool paced,
                int first) {
  static char image[16][64];
  std::vector<std::unique_ptr<Task>> tasks;
  TaskCosts costs;
  auto q = queue();
  for (std::size_t i = 0; i < cost.size(); ++i) {
    tasks.push_back(task_on(kSlice, image[i]));
    costs.record(*tasks.back(), NANORT_DEVICE_CUDA, static_cast<std::uint64_t>(before[i] * 1e6));
    q->push(tasks.back().get());
  }
  auto index_of = [&](Task *task) {
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].get() == task) return i;
    return tasks.size();
  };
  struct Device {
    std::deque<std::uint64_t> ends;  // of the tasks it holds, ns
    TaskCosts::Pace pace;            // as the runtime's
  };
  std::array<Device, 2> devices;
  std::uint64_t last = 0;
  for (std::uint64_t now = 0; q->size_hint() > 0 || !devices[0].ends.empty() ||
                              !devices[1].ends.empty();
       now += 20'000) {
    for (int k = 0; k < 2; ++k) {
      Device &d = devices[static_cast<std::size_t>((k + first) % 2)];
      while (!d.ends.empty() && d.ends.front() <= now) {
        last = std::max(last, d.ends.front());
        d.ends.pop_front();
      }
      while (d.ends.size() < 2 && q->size_hint() > 0) {
        if (paced && !d.ends.empty() && !TaskCosts::take_next_now(now, d.pace)) break;
        Task *task = q->pop(0);
        const std::uint64_t took = static_cast<std::uint64_t>(cost[index_of(task)] * 1e6);
        const std::uint64_t start = d.ends.empty() ? now : d.ends.back();
        d.pace = TaskCosts::after_taking(d.pace, d.ends.size(), now,
                                         costs.expected_ns(*task, NANORT_DEVICE_CUDA), 0);
        d.ends.push_back(start + took);
      }
    }
  }
  return static_cast<double>(last) * 1e-6;
}

TEST(DeviceQueue, PacedTakingEvensTwoDevicesSplitOfUnequalTasks) {
  // Julia's 16 slices on an H200 (ms): the middle ones cost most, the first and last nothing.
  const std::vector<double> julia = {0.00, 0.06, 1.23, 5.85, 12.06, 8.71, 9.10, 9.24,
                                     9.24, 9.10, 8.71, 12.06, 5.85, 1.23, 0.06, 0.00};
  const double even = std::accumulate(julia.begin(), julia.end(), 0.0) / 2;
  double worst_unpaced = 0;
  std::mt19937 random(7);
  std::uniform_real_distribution<double> noise(0.97, 1.03);  // the step before: a few % apart
  for (int round = 0; round < 20; ++round) {
    std::vector<double> before = julia;
    for (double &ms : before) ms *= noise(random);
    for (int first : {0, 1}) {
      const double paced = makespan(julia, before, true, first);
      EXPECT_LT(paced, 1.02 * even) << "round " << round << ", device " << first << " first";
      worst_unpaced = std::max(worst_unpaced, makespan(julia, before, false, first));
    }
  }
  // (Each device holding its next task from the start, the split can be far from even.)
  EXPECT_GT(worst_unpaced, 1.03 * even);
}

}  // namespace
