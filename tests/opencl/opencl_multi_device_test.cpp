// Several OpenCL devices in one process (NANORT_OPENCL_DEVICES=all, one task in flight per
// device so that independent tasks spread over the devices; see tests.cmake): data produced
// on one device and consumed on another and on the host. Skips with fewer than two devices.
// Several ctest entries: the devices found (NVIDIA's and PoCL's on a GPU machine, each in a
// context of its own: data moves through the host), PoCL made to show two devices
// (POCL_DEVICES='pthread pthread'), and those two in one context
// (NANORT_OPENCL_CONTEXTS=platform: data moves device to device directly).
// Counters and copy locations from the runtime's directory (links nanort_static).
//
// Where a test asserts where or when tasks ran, it makes that happen rather than waiting for
// the timing to come out that way (tests/README.md, "Tests of scheduling"): it places tasks
// by hand, or holds every device's kernels (HeldDevices) so that launched tasks cannot end
// until it has seen what it checks, or checks each decision against the model it was made on.
#include "opencl_test.hpp"
#include "test_support.hpp"
#include "workloads.hpp"

#include <gtest/gtest.h>

#include <nanort/dc/directory.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "device/accelerator.hpp"
#include "device/device_numbering.hpp"
#include "runtime.hpp"
#include "scheduler/perf_model.hpp"

namespace {

using namespace nanort_cl_test;
using nanort_test::wait_for;
using nanort::dc::SpaceId;
using nanort::dc::FragmentInfo;
using nanort::dc::TransferCounters;

const ClModule kModule(R"CL(
// The loop makes each item's value depend on 'spins' (the tests check it was done).
__kernel void slow_iota(__global int *x, int base, int n, int spins) {
  int i = get_global_id(0);
  uint acc = (uint)base;
  for (int s = 0; s < spins; ++s) acc = acc * 1664525u + 1013904223u;
  if (i < n) x[i] = base + i + (int)(acc & 1u);
}
__kernel void weighted_sum(__global const int *a, __global const int *b, __global int *c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + 2 * b[i];
}
)CL", "opencl_multi_device_test.cl");
struct SlowIotaArgs {
  int *x;
  int base, n, spins;
};
struct MixArgs {
  const int *a, *b;
  int *c;
  int n;
};
const ClSite kSlowIota(kModule, "slow_iota",
                       {buffer(offsetof(SlowIotaArgs, x)), value<int>(offsetof(SlowIotaArgs, base)),
                        value<int>(offsetof(SlowIotaArgs, n)), value<int>(offsetof(SlowIotaArgs, spins))});
// Doubles x on a device, or on the CPU slowly (a CPU version that sleeps 3 ms).
struct DoubleArgs {
  int *x;
  int n;
};
constexpr double kCpuDoubleSeconds = 0.003;
std::atomic<int> cpu_doubles{0};  // runs of the CPU version
void slow_double_on_cpu(void *args) {
  auto *a = static_cast<DoubleArgs *>(args);
  for (int i = 0; i < a->n; ++i) a->x[i] *= 2;
  std::this_thread::sleep_for(std::chrono::duration<double>(kCpuDoubleSeconds));
  cpu_doubles.fetch_add(1);
}
const ClModule kDoubleModule(R"CL(
__kernel void double_it(__global int *x, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] *= 2;
}
)CL", "opencl_multi_device_double.cl");
const ClSite kDouble(kDoubleModule, "double_it",
                     {buffer(offsetof(DoubleArgs, x)), value<int>(offsetof(DoubleArgs, n))},
                     "double_it", slow_double_on_cpu);
const ClSite kMix(kModule, "weighted_sum",
                  {buffer(offsetof(MixArgs, a)), buffer(offsetof(MixArgs, b)),
                   buffer(offsetof(MixArgs, c)), value<int>(offsetof(MixArgs, n))});

int slow_iota_value(int base, int i, int spins) {
  std::uint32_t acc = static_cast<std::uint32_t>(base);
  for (int s = 0; s < spins; ++s) acc = acc * 1664525u + 1013904223u;
  return base + i + static_cast<int>(acc & 1u);
}

// Every device's kernels held back while it lives (Accelerator::hold_kernels): tasks are
// staged and launched as usual, and none ends, so a test sees what the runtime does with every
// device busy for as long as it needs, however loaded the machine and fast the devices are.
class HeldDevices {
 public:
  HeldDevices() {
    for (const auto &accelerator : nanort::rt::Runtime::get().accelerators()) {
      holds_.push_back(accelerator->hold_kernels());
      all_ = all_ && holds_.back() != nullptr;
    }
  }
  // False when a backend cannot hold its kernels.
  bool all() const { return all_; }
  void release() { holds_.clear(); }

