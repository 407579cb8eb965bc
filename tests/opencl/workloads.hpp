// Workloads shared by several OpenCL test executables.
#pragma once

#include "opencl_test.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace nanort_cl_test {

// OpenCL kernels and CPU functions that do the same integer arithmetic (unsigned, so that
// overflow wraps the same way on both sides).
inline const ClModule kMixedModule(R"CL(
__kernel void combine(__global uint *dst, __global const uint *src, uint step, int n) {
  int i = get_global_id(0);
  if (i < n) dst[i] = dst[i] * 3u + src[i] + step;
}
__kernel void add_uint(__global uint *x, uint step, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] += step;
}
__kernel void block_sum(__global const uint *x, __global uint *sum, int n) {
  if (get_global_id(0) != 0) return;
  uint s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * (uint)(i + 1);
  sum[0] = s;
}
)CL", "mixed.cl");

struct CombineArgs {
  std::uint32_t *dst;
  const std::uint32_t *src;
  std::uint32_t step;
  int n;
};
struct AddUintArgs {
  std::uint32_t *x;
  std::uint32_t step;
  int n;
};
struct BlockSumArgs {
  const std::uint32_t *x;
  std::uint32_t *sum;
  int n;
};

inline const ClSite kCombine(kMixedModule, "combine",
                             {buffer(offsetof(CombineArgs, dst)), buffer(offsetof(CombineArgs, src)),
                              value<std::uint32_t>(offsetof(CombineArgs, step)),
                              value<int>(offsetof(CombineArgs, n))});
inline const ClSite kAddUint(kMixedModule, "add_uint",
                             {buffer(offsetof(AddUintArgs, x)),
                              value<std::uint32_t>(offsetof(AddUintArgs, step)),
                              value<int>(offsetof(AddUintArgs, n))});
inline const ClSite kBlockSum(kMixedModule, "block_sum",
                              {buffer(offsetof(BlockSumArgs, x)), buffer(offsetof(BlockSumArgs, sum)),
                               value<int>(offsetof(BlockSumArgs, n))});

inline void combine_on_host(std::uint32_t *dst, const std::uint32_t *src, std::uint32_t step,
                            int n) {
  for (int i = 0; i < n; ++i) dst[i] = dst[i] * 3u + src[i] + step;
}
inline void add_on_host(std::uint32_t *x, std::uint32_t step, int n) {
  for (int i = 0; i < n; ++i) x[i] += step;
}
inline std::uint32_t sum_on_host(const std::uint32_t *x, int n) {
  std::uint32_t s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * static_cast<std::uint32_t>(i + 1);
  return s;
}

// Many tasks, OpenCL kernels and CPU functions in a seeded random mix, on blocks of one
// array: combine a block into another (inout + in, or inout alone when both are the same
// block), add to a span of two blocks (which overlaps the device allocations of each block,
// so they merge), and weighted sums of a block into a result array (readers that run side
// by side). Returns the failures as text ("" when the array and the sums match a sequential
// run). Block bytes are a multiple of 4096, so sub-ranges of merged allocations stay aligned
// for OpenCL sub-buffers on every device. With 'placed_on' devices, every other device task is
// placed by hand (nanort_task_set_device) on each of them in turn, so that each takes some
// whatever the timing; the scheduler places the others.
inline std::string run_mixed_workload(unsigned seed, int tasks, int placed_on = 0) {
  constexpr int kBlocks = 8, kBlock = 1024;
  std::vector<std::uint32_t> data(kBlocks * kBlock), expected;
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint32_t>(i * 7 + 1);
  expected = data;
  std::vector<std::uint32_t> sums(tasks, 0), expected_sums(tasks, 0);
  std::mt19937 random(seed);
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  std::string failures;
  auto note = [&](const std::string &what) { failures += what + "\n"; };
  int device_tasks = 0;
  auto place = [&](Task &task) -> Task & {
    if (placed_on > 0 && device_tasks % 2 == 0)
      task.on_device(NANORT_DEVICE_OPENCL, (device_tasks / 2) % placed_on);
    ++device_tasks;
    return task;
  };

  for (int t = 0; t < tasks; ++t) {
    const bool on_device = pick(2) == 0;
    const int kind = pick(10);  // 0..5 combine, 6..7 add to two blocks, 8..9 sum
    const std::uint32_t step = static_cast<std::uint32_t>(t + 1);
    nanort_status status = NANORT_SUCCESS;
    if (kind < 6) {
      const int d = pick(kBlocks), s = pick(kBlocks);
      std::uint32_t *dst = data.data() + d * kBlock;
      const std::uint32_t *src = data.data() + s * kBlock;
      combine_on_host(expected.data() + d * kBlock, expected.data() + s * kBlock, step, kBlock);
      if (on_device) {
        Task task(kCombine, CombineArgs{dst, src, step, kBlock});
        task.inout(dst, kBlock).ndrange({kBlock}, {64});
        if (s != d) task.in(src, kBlock);
        status = place(task).submit();
      } else {
        Task task("combine on cpu", [=] { combine_on_host(dst, src, step, kBlock); });
        task.inout(dst, kBlock);
        if (s != d) task.in(src, kBlock);
        status = task.submit();
      }
    } else if (kind < 8) {
      const int d = pick(kBlocks - 1);
      std::uint32_t *x = data.data() + d * kBlock;
      add_on_host(expected.data() + d * kBlock, step, 2 * kBlock);
      if (on_device) {
        Task task(kAddUint, AddUintArgs{x, step, 2 * kBlock});
        task.inout(x, 2 * kBlock).ndrange({2 * kBlock}, {64});
        status = place(task).submit();
      } else
        status = cpu_task("add on cpu", [=] { add_on_host(x, step, 2 * kBlock); })
                     .inout(x, 2 * kBlock)
                     .submit();
    } else {
      const int b = pick(kBlocks);
      const std::uint32_t *x = data.data() + b * kBlock;
      std::uint32_t *sum = &sums[t];
      expected_sums[t] = sum_on_host(expected.data() + b * kBlock, kBlock);
      if (on_device) {
        Task task(kBlockSum, BlockSumArgs{x, sum, kBlock});
        task.in(x, kBlock).out(sum, 1).ndrange({1});
        status = place(task).submit();
      } else
        status = cpu_task("sum on cpu", [=] { *sum = sum_on_host(x, kBlock); })
                     .in(x, kBlock)
                     .out(sum, 1)
                     .submit();
    }
    if (status != NANORT_SUCCESS) {
      note("task " + std::to_string(t) + " submit: " + nanort_last_error());
      break;
    }
  }
  if (nanort_taskwait() != NANORT_SUCCESS) note(std::string("taskwait: ") + nanort_last_error());
  int wrong = 0;
  for (std::size_t i = 0; i < data.size(); ++i)
    if (data[i] != expected[i] && ++wrong <= 5)
      note("data[" + std::to_string(i) + "] (block " + std::to_string(i / kBlock) + ") is " +
           std::to_string(data[i]) + ", expected " + std::to_string(expected[i]));
  for (int t = 0; t < tasks; ++t)
    if (sums[t] != expected_sums[t] && ++wrong <= 10)
      note("sum of task " + std::to_string(t) + " is " + std::to_string(sums[t]) +
           ", expected " + std::to_string(expected_sums[t]));
  if (wrong) note(std::to_string(wrong) + " value(s) wrong (seed " + std::to_string(seed) + ")");
  return failures;
}

}  // namespace nanort_cl_test
