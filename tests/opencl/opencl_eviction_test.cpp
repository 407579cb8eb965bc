// Eviction under a tiny device memory limit: run with NANORT_DEVICE_MEMORY=64K (tests.cmake),
// so that each device holds at most four 16 KiB arrays of a working set of sixteen. Counters
// from the runtime's directory (internal API: links nanort_static).
#include "opencl_test.hpp"

#include <gtest/gtest.h>

#include <nanort/dc/directory.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime.hpp"

namespace {

using namespace nanort_cl_test;
using nanort::dc::TransferCounters;

constexpr std::size_t kLimit = 64 * 1024;  // NANORT_DEVICE_MEMORY

const ClModule kModule(R"CL(
__kernel void add_index(__global int *x, int value, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] += value + i;
}
__kernel void add_mod(__global int *x, __global const int *y, int value, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] += y[i] % 100 + value;
}
)CL", "opencl_eviction_test.cl");
struct AddArgs {
  int *x;
  int value, n;
};
const ClSite kAddIndex(kModule, "add_index",
                       {buffer(offsetof(AddArgs, x)), value<int>(offsetof(AddArgs, value)),
                        value<int>(offsetof(AddArgs, n))});
struct AddModArgs {
  int *x;
  const int *y;
  int value, n;
};
const ClSite kAddMod(kModule, "add_mod",
                     {buffer(offsetof(AddModArgs, x)), buffer(offsetof(AddModArgs, y)),
                      value<int>(offsetof(AddModArgs, value)), value<int>(offsetof(AddModArgs, n))});

class Eviction : public OnDevice {
 protected:
  void SetUp() override {
    const char *limit = std::getenv("NANORT_DEVICE_MEMORY");
    if (!limit || std::string(limit) != "64K")
      GTEST_SKIP() << "needs NANORT_DEVICE_MEMORY=64K (ctest sets it)";
    OnDevice::SetUp();
  }
  static TransferCounters counters() {
    return nanort::rt::Runtime::get().directory()->counters(1);
  }
};

// 16 arrays of 16 KiB touched round robin by inout tasks, four rounds: the device holds at
// most four, so every task misses, every result but the last four is written back when it
// is evicted, and the values are right. (A round waits for the one before: otherwise the
// device runs each array's next task right behind its kernel, and the order is no longer a
// round robin.)
TEST_P(Eviction, RoundRobinOverFourTimesTheLimit) {
  constexpr int arrays = 16, n = 4096, rounds = 4, tasks = arrays * rounds;
  constexpr std::uint64_t bytes = n * sizeof(int);
  ASSERT_EQ(nanort::rt::Runtime::get().directory()->capacity(1), kLimit);
  auto &data = array(arrays * n, 0);  // adjacent arrays: their ranges touch, never overlap
  for (int r = 0; r < rounds; ++r) {
    for (int a = 0; a < arrays; ++a) {
      int *x = data.data() + a * n;
      ASSERT_OK(Task(kAddIndex, AddArgs{x, 1000 * a + r, n}).inout(x, n).ndrange({n}, {64}).submit());
    }
    ASSERT_OK(nanort_taskwait_noflush());
  }
  TransferCounters c = counters();
  EXPECT_EQ(c.misses, std::uint64_t(tasks)) << "LRU over a round robin four times the limit";
  EXPECT_EQ(c.hits, 0u);
  EXPECT_EQ(c.bytes_to_device, tasks * bytes);
  EXPECT_GE(c.evictions, std::uint64_t(tasks - kLimit / bytes));
  EXPECT_EQ(c.bytes_to_host, c.evictions * bytes) << "each eviction writes its array back";
  EXPECT_LE(c.peak_bytes, kLimit);
  EXPECT_LE(nanort::rt::Runtime::get().directory()->used_bytes(1), kLimit);

  ASSERT_OK(nanort_taskwait());
  c = counters();
  EXPECT_EQ(c.bytes_to_host, tasks * bytes) << "every result is written back exactly once";
  for (int a = 0; a < arrays; ++a)
    for (int i = 0; i < n; ++i) {
      const int expected = rounds * (1000 * a + i) + rounds * (rounds - 1) / 2;
      ASSERT_EQ(data[a * n + i], expected) << "array " << a << " element " << i;
    }
}

