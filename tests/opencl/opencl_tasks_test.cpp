// OpenCL tasks through the C ABI, on each OpenCL device found (one process per case and
// device, the device chosen with NANORT_OPENCL_DEVICES): kernel arguments and index spaces,
// build and launch errors, copy clauses, partial overlaps between device and CPU tasks,
// taskwait with and without flush, and a random mix of device and CPU tasks.
#include "opencl_test.hpp"
#include "workloads.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace nanort_cl_test;

// ---------------------------------------------------------------------------------------------
// Kernels

const ClModule kModule(R"CL(
__kernel void iota_int(__global int *x, int base, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] = base + i;
}
__kernel void add_int(__global int *x, int value, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] += value;
}
// add_int for one test alone (its first launch is that test's).
__kernel void add_int_once(__global int *x, int value, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] += value;
}
__kernel void scale_into(__global const int *x, __global int *y, int factor, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = x[i] * factor;
}
// Every scalar type by value, written back widened to long (and the float as it is).
__kernel void scalars(__global long *out, __global float *out_float, char c, short s, int i,
                      uint u, long l, ulong ul, float f) {
  if (get_global_id(0) != 0) return;
  out[0] = c; out[1] = s; out[2] = i; out[3] = u; out[4] = l; out[5] = (long)ul;
  out_float[0] = f;
}
// The index space as the kernel sees it.
__kernel void sizes(__global ulong *out, int width, int height) {
  if (get_global_id(0) == 0 && get_global_id(1) == 0 && get_global_id(2) == 0) {
    out[0] = get_work_dim();
    for (uint d = 0; d < 3; ++d) {
      out[1 + d] = get_global_size(d);
      out[4 + d] = get_local_size(d);
      out[7 + d] = get_num_groups(d);
    }
  }
}
__kernel void mark_2d(__global int *m, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x < width && y < height) m[y * width + x] = y * 1000 + x;
}
__kernel void mark_3d(__global int *m, int nx, int ny, int nz) {
  int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x < nx && y < ny && z < nz) m[(z * ny + y) * nx + x] = z * 10000 + y * 100 + x;
}
// One sum per work-group, through __local memory of get_local_size(0) ints.
__kernel void group_sum(__global const int *in, __global int *out, __local int *scratch, int n) {
  int i = get_global_id(0), l = get_local_id(0);
  scratch[l] = i < n ? in[i] : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int width = get_local_size(0) / 2; width > 0; width /= 2) {
    if (l < width) scratch[l] += scratch[l + width];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = scratch[0];
}
__kernel void is_null(__global int *flag, __global int *maybe) {
  if (get_global_id(0) == 0) flag[0] = maybe == 0 ? 1 : 2;
}
// Slow on purpose (the loop), so that the tasks after it are staged while it runs.
// ('never' is a value the loop does not reach, unknown to the compiler.)
__kernel void slow_copy(__global const int *in, __global int *out, int n, int spins, uint never) {
  int i = get_global_id(0);
  uint acc = (uint)n;
  for (int s = 0; s < spins; ++s) acc = acc * 1664525u + 1013904223u;
  if (i < n) out[i] = in[i] + (acc == never ? 1 : 0);
}
// A block of a row-major matrix: 'rows' x 'cols' elements from 'block', rows 'ld' apart.
__kernel void add_block(__global int *block, int ld, int rows, int cols, int value) {
  int c = get_global_id(0), r = get_global_id(1);
  if (r < rows && c < cols) block[r * ld + c] += value;
}
)CL", "opencl_tasks_test.cl");

struct IotaArgs {
  int *x;
  int base;
  int n;
};
struct AddArgs {
  int *x;
  int value;
  int n;
};
struct ScaleArgs {
  const int *x;
  int *y;
  int factor;
  int n;
};
struct ScalarArgs {
  std::int64_t *out;
  float *out_float;
  std::int8_t c;
  std::int16_t s;
  std::int32_t i;
  std::uint32_t u;
  std::int64_t l;
  std::uint64_t ul;
  float f;
};
struct SizesArgs {
  std::uint64_t *out;
  int width, height;
};
struct Mark2dArgs {
  int *m;
  int width, height;
};
struct Mark3dArgs {
  int *m;
  int nx, ny, nz;
};
struct GroupSumArgs {
  const int *in;
  int *out;
  int n;
};
struct IsNullArgs {
  int *flag;
  int *maybe;
};
struct SlowCopyArgs {
  const int *in;
  int *out;
  int n, spins;
  std::uint32_t never;
  SlowCopyArgs(const int *in, int *out, int n, int spins) : in(in), out(out), n(n), spins(spins) {
    std::uint32_t acc = static_cast<std::uint32_t>(n);
    for (int s = 0; s < spins; ++s) acc = acc * 1664525u + 1013904223u;
    never = acc + 1;
  }
};
struct AddBlockArgs {
  int *block;
  int ld, rows, cols, value;
};

const ClSite kIota(kModule, "iota_int",
                   {buffer(offsetof(IotaArgs, x)), value<int>(offsetof(IotaArgs, base)),
                    value<int>(offsetof(IotaArgs, n))});
const ClSite kAdd(kModule, "add_int",
                  {buffer(offsetof(AddArgs, x)), value<int>(offsetof(AddArgs, value)),
                   value<int>(offsetof(AddArgs, n))});
const ClSite kAddOnce(kModule, "add_int_once",
                      {buffer(offsetof(AddArgs, x)), value<int>(offsetof(AddArgs, value)),
                       value<int>(offsetof(AddArgs, n))});
const ClSite kScale(kModule, "scale_into",
                    {buffer(offsetof(ScaleArgs, x)), buffer(offsetof(ScaleArgs, y)),
                     value<int>(offsetof(ScaleArgs, factor)), value<int>(offsetof(ScaleArgs, n))});
