// CUDA kernels as tasks through the C ABI: results, transfers counted by the directory,
// kernel lookup (C++-mangled names too), dynamic shared memory, errors, eviction under a small
// device memory limit, CUDA and OpenCL kernels on one array, two GPUs. Every case runs in a
// process of its own (ctest); without an NVIDIA GPU each one reports SKIP with the reason.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <gtest/gtest.h>

#include <nanort/nanort.h>
#include "status_checks.hpp"

#include <stdlib.h>

#include <cstdlib>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "cuda/cuda_device.hpp"
#include "device/accelerator.hpp"
#include "device/device_numbering.hpp"
#include "device/host_lock_cache.hpp"
#include "runtime.hpp"
#include "taskiter.hpp"

extern "C" const unsigned char test_kernels[];
extern "C" const std::size_t test_kernels_size;

namespace {

const nanort_kernel_module kModule = {NANORT_ABI_VERSION, NANORT_MODULE_CUDA_FATBIN,
                                      test_kernels, 0, nullptr, "tests/cuda/kernels.cu"};

// One task site with a CUDA implementation (and optionally an OpenCL one first).
class Site {
 public:
  Site(const char *kernel, std::vector<nanort_kernel_arg> args, int line,
       nanort_device_kind device = NANORT_DEVICE_CUDA, const nanort_kernel_module *module = &kModule)
      : args_(std::move(args)) {
    impl_ = {static_cast<uint32_t>(device), nullptr, kernel, module, args_.data(),
             static_cast<uint32_t>(args_.size())};
    site_ = {NANORT_ABI_VERSION, kernel, "cuda_tasks_test.cpp", line, &impl_, 1, nullptr};
  }
  const nanort_task_site *get() const { return &site_; }

 private:
  std::vector<nanort_kernel_arg> args_;
  nanort_task_impl impl_;
  nanort_task_site site_;
};

template <class T>
nanort_kernel_arg value(std::size_t offset) {
  return {static_cast<uint32_t>(offset), sizeof(T), NANORT_ARG_VALUE};
}
nanort_kernel_arg buffer(std::size_t offset) {
  return {static_cast<uint32_t>(offset), sizeof(void *), NANORT_ARG_BUFFER};
}

struct SaxpyArgs {
  int n;
  float a;
  const float *x;
  float *y;
};
const Site kSaxpy("saxpy",
                  {value<int>(offsetof(SaxpyArgs, n)), value<float>(offsetof(SaxpyArgs, a)),
                   buffer(offsetof(SaxpyArgs, x)), buffer(offsetof(SaxpyArgs, y))},
                  __LINE__);

struct AddArgs {
  int *x;
  int v;
  int n;
};
const std::vector<nanort_kernel_arg> kAddArgs = {buffer(offsetof(AddArgs, x)),
                                                 value<int>(offsetof(AddArgs, v)),
                                                 value<int>(offsetof(AddArgs, n))};
const Site kAdd("add", kAddArgs, __LINE__);
const Site kAddOnce("add_once", kAddArgs, __LINE__);
const Site kExtentY("extent_y", kAddArgs, __LINE__);

struct ReverseArgs {
  int *x;
  int n;
};
const Site kReverse("reverse_blocks",
                    {buffer(offsetof(ReverseArgs, x)), value<int>(offsetof(ReverseArgs, n))},
                    __LINE__);

struct ScaleArgs {
  float *x;
  int n;
  float f;
};
const Site kScale("scale",
                  {buffer(offsetof(ScaleArgs, x)), value<int>(offsetof(ScaleArgs, n)),
                   value<float>(offsetof(ScaleArgs, f))},
                  __LINE__);

struct OutOfBoundsArgs {
  int *x;
};
const Site kOutOfBounds("write_out_of_bounds", {buffer(offsetof(OutOfBoundsArgs, x))}, __LINE__);
const Site kMissing("no_such_kernel", {buffer(0)}, __LINE__);
struct WrongArgs {
  int *x;
  double v;
  int n;
  int extra;
};
const Site kTooManyArgs("add",
                        {buffer(offsetof(WrongArgs, x)), value<int>(offsetof(WrongArgs, n)),
                         value<int>(offsetof(WrongArgs, n)), value<int>(offsetof(WrongArgs, extra))},
                        __LINE__);
const Site kWrongSize("add",
                      {buffer(offsetof(WrongArgs, x)), value<double>(offsetof(WrongArgs, v)),
                       value<int>(offsetof(WrongArgs, n))},
                      __LINE__);

// The same 'add' in OpenCL C, for the mixed test.
const nanort_kernel_module kClModule = {
    NANORT_ABI_VERSION, NANORT_MODULE_OPENCL_SOURCE,
    "__kernel void add(__global int *x, int v, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) x[i] += v;\n"
    "}\n",
    0, nullptr, "add.cl"};
const Site kClAdd("add", kAddArgs, __LINE__, NANORT_DEVICE_OPENCL, &kClModule);

struct Access {
  const void *address;
  std::size_t bytes;
  nanort_access_mode mode;
};

template <class Args>
nanort_status submit(const Site &site, const Args &args, std::initializer_list<Access> accesses,
                     std::size_t global, std::size_t local = 0, std::size_t shmem = 0,
                     int device = -1) {
  nanort_task *task = nanort_task_create(site.get(), sizeof(Args));
  if (!task) return NANORT_ERROR_INVALID_ARGUMENT;
  *static_cast<Args *>(nanort_task_args(task)) = args;
  for (const Access &a : accesses) nanort_task_access(task, a.address, a.bytes, a.mode);
  nanort_task_set_ndrange(task, 1, &global, local ? &local : nullptr);
  if (shmem) nanort_task_set_shmem(task, shmem);
  if (device >= 0)
    nanort_task_set_device(task, static_cast<nanort_device_kind>(site.get()->impls[0].device), device);
  return nanort_task_submit(task);
}

// 'device' >= 0: placed on that device of the site's kind.
nanort_status add(int *x, int v, int n, nanort_access_mode mode = NANORT_INOUT,
                  const Site &site = kAdd, int device = -1) {
  return submit(site, AddArgs{x, v, n}, {{x, n * sizeof(int), mode}},
                static_cast<std::size_t>(n), 128, 0, device);
}

// A CPU task that copies the last element of an array into a slot.
struct PeekArgs {
  const int *x;
  int n;
  int *slot;
};
void peek(void *args) {
  auto *a = static_cast<PeekArgs *>(args);
  *a->slot = a->x[a->n - 1];
}
const nanort_task_impl kPeekImpl = {NANORT_DEVICE_SMP, peek, nullptr, nullptr, nullptr, 0};
const nanort_task_site kPeekSite = {NANORT_ABI_VERSION, "peek", __FILE__, __LINE__, &kPeekImpl, 1,
                                    nullptr};

// The directory's space of CUDA device 'k' (cudaK), 0 when there is none.
nanort::dc::SpaceId cuda_space(int k) {
  const auto &accelerators = nanort::rt::Runtime::get().accelerators();
  for (std::size_t i = 0; i < accelerators.size(); ++i)
    if (accelerators[i]->name() == "cuda" + std::to_string(k))
      return nanort::rt::space_of(static_cast<int>(i));
  return 0;
}
nanort::dc::TransferCounters cuda_counters(int k) {
  const nanort::dc::SpaceId space = cuda_space(k);
  return space ? nanort::rt::Runtime::get().directory()->counters(space)
               : nanort::dc::TransferCounters{};
}
nanort::dc::TransferCounters cuda0_counters() { return cuda_counters(0); }
// Summed over every CUDA device: wherever the runtime ran the tasks.
nanort::dc::TransferCounters all_cuda_counters() {
  nanort::dc::TransferCounters sum;
  for (int k = 0; k < nanort_device_count(NANORT_DEVICE_CUDA); ++k) {
    const auto c = cuda_counters(k);
    sum.bytes_to_device += c.bytes_to_device;
    sum.bytes_to_host += c.bytes_to_host;
    sum.bytes_from_peer += c.bytes_from_peer;
  }
  return sum;
}

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NANORT_OPENCL_CACHE", "off", 0);  // the mixed test builds OpenCL C: no files left
    ASSERT_OK(nanort_init());  // with NANORT_REQUIRE=cuda, fails here on a machine without GPUs
    if (nanort_device_count(NANORT_DEVICE_CUDA) == 0) {
      std::string why;
      const auto gpus = nanort::rt::cuda::list_devices(&why);
      if (why.empty() && !gpus.empty())
        why = std::to_string(gpus.size()) + " GPU(s) found, none opened (NANORT_CUDA_DEVICES=" +
              (std::getenv("NANORT_CUDA_DEVICES") ? std::getenv("NANORT_CUDA_DEVICES") : "all") +
              ", or the runtime's warning above says why)";
      GTEST_SKIP() << "no CUDA device: " << why;
    }
  }
};