// Device tasks that read one array and write another, over a working set three times the
// limit, with CPU tasks doing the same in between: still right.
TEST_P(Eviction, TwoArraysPerTaskWithCpuTasks) {
  constexpr int arrays = 24, n = 2048;  // 8 KiB each
  auto &data = array(arrays * n);
  auto &expected = array(0);
  for (int i = 0; i < arrays * n; ++i) data[i] = i % 1000;
  expected = data;
  for (int step = 0; step < 96; ++step) {
    const int a = (step * 5) % arrays, b = (step * 7 + 3) % arrays;
    if (a == b) continue;
    int *x = data.data() + a * n;
    const int *y = data.data() + b * n;
    if (step % 3 == 2)
      ASSERT_OK(cpu_task("cpu add_mod", [=] { for (int i = 0; i < n; ++i) x[i] += y[i] % 100 + step; })
                    .inout(x, n)
                    .in(y, n)
                    .submit());
    else
      ASSERT_OK(Task(kAddMod, AddModArgs{x, y, step, n}).inout(x, n).in(y, n).ndrange({n}).submit());
    for (int i = 0; i < n; ++i) expected[a * n + i] += expected[b * n + i] % 100 + step;
  }
  ASSERT_OK(nanort_taskwait());
  EXPECT_GT(counters().evictions, 0u);
  EXPECT_LE(counters().peak_bytes, kLimit);
  for (int i = 0; i < arrays * n; ++i) ASSERT_EQ(data[i], expected[i]) << "element " << i;
}

// A task whose own data is larger than the limit fails, with a message naming it, what it
// needs and the limit; the runtime goes on.
TEST_P(Eviction, DataLargerThanTheLimitFails) {
  constexpr int n = 32 * 1024;  // 128 KiB
  auto &x = array(n, 0);
  ASSERT_OK(Task(kAddIndex, AddArgs{x.data(), 1, n}).label("too_big").inout(x.data(), n).ndrange({n}).submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  // The sizes, readable (once "0 MiB" and "0 MiB").
  EXPECT_EQ(std::string(nanort_last_error()),
            "task 'too_big' (" + kAddIndex.where() + ") needs 128 KiB at once on opencl0 (" +
                device().name +
                "), more than the device's memory limit of 64 KiB (NANORT_DEVICE_MEMORY)");
  EXPECT_EQ(x[5], 0);
  auto &small = array(1024, 0);
  ASSERT_OK(Task(kAddIndex, AddArgs{small.data(), 1, 1024}).inout(small.data(), 1024).ndrange({1024}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(small[5], 6);
}

// Two arrays that fit one at a time but not together: the message gives what the task needs in
// all (once the array that did not fit beside the other: "48 KiB in one piece does not fit",
// against a 64 KiB limit).
TEST_P(Eviction, DataLargerThanTheLimitTogetherFails) {
  auto &x = array(8 * 1024, 1);   // 32 KiB
  auto &y = array(12 * 1024, 2);  // 48 KiB
  ASSERT_OK(Task(kAddMod, AddModArgs{x.data(), y.data(), 0, 8 * 1024})
                .label("together_too_big")
                .inout(x.data(), x.size())
                .in(y.data(), y.size())
                .ndrange({8 * 1024})
                .submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  EXPECT_EQ(std::string(nanort_last_error()),
            "task 'together_too_big' (" + kAddMod.where() + ") needs 80 KiB at once on opencl0 (" +
                device().name +
                "), more than the device's memory limit of 64 KiB (NANORT_DEVICE_MEMORY)");
  EXPECT_EQ(x[5], 1);
  // Each alone fits.
  ASSERT_OK(Task(kAddIndex, AddArgs{x.data(), 1, 8 * 1024})
                .inout(x.data(), x.size())
                .ndrange({8 * 1024})
                .submit());
  ASSERT_OK(Task(kAddIndex, AddArgs{y.data(), 1, 12 * 1024})
                .inout(y.data(), y.size())
                .ndrange({12 * 1024})
                .submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(x[5], 7);
  EXPECT_EQ(y[5], 8);
}

NANORT_INSTANTIATE_ON_DEVICES(Eviction);

}  // namespace
