// The heat stencil of stencil_swap.c in C++ (issue 19): a function template, grids in
// std::vector, the grid pointers swapped with std::swap after each step's tasks are created.
// The pointers named in the sections are firstprivate: each task uses the grids its
// dependences were computed on. Gated runs (each task waits until the program has swapped,
// the program waits until the step's tasks are done) make a wrong capture fail every time;
// free runs let the program run ahead. Compared with a plain loop, several times.
#include "check.h"

#include <utility>
#include <vector>

namespace {

constexpr int N = 512, BS = 64, NB = N / BS;

int swapped, finished; // the gate of gated runs

void wait_until(const int *v, int at_least) {
  for (int i = 0; i < 200000 && __atomic_load_n(v, __ATOMIC_ACQUIRE) < at_least; ++i)
    usleep(100);
}

template <class T>
T *heat(T *a, T *b, int steps, bool gated) {
  swapped = finished = 0;
  for (int t = 0; t < steps; ++t) {
    for (int lo = 1; lo <= N; lo += BS) {
      #pragma oss task in(a[lo - 1;BS + 2]) inout(b[lo;BS])
      {
        if (gated)
          wait_until(&swapped, t + 1);
        for (int i = lo; i < lo + BS; ++i)
          b[i] = T(0.25) * (a[i - 1] + T(2) * a[i] + a[i + 1]);
        if (gated)
          __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
      }
    }
    std::swap(a, b);
    if (gated) {
      __atomic_store_n(&swapped, t + 1, __ATOMIC_RELEASE);
      wait_until(&finished, (t + 1) * NB);
    }
  }
  #pragma oss taskwait
  return a;
}

template <class T>
T *reference(T *a, T *b, int steps) {
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i <= N; ++i)
      b[i] = T(0.25) * (a[i - 1] + T(2) * a[i] + a[i + 1]);
    std::swap(a, b);
  }
  return a;
}

template <class T>
std::vector<T> start() {
  std::vector<T> g(N + 2);
  g[0] = 100;
  g[N + 1] = -50;
  for (int i = 1; i <= N; ++i)
    g[i] = T((i * 37) % 101);
  return g;
}

template <class T>
bool run(int steps, bool gated) {
  std::vector<T> a = start<T>(), b = a, ra = a, rb = a;
  const T *got = heat(a.data(), b.data(), steps, gated);
  const T *want = reference(ra.data(), rb.data(), steps);
  for (int i = 0; i < N + 2; ++i)
    if (got[i] != want[i]) {
      printf("FAILED: %s run of %d steps: cell %d is %g, not %g\n", gated ? "gated" : "free",
             steps, i, (double)got[i], (double)want[i]);
      return false;
    }
  return true;
}

} // namespace

int main() {
  for (int r = 0; r < 2; ++r)
    CHECK(run<double>(25, true));
  CHECK(run<float>(25, true));
  for (int r = 0; r < 3; ++r)
    CHECK(run<double>(200, false));
  CHECK(run<float>(200, false));
  CHECK_DONE();
}