TEST_F(Cuda, Saxpy) {
  constexpr int n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000);
    y[i] = 1.0f;
  }
  ASSERT_OK(submit(kSaxpy, SaxpyArgs{n, 2.0f, x.data(), y.data()},
                   {{x.data(), n * sizeof(float), NANORT_IN},
                    {y.data(), n * sizeof(float), NANORT_INOUT}},
                   n, 256));
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0f * static_cast<float>(i % 1000) + 1.0f) << i;
}

// Ten dependent kernels on one array: it moves to a GPU once, nothing comes back before
// taskwait, and the flush brings it back once (whichever GPUs ran them).
TEST_F(Cuda, ChainMovesNothingThroughTheHost) {
  constexpr int n = 1 << 18;
  std::vector<int> x(n, 0);
  const auto before = all_cuda_counters();
  for (int k = 0; k < 10; ++k) ASSERT_OK(add(x.data(), 1, n));
  ASSERT_OK(nanort_taskwait_noflush());
  const auto middle = all_cuda_counters();
  EXPECT_EQ(middle.bytes_to_device - before.bytes_to_device, n * sizeof(int));
  EXPECT_EQ(middle.bytes_to_host - before.bytes_to_host, 0u);
  EXPECT_EQ(x[0], 0) << "host memory changed before the flush";
  ASSERT_OK(nanort_taskwait());
  const auto after = all_cuda_counters();
  EXPECT_EQ(after.bytes_to_host - middle.bytes_to_host, n * sizeof(int));
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 10) << i;
}

TEST_F(Cuda, CxxMangledKernelIsFoundByItsName) {
  constexpr int n = 1000;
  std::vector<float> x(n, 3.0f);
  ASSERT_OK(submit(kScale, ScaleArgs{x.data(), n, 2.0f}, {{x.data(), n * sizeof(float), NANORT_INOUT}},
                   n, 128));
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 6.0f) << i;
}