 private:
  std::vector<std::unique_ptr<nanort::rt::KernelHold>> holds_;
  bool all_ = true;
};

class MultiDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(nanort_init());
    devices_ = nanort_device_count(NANORT_DEVICE_OPENCL);
    const char *selection = std::getenv("NANORT_OPENCL_DEVICES");
    if (devices_ < 2)
      GTEST_SKIP() << "needs two OpenCL devices; the runtime has " << devices_
                   << " (NANORT_OPENCL_DEVICES=" << (selection ? selection : "unset")
                   << ", ICD loader: " << list_opencl_devices().size() << " device(s))";
  }
  static nanort::dc::Directory &directory() { return *nanort::rt::Runtime::get().directory(); }
  // The one device holding the only valid copy of 'address', or 0 when that is not the case.
  static SpaceId only_owner(const void *address) {
    const nanort::dc::SpaceMask valid = directory().fragment_at(address).valid;
    for (SpaceId s = 1; s < directory().space_count(); ++s)
      if (valid == nanort::dc::bit(s)) return s;
    return 0;
  }
  // Every pair of devices copies directly (devices of one context): the runtime's condition
  // for tasks launched behind kernels of other devices (NANORT_EARLY_LAUNCH=across), and for
  // data that never passes through the host between devices.
  static bool all_copy_directly() {
    for (SpaceId a = 1; a < directory().space_count(); ++a)
      for (SpaceId b = 1; b < directory().space_count(); ++b)
        if (a != b && !directory().copies_directly(a, b)) return false;
    return true;
  }
  // Device d (as accelerators() numbers them) has staged a task's data: it took a task.
  static bool took_work(int d) {
    return directory().counters(nanort::rt::space_of(d)).allocations > 0;
  }
  int devices_ = 0;
  KeptData data_;  // the tests' data, until their tasks are done
};