const ClSite kScalars(kModule, "scalars",
                      {buffer(offsetof(ScalarArgs, out)), buffer(offsetof(ScalarArgs, out_float)),
                       value<std::int8_t>(offsetof(ScalarArgs, c)),
                       value<std::int16_t>(offsetof(ScalarArgs, s)),
                       value<std::int32_t>(offsetof(ScalarArgs, i)),
                       value<std::uint32_t>(offsetof(ScalarArgs, u)),
                       value<std::int64_t>(offsetof(ScalarArgs, l)),
                       value<std::uint64_t>(offsetof(ScalarArgs, ul)),
                       value<float>(offsetof(ScalarArgs, f))});
const ClSite kSizes(kModule, "sizes",
                    {buffer(offsetof(SizesArgs, out)), value<int>(offsetof(SizesArgs, width)),
                     value<int>(offsetof(SizesArgs, height))});
const ClSite kMark2d(kModule, "mark_2d",
                     {buffer(offsetof(Mark2dArgs, m)), value<int>(offsetof(Mark2dArgs, width)),
                      value<int>(offsetof(Mark2dArgs, height))});
const ClSite kMark3d(kModule, "mark_3d",
                     {buffer(offsetof(Mark3dArgs, m)), value<int>(offsetof(Mark3dArgs, nx)),
                      value<int>(offsetof(Mark3dArgs, ny)), value<int>(offsetof(Mark3dArgs, nz))});
// __local scratch sized by the task's shmem, and the same kernel with a fixed size.
const ClSite kGroupSumShmem(kModule, "group_sum",
                            {buffer(offsetof(GroupSumArgs, in)), buffer(offsetof(GroupSumArgs, out)),
                             local(), value<int>(offsetof(GroupSumArgs, n))},
                            "group_sum_shmem");
const ClSite kGroupSumFixed(kModule, "group_sum",
                            {buffer(offsetof(GroupSumArgs, in)), buffer(offsetof(GroupSumArgs, out)),
                             local(64 * sizeof(int)), value<int>(offsetof(GroupSumArgs, n))},
                            "group_sum_fixed");
const ClSite kIsNull(kModule, "is_null",
                     {buffer(offsetof(IsNullArgs, flag)), buffer(offsetof(IsNullArgs, maybe))});
const ClSite kSlowCopy(kModule, "slow_copy",
                       {buffer(offsetof(SlowCopyArgs, in)), buffer(offsetof(SlowCopyArgs, out)),
                        value<int>(offsetof(SlowCopyArgs, n)), value<int>(offsetof(SlowCopyArgs, spins)),
                        value<std::uint32_t>(offsetof(SlowCopyArgs, never))});
const ClSite kAddBlock(kModule, "add_block",
                       {buffer(offsetof(AddBlockArgs, block)), value<int>(offsetof(AddBlockArgs, ld)),
                        value<int>(offsetof(AddBlockArgs, rows)),
                        value<int>(offsetof(AddBlockArgs, cols)),
                        value<int>(offsetof(AddBlockArgs, value))});

// fp64 in a module of its own: a device without it fails this module's build only.
const ClModule kFp64Module(R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void doubles(__global double *out, double a, float b, double c) {
  if (get_global_id(0) == 0) { out[0] = a; out[1] = b; out[2] = c; out[3] = a * c; }
}
)CL", "opencl_tasks_test_fp64.cl");
struct DoublesArgs {
  double *out;
  double a;
  float b;
  double c;
};
const ClSite kDoubles(kFp64Module, "doubles",
                      {buffer(offsetof(DoublesArgs, out)), value<double>(offsetof(DoublesArgs, a)),
                       value<float>(offsetof(DoublesArgs, b)),
                       value<double>(offsetof(DoublesArgs, c))});

// Errors: a kernel that does not compile, one that compiles.
const ClModule kBrokenModule(R"CL(
__kernel void broken(__global int *x) {
  x[get_global_id(0)] = undeclared_identifier_in_kernel + 1;
}
)CL", "broken_kernel.cl");
const ClSite kBroken(kBrokenModule, "broken", {buffer(0)}, "broken_task");
const ClSite kNoSuchKernel(kModule, "no_such_kernel", {buffer(0)}, "misnamed_task");
// add_int takes three arguments; this site passes two.
const ClSite kTooFewArgs(kModule, "add_int",
                         {buffer(offsetof(AddArgs, x)), value<int>(offsetof(AddArgs, value))},
                         "too_few_args_task");

// ---------------------------------------------------------------------------------------------
// Kernel arguments and index spaces

class KernelArgs : public OnDevice {};