TEST_F(Cuda, DynamicSharedMemoryFromShmem) {
  constexpr int block = 128, n = block * 64;
  std::vector<int> x(n);
  std::iota(x.begin(), x.end(), 0);
  ASSERT_OK(submit(kReverse, ReverseArgs{x.data(), n}, {{x.data(), n * sizeof(int), NANORT_INOUT}},
                   n, block, block * sizeof(int)));
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) {
    const int b = i / block, t = i % block;
    ASSERT_EQ(x[i], b * block + (block - 1 - t)) << i;
  }
}

TEST_F(Cuda, GlobalSizeRoundedUpToWholeBlocks) {
  constexpr int n = 1000;  // 8 blocks of 128, the last one partly outside
  std::vector<int> x(n, 5);
  ASSERT_OK(add(x.data(), 2, n));
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 7) << i;
}

TEST_F(Cuda, UnknownKernelNameIsNamedWithTheKernelsThereAre) {
  int x[4] = {};
  ASSERT_OK(submit(kMissing, OutOfBoundsArgs{x}, {{x, sizeof x, NANORT_INOUT}}, 4));
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_NE(message.find("no_such_kernel"), std::string::npos) << message;
  EXPECT_NE(message.find("saxpy"), std::string::npos) << "the module's kernels: " << message;
  EXPECT_NE(message.find("cuda_tasks_test.cpp"), std::string::npos) << message;
}

TEST_F(Cuda, WrongParametersAreErrors) {
  int x[4] = {};
  ASSERT_OK(submit(kTooManyArgs, WrongArgs{x, 1, 4, 0}, {{x, sizeof x, NANORT_INOUT}}, 4));
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  std::string message = nanort_last_error();
  EXPECT_NE(message.find("takes 3 parameter(s), the task passes 4"), std::string::npos) << message;
  ASSERT_OK(submit(kWrongSize, WrongArgs{x, 1, 4, 0}, {{x, sizeof x, NANORT_INOUT}}, 4));
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  message = nanort_last_error();
  EXPECT_NE(message.find("parameter 1 of kernel 'add' is 4 bytes, the task passes 8"),
            std::string::npos)
      << message;
}