// Producers spread over the devices; consumers each read one array from each of two
// devices, so at least one input crosses between devices whichever device runs them; a CPU
// task reads device results before any taskwait. The producers run while every device's
// kernels are held, until each device has taken one: none can end and leave the others'
// work to it (each policy gives a device only so much while it is busy: the lookahead or the
// tasks in flight, or the load it counts).
TEST_F(MultiDevice, ProducedOnOneDeviceConsumedOnAnotherAndOnHost) {
  SKIP_UNLESS_LAZY_WRITE_BACK();
  constexpr int n = 16 * 1024, spins = 100;
  constexpr std::uint64_t bytes = n * sizeof(int);
  const int producers = 2 * devices_;
  auto &x = data_.make<std::vector<std::vector<int>>>(producers, std::vector<int>(n, -1));
  {
    HeldDevices held;
    ASSERT_TRUE(held.all()) << "a device cannot hold its kernels";
    for (int k = 0; k < producers; ++k)
      ASSERT_OK(Task(kSlowIota, SlowIotaArgs{x[k].data(), 1000 * k, n, spins})
                    .out(x[k].data(), n)
                    .ndrange({n}, {64})
                    .submit());
    wait_for([&] {
      for (int d = 0; d < devices_; ++d)
        if (!took_work(d)) return false;
      return true;
    });
    for (int d = 0; d < devices_; ++d)
      ASSERT_TRUE(took_work(d)) << "device " << d << " took no producer in 20 s while the "
                                   "other devices' kernels were held";
  }
  ASSERT_OK(nanort_taskwait_noflush());

  std::map<SpaceId, std::vector<int>> by_device;  // device -> arrays it produced
  for (int k = 0; k < producers; ++k) {
    const SpaceId owner = only_owner(x[k].data());
    ASSERT_NE(owner, 0u) << "array " << k << " should be valid on its producer alone";
    by_device[owner].push_back(k);
  }
  ASSERT_GE(by_device.size(), 2u) << "every producer ran on one device; the test needs two";

  // Consumers: one input from the first device, one from another.
  const std::vector<int> &first = by_device.begin()->second;
  std::vector<int> others;
  for (auto it = std::next(by_device.begin()); it != by_device.end(); ++it)
    others.insert(others.end(), it->second.begin(), it->second.end());
  const int consumers = static_cast<int>(std::min(first.size(), others.size()));
  auto &c = data_.make<std::vector<std::vector<int>>>(consumers, std::vector<int>(n, -1));
  for (int j = 0; j < consumers; ++j) {
    const int *a = x[first[j]].data(), *b = x[others[j]].data();
    ASSERT_OK(Task(kMix, MixArgs{a, b, c[j].data(), n})
                  .in(a, n)
                  .in(b, n)
                  .out(c[j].data(), n)
                  .ndrange({n}, {64})
                  .submit());
  }
  ASSERT_OK(nanort_taskwait_noflush());

  std::uint64_t from_peer = 0, to_host = 0, to_device = 0;
  for (SpaceId s = 1; s < directory().space_count(); ++s) {
    const TransferCounters counters = directory().counters(s);
    from_peer += counters.bytes_from_peer;
    to_host += counters.bytes_to_host;
    to_device += counters.bytes_to_device;
  }
  // Whichever device ran a consumer, one of its inputs was elsewhere.
  EXPECT_GE(from_peer + to_device, bytes) << "no input crossed between devices";
  const bool direct = all_copy_directly();
  if (direct && devices_ == 2) {
    EXPECT_GE(from_peer, bytes) << "devices of one context copy directly";
    EXPECT_EQ(to_host, 0u) << "nothing went through the host";
  }
  if (!direct && devices_ == 2) {
    EXPECT_EQ(from_peer, 0u);
    EXPECT_GE(to_host, bytes) << "devices of two contexts exchange data through the host";
  }

  // The host reads device results before any taskwait, through a CPU task.
  auto &sums = data_.make<std::vector<long>>(consumers, 0);
  auto &first_sum = data_.make<long>(0);
  for (int j = 0; j < consumers; ++j) {
    const int *cj = c[j].data();
    long *sum = &sums[j];
    ASSERT_OK(cpu_task("host sum", [=] { for (int i = 0; i < n; ++i) *sum += cj[i]; })
                  .in(cj, n)
                  .out(sum, 1)
                  .submit());
  }
  const int *x0 = x[first[0]].data();
  ASSERT_OK(cpu_task("host sum", [&] { for (int i = 0; i < n; ++i) first_sum += x0[i]; })
                .in(x0, n)
                .submit());
  ASSERT_OK(nanort_taskwait_noflush());
  if (direct) {  // (through the host, the copy for the consumer brought it there as well)
    EXPECT_EQ(x[others[0]][0], -1) << "host memory of an array no CPU task read changed "
                                      "before the flush";
  }
  std::vector<int> low_bit(producers);  // slow_iota's value at i is base + i + low_bit
  for (int k = 0; k < producers; ++k) low_bit[k] = slow_iota_value(1000 * k, 0, spins) - 1000 * k;
  auto expected_x = [&](int k, int i) { return 1000 * k + i + low_bit[k]; };
  for (int j = 0; j < consumers; ++j) {
    long expected = 0;
    for (int i = 0; i < n; ++i) expected += expected_x(first[j], i) + 2 * expected_x(others[j], i);
    EXPECT_EQ(sums[j], expected) << "consumer " << j << " as the host saw it";
  }
  long expected_first = 0;
  for (int i = 0; i < n; ++i) expected_first += expected_x(first[0], i);
  EXPECT_EQ(first_sum, expected_first);

  ASSERT_OK(nanort_taskwait());
  for (int k = 0; k < producers; ++k)
    for (int i = 0; i < n; ++i) ASSERT_EQ(x[k][i], expected_x(k, i)) << "array " << k;
  for (int j = 0; j < consumers; ++j)
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(c[j][i], expected_x(first[j], i) + 2 * expected_x(others[j], i)) << "output " << j;
}

