// Kernels from an object made by plain `nvcc -c` (linked_kernels.cu), linked with
// nanort_cuda_objects instead of CUDA's runtime library: the object registers its image at
// start-up and the runtime finds its kernels by name, the C++-mangled one too. Public C ABI
// only. Without an NVIDIA GPU each case reports SKIP.
#include <gtest/gtest.h>
#include <nanort/nanort.h>
#include "status_checks.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace {

const nanort_kernel_module kLinked = {NANORT_ABI_VERSION, NANORT_MODULE_CUDA_LINKED, nullptr, 0,
                                      nullptr, nullptr};

struct AddArgs {
  int *x;
  int v;
  int n;
};
const nanort_kernel_arg kAddArgs[] = {{offsetof(AddArgs, x), sizeof(void *), NANORT_ARG_BUFFER},
                                      {offsetof(AddArgs, v), sizeof(int), NANORT_ARG_VALUE},
                                      {offsetof(AddArgs, n), sizeof(int), NANORT_ARG_VALUE}};
const nanort_task_impl kAddImpl = {NANORT_DEVICE_CUDA, nullptr, "linked_add", &kLinked, kAddArgs, 3};
const nanort_task_site kAdd = {NANORT_ABI_VERSION, "linked_add", __FILE__, __LINE__, &kAddImpl, 1, nullptr};

struct ScaleArgs {
  float *x;
  int n;
  float f;
};
const nanort_kernel_arg kScaleArgs[] = {
    {offsetof(ScaleArgs, x), sizeof(void *), NANORT_ARG_BUFFER},
    {offsetof(ScaleArgs, n), sizeof(int), NANORT_ARG_VALUE},
    {offsetof(ScaleArgs, f), sizeof(float), NANORT_ARG_VALUE}};
const nanort_task_impl kScaleImpl = {NANORT_DEVICE_CUDA, nullptr, "linked_scale", &kLinked, kScaleArgs, 3};
const nanort_task_site kScale = {NANORT_ABI_VERSION, "linked_scale", __FILE__, __LINE__, &kScaleImpl, 1, nullptr};

const nanort_task_impl kMissingImpl = {NANORT_DEVICE_CUDA, nullptr, "not_linked", &kLinked, kAddArgs, 3};
const nanort_task_site kMissing = {NANORT_ABI_VERSION, "not_linked", __FILE__, __LINE__, &kMissingImpl, 1, nullptr};

template <class Args>
nanort_status submit(const nanort_task_site &site, const Args &args, void *data, std::size_t bytes,
                     std::size_t global) {
  nanort_task *task = nanort_task_create(&site, sizeof(Args));
  if (!task) return NANORT_ERROR_INVALID_ARGUMENT;
  *static_cast<Args *>(nanort_task_args(task)) = args;
  nanort_task_access(task, data, bytes, NANORT_INOUT);
  const std::size_t local = 128;
  nanort_task_set_ndrange(task, 1, &global, &local);
  return nanort_task_submit(task);
}

class Linked : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(nanort_init());
    if (nanort_device_count(NANORT_DEVICE_CUDA) == 0)
      GTEST_SKIP() << "no CUDA device (nanort-info says why)";
  }
};

TEST_F(Linked, KernelsOfAnObjectMadeByNvccRun) {
  constexpr int n = 10000;
  std::vector<int> x(n, 1);
  std::vector<float> y(n, 1.5f);
  ASSERT_OK(submit(kAdd, AddArgs{x.data(), 41, n}, x.data(), n * sizeof(int), n));
  ASSERT_OK(submit(kScale, ScaleArgs{y.data(), n, 4.0f}, y.data(), n * sizeof(float), n));
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(x[i], 42) << i;
    ASSERT_EQ(y[i], 6.0f) << i;
  }
}

TEST_F(Linked, AKernelNoObjectHasIsNamed) {
  int x[4] = {};
  ASSERT_OK(submit(kMissing, AddArgs{x, 1, 4}, x, sizeof x, 4));
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_NE(message.find("no kernel named 'not_linked'"), std::string::npos) << message;
  EXPECT_NE(message.find("linked_add"), std::string::npos) << message;
}

}  // namespace
