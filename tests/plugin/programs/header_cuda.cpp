// The CUDA kernel tasks of header_cuda.h from C++: called from a function template (dependent
// arguments) and from a namespace. Where there is no CUDA device, the program says so and
// exits with 77 (ctest: skipped).
#include "check.h"
#include "header_cuda.h"

#include <nanort/nanort.h>

#include <vector>

// Declared after the header and before the calls: the kernels' ndrange and shmem name it.
static const int MAX_NUM_THREADS = 128;

namespace app {
template <typename T> void scale_and_reverse(int n, T a, const T *x, T *y) {
  saxpy(n, a, x, y);
  reverse_blocks(n, y);
}
} // namespace app

int main() {
  if (nanort_device_count(NANORT_DEVICE_CUDA) == 0) {
    printf("SKIP: no CUDA device (no NVIDIA GPU or driver, or NANORT_CUDA_DEVICES=none)\n");
    return 77;
  }
  const int n = 1024;
  std::vector<float> x(n), y(n, 1.0f);
  for (int i = 0; i < n; ++i) x[i] = i;
  app::scale_and_reverse(n, 2.0f, x.data(), y.data());
  #pragma omp taskwait
  for (int i = 0; i < n; ++i) CHECK(y[i] == 2.0f * (i / 128 * 128 + (127 - i % 128)) + 1);
  CHECK_DONE();
}