TEST_P(KernelArgs, ScalarsOfEveryWidthByValue) {
  auto &out = array<std::int64_t>(6, 0);
  auto &out_float = array<float>(1, 0);
  const ScalarArgs args{out.data(), out_float.data(), -100, -30000, -2000000000, 4000000000u,
                        -(std::int64_t(1) << 40) - 7, (std::uint64_t(1) << 62) + 5, 3.25f};
  ASSERT_OK(Task(kScalars, args).out(out.data(), 6).out(out_float.data(), 1).ndrange({1}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(out[0], -100);
  EXPECT_EQ(out[1], -30000);
  EXPECT_EQ(out[2], -2000000000);
  EXPECT_EQ(out[3], 4000000000ll);
  EXPECT_EQ(out[4], -(std::int64_t(1) << 40) - 7);
  EXPECT_EQ(static_cast<std::uint64_t>(out[5]), (std::uint64_t(1) << 62) + 5);
  EXPECT_EQ(out_float[0], 3.25f);
}

TEST_P(KernelArgs, DoublesByValue) {
  if (!device().fp64)
    GTEST_SKIP() << device().name << " has no double precision (cl_khr_fp64)";
  auto &out = array<double>(4, 0);
  ASSERT_OK(Task(kDoubles, DoublesArgs{out.data(), 1.0 / 3.0, 0.5f, -1e300})
                .out(out.data(), 4)
                .ndrange({1})
                .submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(out[0], 1.0 / 3.0);
  EXPECT_EQ(out[1], 0.5);
  EXPECT_EQ(out[2], -1e300);
  EXPECT_EQ(out[3], (1.0 / 3.0) * -1e300);
}

// A work-group reduction in __local memory whose size is the task's shmem.
TEST_P(KernelArgs, LocalMemorySizedByShmem) {
  constexpr int n = 4000, group = 128, groups = (n + group - 1) / group;
  auto &in = array(n);
  auto &out = array(groups, -1);
  std::iota(in.begin(), in.end(), 1);
  ASSERT_OK(Task(kGroupSumShmem, GroupSumArgs{in.data(), out.data(), n})
                .in(in.data(), n)
                .out(out.data(), groups)
                .ndrange({n}, {group})
                .shmem(group * sizeof(int))
                .submit());
  ASSERT_OK(nanort_taskwait());
  for (int g = 0; g < groups; ++g) {
    long expected = 0;
    for (int i = g * group; i < std::min(n, (g + 1) * group); ++i) expected += in[i];
    EXPECT_EQ(out[g], expected) << "group " << g;
  }
}

// The same kernel with the __local size fixed in the site's argument table.
TEST_P(KernelArgs, LocalMemoryOfFixedSize) {
  constexpr int n = 640, group = 64, groups = n / group;
  auto &in = array(n, 3);
  auto &out = array(groups, -1);
  ASSERT_OK(Task(kGroupSumFixed, GroupSumArgs{in.data(), out.data(), n})
                .in(in.data(), n)
                .out(out.data(), groups)
                .ndrange({n}, {group})
                .submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(out, std::vector<int>(groups, 3 * group));
}

// A local argument of size 0 and no shmem: the task fails, naming the argument and the task.
TEST_P(KernelArgs, LocalMemoryWithoutSizeFails) {
  auto &in = array(64, 1);
  auto &out = array(1, -1);
  ASSERT_OK(Task(kGroupSumShmem, GroupSumArgs{in.data(), out.data(), 64})
                .in(in.data(), 64)
                .out(out.data(), 1)
                .ndrange({64}, {64})
                .submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "group_sum_shmem"));
  EXPECT_TRUE(contains(message, kGroupSumShmem.where()));
  EXPECT_TRUE(contains(message, "argument 2 of kernel 'group_sum'"));
  EXPECT_TRUE(contains(message, "shmem"));
}

// As in OmpSs, the global size is rounded up to a multiple of the local size.
TEST_P(KernelArgs, GlobalSizeRoundedUpToLocalSize) {
  auto &out = array<std::uint64_t>(10, 0);
  ASSERT_OK(Task(kSizes, SizesArgs{out.data(), 0, 0}).out(out.data(), 10).ndrange({1000}, {64}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(out[0], 1u);     // dimensions
  EXPECT_EQ(out[1], 1024u);  // global size: 1000 rounded up to 16 groups of 64
  EXPECT_EQ(out[4], 64u);    // local size
  EXPECT_EQ(out[7], 16u);    // groups
}

// Without a local size the global size stays as given.
TEST_P(KernelArgs, GlobalSizeKeptWithoutLocalSize) {
  auto &out = array<std::uint64_t>(10, 0);
  ASSERT_OK(Task(kSizes, SizesArgs{out.data(), 0, 0}).out(out.data(), 10).ndrange({1000}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(out[0], 1u);
  EXPECT_EQ(out[1], 1000u);
}

TEST_P(KernelArgs, TwoDimensionalRange) {
  constexpr int width = 37, height = 19;
  auto &m = array(width * height, -1);
  auto &sizes = array<std::uint64_t>(10, 0);
  ASSERT_OK(Task(kMark2d, Mark2dArgs{m.data(), width, height})
                .out(m.data(), m.size())
                .ndrange({width, height}, {8, 4})
                .submit());
  ASSERT_OK(Task(kSizes, SizesArgs{sizes.data(), width, height})
                .out(sizes.data(), 10)
                .ndrange({width, height}, {8, 4})
                .submit());
  ASSERT_OK(nanort_taskwait());
  int wrong = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) wrong += m[y * width + x] != y * 1000 + x;
  EXPECT_EQ(wrong, 0) << "m[0..3] = " << m[0] << " " << m[1] << " " << m[2];
  EXPECT_EQ(sizes[0], 2u);
  EXPECT_EQ(sizes[1], 40u);  // 37 rounded up to a multiple of 8
  EXPECT_EQ(sizes[2], 20u);  // 19 rounded up to a multiple of 4
  EXPECT_EQ(sizes[4], 8u);
  EXPECT_EQ(sizes[5], 4u);
  EXPECT_EQ(sizes[7], 5u);
  EXPECT_EQ(sizes[8], 5u);
}

TEST_P(KernelArgs, ThreeDimensionalRange) {
  constexpr int nx = 9, ny = 5, nz = 3;
  auto &m = array(nx * ny * nz, -1);
  ASSERT_OK(Task(kMark3d, Mark3dArgs{m.data(), nx, ny, nz})
                .out(m.data(), m.size())
                .ndrange({nx, ny, nz}, {4, 2, 1})
                .submit());
  ASSERT_OK(nanort_taskwait());
  int wrong = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) wrong += m[(z * ny + y) * nx + x] != z * 10000 + y * 100 + x;
  EXPECT_EQ(wrong, 0);
}

// A NULL buffer argument reaches the kernel as a NULL pointer; it needs no data clause.
TEST_P(KernelArgs, NullBufferArgument) {
  auto &flag = keep(0);
  ASSERT_OK(Task(kIsNull, IsNullArgs{&flag, nullptr}).out(&flag, 1).ndrange({1}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(flag, 1);
}

// A buffer argument pointing inside its data clause gets the device address of that byte.
TEST_P(KernelArgs, BufferArgumentInsideItsDataClause) {
  constexpr int n = 4096, skip = 1024;  // 4 KiB into the clause: aligned for sub-buffers
  if (device().base_alignment > skip * sizeof(int))
    GTEST_SKIP() << device().name << " aligns sub-buffers to " << device().base_alignment
                 << " bytes";
  auto &x = array(n, 0);
  ASSERT_OK(Task(kAdd, AddArgs{x.data() + skip, 5, n - skip}).inout(x.data(), n).ndrange({n - skip}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(std::count(x.begin(), x.begin() + skip, 0), skip);
  EXPECT_EQ(std::count(x.begin() + skip, x.end(), 5), n - skip);
}

// ---------------------------------------------------------------------------------------------
// Build and launch errors: reported at taskwait, naming the task and its pragma location

class Errors : public OnDevice {};

TEST_P(Errors, BadSourceShowsBuildLogKernelAndTask) {
  auto &x = array(16, 0);
  auto &y = array(16, 0);
  ASSERT_OK(Task(kBroken, x.data()).inout(x.data(), 16).ndrange({16}).submit());
  ASSERT_OK(Task(kBroken, y.data()).inout(y.data(), 16).ndrange({16}).submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "undeclared_identifier_in_kernel")) << "the build log";
  EXPECT_TRUE(contains(message, "'broken'")) << "the kernel";
  EXPECT_TRUE(contains(message, "broken_task"));
  EXPECT_TRUE(contains(message, kBroken.where())) << "the task's file and line";
  EXPECT_TRUE(contains(message, "broken_kernel.cl")) << "the module's origin";
  // Both tasks failed, each reported (the failed build is remembered, not retried).
  EXPECT_EQ(occurrences(message, "task 'broken_task'"), 2u) << message;
  // Failures are reported once; the runtime goes on.
  EXPECT_OK(nanort_taskwait());
  auto &z = array(16, 0);
  ASSERT_OK(Task(kAdd, AddArgs{z.data(), 2, 16}).inout(z.data(), 16).ndrange({16}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(z, std::vector<int>(16, 2));
  EXPECT_EQ(x, std::vector<int>(16, 0));  // the failed tasks changed nothing
}

TEST_P(Errors, UnknownKernelNameIsNamed) {
  auto &x = array(16, 0);
  ASSERT_OK(Task(kNoSuchKernel, x.data()).inout(x.data(), 16).ndrange({16}).submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "no_such_kernel"));
  EXPECT_TRUE(contains(message, "misnamed_task"));
  EXPECT_TRUE(contains(message, kNoSuchKernel.where()));
}

TEST_P(Errors, WrongArgumentCount) {
  auto &x = array(16, 0);
  ASSERT_OK(Task(kTooFewArgs, AddArgs{x.data(), 1, 16}).inout(x.data(), 16).ndrange({16}).submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "too_few_args_task"));
  EXPECT_TRUE(contains(message, "takes 3 argument(s), the task passes 2"));
}

TEST_P(Errors, BufferWithoutDataClause) {
  auto &x = array(16, 0);
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, 16}).label("unclaused").ndrange({16}).submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "unclaused"));
  EXPECT_TRUE(contains(message, "argument 0 of kernel 'add_int'"));
  EXPECT_TRUE(contains(message, "no data clause"));
  EXPECT_EQ(x, std::vector<int>(16, 0));
}

TEST_P(Errors, KernelWithoutNdrange) {
  auto &x = array(16, 0);
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, 16}).inout(x.data(), 16).submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "add_int"));
  EXPECT_TRUE(contains(message, "ndrange"));
  EXPECT_TRUE(contains(message, kAdd.where()));
}