// A block no GPU allows (2048 threads): the driver refuses the launch. A kernel's first launch
// in a shape (block, shared memory) is waited for, so the failure comes with the task, and the
// task after it was not launched behind it (it is not run). After the kernel launched in
// another shape, the refused shape fails with its task the same way, and the data holds what
// the task before it left. (All on the first GPU: the kernel's launches there are counted.)
TEST_F(Cuda, RefusedLaunchFailsTheTaskAndNotItsSuccessorsData) {
  std::vector<int> x(64, 1);
  const Access all{x.data(), x.size() * sizeof(int), NANORT_INOUT};
  const auto add_once = [&](std::size_t global, std::size_t local) {
    return submit(kAddOnce, AddArgs{x.data(), 10, 64}, {all}, global, local, 0, 0);
  };
  ASSERT_OK(add_once(2048, 2048));
  ASSERT_OK(add_once(64, 0));
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  std::string message = nanort_last_error();
  EXPECT_NE(message.find("task 'add_once' (cuda_tasks_test.cpp:"), std::string::npos) << message;
  EXPECT_NE(message.find("launching kernel 'add_once' (grid 1x1x1, block 2048x1x1, 0 bytes of "
                         "shared memory) failed with CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("was not run: it depends on task 'add_once'"), std::string::npos)
      << message;
  EXPECT_EQ(x, std::vector<int>(64, 1));
  ASSERT_OK(add_once(64, 0));
  ASSERT_OK(add_once(2048, 2048));
  ASSERT_OK(add_once(64, 0));
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  message = nanort_last_error();
  EXPECT_NE(message.find("task 'add_once' (cuda_tasks_test.cpp:"), std::string::npos) << message;
  EXPECT_NE(message.find("launching kernel 'add_once' (grid 1x1x1, block 2048x1x1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("was not run: it depends on task 'add_once'"), std::string::npos)
      << message;
  EXPECT_EQ(x, std::vector<int>(64, 11));
}

// Each launch has the dimensions its task gave, not those of the launch before it (the
// runtime reuses its launch records): a 1-D launch, a 2-D one of extent 2 in y, a 1-D one.
TEST_F(Cuda, EachLaunchHasItsOwnDimensions) {
  constexpr int n = 256;
  std::vector<int> x(n, 0);
  const auto launch = [&](int dims) {
    nanort_task *task = nanort_task_create(kExtentY.get(), sizeof(AddArgs));
    ASSERT_NE(task, nullptr);
    *static_cast<AddArgs *>(nanort_task_args(task)) = AddArgs{x.data(), 0, n};
    ASSERT_OK(nanort_task_access(task, x.data(), n * sizeof(int), NANORT_OUT));
    const std::size_t global[2] = {n, 2}, local[2] = {64, 1};
    ASSERT_OK(nanort_task_set_ndrange(task, dims, global, local));
    nanort_task_set_device(task, NANORT_DEVICE_CUDA, 0);
    ASSERT_OK(nanort_task_submit(task));
    ASSERT_OK(nanort_taskwait());
  };
  launch(1);
  EXPECT_EQ(x, std::vector<int>(n, 1));
  launch(2);
  EXPECT_EQ(x, std::vector<int>(n, 2));
  launch(1);
  EXPECT_EQ(x, std::vector<int>(n, 1));
}

// An illegal address inside a kernel leaves the GPU's context unusable: the program stops
// at once with the failed task's name and pragma location (a death test: the statement runs
// in a new process of this test binary).
TEST_F(Cuda, OutOfBoundsKernelStopsTheProgramNamingTheTask) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::vector<int> x(256, 0);
        submit(kOutOfBounds, OutOfBoundsArgs{x.data()},
               {{x.data(), x.size() * sizeof(int), NANORT_INOUT}}, 32);
        nanort_taskwait();
        std::exit(0);  // not reached
      },
      ::testing::ExitedWithCode(EXIT_FAILURE),
      "task 'write_out_of_bounds' \\(cuda_tasks_test.cpp:[0-9]+\\) failed on cuda[0-9]+: .*"
      "CUDA_ERROR_ILLEGAL_ADDRESS.*the program stops");
}

// A GPU allowed 1 MiB of task data (set before the runtime starts in this process).
class SmallCuda : public Cuda {
 protected:
  void SetUp() override {
    setenv("NANORT_DEVICE_MEMORY", "cuda0=1M", 1);
    Cuda::SetUp();
  }
};

// 16 arrays of 256 KiB through a GPU allowed 1 MiB: evictions write modified data back, and
// every result is right.
TEST_F(SmallCuda, EvictionUnderASmallLimit) {
  if (nanort::rt::Runtime::get().directory()->capacity(cuda_space(0)) != (1u << 20))
    GTEST_SKIP() << "the runtime started before the 1 MiB limit was set: run this test in a "
                    "process of its own (ctest does)";
  constexpr int arrays = 16, n = 64 * 1024;
  std::vector<std::vector<int>> x(arrays, std::vector<int>(n, 0));
  for (int round = 0; round < 3; ++round)
    for (int a = 0; a < arrays; ++a)
      ASSERT_OK(add(x[a].data(), a + 1, n, NANORT_INOUT, kAdd, 0));  // on cuda0, the small one
  ASSERT_OK(nanort_taskwait());
  for (int a = 0; a < arrays; ++a)
    for (int i = 0; i < n; i += 97) ASSERT_EQ(x[a][i], 3 * (a + 1)) << a << " " << i;
  EXPECT_GT(cuda0_counters().evictions, 0u);
  EXPECT_LE(cuda0_counters().peak_bytes, 1u << 20);
}

// The same with page-locked arrays (nanort_host_register), locked from the start or only after
// the first round (copies of a range go staged first, then direct, as when the runtime locks
// a range that moves often; by then the runtime has locked the arrays by itself, and gives
// them over). The arrays lie next to each other, sharing pages, as malloc gives them.
void eviction_of_page_locked_arrays(bool lock_after_first_round) {
  if (nanort::rt::Runtime::get().directory()->capacity(cuda_space(0)) != (1u << 20))
    GTEST_SKIP() << "the runtime started before the 1 MiB limit was set: run this test in a "
                    "process of its own (ctest does)";
  constexpr int arrays = 16, n = 64 * 1024, stride = n + 16;
  std::vector<int> storage(arrays * stride, 0);
  std::vector<int *> x;
  for (int a = 0; a < arrays; ++a) x.push_back(storage.data() + a * stride + 4);
  auto lock_all = [&] {
    for (int *array : x) ASSERT_OK(nanort_host_register(array, n * sizeof(int)));
  };
  if (!lock_after_first_round) lock_all();
  for (int round = 0; round < 3; ++round) {
    for (int a = 0; a < arrays; ++a)
      ASSERT_OK(add(x[a], a + 1, n, NANORT_INOUT, kAdd, 0));
    if (round == 0 && lock_after_first_round) {
      ASSERT_OK(nanort_taskwait());
      lock_all();
    }
  }
  ASSERT_OK(nanort_taskwait());
  for (int a = 0; a < arrays; ++a)
    for (int i = 0; i < n; i += 97) ASSERT_EQ(x[a][i], 3 * (a + 1)) << a << " " << i;
  for (int *array : x) ASSERT_OK(nanort_host_unregister(array));
  EXPECT_GT(cuda0_counters().evictions, 0u);
  EXPECT_LE(cuda0_counters().peak_bytes, 1u << 20);
}

TEST_F(SmallCuda, EvictionOfPageLockedArrays) { eviction_of_page_locked_arrays(false); }
TEST_F(SmallCuda, EvictionOfArraysLockedAfterTheFirstRound) { eviction_of_page_locked_arrays(true); }

// Plain malloc'd memory that moves round after round is page-locked by the runtime
// (NANORT_HOST_REGISTER=auto, the default), the results stay right, and freeing the array
// unlocks it.
TEST_F(Cuda, OrdinaryMemoryThatMovesIsLockedByTheRuntime) {
  nanort::rt::HostLockCache *locks = nanort::rt::Runtime::get().auto_host_locks();
  if (!locks) GTEST_SKIP() << "NANORT_HOST_REGISTER=auto is off in this process";
  constexpr int blocks = 8, block = 256 * 1024, n = blocks * block;  // 8 MiB of ints
  auto *x = static_cast<int *>(std::malloc(n * sizeof(int)));
  ASSERT_NE(x, nullptr);
  std::fill(x, x + n, 0);
  for (int round = 0; round < 4; ++round) {
    for (int b = 0; b < blocks; ++b)
      ASSERT_OK(add(x + b * block, 1, block, NANORT_INOUT, kAdd));
    ASSERT_OK(nanort_taskwait());
    locks->drain();
  }
  for (int i = 0; i < n; i += 101) ASSERT_EQ(x[i], 4) << i;
  const nanort::rt::HostLockCache::Stats stats = locks->stats();
  const std::string what = "locks " + std::to_string(stats.locks) + ", unlocks " +
                           std::to_string(stats.unlocks) + ", entries " +
                           std::to_string(stats.entries) + ", refused " +
                           std::to_string(stats.refused) + " (" + stats.last_refusal + ")";
  // (Blocks that moved later than the first lock, on the other GPU, are locked apart: a copy
  // over two locked ranges is made in two pieces.)
  for (int b = 0; b < blocks; ++b)
    EXPECT_TRUE(locks->covers(x + b * block, block * sizeof(int))) << b << ": " << what;
  const std::size_t locked = locks->stats().locked_bytes;
  EXPECT_GE(locked, n * sizeof(int));
  std::free(x);
  EXPECT_LE(locks->stats().locked_bytes + n * sizeof(int), locked);
}

// Even blocks on OpenCL, odd blocks on CUDA, then every block on the other kind: the data
// crosses between the two through the directory.
TEST_F(Cuda, CudaAndOpenClKernelsOnOneArray) {
  if (nanort_device_count(NANORT_DEVICE_OPENCL) == 0) GTEST_SKIP() << "no OpenCL device";
  constexpr int blocks = 8, block = 4096, n = blocks * block;
  std::vector<int> x(n, 0);
  for (int b = 0; b < blocks; ++b)
    ASSERT_OK(add(x.data() + b * block, 1, block, NANORT_INOUT, b % 2 == 0 ? kClAdd : kAdd));
  for (int b = 0; b < blocks; ++b)
    ASSERT_OK(add(x.data() + b * block, 10, block, NANORT_INOUT, b % 2 == 0 ? kAdd : kClAdd));
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 11) << i;
}

