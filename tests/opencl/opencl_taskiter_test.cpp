// Taskiter with device tasks (nanort_taskiter_begin / _end): each iteration adds to an array
// on an OpenCL device and a CPU task sums what it reads back; the recorded iteration is
// replayed and the results compared with the same loop run task by task. On every device the
// ICD loader shows (NANORT_OPENCL_DEVICES, see tests.cmake).
#include "opencl_test.hpp"
#include "taskiter.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace nanort_cl_test;

const ClModule kModule(R"CL(
__kernel void add_int(__global int *x, int value, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] += value;
}
)CL", "opencl_taskiter_test.cl");
struct AddArgs {
  int *x;
  int value, n;
};
const ClSite kAdd(kModule, "add_int",
                  {buffer(offsetof(AddArgs, x)), value<int>(offsetof(AddArgs, value)),
                   value<int>(offsetof(AddArgs, n))});

// The CPU side: total += x[0] + x[n - 1] (plain arguments: what a replay repeats).
struct SumArgs {
  const int *x;
  long *total;
  int n;
};
void sum_ends(void *args) {
  auto *a = static_cast<SumArgs *>(args);
  *a->total += a->x[0] + a->x[a->n - 1];
}
const nanort_task_impl kSumImpl{NANORT_DEVICE_SMP, sum_ends, nullptr, nullptr, nullptr, 0};
const nanort_task_site kSum{NANORT_ABI_VERSION, "sum_ends", __FILE__, __LINE__, &kSumImpl, 1,
                            nullptr};

nanort_status sum_task(const int *x, long *total, int n) {
  nanort_task *t = nanort_task_create(&kSum, sizeof(SumArgs));
  if (!t) return NANORT_ERROR_INTERNAL;
  const SumArgs args{x, total, n};
  std::memcpy(nanort_task_args(t), &args, sizeof args);
  if (nanort_status s = nanort_task_access(t, x, sizeof(int) * n, NANORT_IN)) return s;
  if (nanort_status s = nanort_task_access(t, total, sizeof(long), NANORT_INOUT)) return s;
  return nanort_task_submit(t);
}

class Taskiter : public OnDevice {
 protected:
  // One iteration: two device tasks on the two halves, then the CPU task over all of x.
  void iteration(std::vector<int> &x, long &total) {
    const int n = static_cast<int>(x.size()), half = n / 2;
    ASSERT_OK(Task(kAdd, AddArgs{x.data(), 3, half})
                  .inout(x.data(), half)
                  .ndrange({static_cast<std::size_t>(half)})
                  .submit());
    ASSERT_OK(Task(kAdd, AddArgs{x.data() + half, 5, n - half})
                  .inout(x.data() + half, n - half)
                  .ndrange({static_cast<std::size_t>(n - half)})
                  .submit());
    ASSERT_OK(sum_task(x.data(), &total, n));
  }
};

TEST_P(Taskiter, DeviceAndCpuTasksReplayedMatchTheSequentialRun) {
  constexpr int n = 1 << 14, iterations = 25;
  auto &x_seq = array<int>(n, 0);
  auto &total_seq = keep<long>(0);
  for (int it = 0; it < iterations; ++it) iteration(x_seq, total_seq);
  ASSERT_OK(nanort_taskwait());

  auto &x = array<int>(n, 0);
  auto &total = keep<long>(0);
  nanort_taskiter *iter = nullptr;
  ASSERT_OK(nanort_taskiter_begin(&iter));
  iteration(x, total);
  ASSERT_OK(nanort_taskiter_end(iter, iterations - 1));
  ASSERT_OK(nanort_taskwait());  // (device results home)
  EXPECT_EQ(x, x_seq);
  EXPECT_EQ(total, total_seq);
  EXPECT_EQ(x[0], 3 * iterations);
  EXPECT_EQ(x[n - 1], 5 * iterations);
}

// A chain of device tasks per iteration over overlapping halves and the whole array: each
// replayed task may be launched behind its predecessors' kernels on the device; the order
// of the chain is kept.
TEST_P(Taskiter, ChainsOfDeviceTasksKeepTheirOrder) {
  constexpr int n = 1 << 12, iterations = 30;
  const auto chain = [&](std::vector<int> &x) {
    const int half = n / 2;
    for (int k = 0; k < 3; ++k) {
      ASSERT_OK(Task(kAdd, AddArgs{x.data(), k + 1, n})
                    .inout(x.data(), n)
                    .ndrange({static_cast<std::size_t>(n)})
                    .submit());
      ASSERT_OK(Task(kAdd, AddArgs{x.data() + half / 2, 10 * (k + 1), half})
                    .inout(x.data() + half / 2, half)
                    .ndrange({static_cast<std::size_t>(half)})
                    .submit());
    }
  };
  auto &x_seq = array<int>(n, 0);
  for (int it = 0; it < iterations; ++it) chain(x_seq);
  ASSERT_OK(nanort_taskwait());
  auto &x = array<int>(n, 0);
  nanort_taskiter *iter = nullptr;
  ASSERT_OK(nanort_taskiter_begin(&iter));
  chain(x);
  ASSERT_OK(nanort_taskiter_end(iter, iterations - 1));
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(x, x_seq);
  EXPECT_EQ(x[0], 6 * iterations);
  EXPECT_EQ(x[n / 2], 66 * iterations);
}