// The tasks ordered after a failed task are not run (they would compute on data the failure
// left undefined); each is named with the task it depends on. The data stays as it was.
TEST_P(Errors, SuccessorsOfAFailedTaskAreNotRun) {
  auto &x = array(64, 1);
  ASSERT_OK(Task(kBroken, x.data()).inout(x.data(), 64).ndrange({64}).submit());
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 10, 64}).inout(x.data(), 64).ndrange({64}).submit());
  auto &seen = keep(0);
  ASSERT_OK(cpu_task("reader", [&] { seen = x[63]; }).in(x.data(), 64).submit());
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "task 'add_int' (" + kAdd.where() +
                                    ") was not run: it depends on task 'broken_task' (" +
                                    kBroken.where() + "), which failed"))
      << message;
  EXPECT_TRUE(contains(message, "task 'reader'")) << message;
  EXPECT_TRUE(contains(message, "it depends on task 'add_int' (" + kAdd.where() +
                                    "), which was not run"))
      << message;
  EXPECT_EQ(seen, 0);
  EXPECT_EQ(x, std::vector<int>(64, 1));
  // The next tasks on the same data run as usual.
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 10, 64}).inout(x.data(), 64).ndrange({64}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(x, std::vector<int>(64, 11));
}

// A work-group no device allows: the driver refuses the enqueue. A kernel's first launch in a
// shape (work-group size, local memory) is waited for, so the failure comes with the task,
// and the task after it was not launched behind it (it is not run). After the kernel launched
// in another shape, the refused one fails with its task the same way, its successor is not
// run, and the data holds what the task before it left.
TEST_P(Errors, RefusedEnqueueFailsTheTaskAndNotItsSuccessorsData) {
  constexpr std::size_t n = std::size_t{1} << 24;  // more work-items in one group than any device
  auto &x = array(64, 1);
  ASSERT_OK(Task(kAddOnce, AddArgs{x.data(), 10, 64}).inout(x.data(), 64).ndrange({n}, {n}).submit());
  ASSERT_OK(Task(kAddOnce, AddArgs{x.data(), 10, 64}).inout(x.data(), 64).ndrange({64}).submit());
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "task 'add_int_once' (" + kAddOnce.where() + ") failed on"))
      << message;
  // (CL_INVALID_WORK_GROUP_SIZE or CL_INVALID_WORK_ITEM_SIZE: drivers check in either order.)
  EXPECT_TRUE(contains(message, "launching kernel 'add_int_once' failed: "
                                "clEnqueueNDRangeKernel returned CL_INVALID_WORK_"))
      << message;
  EXPECT_TRUE(contains(message, "was not run: it depends on task 'add_int_once'")) << message;
  EXPECT_EQ(x, std::vector<int>(64, 1));
  // The site launched before: the refusal comes later, with the task all the same, and the
  // data the task would have written is what the task before it left.
  ASSERT_OK(Task(kAddOnce, AddArgs{x.data(), 10, 64}).inout(x.data(), 64).ndrange({64}).submit());
  ASSERT_OK(Task(kAddOnce, AddArgs{x.data(), 10, 64}).inout(x.data(), 64).ndrange({n}, {n}).submit());
  ASSERT_OK(Task(kAddOnce, AddArgs{x.data(), 10, 64}).inout(x.data(), 64).ndrange({64}).submit());
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  message = nanort_last_error();
  EXPECT_TRUE(contains(message, "task 'add_int_once' (" + kAddOnce.where() + ") failed on"))
      << message;
  EXPECT_TRUE(contains(message, "clEnqueueNDRangeKernel returned CL_INVALID_WORK_")) << message;
  EXPECT_TRUE(contains(message, "was not run: it depends on task 'add_int_once'")) << message;
  EXPECT_EQ(x, std::vector<int>(64, 11));
}