// Data made on one GPU and used on the other: directly where peer access works, else
// through the host. The tasks are placed (nanort_task_set_device), so the route is certain.
TEST_F(Cuda, DataExchangedBetweenTwoGpus) {
  if (nanort_device_count(NANORT_DEVICE_CUDA) < 2) GTEST_SKIP() << "fewer than two GPUs";
  constexpr int n = 1 << 20;
  constexpr std::uint64_t bytes = n * sizeof(int);
  std::vector<int> a(n, 0), b(n, 0);
  for (int k = 0; k < 20; ++k) {
    ASSERT_OK(add(a.data(), 1, n, NANORT_INOUT, kAdd, 0));
    ASSERT_OK(add(b.data(), 2, n, NANORT_INOUT, kAdd, 1));
  }
  ASSERT_OK(nanort_taskwait_noflush());
  EXPECT_EQ(a[0], 0) << "host memory changed before the flush";
  const auto before0 = cuda_counters(0), before1 = cuda_counters(1);
  ASSERT_OK(add(a.data(), 100, n, NANORT_INOUT, kAdd, 1));  // a: cuda0 -> cuda1
  ASSERT_OK(add(b.data(), 200, n, NANORT_INOUT, kAdd, 0));  // b: cuda1 -> cuda0
  ASSERT_OK(nanort_taskwait_noflush());
  const auto after0 = cuda_counters(0), after1 = cuda_counters(1);
  EXPECT_EQ(after1.bytes_from_peer + after1.bytes_to_device -
                (before1.bytes_from_peer + before1.bytes_to_device),
            bytes);
  EXPECT_EQ(after0.bytes_from_peer + after0.bytes_to_device -
                (before0.bytes_from_peer + before0.bytes_to_device),
            bytes);
  auto &runtime = nanort::rt::Runtime::get();
  const bool peers = runtime.directory()->memory(cuda_space(1)).can_copy_from(
      runtime.directory()->memory(cuda_space(0)));
  if (peers) {
    EXPECT_EQ(after1.bytes_from_peer - before1.bytes_from_peer, bytes) << "a went GPU to GPU";
    EXPECT_EQ(after0.bytes_from_peer - before0.bytes_from_peer, bytes) << "b went GPU to GPU";
  }
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; i += 101) {
    ASSERT_EQ(a[i], 120) << i;
    ASSERT_EQ(b[i], 240) << i;
  }
}

// Every GPU's data goes round all the others (GPU k's array visits k+1, k+2, ... in turn,
// all arrays moving at once), as data crosses among four or eight GPUs in a scaling run:
// each GPU takes in exactly one array per round, from its peer or through the host.
TEST_F(Cuda, DataPassedAroundARingOfAllGpus) {
  const int gpus = nanort_device_count(NANORT_DEVICE_CUDA);
  if (gpus < 2) GTEST_SKIP() << "fewer than two GPUs";
  constexpr int n = 1 << 20;
  constexpr std::uint64_t bytes = n * sizeof(int);
  std::vector<std::vector<int>> data(static_cast<std::size_t>(gpus), std::vector<int>(n, 0));
  for (int k = 0; k < gpus; ++k) ASSERT_OK(add(data[k].data(), k, n, NANORT_INOUT, kAdd, k));
  ASSERT_OK(nanort_taskwait_noflush());
  for (int round = 1; round < gpus; ++round) {
    std::vector<nanort::dc::TransferCounters> before;
    for (int g = 0; g < gpus; ++g) before.push_back(cuda_counters(g));
    for (int k = 0; k < gpus; ++k)  // array k moves on from GPU k+round-1 to GPU k+round
      ASSERT_OK(add(data[k].data(), 1, n, NANORT_INOUT, kAdd, (k + round) % gpus));
    ASSERT_OK(nanort_taskwait_noflush());
    for (int g = 0; g < gpus; ++g) {
      const auto after = cuda_counters(g);
      EXPECT_EQ(after.bytes_from_peer + after.bytes_to_device -
                    (before[g].bytes_from_peer + before[g].bytes_to_device),
                bytes)
          << "round " << round << ": cuda" << g << " takes in one array";
    }
  }
  ASSERT_OK(nanort_taskwait());
  for (int k = 0; k < gpus; ++k)
    for (int i = 0; i < n; i += 97) ASSERT_EQ(data[k][i], k + gpus - 1) << "array " << k;
}

