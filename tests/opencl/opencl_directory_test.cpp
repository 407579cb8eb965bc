// The directory's transfers, counted: OpenCL tasks through the C ABI on each OpenCL device
// found, with the counters read from the runtime's directory (internal API: this executable
// links nanort_static). Space 1 is the one device each process uses.
#include "opencl_test.hpp"

#include <gtest/gtest.h>

#include <nanort/dc/directory.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "runtime.hpp"

namespace {

using namespace nanort_cl_test;
using nanort::dc::TransferCounters;

TransferCounters counters(nanort::dc::SpaceId space) {
  nanort::dc::Directory *directory = nanort::rt::Runtime::get().directory();
  return directory ? directory->counters(space) : TransferCounters{};
}
constexpr nanort::dc::SpaceId kHostSpace = 0, kDevice = 1;

const ClModule kModule(R"CL(
__kernel void axpy(__global int *x, __global const int *b, int k, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] += k * b[i];
}
__kernel void iota_int(__global int *x, int base, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] = base + i;
}
__kernel void add_int(__global int *x, int value, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] += value;
}
)CL", "opencl_directory_test.cl");

struct AxpyArgs {
  int *x;
  const int *b;
  int k, n;
};
struct IotaArgs {
  int *x;
  int base, n;
};
struct AddArgs {
  int *x;
  int value, n;
};
const ClSite kAxpy(kModule, "axpy",
                   {buffer(offsetof(AxpyArgs, x)), buffer(offsetof(AxpyArgs, b)),
                    value<int>(offsetof(AxpyArgs, k)), value<int>(offsetof(AxpyArgs, n))});
const ClSite kIota(kModule, "iota_int",
                   {buffer(offsetof(IotaArgs, x)), value<int>(offsetof(IotaArgs, base)),
                    value<int>(offsetof(IotaArgs, n))});
const ClSite kAdd(kModule, "add_int",
                  {buffer(offsetof(AddArgs, x)), value<int>(offsetof(AddArgs, value)),
                   value<int>(offsetof(AddArgs, n))});

class Transfers : public OnDevice {};

// 20 device tasks in a chain (inout x, in b): each input crosses to the device once, nothing
// comes back before the flush, and the flush brings x (not b, unchanged) back once.
TEST_P(Transfers, ChainMovesEachInputOnce) {
  constexpr int n = 64 * 1024, tasks = 20;
  constexpr std::uint64_t bytes = n * sizeof(int);
  auto &x = array(n);
  auto &b = array(n);
  std::iota(x.begin(), x.end(), 0);
  for (int i = 0; i < n; ++i) b[i] = i % 7;
  for (int k = 1; k <= tasks; ++k)
    ASSERT_OK(Task(kAxpy, AxpyArgs{x.data(), b.data(), k, n})
                  .inout(x.data(), n)
                  .in(b.data(), n)
                  .ndrange({n}, {64})
                  .submit());
  ASSERT_OK(nanort_taskwait_noflush());  // every task done, device copies left in place
  TransferCounters c = counters(kDevice);
  EXPECT_EQ(c.bytes_to_device, 2 * bytes) << "x and b, once each";
  EXPECT_EQ(c.bytes_to_host, 0u) << "nothing comes back before the flush";
  EXPECT_EQ(c.bytes_from_peer, 0u);
  EXPECT_EQ(c.misses, 2u) << "the first task's two accesses";
  EXPECT_EQ(c.hits, 2u * (tasks - 1));
  EXPECT_EQ(c.evictions, 0u);
  EXPECT_EQ(c.allocations, 2u);
  EXPECT_EQ(x[1], 1) << "host memory changed before the flush";

  ASSERT_OK(nanort_taskwait());
  c = counters(kDevice);
  EXPECT_EQ(c.bytes_to_device, 2 * bytes);
  EXPECT_EQ(c.bytes_to_host, bytes) << "x comes back once; b was never written";
  const int sum_k = tasks * (tasks + 1) / 2;
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], i + sum_k * (i % 7)) << i;
}

// Data produced on the device and read by a CPU task before any taskwait: the CPU task gets
// it (one copy back); the device keeps its copy valid (a later device read is a hit); a CPU
// write invalidates it (the next device read copies again).
TEST_P(Transfers, DeviceResultReadByCpuTask) {
  constexpr int n = 16 * 1024;
  constexpr std::uint64_t bytes = n * sizeof(int);
  auto &x = array(n, -1);
  ASSERT_OK(Task(kIota, IotaArgs{x.data(), 3, n}).out(x.data(), n).ndrange({n}).submit());
  auto &sum = keep(0l);
  ASSERT_OK(cpu_task("host reader", [&] { sum = std::accumulate(x.begin(), x.end(), 0l); })
                .in(x.data(), n)
                .submit());
  ASSERT_OK(nanort_taskwait_noflush());
  EXPECT_EQ(sum, 3l * n + long(n) * (n - 1) / 2);
  TransferCounters c = counters(kDevice);
  EXPECT_EQ(c.bytes_to_device, 0u) << "an out access copies nothing in";
  EXPECT_EQ(c.bytes_to_host, bytes) << "the CPU task needed x";
  EXPECT_EQ(counters(kHostSpace).misses, 1u);

  // Shared now: the device reads x again without a copy.
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, n}).inout(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait_noflush());
  c = counters(kDevice);
  EXPECT_EQ(c.bytes_to_device, 0u) << "x was still valid on the device";
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(x[0], 3) << "host memory changed before the flush";

  // A CPU task writes x: the device copy is stale, the next device task copies x again.
  ASSERT_OK(cpu_task("host writer", [&] { for (int &v : x) v *= 2; }).inout(x.data(), n).submit());
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, n}).inout(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait());
  c = counters(kDevice);
  EXPECT_EQ(c.bytes_to_device, bytes);
  EXPECT_EQ(c.bytes_to_host, 3 * bytes) << "for the reader, the writer, and the flush";
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 2 * (3 + i + 1) + 1) << i;
}