// Steps in which each device's task reads what every device wrote in the step before (as
// NBody's blocks do), all submitted at once. Devices that wait for each other's kernels (one
// context, NANORT_EARLY_LAUNCH=across) get each step's tasks before the step before ends:
// placed ones on their device, the others on any. The values say whether every task read its
// inputs after they were written, and before they were overwritten. Every step is submitted
// while the devices' kernels are held, so no step ends before the next one is there, however
// slowly this thread submits or fast the devices run.
TEST_F(MultiDevice, StepsReadEveryDevicesResultsOfTheStepBefore) {
  constexpr int n = 8 * 1024, spins = 100, steps = 6;
  // x[s][d]: device d's array after step s (step 0: producers).
  auto &x = data_.make<std::vector<std::vector<std::vector<int>>>>(
      steps + 1, std::vector<std::vector<int>>(devices_, std::vector<int>(n, -1)));
  const std::uint64_t across_before = nanort::rt::Runtime::get().early_across_releases();
  {
    HeldDevices held;
    ASSERT_TRUE(held.all()) << "a device cannot hold its kernels";
    for (int d = 0; d < devices_; ++d)
      ASSERT_OK(Task(kSlowIota, SlowIotaArgs{x[0][d].data(), 100 * d, n, spins})
                    .out(x[0][d].data(), n)
                    .ndrange({n}, {64})
                    .on_device(NANORT_DEVICE_OPENCL, d)
                    .submit());
    // Step s on device d: x[s][d] = x[s-1][d] + 2 x[s-1][(d+1) % devices]; odd steps placed,
    // even ones left to the runtime.
    for (int s = 1; s <= steps; ++s)
      for (int d = 0; d < devices_; ++d) {
        const int *a = x[s - 1][d].data(), *b = x[s - 1][(d + 1) % devices_].data();
        Task task(kMix, MixArgs{a, b, x[s][d].data(), n});
        task.in(a, n).in(b, n).out(x[s][d].data(), n).ndrange({n}, {64});
        if (s % 2) task.on_device(NANORT_DEVICE_OPENCL, d);
        ASSERT_OK(task.submit());
      }
  }
  ASSERT_OK(nanort_taskwait());

  std::vector<std::vector<long>> expected(devices_, std::vector<long>(n));
  for (int d = 0; d < devices_; ++d)
    for (int i = 0; i < n; ++i) expected[d][i] = slow_iota_value(100 * d, i, spins);
  for (int s = 1; s <= steps; ++s) {
    std::vector<std::vector<long>> next(devices_, std::vector<long>(n));
    for (int d = 0; d < devices_; ++d)
      for (int i = 0; i < n; ++i)
        next[d][i] = expected[d][i] + 2 * expected[(d + 1) % devices_][i];
    expected = next;
    for (int d = 0; d < devices_; ++d)
      for (int i = 0; i < n; ++i)
        ASSERT_EQ(x[s][d][i], expected[d][i]) << "step " << s << ", device " << d << ", at " << i;
  }

  const std::uint64_t across =
      nanort::rt::Runtime::get().early_across_releases() - across_before;
  // (With devices of two contexts, NVIDIA's and PoCL's on a GPU machine, no device waits for
  // another's kernels, not even for one of its own context.)
  const char *mode = std::getenv("NANORT_EARLY_LAUNCH");
  if (!all_copy_directly() || (mode && std::string(mode) == "device"))
    EXPECT_EQ(across, 0u) << "no task may wait on one device for another's kernels here";
  else
    EXPECT_GT(across, 0u) << "no unplaced step was released before the step before ended, "
                             "though every step was submitted while the kernels were held";
}

// With several devices of a kind, no device holds more than NANORT_DEVICE_LOOKAHEAD tasks of
// the queue they share (2 by default; its own ctest entry runs 1): the rest wait there for
// whichever device frees up first. A dozen independent tasks are submitted while every
// device's kernels are held: no task can end, so each device takes exactly its share (the
// lookahead, or its tasks in flight where those are fewer) and the rest stay queued. Then the
// devices go on; a thread samples what each holds until the end.
TEST_F(MultiDevice, DevicesHoldAtMostTheLookaheadFromTheSharedQueue) {
  if (const char *policy = std::getenv("NANORT_SCHEDULER"); policy && std::string(policy) != "breadth-first")
    GTEST_SKIP() << "NANORT_SCHEDULER=" << policy << " places each task on a device itself";
  const auto &runtime = nanort::rt::Runtime::get();
  const std::size_t lookahead = runtime.config().device_lookahead;
  // (The default number of tasks in flight, 32 for OpenCL devices, is more than the lookahead.)
  const int in_flight = runtime.config().device_in_flight;
  const std::size_t share =
      in_flight > 0 ? std::min(lookahead, static_cast<std::size_t>(in_flight)) : lookahead;
  constexpr int n = 4096, tasks = 12;
  ASSERT_LT(share * static_cast<std::size_t>(devices_), static_cast<std::size_t>(tasks))
      << "the test needs tasks left in the queue";
  auto &x = data_.make<std::vector<std::vector<int>>>(tasks, std::vector<int>(n, -1));
  std::atomic<bool> done{false};
  std::vector<std::size_t> most(static_cast<std::size_t>(devices_), 0);
  std::thread sampler([&] {
    while (!done.load())
      for (std::size_t d = 0; d < most.size(); ++d)
        most[d] = std::max(most[d], runtime.shared_load(d));
  });
  {
    HeldDevices held;
    EXPECT_TRUE(held.all()) << "a device cannot hold its kernels";
    for (int k = 0; k < tasks; ++k)
      EXPECT_OK(Task(kSlowIota, SlowIotaArgs{x[k].data(), 1000 * k, n, 20})
                    .out(x[k].data(), n)
                    .ndrange({n}, {64})
                    .submit());
    auto taken = [&] {
      std::size_t sum = 0;
      for (int d = 0; d < devices_; ++d) sum += runtime.shared_load(static_cast<std::size_t>(d));
      return sum;
    };
    EXPECT_TRUE(wait_for([&] { return taken() >= share * static_cast<std::size_t>(devices_); }))
        << "the devices took " << taken() << " tasks while held, expected " << share << " each";
    // (A device that took more than its share would have done so by now, or soon: a pause
    // gives it the time to show, and can only let such a fault pass, never fail a sound run.)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int d = 0; d < devices_; ++d)
      EXPECT_EQ(runtime.shared_load(static_cast<std::size_t>(d)), share)
          << "device " << d << " while no task could end";
  }
  EXPECT_OK(nanort_taskwait());
  done.store(true);
  sampler.join();
  for (std::size_t d = 0; d < most.size(); ++d)
    EXPECT_LE(most[d], lookahead) << "device " << d << " held more of the shared queue";
  for (int k = 0; k < tasks; ++k)
    for (int i = 0; i < n; i += 97) ASSERT_EQ(x[k][i], slow_iota_value(1000 * k, i, 20)) << k;
}