// Steps in which each GPU's array takes the sum of its own and the next GPU's arrays of the
// step before (two buffers per GPU, so each step overwrites what another GPU read in the step
// before), all submitted at once. GPUs with peer access get each step's tasks before the step
// before ends (NANORT_EARLY_LAUNCH=across) and wait for the other GPUs' kernels on the GPU:
// the values say whether every kernel read its inputs after they were written and before
// they were overwritten. Odd steps placed on their GPU, even ones left to the runtime. Every
// step is submitted while the GPUs' kernels are held (Accelerator::hold_kernels), so no step
// ends before the next one is there, however fast the GPUs run.
TEST_F(Cuda, StepsReadEveryGpusResultsOfTheStepBefore) {
  const int gpus = nanort_device_count(NANORT_DEVICE_CUDA);
  if (gpus < 2) GTEST_SKIP() << "fewer than two GPUs";
  constexpr int n = 1 << 22, steps = 8;
  constexpr std::size_t bytes = n * sizeof(float);
  // acc[b][d]: GPU d's array in buffer b; step s writes buffer s % 2.
  std::vector<std::vector<std::vector<float>>> acc(
      2, std::vector<std::vector<float>>(static_cast<std::size_t>(gpus)));
  for (int d = 0; d < gpus; ++d) {
    acc[0][d].assign(n, static_cast<float>(d + 1));
    acc[1][d].assign(n, -1.0f);
  }
  const std::uint64_t across_before = nanort::rt::Runtime::get().early_across_releases();
  {
    std::vector<std::unique_ptr<nanort::rt::KernelHold>> held;
    for (const auto &accelerator : nanort::rt::Runtime::get().accelerators()) {
      held.push_back(accelerator->hold_kernels());
      ASSERT_NE(held.back(), nullptr) << accelerator->name() << " cannot hold its kernels";
    }
    for (int s = 1; s <= steps; ++s) {
      const int cur = s % 2, prev = 1 - cur;
      for (int d = 0; d < gpus; ++d) {
        const int place = s % 2 ? d : -1;
        float *y = acc[cur][d].data();
        const float *own = acc[prev][d].data(), *next = acc[prev][(d + 1) % gpus].data();
        ASSERT_OK(submit(kScale, ScaleArgs{y, n, 0.0f}, {{y, bytes, NANORT_INOUT}}, n, 256, 0, place));
        for (const float *x : {own, next})
          ASSERT_OK(submit(kSaxpy, SaxpyArgs{n, 1.0f, x, y},
                           {{x, bytes, NANORT_IN}, {y, bytes, NANORT_INOUT}}, n, 256, 0, place));
      }
    }
  }  // the holds go together (one GPU's may wait behind another's)
  ASSERT_OK(nanort_taskwait());
  std::vector<float> expected(static_cast<std::size_t>(gpus));
  for (int d = 0; d < gpus; ++d) expected[d] = static_cast<float>(d + 1);
  for (int s = 1; s <= steps; ++s) {
    std::vector<float> next(expected.size());
    for (int d = 0; d < gpus; ++d) next[d] = expected[d] + expected[(d + 1) % gpus];
    expected = next;
  }
  for (int d = 0; d < gpus; ++d)
    for (int i = 0; i < n; i += 4099)
      ASSERT_EQ(acc[steps % 2][d][i], expected[d]) << "GPU " << d << "'s array at " << i;

  bool peers = true;
  auto &directory = *nanort::rt::Runtime::get().directory();
  for (int a = 0; a < gpus; ++a)
    for (int b = 0; b < gpus; ++b)
      if (a != b && !directory.copies_directly(cuda_space(a), cuda_space(b))) peers = false;
  const std::uint64_t across =
      nanort::rt::Runtime::get().early_across_releases() - across_before;
  std::printf("GPUs %d, peer access %s, tasks released behind other GPUs' kernels: %llu\n",
              gpus, peers ? "between all" : "not between all",
              static_cast<unsigned long long>(across));
  const char *mode = std::getenv("NANORT_EARLY_LAUNCH");
  if (!peers || (mode && std::string(mode) == "device"))
    EXPECT_EQ(across, 0u);
  else
    EXPECT_GT(across, 0u) << "no step was released before the step before ended, though every "
                             "step was submitted while the kernels were held";
}

// Dependent kernels are launched behind their predecessors on the GPU, before those end;
// CPU tasks reading the array between them see exactly the kernels before them.
TEST_F(Cuda, DependentKernelsQueuedBehindTheirPredecessors) {
  constexpr int n = 4096, steps = 2000, every = 250;
  std::vector<int> x(n, 0), seen(steps / every, -1);
  for (int k = 1; k <= steps; ++k) {
    ASSERT_OK(add(x.data(), 1, n));
    if (k % every == 0) {
      int *slot = &seen[static_cast<std::size_t>(k / every - 1)];
      nanort_task *task = nanort_task_create(&kPeekSite, sizeof(PeekArgs));
      ASSERT_NE(task, nullptr);
      *static_cast<PeekArgs *>(nanort_task_args(task)) = PeekArgs{x.data(), n, slot};
      ASSERT_OK(nanort_task_access(task, x.data(), n * sizeof(int), NANORT_IN));
      ASSERT_OK(nanort_task_access(task, slot, sizeof(int), NANORT_OUT));
      ASSERT_OK(nanort_task_submit(task));
    }
  }
  ASSERT_OK(nanort_taskwait());
  for (std::size_t j = 0; j < seen.size(); ++j)
    EXPECT_EQ(seen[j], static_cast<int>((j + 1) * every)) << "read " << j;
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], steps) << i;
}

