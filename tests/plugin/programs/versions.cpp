// Versions (implements) in C++, in a namespace. axpy: an smp task with an OpenCL version
// written in this file (single source). scale: an OpenCL kernel task with an smp version
// declared after it, in the namespace reopened (the task's code follows that declaration).
// A call makes one task whose site lists the task's own implementation first, then the
// version's. Run with the default scheduler, the first one runs (PoCL runs the kernel); with
// NANORT_SCHEDULER=dmda and NANORT_PERF_MODEL=off the scheduler tries each before it knows
// their times, so both run, on the same data.
#include "check.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace blas {

std::atomic<int> axpy_smp_runs{0};

#pragma omp target device(smp)
#pragma omp task in([n]x) inout([n]y)
void axpy(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; ++i) y[i] += a * x[i];
  ++axpy_smp_runs;
}

#pragma omp target device(opencl) ndrange(1, n, 16) implements(axpy)
#pragma omp task in([n]x) inout([n]y)
__kernel void axpy_cl(int n, float a, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] += a * x[i];
}

#pragma omp target device(opencl) ndrange(1, n, 16) file(kernels/versions.cl) name(scale_cl)
#pragma omp task inout([n]x)
__kernel void scale(int n, __global float *x, float factor);

} // namespace blas

namespace blas {

std::atomic<int> scale_smp_runs{0};

#pragma omp target device(smp) implements(scale)
#pragma omp task
void scale_host(int count, float *v, float f) {
  for (int i = 0; i < count; ++i) v[i] *= f;
  ++scale_smp_runs;
}

} // namespace blas

int main() {
  const int n = 800, blocks = 8, block = n / blocks, rounds = 16;
  std::vector<float> x(n), y(n), expected(n);
  for (int i = 0; i < n; ++i) {
    x[i] = float(i % 5);
    y[i] = expected[i] = float(i);
  }
  // Independent tasks, one per block: the scheduler places each. Then a chain on the whole
  // array, in which the data moves between the versions. Exact in float whichever version
  // runs: small integers, powers of two.
  for (int b = 0; b < blocks; ++b)
    blas::axpy(block, 1.0f, &x[b * block], &y[b * block]);
  for (int b = 0; b < blocks; ++b)
    blas::scale(block, &y[b * block], 2.0f);
  for (int i = 0; i < n; ++i)
    expected[i] = (expected[i] + x[i]) * 2.0f;
  for (int r = 0; r < rounds; ++r) {
    float a = float(r % 3), factor = r % 2 ? 2.0f : 0.5f;
    blas::axpy(n, a, x.data(), y.data());
    blas::scale(n, y.data(), factor);
    for (int i = 0; i < n; ++i)
      expected[i] = (expected[i] + a * x[i]) * factor;
  }
  #pragma omp taskwait
  for (int i = 0; i < n; ++i)
    CHECK(y[i] == expected[i]);

  const int calls = blocks + rounds;
  const char *scheduler = std::getenv("NANORT_SCHEDULER");
  if (scheduler && std::strcmp(scheduler, "dmda") == 0) {
    std::printf("smp versions ran: axpy %d of %d, scale %d of %d\n", blas::axpy_smp_runs.load(),
                calls, blas::scale_smp_runs.load(), calls);
    CHECK(blas::axpy_smp_runs > 0 && blas::axpy_smp_runs < calls);
    CHECK(blas::scale_smp_runs > 0 && blas::scale_smp_runs < calls);
  } else {
    CHECK(blas::axpy_smp_runs == calls && blas::scale_smp_runs == 0);
  }
  CHECK_DONE();
}