// nanort_task_set_device: each producer runs on the device it names, a chain placed on the
// last device stays there, and a consumer placed on the first device reads from the others.
TEST_F(MultiDevice, PlacedTasksRunOnTheirDevice) {
  SKIP_UNLESS_LAZY_WRITE_BACK();
  constexpr int n = 4096;
  auto &x = data_.make<std::vector<std::vector<int>>>(2 * devices_, std::vector<int>(n, -1));
  for (int k = 0; k < 2 * devices_; ++k)
    ASSERT_OK(Task(kSlowIota, SlowIotaArgs{x[k].data(), 1000 * k, n, 10})
                  .out(x[k].data(), n)
                  .ndrange({n}, {64})
                  .on_device(NANORT_DEVICE_OPENCL, k % devices_)
                  .submit());
  ASSERT_OK(nanort_taskwait_noflush());
  for (int k = 0; k < 2 * devices_; ++k)
    EXPECT_EQ(only_owner(x[k].data()), static_cast<SpaceId>(k % devices_ + 1)) << "array " << k;

  // Consumers on device 0, each reading arrays made on device 0 and on another device.
  auto &c = data_.make<std::vector<std::vector<int>>>(devices_ - 1, std::vector<int>(n, -1));
  const TransferCounters before = directory().counters(1);
  for (int d = 1; d < devices_; ++d) {
    const int *a = x[0].data(), *b = x[d].data();
    ASSERT_OK(Task(kMix, MixArgs{a, b, c[d - 1].data(), n})
                  .in(a, n)
                  .in(b, n)
                  .out(c[d - 1].data(), n)
                  .ndrange({n}, {64})
                  .on_device(NANORT_DEVICE_OPENCL, 0)
                  .submit());
  }
  ASSERT_OK(nanort_taskwait());
  const TransferCounters after = directory().counters(1);
  EXPECT_GE(after.bytes_from_peer + after.bytes_to_device -
                (before.bytes_from_peer + before.bytes_to_device),
            std::uint64_t(devices_ - 1) * n * sizeof(int))
      << "each consumer's second input came from another device";
  for (int d = 1; d < devices_; ++d)
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(c[d - 1][i], x[0][i] + 2 * x[d][i]) << "consumer " << d << " at " << i;
}

// NANORT_SCHEDULER=locality (its own ctest entry): tasks left to the runtime go where their
// data is. A producer placed on the last device; a consumer of its output runs there (nothing
// crosses), and so does a task that overwrites part of it (the last device holds it alone).
TEST_F(MultiDevice, LocalityRunsTasksWhereTheirDataLives) {
  SKIP_UNLESS_LAZY_WRITE_BACK();
  if (std::string(nanort::rt::Runtime::get().scheduler_name()) != "locality")
    GTEST_SKIP() << "runs with NANORT_SCHEDULER=locality";
  constexpr int n = 8192;
  const int last = devices_ - 1;
  const SpaceId last_space = static_cast<SpaceId>(last + 1);
  auto &x = data_.make<std::vector<int>>(n, -1);
  auto &y = data_.make<std::vector<int>>(n, -1);
  auto &zero = data_.make<std::vector<int>>(n, 0);
  ASSERT_OK(Task(kSlowIota, SlowIotaArgs{x.data(), 5, n, 1})
                .out(x.data(), n)
                .ndrange({n}, {64})
                .on_device(NANORT_DEVICE_OPENCL, last)
                .submit());
  ASSERT_OK(nanort_taskwait_noflush());
  ASSERT_EQ(only_owner(x.data()), last_space);
  std::vector<TransferCounters> before;
  for (SpaceId s = 1; s < directory().space_count(); ++s) before.push_back(directory().counters(s));

  // y = x + 2 * zero: x is on the last device, zero on the host; the last device holds more.
  ASSERT_OK(Task(kMix, MixArgs{x.data(), zero.data(), y.data(), n})
                .in(x.data(), n)
                .in(zero.data(), n)
                .out(y.data(), n)
                .ndrange({n}, {64})
                .submit());
  ASSERT_OK(nanort_taskwait_noflush());
  EXPECT_EQ(only_owner(y.data()), last_space) << "the consumer ran where x was";
  for (SpaceId s = 1; s < directory().space_count(); ++s) {
    const TransferCounters now = directory().counters(s);
    EXPECT_EQ(now.bytes_from_peer, before[s - 1].bytes_from_peer) << "x crossed to space " << s;
  }
  // Overwriting the first half of x: the last device holds x alone.
  ASSERT_OK(Task(kSlowIota, SlowIotaArgs{x.data(), 7, n / 2, 1})
                .out(x.data(), n / 2)
                .ndrange({n / 2}, {64})
                .submit());
  ASSERT_OK(nanort_taskwait());
  const int first_bit = slow_iota_value(7, 0, 1) - 7, second_bit = slow_iota_value(5, 0, 1) - 5;
  for (int i = 0; i < n; ++i) {
    const int expected_x = i < n / 2 ? 7 + i + first_bit : 5 + i + second_bit;
    ASSERT_EQ(x[i], expected_x) << i;
    ASSERT_EQ(y[i], 5 + i + second_bit) << i;
  }
  EXPECT_EQ(directory().counters(last_space).bytes_to_device, before[last].bytes_to_device +
                                                                   n * sizeof(int))
      << "the last device got only 'zero' from the host";
}