// Host memory page-locked through nanort_host_register moves without staging, and the
// results are right; unlocking twice is an error that says so.
TEST_F(Cuda, PageLockedHostMemoryIsCopiedDirectly) {
  constexpr int n = 1 << 22;  // 16 MiB: staged if it were not locked
  std::vector<int> x(n, 1);
  auto &directory = *nanort::rt::Runtime::get().directory();
  nanort::dc::MemorySpace &gpu = directory.memory(cuda_space(0));
  EXPECT_FALSE(gpu.is_page_locked(x.data(), n * sizeof(int)));
  ASSERT_OK(nanort_host_register(x.data(), n * sizeof(int)));
  EXPECT_TRUE(gpu.is_page_locked(x.data(), n * sizeof(int)));
  for (int k = 0; k < 3; ++k) ASSERT_OK(add(x.data(), 1, n));
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; i += 37) ASSERT_EQ(x[i], 4) << i;
  ASSERT_OK(add(x.data(), 10, n));  // back to the GPU after the flush, and home again
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; i += 37) ASSERT_EQ(x[i], 14) << i;
  ASSERT_OK(nanort_host_unregister(x.data()));
  EXPECT_FALSE(gpu.is_page_locked(x.data(), n * sizeof(int)));
  EXPECT_EQ(nanort_host_unregister(x.data()), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("not an address nanort_host_register locked"),
            std::string::npos)
      << nanort_last_error();
}

// Copies of 1 MiB and more from and into page-locked memory that starts inside a page go in
// two pieces (NANORT_CUDA_COPY_ALIGN=page, the default): the bytes up to the next page, then
// the rest. The blocks of x start at six offsets into their pages, y at a page's start: every
// element comes back where it was, plus what the kernels added.
TEST_F(Cuda, LargeCopiesOfMemoryStartingInsideAPageArriveWhole) {
  constexpr int blocks = 6, block = (1 << 19) + 263;  // 2 MiB + 1052 bytes each
  constexpr int n = blocks * block;
  // x from a page's start plus 16 bytes (as malloc gives), so that the blocks' offsets into
  // their pages move by 1052 bytes each; y from a page's start (one copy each way).
  std::vector<int> x_storage(n + 1024 + 64), y_storage(block + 1024);
  const auto page = [](std::vector<int> &v) {
    return (reinterpret_cast<std::uintptr_t>(v.data()) + 4095) / 4096 * 4096;
  };
  int *x = reinterpret_cast<int *>(page(x_storage) + 16);
  int *y = reinterpret_cast<int *>(page(y_storage));
  ASSERT_OK(nanort_host_register(x, n * sizeof(int)));
  ASSERT_OK(nanort_host_register(y, block * sizeof(int)));
  for (int i = 0; i < n; ++i) x[i] = i;
  for (int i = 0; i < block; ++i) y[i] = -i;
  for (int round = 1; round <= 3; ++round) {
    for (int b = 0; b < blocks; ++b) ASSERT_OK(add(x + b * block, round, block));
    ASSERT_OK(add(y, 100 * round, block));
    ASSERT_OK(nanort_taskwait());
  }
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(x[i], i + 6) << "element " << i << " (block " << i / block << ")";
  for (int i = 0; i < block; ++i) ASSERT_EQ(y[i], 600 - i) << "element " << i << " of y";
  ASSERT_OK(nanort_host_unregister(x));
  ASSERT_OK(nanort_host_unregister(y));
}

}  // namespace

// Taskiter on a GPU (issue 22): one iteration of independent kernels on slices, a chain over
// the whole array and a saxpy, recorded and replayed; each replay is one CUDA Graph launch (NANORT_TASKITER_GRAPH=enqueue, the default, or cuda), and the results are those of
// the same loop run task by task. Placed on the first GPU: one device, as the graph needs.
void taskiter_iteration(std::vector<int> &x, std::vector<float> &fx, std::vector<float> &fy,
                        int iteration_value) {
  const int n = static_cast<int>(x.size()), slices = 8, slice = n / slices;
  for (int k = 0; k < slices; ++k)
    ASSERT_OK(add(x.data() + k * slice, k + 1, slice, NANORT_INOUT, kAdd, 0));
  for (int c = 0; c < 3; ++c) ASSERT_OK(add(x.data(), iteration_value, n, NANORT_INOUT, kAdd, 0));
  const int fn = static_cast<int>(fx.size());
  ASSERT_OK(submit(kSaxpy, SaxpyArgs{fn, 0.5f, fx.data(), fy.data()},
                   {{fx.data(), fn * sizeof(float), NANORT_IN},
                    {fy.data(), fn * sizeof(float), NANORT_INOUT}},
                   static_cast<std::size_t>(fn), 128, 0, 0));
}

