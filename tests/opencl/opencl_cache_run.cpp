// A tiny OpenCL program for opencl_program_cache_reuse_test: runs one kernel and checks the
// result. Prints "cache run: ok" and returns 0, or prints what went wrong and returns 1. The
// device and the program cache folder come from NANORT_OPENCL_DEVICES and NANORT_OPENCL_CACHE.
//
//   opencl_cache_run                          the kernel below: x[i] = 3 * x[i] + 7
//   opencl_cache_run FILE.cl OPTIONS OFFSET   the program in FILE.cl, built with OPTIONS: its
//                                             triple_plus must give 3 * x[i] + 7 + OFFSET
#include <nanort/nanort.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

const char *const kSource = R"CL(
__kernel void triple_plus(__global int *x, int add, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] = 3 * x[i] + add;
}
)CL";
struct Args {
  int *x;
  int add, n;
};
// The module, its text and options live as long as the process: the runtime keeps pointers.
std::string file_source, file_options, file_name;
nanort_kernel_module program_module = {NANORT_ABI_VERSION, NANORT_MODULE_OPENCL_SOURCE, kSource,
                                       0, "-DUNUSED_OPTION=1", "opencl_cache_run.cl"};
const nanort_kernel_arg kArgs[] = {{offsetof(Args, x), sizeof(int *), NANORT_ARG_BUFFER},
                                   {offsetof(Args, add), sizeof(int), NANORT_ARG_VALUE},
                                   {offsetof(Args, n), sizeof(int), NANORT_ARG_VALUE}};
const nanort_task_impl kImpl = {NANORT_DEVICE_OPENCL, nullptr, "triple_plus", &program_module,
                                kArgs, 3};
const nanort_task_site kSite = {NANORT_ABI_VERSION, "triple_plus", __FILE__, __LINE__, &kImpl,
                                1, nullptr};

}  // namespace

int main(int argc, char **argv) {
  int offset = 0;
  if (argc == 4) {
    file_name = argv[1];
    std::ifstream in(file_name);
    if (!in) {
      std::printf("cache run: cannot read '%s'\n", argv[1]);
      return 1;
    }
    file_source.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    file_options = argv[2];
    offset = std::atoi(argv[3]);
    program_module.image = file_source.c_str();
    program_module.build_options = file_options.c_str();
    program_module.origin = file_name.c_str();
  } else if (argc != 1) {
    std::printf("cache run: usage: opencl_cache_run [FILE.cl OPTIONS OFFSET]\n");
    return 1;
  }
  if (nanort_init() != NANORT_SUCCESS) {
    std::printf("cache run: nanort_init: %s\n", nanort_last_error());
    return 1;
  }
  if (nanort_device_count(NANORT_DEVICE_OPENCL) < 1) {
    std::printf("cache run: no OpenCL device\n");
    return 1;
  }
  constexpr int n = 1000;
  std::vector<int> x(n);
  for (int i = 0; i < n; ++i) x[i] = i;
  nanort_task *task = nanort_task_create(&kSite, sizeof(Args));
  if (!task) {
    std::printf("cache run: create: %s\n", nanort_last_error());
    return 1;
  }
  const Args args{x.data(), 7, n};
  *static_cast<Args *>(nanort_task_args(task)) = args;
  const size_t global = n;
  if (nanort_task_access(task, x.data(), n * sizeof(int), NANORT_INOUT) != NANORT_SUCCESS ||
      nanort_task_set_ndrange(task, 1, &global, nullptr) != NANORT_SUCCESS ||
      nanort_task_submit(task) != NANORT_SUCCESS || nanort_taskwait() != NANORT_SUCCESS) {
    std::printf("cache run: %s\n", nanort_last_error());
    return 1;
  }
  for (int i = 0; i < n; ++i)
    if (x[i] != 3 * i + 7 + offset) {
      std::printf("cache run: x[%d] = %d, expected %d\n", i, x[i], 3 * i + 7 + offset);
      return 1;
    }
  std::printf("cache run: ok\n");
  return 0;
}