// NANORT_SCHEDULER=dmda (its own ctest entry): a task kind with an OpenCL and a (slow) CPU
// version is measured on each place first, then goes where the model expects it to finish
// first. One task at a time, so that each decision sees every place idle: the devices get the
// task until the model knows each of their models (identical devices share one), then the CPU
// workers until it knows them. Which place is faster is then a matter of the times this
// machine measured under its load, so each later task is checked against the model as it
// stood when the task was placed, wherever that model's choice is clear (twice as fast); the
// choice for given estimates is the unit tests' (tests/unit/placement_test.cpp).
TEST_F(MultiDevice, DmdaMeasuresEachPlaceThenPlacesByTheModel) {
  SKIP_UNLESS_LAZY_WRITE_BACK();
  if (std::string(nanort::rt::Runtime::get().scheduler_name()) != "dmda")
    GTEST_SKIP() << "runs with NANORT_SCHEDULER=dmda";
  const auto &runtime = nanort::rt::Runtime::get();
  // (The first time of each place is not kept: it builds the kernel, touches fresh memory.)
  constexpr int calibration = static_cast<int>(nanort::rt::PerfModel::kCalibration) + 1;
  constexpr int n = 1024, measured = 40;
  constexpr std::uint64_t bytes = n * sizeof(int);
  std::set<std::string> models;
  for (const auto &accelerator : runtime.accelerators()) models.insert(accelerator->model());
  const int on_devices_first = calibration * static_cast<int>(models.size());
  auto &arrays = data_.make<std::vector<std::vector<int>>>(on_devices_first + calibration + measured,
                                                          std::vector<int>(n, 1));
  auto expected = [&](const std::string &place) {
    return runtime.expected_seconds(*kDouble.get(), place, bytes);
  };
  // What the model expects on the fastest device model (-1 while one is unknown).
  auto expected_on_devices = [&] {
    double best = -1;
    for (const std::string &model : models) {
      const double seconds = expected(model);
      if (seconds < 0) return -1.0;
      best = best < 0 ? seconds : std::min(best, seconds);
    }
    return best;
  };
  // Runs task k alone; true when it ran on a device (its result is there alone).
  auto run_alone = [&](int k) {
    EXPECT_OK(Task(kDouble, DoubleArgs{arrays[k].data(), n})
                  .inout(arrays[k].data(), n)
                  .ndrange({n})
                  .submit());
    EXPECT_OK(nanort_taskwait_noflush());
    return only_owner(arrays[k].data()) != 0;
  };
  int k = 0;
  for (; k < on_devices_first; ++k)
    EXPECT_TRUE(run_alone(k)) << "task " << k << " (measuring the devices)";
  EXPECT_GE(expected_on_devices(), 0.0) << "the model knows the devices now";
  EXPECT_EQ(cpu_doubles.load(), 0);
  for (; k < on_devices_first + calibration; ++k)
    EXPECT_FALSE(run_alone(k)) << "task " << k << " (measuring the CPU)";
  EXPECT_EQ(cpu_doubles.load(), calibration);
  EXPECT_GE(expected("smp"), kCpuDoubleSeconds) << "the CPU version sleeps that long";

  int on_devices = 0, clear = 0;
  for (; k < on_devices_first + calibration + measured; ++k) {
    const double device = expected_on_devices(), cpu = expected("smp");
    const bool ran_on_device = run_alone(k);
    on_devices += ran_on_device;
    // (Copies of 4 KiB add a microsecond or less to either estimate.)
    if (2 * device + 1e-5 < cpu) {
      ++clear;
      EXPECT_TRUE(ran_on_device) << "task " << k << ": the model expected " << device * 1e3
                                 << " ms on a device, " << cpu * 1e3 << " ms on the CPU";
    } else if (2 * cpu + 1e-5 < device) {
      ++clear;
      EXPECT_FALSE(ran_on_device) << "task " << k << ": the model expected " << device * 1e3
                                  << " ms on a device, " << cpu * 1e3 << " ms on the CPU";
    }
  }
  std::printf("learnt: %.3f ms on a device, %.3f ms on the CPU; %d of %d tasks on the devices "
              "(%d clear choices)\n",
              expected_on_devices() * 1e3, expected("smp") * 1e3, on_devices, measured, clear);
  ASSERT_OK(nanort_taskwait());
  for (auto &x : arrays)
    for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 2) << i;
}

