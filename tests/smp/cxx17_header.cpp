// The C++ header compiled as C++17 (no std::source_location): tasks, dependences, the task's
// location in messages, and a task's exception rethrown at taskwait.
#include <nanort/nanort.hpp>

#if __cplusplus >= 202002L
#error "this test must be compiled as C++17"
#endif

#include <cstdio>
#include <stdexcept>
#include <string>

int main() {
  int a = 0, b = 0;
  nanort::task("produce").out(&a).spawn([&a] { a = 20; });
  nanort::task("consume").in(&a).out(&b).spawn([&a, &b] { b = a + 1; });
  nanort::taskwait();
  if (b != 21) {
    std::printf("FAILED: b is %d, expected 21\n", b);
    return 1;
  }
  const int line = __LINE__ + 1;
  nanort::task("thrower").spawn([] { throw std::invalid_argument("bad input"); });
  try {
    nanort::taskwait();
    std::printf("FAILED: taskwait did not rethrow\n");
    return 1;
  } catch (const std::invalid_argument &e) {
    const std::string where = std::string(__FILE__) + ":" + std::to_string(line);
    if (std::string(nanort_last_error()).find(where) == std::string::npos) {
      std::printf("FAILED: the message does not name %s: %s\n", where.c_str(), nanort_last_error());
      return 1;
    }
  }
  std::printf("all results correct\n");
  return 0;
}
