// A malformed NANORT_* variable (set by ctest, see CMakeLists.txt): the runtime does not start;
// the program ends with a message naming the variable and exit status 1, whichever call starts
// the runtime. Usage: smp_config_error init|task|cxx|pragma-like
//   init   nanort_init()
//   task   nanort_task_create, as the pragmas' lowered code does
//   cxx    nanort::task(...).spawn(...) from the C++ header
// Reaching the end prints "FAILED: the runtime started", which the test rejects.
#include <nanort/nanort.h>
#include <nanort/nanort.hpp>

#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  const char *entry = argc > 1 ? argv[1] : "init";
  if (!std::strcmp(entry, "init")) {
    nanort_init();
  } else if (!std::strcmp(entry, "task")) {
    static const nanort_task_impl impl{NANORT_DEVICE_SMP, [](void *) {}, nullptr, nullptr,
                                       nullptr, 0};
    static const nanort_task_site site{NANORT_ABI_VERSION, "t", __FILE__, __LINE__, &impl, 1,
                                       nullptr};
    if (nanort_task *t = nanort_task_create(&site, 0)) nanort_task_discard(t);
  } else if (!std::strcmp(entry, "cxx")) {
    try {
      nanort::task("cxx").spawn([] {});
    } catch (const nanort::task_error &e) {
      std::printf("FAILED: spawn threw instead of ending the program: %s\n", e.what());
      return 1;
    }
  } else {
    std::printf("FAILED: unknown entry point %s\n", entry);
    return 1;
  }
  std::printf("FAILED: the runtime started\n");
  return 0;
}