// A copy clause of the same bytes as a dependence replaces the dependence's copy: inout(x)
// with copy_out(x) copies nothing to the device.
TEST_P(Transfers, CopyOutReplacesDependenceCopy) {
  constexpr int n = 4096;
  constexpr std::uint64_t bytes = n * sizeof(int);
  auto &x = array(n, -1);
  ASSERT_OK(Task(kIota, IotaArgs{x.data(), 0, n})
                .inout(x.data(), n)
                .copy_out(x.data(), n)
                .ndrange({n})
                .submit());
  ASSERT_OK(nanort_taskwait());
  const TransferCounters c = counters(kDevice);
  EXPECT_EQ(c.bytes_to_device, 0u);
  EXPECT_EQ(c.bytes_to_host, bytes);
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], i);
}

// copy_in without a dependence moves the bytes in, and nothing back (the task did not write
// them).
TEST_P(Transfers, CopyInMovesInOnly) {
  constexpr int n = 4096;
  constexpr std::uint64_t bytes = n * sizeof(int);
  auto &x = array(n);
  auto &b = array(n, 2);
  std::iota(x.begin(), x.end(), 0);
  ASSERT_OK(Task(kAxpy, AxpyArgs{x.data(), b.data(), 5, n})
                .inout(x.data(), n)
                .copy_in(b.data(), n)
                .ndrange({n})
                .submit());
  ASSERT_OK(nanort_taskwait());
  const TransferCounters c = counters(kDevice);
  EXPECT_EQ(c.bytes_to_device, 2 * bytes);
  EXPECT_EQ(c.bytes_to_host, bytes) << "x only";
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], i + 10);
}

// taskwait on(x) brings x back, and only x.
TEST_P(Transfers, TaskwaitOnCopiesOnlyItsData) {
  constexpr int n = 4096;
  constexpr std::uint64_t bytes = n * sizeof(int);
  auto &x = array(n, 0);
  auto &y = array(n, 0);
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, n}).inout(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(Task(kAdd, AddArgs{y.data(), 1, n}).inout(y.data(), n).ndrange({n}).submit());
  const void *addresses[] = {x.data()};
  const std::size_t sizes[] = {bytes};
  ASSERT_OK(nanort_taskwait_on(addresses, sizes, 1));
  EXPECT_EQ(counters(kDevice).bytes_to_host, bytes);
  EXPECT_EQ(x[n - 1], 1);
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(counters(kDevice).bytes_to_host, 2 * bytes);
  EXPECT_EQ(y[n - 1], 1);
}

// Plain malloc'd memory that moves round after round is page-locked by the runtime on
// NVIDIA's OpenCL GPUs (a buffer made over it: NANORT_HOST_REGISTER=auto, the default), the
// results stay right, and freeing the array unlocks it. Other platforms lock nothing.
TEST_P(Transfers, OrdinaryMemoryThatMovesIsLockedOnNvidiaGpus) {
  nanort::rt::HostLockCache *locks = nanort::rt::Runtime::get().auto_host_locks();
  if (device().type != "gpu" || device().platform.find("NVIDIA") == std::string::npos) {
    if (nanort_device_count(NANORT_DEVICE_CUDA) == 0) {  // (ctest: NANORT_CUDA_DEVICES=none)
      EXPECT_EQ(locks, nullptr) << "the runtime locks memory for a device that does not use it";
    }
    GTEST_SKIP() << "SKIP: " << device().platform << " is not NVIDIA's OpenCL on a GPU: copies "
                 << "go through staging (or need none), nothing is locked";
  }
  if (!locks) {
    std::string why;
    if (!nanort::rt::HostLockCache::hooks_in_effect(why))
      GTEST_SKIP() << "SKIP: the memory hooks are not in effect (" << why << ")";
    FAIL() << "NANORT_HOST_REGISTER=auto locks nothing for an NVIDIA GPU";
  }
  constexpr int blocks = 8, block = 256 * 1024, n = blocks * block;  // 8 MiB of ints
  auto *x = static_cast<int *>(std::malloc(n * sizeof(int)));
  ASSERT_NE(x, nullptr);
  std::fill(x, x + n, 0);
  for (int round = 0; round < 4; ++round) {
    for (int b = 0; b < blocks; ++b)
      ASSERT_OK(Task(kAdd, AddArgs{x + b * block, 1, block})
                    .inout(x + b * block, block)
                    .ndrange({block})
                    .submit());
    ASSERT_OK(nanort_taskwait());
    locks->drain();
  }
  for (int i = 0; i < n; i += 101) ASSERT_EQ(x[i], 4) << i;
  const nanort::rt::HostLockCache::Stats stats = locks->stats();
  for (int b = 0; b < blocks; ++b)
    EXPECT_TRUE(locks->covers(x + b * block, block * sizeof(int)))
        << b << ": locks " << stats.locks << ", refused " << stats.refused << " ("
        << stats.last_refusal << ")";
  const std::size_t locked = stats.locked_bytes;
  EXPECT_GE(locked, n * sizeof(int));
  std::free(x);
  EXPECT_LE(locks->stats().locked_bytes + n * sizeof(int), locked);
}

NANORT_INSTANTIATE_ON_DEVICES(Transfers);

}  // namespace