// ---------------------------------------------------------------------------------------------
// Copy clauses

class CopyClauses : public OnDevice {};

// copy_in of data the task does not depend on: it reaches the device all the same.
TEST_P(CopyClauses, CopyInWithoutDependence) {
  constexpr int n = 1000;
  auto &a = array(n);
  auto &b = array(n, 0);
  std::iota(a.begin(), a.end(), 0);
  ASSERT_OK(Task(kScale, ScaleArgs{a.data(), b.data(), 3, n})
                .copy_in(a.data(), n)
                .out(b.data(), n)
                .ndrange({n})
                .submit());
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) ASSERT_EQ(b[i], 3 * i) << i;
}

// copy_out without a dependence: the results come back at taskwait.
TEST_P(CopyClauses, CopyOutWithoutDependence) {
  constexpr int n = 1000;
  auto &x = array(n, -1);
  ASSERT_OK(Task(kIota, IotaArgs{x.data(), 100, n}).copy_out(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 100 + i) << i;
}

TEST_P(CopyClauses, CopyInoutWithoutDependence) {
  constexpr int n = 1000;
  auto &x = array(n, 7);
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 5, n}).copy_inout(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(x, std::vector<int>(n, 12));
}

// no_copy_deps: the dependences order the tasks, only the copy clauses move data.
TEST_P(CopyClauses, NoCopyDepsWithExplicitCopies) {
  constexpr int n = 1000;
  auto &a = array(n);
  auto &b = array(n, 0);
  std::iota(a.begin(), a.end(), 1);
  ASSERT_OK(Task(kAdd, AddArgs{a.data(), 1, n})
                .inout(a.data(), n)
                .copy_deps(false)
                .copy_inout(a.data(), n)
                .ndrange({n})
                .submit());
  ASSERT_OK(Task(kScale, ScaleArgs{a.data(), b.data(), 2, n})
                .in(a.data(), n)
                .out(b.data(), n)
                .copy_deps(false)
                .copy_in(a.data(), n)
                .copy_out(b.data(), n)
                .ndrange({n})
                .submit());
  auto &seen = array(n, 0);
  ASSERT_OK(cpu_task("reader", [&] { seen = b; }).in(b.data(), n).submit());
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(a[i], i + 2) << i;
    ASSERT_EQ(b[i], 2 * (i + 2)) << i;
    ASSERT_EQ(seen[i], 2 * (i + 2)) << i;
  }
}

// no_copy_deps and no copy clause: a dependence alone gives the kernel no device data.
TEST_P(CopyClauses, NoCopyDepsWithoutCopyLeavesDataOnHost) {
  auto &x = array(16, 0);
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, 16})
                .inout(x.data(), 16)
                .copy_deps(false)
                .label("no_copies")
                .ndrange({16})
                .submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "no_copies"));
  EXPECT_TRUE(contains(message, "no data clause"));
  EXPECT_EQ(x, std::vector<int>(16, 0));
}

// ---------------------------------------------------------------------------------------------
// Partial overlaps

class Overlaps : public OnDevice {};

