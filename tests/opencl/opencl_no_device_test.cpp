// NANORT_OPENCL_DEVICES=none (tests.cmake): no OpenCL device is used even where some exist. A
// task with only an OpenCL implementation cannot run anywhere: submit fails with
// NANORT_ERROR_NO_DEVICE and a message naming the task; a task with an smp implementation as
// well runs that one. Needs no OpenCL device, so it never skips.
#include "opencl_test.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace nanort_cl_test;

const ClModule kModule(R"CL(
__kernel void add_int(__global int *x, int value, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] += value;
}
)CL", "opencl_no_device_test.cl");
struct AddArgs {
  int *x;
  int value, n;
};
void add_on_host(void *block) {
  const AddArgs *args = static_cast<const AddArgs *>(block);
  for (int i = 0; i < args->n; ++i) args->x[i] += args->value;
}
const std::vector<nanort_kernel_arg> kArgs = {buffer(offsetof(AddArgs, x)),
                                              value<int>(offsetof(AddArgs, value)),
                                              value<int>(offsetof(AddArgs, n))};
const ClSite kOpenClOnly(kModule, "add_int", kArgs, "opencl_only_task");
const ClSite kWithSmp(kModule, "add_int", kArgs, "opencl_or_smp_task", &add_on_host);

class NoDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    const char *selection = std::getenv("NANORT_OPENCL_DEVICES");
    if (!selection || std::string(selection) != "none")
      GTEST_SKIP() << "needs NANORT_OPENCL_DEVICES=none (ctest sets it)";
    ASSERT_OK(nanort_init());
  }
  KeptData data_;  // the tests' data, until their tasks are done
};

TEST_F(NoDevice, NoOpenClDeviceIsUsed) { EXPECT_EQ(nanort_device_count(NANORT_DEVICE_OPENCL), 0); }

TEST_F(NoDevice, OpenClOnlyTaskFailsAtSubmitNamingIt) {
  auto &x = data_.make<std::vector<int>>(16, 0);
  const nanort_status status =
      Task(kOpenClOnly, AddArgs{x.data(), 1, 16}).inout(x.data(), 16).ndrange({16}).submit();
  ASSERT_EQ(status, NANORT_ERROR_NO_DEVICE) << nanort_status_string(status);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "opencl_only_task"));
  EXPECT_TRUE(contains(message, kOpenClOnly.where()));
  EXPECT_TRUE(contains(message, "opencl (0)")) << "the devices found";
  // Nothing was queued: taskwait has nothing to report, and the data is untouched.
  EXPECT_OK(nanort_taskwait());
  EXPECT_EQ(x, std::vector<int>(16, 0));
}

TEST_F(NoDevice, TaskWithSmpImplementationRunsOnCpu) {
  auto &x = data_.make<std::vector<int>>(16, 0);
  ASSERT_OK(Task(kWithSmp, AddArgs{x.data(), 4, 16}).inout(x.data(), 16).ndrange({16}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(x, std::vector<int>(16, 4));
}

}  // namespace