// Affinity scores (nanort_set_affinity) place tasks under any policy: scored far better on the
// last device than on the others and the CPU workers, every task runs there. A task pinned to
// a device kind (index -1) runs on a device of that kind, never on the CPU workers.
TEST_F(MultiDevice, AffinityScoresAndKindPinningPlaceTasks) {
  SKIP_UNLESS_LAZY_WRITE_BACK();
  if (std::string(nanort::rt::Runtime::get().scheduler_name()) == "dmda")
    GTEST_SKIP() << "dmda tries each place once before the scores count (see the unit tests)";
  constexpr int n = 1024, tasks = 12;
  const int last = devices_ - 1;
  const std::string last_name = "opencl" + std::to_string(last);
  ASSERT_OK(nanort_set_affinity("affinity_probe", "opencl", 100));
  ASSERT_OK(nanort_set_affinity("affinity_probe", last_name.c_str(), 1));
  ASSERT_OK(nanort_set_affinity("affinity_probe", "smp", 1000));
  EXPECT_EQ(nanort_set_affinity("affinity_probe", "smp", 0), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_set_affinity("", "smp", 1), NANORT_ERROR_INVALID_ARGUMENT);
  auto &x = data_.make<std::vector<std::vector<int>>>(2 * tasks, std::vector<int>(n, 1));
  for (int k = 0; k < tasks; ++k)
    ASSERT_OK(Task(kDouble, DoubleArgs{x[k].data(), n})
                  .label("affinity_probe")
                  .inout(x[k].data(), n)
                  .ndrange({n})
                  .submit());
  ASSERT_OK(nanort_taskwait_noflush());
  for (int k = 0; k < tasks; ++k)
    EXPECT_EQ(only_owner(x[k].data()), static_cast<SpaceId>(last + 1)) << "task " << k;

  for (int k = tasks; k < 2 * tasks; ++k)
    ASSERT_OK(Task(kDouble, DoubleArgs{x[k].data(), n})
                  .inout(x[k].data(), n)
                  .ndrange({n})
                  .on_device(NANORT_DEVICE_OPENCL, -1)
                  .submit());
  ASSERT_OK(nanort_taskwait_noflush());
  for (int k = tasks; k < 2 * tasks; ++k)
    EXPECT_NE(only_owner(x[k].data()), SpaceId{0}) << "task " << k << " ran on the CPU workers";
  ASSERT_OK(nanort_taskwait());
  for (auto &v : x)
    for (int i = 0; i < n; ++i) ASSERT_EQ(v[i], 2) << i;
}

