// The kernel tasks of header_kernels.h from C++: called from a function template (dependent
// arguments), through a namespace and a using-declaration. header_kernels_more.cpp calls
// them too, with its own MAX_NUM_THREADS, and defines the header's smp and plain tasks.
#include "check.h"
#include "header_kernels.h"

#include <vector>

// Declared after the header and before the calls: the kernels' ndrange and shmem name it.
static const int MAX_NUM_THREADS = 128;

void more(int n, const float *x, float *y); // header_kernels_more.cpp

namespace {
// The index whose value reverse_blocks moves to i, for blocks of b elements.
int mirror(int i, int b) { return i / b * b + (b - 1 - i % b); }

template <typename T> void scale_and_reverse(int n, T a, const T *x, T *y) {
  saxpy(n, a, x, y);
  reverse_blocks(n, y, nullptr);
}
} // namespace

int main() {
  const int n = 1024;
  std::vector<float> x(n), y(n, 1.0f);
  for (int i = 0; i < n; ++i) x[i] = i;
  scale_and_reverse(n, 2.0f, x.data(), y.data());
  double sum = 0;
  total(n, y.data(), &sum);
  #pragma omp taskwait
  for (int i = 0; i < n; ++i) CHECK(y[i] == 2.0f * mirror(i, 128) + 1);
  CHECK(sum == (double)n * n);

  more(n, x.data(), y.data()); // y += x, blocks of 64 reversed
  using blas::axpy;
  axpy(n, 1.0f, x.data(), y.data());
  add_one(n, y.data());
  #pragma omp taskwait
  for (int i = 0; i < n; ++i) {
    int j = mirror(i, 64);
    CHECK(y[i] == 2.0f * mirror(j, 128) + 1 + j + i + 1);
  }
  CHECK_DONE();
}