TEST_F(Cuda, TaskiterReplaysAsOneCudaGraphPerIteration) {
  constexpr int n = 1 << 16, fn = 1 << 12, iterations = 40;
  std::vector<int> x_seq(n, 0), x(n, 0);
  std::vector<float> fx(fn), fy_seq(fn, 1.0f), fy(fn, 1.0f);
  for (int i = 0; i < fn; ++i) fx[i] = static_cast<float>(i % 13);
  for (int it = 0; it < iterations; ++it) taskiter_iteration(x_seq, fx, fy_seq, 2);
  ASSERT_OK(nanort_taskwait());

  nanort_taskiter *iter = nullptr;
  ASSERT_OK(nanort_taskiter_begin(&iter));
  taskiter_iteration(x, fx, fy, 2);
  ASSERT_OK(nanort_taskiter_replay(iter, 1));  // the recorded tasks ran on one GPU: a graph
  ASSERT_OK(nanort_taskiter_replay(iter, iterations - 12));
  const int graph_device = reinterpret_cast<nanort::rt::TaskIter *>(iter)->graph_device;
  ASSERT_OK(nanort_taskiter_replay(iter, 5));  // graph launches again, one call later
  ASSERT_OK(nanort_taskiter_end(iter, 5));
  ASSERT_OK(nanort_taskwait());
  const char *mode = std::getenv("NANORT_TASKITER_GRAPH");
  if (mode && std::string(mode) == "off")
    EXPECT_EQ(graph_device, -1);
  else
    EXPECT_GE(graph_device, 0) << "the replays did not become graph launches";
  EXPECT_EQ(x, x_seq);
  EXPECT_EQ(fy, fy_seq);
  EXPECT_EQ(x[0], iterations * (1 + 6));
}

// Taskiter with update (OmpSs-2's clause): every iteration's body runs and gives its own
// values (here the value added, the iteration's number) to the recorded kernels; the replays
// are still one graph launch each, its kernels' parameters updated in the instantiated graph.
// Results: those of the loop run task by task.
TEST_F(Cuda, TaskiterUpdateGivesEachGraphLaunchItsIterationsValues) {
  constexpr int n = 1 << 16, fn = 1 << 12, iterations = 30;
  std::vector<int> x_seq(n, 0), x(n, 0);
  std::vector<float> fx(fn), fy_seq(fn, 1.0f), fy(fn, 1.0f);
  for (int i = 0; i < fn; ++i) fx[i] = static_cast<float>(i % 13);
  for (int it = 0; it < iterations; ++it) taskiter_iteration(x_seq, fx, fy_seq, it);
  ASSERT_OK(nanort_taskwait());

  nanort_taskiter *iter = nullptr;
  ASSERT_OK(nanort_taskiter_begin(&iter));
  taskiter_iteration(x, fx, fy, 0);
  int graph_device = -1;
  for (int it = 1; it < iterations; ++it) {
    ASSERT_OK(nanort_taskiter_update(iter));
    taskiter_iteration(x, fx, fy, it);
    // Every other one launched, not waited for (the next body runs meanwhile), as the
    // plugin's counted loops do; the others waited for; the last one waited for.
    if (it % 2 && it + 1 < iterations)
      ASSERT_OK(nanort_taskiter_launch(iter, 1));
    else
      ASSERT_OK(nanort_taskiter_replay(iter, 1));
    if (it == 1) graph_device = reinterpret_cast<nanort::rt::TaskIter *>(iter)->graph_device;
  }
  auto *recorded = reinterpret_cast<nanort::rt::TaskIter *>(iter);
  const int captures = recorded->graph_captures.load(), updates = recorded->graph_updates.load();
  ASSERT_OK(nanort_taskiter_end(iter, 0));
  ASSERT_OK(nanort_taskwait());
  const char *mode = std::getenv("NANORT_TASKITER_GRAPH");
  if (!mode || std::string(mode) != "off") {
    EXPECT_GE(graph_device, 0) << "the replays did not become graph launches";
    // One capture (the first replay's); every later replay only set the changed kernels'
    // parameters in the instantiated graph.
    EXPECT_EQ(captures, 1);
    EXPECT_EQ(updates, iterations - 2);
  }
  EXPECT_EQ(x, x_seq);
  EXPECT_EQ(fy, fy_seq);
  EXPECT_EQ(x[0], 3 * (iterations * (iterations - 1) / 2) + iterations);
}

// A CPU task in the iteration: no graph (the replays go on task by task), same results.
TEST_F(Cuda, TaskiterWithACpuTaskReplaysTaskByTask) {
  constexpr int n = 1 << 12, iterations = 10;
  std::vector<int> x(n, 0), seen(1, -1);
  nanort_taskiter *iter = nullptr;
  ASSERT_OK(nanort_taskiter_begin(&iter));
  ASSERT_OK(add(x.data(), 3, n, NANORT_INOUT, kAdd, 0));
  nanort_task *task = nanort_task_create(&kPeekSite, sizeof(PeekArgs));
  ASSERT_NE(task, nullptr);
  *static_cast<PeekArgs *>(nanort_task_args(task)) = PeekArgs{x.data(), n, seen.data()};
  ASSERT_OK(nanort_task_access(task, x.data(), n * sizeof(int), NANORT_IN));
  ASSERT_OK(nanort_task_access(task, seen.data(), sizeof(int), NANORT_OUT));
  ASSERT_OK(nanort_task_submit(task));
  ASSERT_OK(nanort_taskiter_replay(iter, iterations - 1));
  EXPECT_LT(reinterpret_cast<nanort::rt::TaskIter *>(iter)->graph_device, 0);
  ASSERT_OK(nanort_taskiter_end(iter, 0));
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(seen[0], 3 * iterations);
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 3 * iterations) << i;
}