// x[0:N) written on the device; then x[N/4:N/2) on the device (a sub-range inside the device
// allocation of x, passed as a sub-buffer), the same sub-range on the host, x[N/2:3N/4) on the
// host; then the whole of x read on the device and on the host.
TEST_P(Overlaps, SubRangesOnDeviceAndHost) {
  constexpr int n = 4096, q = n / 4;  // q ints = 4 KiB: a multiple of any base alignment
  if (device().base_alignment > q * sizeof(int))
    GTEST_SKIP() << device().name << " aligns sub-buffers to " << device().base_alignment
                 << " bytes";
  auto &x = array(n, -1);
  auto &y = array(n, 0);
  int *sub = x.data() + q;
  ASSERT_OK(Task(kIota, IotaArgs{x.data(), 0, n}).out(x.data(), n).ndrange({n}, {64}).submit());
  ASSERT_OK(Task(kAdd, AddArgs{sub, 1000, q}).inout(sub, q).ndrange({q}, {64}).submit());
  ASSERT_OK(cpu_task("host quarter 1", [=] { for (int i = 0; i < q; ++i) sub[i] += 20000; })
                .inout(sub, q)
                .submit());
  int *half = x.data() + 2 * q;
  ASSERT_OK(cpu_task("host quarter 2", [=] { for (int i = 0; i < q; ++i) half[i] *= 2; })
                .inout(half, q)
                .submit());
  ASSERT_OK(Task(kScale, ScaleArgs{x.data(), y.data(), 3, n})
                .in(x.data(), n)
                .out(y.data(), n)
                .ndrange({n}, {64})
                .submit());
  auto &seen = array(0);
  ASSERT_OK(cpu_task("host reader", [&] { seen.assign(x.begin(), x.end()); }).in(x.data(), n).submit());
  ASSERT_OK(nanort_taskwait());
  auto expected = [&](int i) {
    if (i >= q && i < 2 * q) return i + 1000 + 20000;
    if (i >= 2 * q && i < 3 * q) return 2 * i;
    return i;
  };
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(x[i], expected(i)) << "x[" << i << "]";
    ASSERT_EQ(seen[i], expected(i)) << "what the host reader saw of x[" << i << "]";
    ASSERT_EQ(y[i], 3 * expected(i)) << "y[" << i << "]";
  }
}

// A sub-range starting 4 bytes into the device allocation of a bigger range: OpenCL cannot
// pass that offset as a sub-buffer, so the directory gives the sub-range an allocation of
// its own (the bigger one's valid bytes go home first), and the task runs.
TEST_P(Overlaps, MisalignedSubRangeGetsItsOwnAllocation) {
  if (device().base_alignment <= sizeof(int))
    GTEST_SKIP() << device().name << " accepts sub-buffers at any int offset";
  constexpr int n = 1024;
  auto &x = array(n, 0);
  ASSERT_OK(Task(kIota, IotaArgs{x.data(), 0, n}).out(x.data(), n).ndrange({n}).submit());
  int *odd = x.data() + 1;
  ASSERT_OK(Task(kAdd, AddArgs{odd, 1000, 8}).inout(odd, 8).ndrange({8}).submit());
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, n}).inout(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], i + 1 + (i >= 1 && i <= 8 ? 1000 : 0)) << i;
}

// A kernel pointer 4 bytes into its data clause cannot be passed (OpenCL sub-buffers start at
// multiples of the device's base address alignment): the task fails with a message naming
// it, the argument and the alignment; the runtime goes on.
TEST_P(Overlaps, MisalignedPointerInsideDataClauseFailsClearly) {
  if (device().base_alignment <= sizeof(int))
    GTEST_SKIP() << device().name << " accepts sub-buffers at any int offset";
  constexpr int n = 1024;
  auto &x = array(n, 0);
  ASSERT_OK(Task(kAdd, AddArgs{x.data() + 1, 1, 8})
                .label("misaligned_task")
                .inout(x.data(), n)
                .ndrange({8})
                .submit());
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "misaligned_task"));
  EXPECT_TRUE(contains(message, kAdd.where()));
  EXPECT_TRUE(contains(message, "4 bytes into a device allocation"));
  EXPECT_TRUE(contains(message, "multiples of " + std::to_string(device().base_alignment)));
  EXPECT_EQ(std::count(x.begin(), x.end(), 0), n) << "the failed task changed nothing";
  // The same data from an aligned start works.
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, n}).inout(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(std::count(x.begin(), x.end(), 1), n);
}

// One task with two overlapping accesses: it reads all of x and writes its upper half
// (through a pointer 4 KiB into the one device allocation both accesses share).
TEST_P(Overlaps, OverlappingAccessesOfOneTask) {
  constexpr int n = 2048, h = n / 2;
  if (device().base_alignment > h * sizeof(int))
    GTEST_SKIP() << device().name << " aligns sub-buffers to " << device().base_alignment
                 << " bytes";
  auto &x = array(n);
  std::iota(x.begin(), x.end(), 0);
  ASSERT_OK(Task(kScale, ScaleArgs{x.data(), x.data() + h, 5, h})
                .in(x.data(), n)
                .out(x.data() + h, h)
                .ndrange({h})
                .submit());
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < h; ++i) ASSERT_EQ(x[i], i) << i;
  for (int i = h; i < n; ++i) ASSERT_EQ(x[i], 5 * (i - h)) << i;
}

// Two sub-ranges of one device allocation, each passed to a kernel: two OpenCL sub-buffers of
// one buffer. The runtime must release them cleanly, at the latest when the process ends.
// (On NVIDIA's OpenCL, driver 580, releasing the second of two *overlapping* sub-buffers of a
// buffer crashes; sub-buffers that run to the end of the allocation always overlap.)
TEST_P(Overlaps, TwoSubRangesOfOneAllocation) {
  constexpr int n = 8 * 1024, block = 1024;  // 4 KiB blocks: aligned for sub-buffers
  if (device().base_alignment > block * sizeof(int))
    GTEST_SKIP() << device().name << " aligns sub-buffers to " << device().base_alignment
                 << " bytes";
  auto &x = array(n, 0);
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, n}).inout(x.data(), n).ndrange({n}).submit());
  int *second = x.data() + 2 * block, *fourth = x.data() + 4 * block;
  ASSERT_OK(Task(kAdd, AddArgs{second, 10, block}).inout(second, block).ndrange({block}).submit());
  ASSERT_OK(Task(kAdd, AddArgs{fourth, 100, block}).inout(fourth, block).ndrange({block}).submit());
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < n; ++i) {
    const int b = i / block;
    ASSERT_EQ(x[i], 1 + (b == 2 ? 10 : 0) + (b == 4 ? 100 : 0)) << i;
  }
  EXPECT_OK(stop_runtime());  // releases the device buffers now, inside the test
}