// NANORT_WRITE_BACK=eager (its own ctest entry): a result no task waits for goes home when its
// task ends, the device keeping its copy; the flushing taskwait then has nothing to copy. A
// result a later task reads on the device moves nothing home in between.
TEST_F(MultiDevice, EagerWriteBackBringsFinalResultsHome) {
  if (lazy_write_back()) GTEST_SKIP() << "runs with NANORT_WRITE_BACK=eager";
  constexpr int n = 1 << 16;
  auto &x = data_.make<std::vector<std::vector<int>>>(2, std::vector<int>(n, 1));
  // Page-locked: a GPU's results go home early only from there (from ordinary memory a GPU
  // driver's copy would hold the thread that ends the task).
  ASSERT_OK(nanort_host_register(x[0].data(), n * sizeof(int)));
  nanort::dc::MemorySpace &device0 = directory().memory(1);
  if (device0.wants_staging() && !device0.is_page_locked(x[0].data(), n * sizeof(int))) {
    EXPECT_EQ(nanort_host_unregister(x[0].data()), NANORT_SUCCESS);
    GTEST_SKIP() << device0.name() << " copies ordinary memory through staging buffers and "
                 << "cannot use this page-locked memory directly: its results go home at the flush";
  }
  const TransferCounters before = directory().counters(1);
  // x[0]: doubled twice on device 0 (the second task waits for the first), nothing after.
  // The kernels are held until both are submitted: the first cannot end before the second
  // exists to wait for it (on a loaded machine it could, and its result would go home too).
  {
    HeldDevices held;
    EXPECT_TRUE(held.all()) << "a device cannot hold its kernels";
    for (int k = 0; k < 2; ++k)
      ASSERT_OK(Task(kDouble, DoubleArgs{x[0].data(), n})
                    .inout(x[0].data(), n)
                    .ndrange({n})
                    .on_device(NANORT_DEVICE_OPENCL, 0)
                    .submit());
  }
  ASSERT_OK(nanort_taskwait_noflush());
  // The write-back started when the last task ended, before the taskwait returned.
  const TransferCounters after = directory().counters(1);
  EXPECT_EQ(after.bytes_to_host - before.bytes_to_host, n * sizeof(int))
      << "one write-back, of the last value only";
  const FragmentInfo home = directory().fragment_at(x[0].data());
  EXPECT_TRUE(home.valid & nanort::dc::bit(0)) << "valid on the host";
  EXPECT_TRUE(home.valid & nanort::dc::bit(1)) << "and still on device 0";
  // A CPU task reading x[0] waits for that copy and makes none of its own.
  long sum = 0;
  ASSERT_OK(cpu_task("sum", [&] { for (int v : x[0]) sum += v; }).in(x[0].data(), n).submit());
  ASSERT_OK(nanort_taskwait_noflush());
  EXPECT_EQ(sum, 4L * n);
  EXPECT_EQ(directory().counters(1).bytes_to_host, after.bytes_to_host);
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(directory().counters(1).bytes_to_host, after.bytes_to_host)
      << "the flush found it home";
  ASSERT_OK(nanort_host_unregister(x[0].data()));
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[0][i], 4) << i;
}

// nanort_host_unregister brings the range's device data home before it unlocks: a result left
// on a device (taskwait_noflush) is in host memory once the call returns.
TEST_F(MultiDevice, HostUnregisterBringsItsRangeHome) {
  SKIP_UNLESS_LAZY_WRITE_BACK();
  constexpr int n = 4096;
  auto &x = data_.make<std::vector<int>>(n, 1);
  ASSERT_OK(nanort_host_register(x.data(), n * sizeof(int)));
  ASSERT_OK(Task(kDouble, DoubleArgs{x.data(), n})
                .inout(x.data(), n)
                .ndrange({n})
                .on_device(NANORT_DEVICE_OPENCL, 0)
                .submit());
  ASSERT_OK(nanort_taskwait_noflush());
  ASSERT_EQ(x[0], 1) << "still on the device";
  ASSERT_OK(nanort_host_unregister(x.data()));
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 2) << i;
}

TEST_F(MultiDevice, PlacementOnAMissingDeviceFailsAtSubmit) {
  std::vector<int> x(64);
  EXPECT_EQ(Task(kSlowIota, SlowIotaArgs{x.data(), 0, 64, 1})
                .out(x.data(), 64)
                .ndrange({64})
                .on_device(NANORT_DEVICE_OPENCL, devices_)
                .submit(),
            NANORT_ERROR_NO_DEVICE);
  const std::string message = nanort_last_error();
  EXPECT_NE(message.find("opencl device " + std::to_string(devices_) + " but there are " +
                         std::to_string(devices_)),
            std::string::npos)
      << message;
  EXPECT_EQ(Task(kSlowIota, SlowIotaArgs{x.data(), 0, 64, 1})
                .out(x.data(), 64)
                .ndrange({64})
                .on_device(NANORT_DEVICE_CUDA, 0)
                .submit(),
            NANORT_ERROR_NO_DEVICE);
  EXPECT_NE(std::string(nanort_last_error()).find("no implementation for it"), std::string::npos)
      << nanort_last_error();
}

// The random mix of device and CPU tasks, now with every device taking tasks: blocks move
// between devices as well as to and from the host. Every other device task is placed by hand,
// on each device in turn (so every device takes some, whatever the timing); the scheduler
// places the rest.
TEST_F(MultiDevice, RandomDeviceAndCpuTasksMatchSequentialRun) {
  for (unsigned seed : {11u, 12u, 13u}) {
    const std::string failures = run_mixed_workload(seed, 150, devices_);
    EXPECT_EQ(failures, "") << "seed " << seed;
  }
  for (int d = 0; d < devices_; ++d) EXPECT_TRUE(took_work(d)) << "device " << d << " ran no task";
}

}  // namespace