// With OmpSs-2's update: every iteration's body gives its own values (here the values added
// depend on the iteration) to the recorded kernels, launched while more follow: enqueued
// kernels (the default) take the new values in place, a command buffer
// (NANORT_TASKITER_GRAPH=all) is recorded again. Results: the loop run task by task.
TEST_P(Taskiter, UpdatedIterationsGiveTheKernelsTheirOwnValues) {
  constexpr int n = 1 << 12, iterations = 12;
  const auto chain = [&](std::vector<int> &x, int it) {
    const int half = n / 2;
    for (int k = 0; k < 2; ++k) {
      ASSERT_OK(Task(kAdd, AddArgs{x.data(), (k + 1) * (it + 1), n})
                    .inout(x.data(), n)
                    .ndrange({static_cast<std::size_t>(n)})
                    .submit());
      ASSERT_OK(Task(kAdd, AddArgs{x.data() + half / 2, 10 * it, half})
                    .inout(x.data() + half / 2, half)
                    .ndrange({static_cast<std::size_t>(half)})
                    .submit());
    }
  };
  auto &x_seq = array<int>(n, 0);
  for (int it = 0; it < iterations; ++it) chain(x_seq, it);
  ASSERT_OK(nanort_taskwait());
  auto &x = array<int>(n, 0);
  nanort_taskiter *iter = nullptr;
  ASSERT_OK(nanort_taskiter_begin(&iter));
  chain(x, 0);
  for (int it = 1; it < iterations; ++it) {
    ASSERT_OK(nanort_taskiter_update(iter));
    chain(x, it);
    if (it + 1 < iterations)
      ASSERT_OK(nanort_taskiter_launch(iter, 1));
    else
      ASSERT_OK(nanort_taskiter_replay(iter, 1));
  }
  auto *recorded = reinterpret_cast<nanort::rt::TaskIter *>(iter);
  const int graph_device = recorded->graph_device, records = recorded->graph_captures.load(),
            updates = recorded->graph_updates.load();
  ASSERT_OK(nanort_taskiter_end(iter, 0));
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(x, x_seq);
  EXPECT_EQ(x[0], 3 * (iterations * (iterations + 1) / 2));
  const char *mode = std::getenv("NANORT_TASKITER_GRAPH");
  const std::string graphs = mode ? mode : "enqueue";
  if (graphs == "cuda" || graphs == "off") {
    EXPECT_LT(graph_device, 0) << "OpenCL replays went as one launch with " << graphs;
    return;
  }
  ASSERT_GE(graph_device, 0) << "the replays did not become one launch each";
  // Each iteration's values differ: a command buffer is recorded again for each; enqueued
  // kernels are recorded once and take the later values in place.
  EXPECT_EQ(records + updates, iterations - 1);
  if (graphs == "enqueue") {
    EXPECT_EQ(records, 1);
  }
}

// Kernels on overlapping ranges that start a few elements apart: inside the span of data a
// replay stages at once, the second starts 12 bytes in, an offset no OpenCL device can give a
// kernel. The replays go task by task instead of as one launch (each task's data placed where
// its kernel can be given it), with the results of the loop run task by task.
TEST_P(Taskiter, OverlappingRangesAtOddOffsetsReplayTaskByTask) {
  constexpr int n = 1000, iterations = 4;
  const auto step = [&](std::vector<int> &x) {
    ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, 600}).inout(x.data(), 600).ndrange({600}).submit());
    ASSERT_OK(Task(kAdd, AddArgs{x.data() + 3, 2, 600})
                  .inout(x.data() + 3, 600)
                  .ndrange({600})
                  .submit());
  };
  auto &x_seq = array<int>(n, 0);
  for (int it = 0; it < iterations; ++it) step(x_seq);
  ASSERT_OK(nanort_taskwait());
  auto &x = array<int>(n, 0);
  nanort_taskiter *iter = nullptr;
  ASSERT_OK(nanort_taskiter_begin(&iter));
  step(x);
  ASSERT_OK(nanort_taskiter_replay(iter, iterations - 1));
  const int graph_device = reinterpret_cast<nanort::rt::TaskIter *>(iter)->graph_device;
  ASSERT_OK(nanort_taskiter_end(iter, 0));
  ASSERT_OK(nanort_taskwait());
  EXPECT_LT(graph_device, 0) << "replayed as one launch";
  EXPECT_EQ(x, x_seq);
  EXPECT_EQ(x[0], iterations);
  EXPECT_EQ(x[100], 3 * iterations);
}

NANORT_INSTANTIATE_ON_DEVICES(Taskiter);

}  // namespace