// Readers of overlapping ranges in flight at once: the second needs an allocation that
// covers the first one's, which is in use, so it waits for it (then the two merge). With
// the other tasks queued behind it, everything completes and is right.
TEST_P(Overlaps, OverlappingReadersInFlightTogether) {
  constexpr int n = 8192, q = n / 4;
  auto &x = array(n);
  std::iota(x.begin(), x.end(), 0);
  auto &a = array(2 * q, -1);
  auto &b = array(2 * q, -1);
  auto &c = array(n, -1);
  ASSERT_OK(Task(kSlowCopy, SlowCopyArgs{x.data(), a.data(), 2 * q, 20000})
                .in(x.data(), 2 * q)
                .out(a.data(), 2 * q)
                .ndrange({2 * q})
                .submit());
  ASSERT_OK(Task(kSlowCopy, SlowCopyArgs{x.data() + q, b.data(), 2 * q, 10})
                .in(x.data() + q, 2 * q)
                .out(b.data(), 2 * q)
                .ndrange({2 * q})
                .submit());
  ASSERT_OK(Task(kSlowCopy, SlowCopyArgs{x.data(), c.data(), n, 10})
                .in(x.data(), n)
                .out(c.data(), n)
                .ndrange({n})
                .submit());
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < 2 * q; ++i) {
    ASSERT_EQ(a[i], i) << i;
    ASSERT_EQ(b[i], q + i) << i;
  }
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], i) << i;
}

// Host memory reused after a taskwait: the program is done with an array (taskwait brought it
// home), frees it, and new data lands at another start inside the same bytes, as malloc
// does. The new data is unrelated to the old: its tasks must run like those of any fresh
// array, wherever it starts (here 4 bytes into the old array).
TEST_P(Overlaps, HostMemoryReusedAfterTaskwait) {
  if (device().base_alignment <= sizeof(int))
    GTEST_SKIP() << device().name << " accepts sub-buffers at any int offset";
  constexpr int n = 16 * 1024, m = 1000;
  auto &arena = array(n + 64, 0);  // stands for the heap
  ASSERT_OK(Task(kAdd, AddArgs{arena.data(), 1, n}).inout(arena.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait());
  // "free" the old array; a new one of m ints starts 4 bytes into its memory.
  int *fresh = arena.data() + 1;
  ASSERT_OK(Task(kIota, IotaArgs{fresh, 7, m}).label("on_reused_memory").out(fresh, m).ndrange({m}).submit());
  ASSERT_OK(nanort_taskwait());
  for (int i = 0; i < m; ++i) ASSERT_EQ(fresh[i], 7 + i) << i;
}

// The same as programs write it: each iteration makes new arrays, runs device tasks on them,
// waits, and frees them; the heap hands the memory out again at other starts.
TEST_P(Overlaps, FreshArraysEveryIteration) {
  for (int iteration = 0; iteration < 30; ++iteration) {
    const int n = 1000 + 37 * iteration;
    std::vector<int> x(n, iteration), y(n + 3, 0);
    ASSERT_OK(Task(kScale, ScaleArgs{x.data(), y.data(), 2, n})
                  .in(x.data(), n)
                  .out(y.data(), n)
                  .ndrange({static_cast<std::size_t>(n)})
                  .submit());
    SCOPED_TRACE("iteration " + std::to_string(iteration));
    ASSERT_OK(nanort_taskwait());
    ASSERT_EQ(y[n - 1], 2 * iteration) << "iteration " << iteration;
  }
}

// A 2-D block of a matrix on the device (the rows are copied, not the gaps between them),
// then the whole matrix on the device and on the host.
TEST_P(Overlaps, TwoDimensionalBlockOnDevice) {
  constexpr int ld = 64, rows = 16, cols = 16, r0 = 16, c0 = 16;
  auto &m = array(ld * ld);
  std::iota(m.begin(), m.end(), 0);
  int *block = m.data() + r0 * ld + c0;
  ASSERT_OK(Task(kAddBlock, AddBlockArgs{block, ld, rows, cols, 1000000})
                .access_2d(block, cols * sizeof(int), rows, ld * sizeof(int), NANORT_INOUT)
                .ndrange({cols, rows})
                .submit());
  // The host writes next to the block (between its rows) at the same time.
  ASSERT_OK(cpu_task("beside the block", [&] { for (int r = r0; r < r0 + rows; ++r) m[r * ld] = -r; })
                .access_2d(m.data() + r0 * ld, sizeof(int), rows, ld * sizeof(int), NANORT_INOUT)
                .submit());
  ASSERT_OK(Task(kAdd, AddArgs{m.data(), 1, ld * ld}).inout(m.data(), ld * ld).ndrange({ld * ld}).submit());
  ASSERT_OK(nanort_taskwait());
  for (int r = 0; r < ld; ++r)
    for (int c = 0; c < ld; ++c) {
      int expected = r * ld + c;
      if (r >= r0 && r < r0 + rows && c >= c0 && c < c0 + cols) expected += 1000000;
      if (r >= r0 && r < r0 + rows && c == 0) expected = -r;
      ASSERT_EQ(m[r * ld + c], expected + 1) << "row " << r << " column " << c;
    }
}

// ---------------------------------------------------------------------------------------------
// Taskwait: flush, noflush, on

class Taskwait : public OnDevice {};

// Copies back happen only on flush: after taskwait noflush the host array is still the old
// one (the device holds the only current copy); after taskwait it is current.
TEST_P(Taskwait, NoflushLeavesHostStaleUntilTaskwait) {
  SKIP_UNLESS_LAZY_WRITE_BACK();
  constexpr int n = 2048;
  auto &x = array(n, 1);
  for (int k = 0; k < 3; ++k)
    ASSERT_OK(Task(kAdd, AddArgs{x.data(), 10, n}).inout(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait_noflush());
  EXPECT_EQ(std::count(x.begin(), x.end(), 1), n) << "host memory changed before a flush";
  // More device work on the device copy, then the flush.
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 100, n}).inout(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(std::count(x.begin(), x.end(), 131), n);
}

// taskwait on(x) waits for the tasks on x and brings x home; y stays on the device.
TEST_P(Taskwait, TaskwaitOnFlushesOnlyItsData) {
  SKIP_UNLESS_LAZY_WRITE_BACK();
  constexpr int n = 2048;
  auto &x = array(n, 0);
  auto &y = array(n, 0);
  ASSERT_OK(Task(kAdd, AddArgs{x.data(), 1, n}).inout(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(Task(kAdd, AddArgs{y.data(), 2, n}).inout(y.data(), n).ndrange({n}).submit());
  const void *addresses[] = {x.data()};
  const std::size_t sizes[] = {n * sizeof(int)};
  ASSERT_OK(nanort_taskwait_on(addresses, sizes, 1));
  EXPECT_EQ(std::count(x.begin(), x.end(), 1), n) << "x is not current after taskwait on(x)";
  // y's task may or may not be done, but nothing copied y back.
  EXPECT_EQ(std::count(y.begin(), y.end(), 0), n) << "y was flushed by taskwait on(x)";
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(std::count(y.begin(), y.end(), 2), n);
}

// After taskwait noflush, CPU tasks still see the device's results (they fetch them).
TEST_P(Taskwait, CpuTaskAfterNoflushSeesDeviceResults) {
  constexpr int n = 512;
  auto &x = array(n, 0);
  ASSERT_OK(Task(kIota, IotaArgs{x.data(), 5, n}).out(x.data(), n).ndrange({n}).submit());
  ASSERT_OK(nanort_taskwait_noflush());
  auto &sum = keep(-1l);
  ASSERT_OK(cpu_task("sum", [&] { sum = std::accumulate(x.begin(), x.end(), 0l); }).in(x.data(), n).submit());
  ASSERT_OK(nanort_taskwait_noflush());
  EXPECT_EQ(sum, 5l * n + long(n) * (n - 1) / 2);
}

// ---------------------------------------------------------------------------------------------
// Device and CPU tasks on the same data

class Mixed : public OnDevice {};

TEST_P(Mixed, RandomDeviceAndCpuTasksMatchSequentialRun) {
  for (unsigned seed : {1u, 2u, 3u}) {
    const std::string failures = run_mixed_workload(seed, 300);
    EXPECT_EQ(failures, "") << "seed " << seed;
  }
}

// CPU tasks that each run device tasks on their own block and wait for them (a nested
// taskwait, which flushes): after it, the parent reads its block in host memory directly.
// Four parents at once, so flushes meet other parents' device tasks in flight.
TEST_P(Mixed, NestedDeviceTasksInsideCpuTasks) {
  constexpr int parents = 4, n = 4096, children = 6;
  auto &x = array(parents * n, 0);
  auto &seen = array(parents, -1);  // what each parent read after its taskwait
  auto &status = array(parents, -1);
  for (int p = 0; p < parents; ++p) {
    int *block = x.data() + p * n;
    int *parent_seen = &seen[p];
    int *parent_status = &status[p];
    ASSERT_OK(cpu_task("parent", [=] {
                for (int k = 0; k < children; ++k)
                  if (Task(kAdd, AddArgs{block, k + 1, n}).inout(block, n).ndrange({n}).submit() !=
                      NANORT_SUCCESS)
                    return;
                *parent_status = nanort_taskwait();
                *parent_seen = block[n - 1];
              })
                  .inout(block, n)
                  .submit());
  }
  ASSERT_OK(nanort_taskwait());
  const int total = children * (children + 1) / 2;
  for (int p = 0; p < parents; ++p) {
    EXPECT_EQ(status[p], NANORT_SUCCESS) << "parent " << p;
    EXPECT_EQ(seen[p], total) << "parent " << p << " read its block after its taskwait";
    EXPECT_EQ(std::count(x.begin() + p * n, x.begin() + (p + 1) * n, total), n) << "block " << p;
  }
}

// Inside a final task a device child runs at once (the creator waits for it), and the CPU
// child after it, run inline, sees its results.
TEST_P(Mixed, DeviceTaskInsideFinalTask) {
  constexpr int n = 1024;
  auto &x = array(n, 0);
  auto &sum = keep(-1l);
  auto &status = keep(-1);
  int *data = x.data();
  long *result = &sum;
  int *child_status = &status;
  ASSERT_OK(cpu_task("final parent", [=] {
              *child_status = Task(kIota, IotaArgs{data, 1, n}).out(data, n).ndrange({n}).submit();
              cpu_task("inline reader", [=] {
                *result = 0;
                for (int i = 0; i < n; ++i) *result += data[i];
              }).in(data, n).submit();
            })
                .inout(data, n)
                .final(true)
                .submit());
  ASSERT_OK(nanort_taskwait());
  EXPECT_EQ(status, NANORT_SUCCESS);
  EXPECT_EQ(sum, long(n) * (n + 1) / 2);
  EXPECT_EQ(x[n - 1], n);
}

NANORT_INSTANTIATE_ON_DEVICES(KernelArgs);
NANORT_INSTANTIATE_ON_DEVICES(Errors);
NANORT_INSTANTIATE_ON_DEVICES(CopyClauses);
NANORT_INSTANTIATE_ON_DEVICES(Overlaps);
NANORT_INSTANTIATE_ON_DEVICES(Taskwait);
NANORT_INSTANTIATE_ON_DEVICES(Mixed);

}  // namespace
