// An annotated C++ program built with nanort_annotate: a function template task, a member
// function task and inline tasks (C++17, from the target's CXX_STANDARD).
#include <cstdio>
#include <numeric>
#include <vector>

#pragma omp task in([n]in) out([n]out)
template <typename T> void twice(int n, const T *in, T *out) {
  for (int i = 0; i < n; ++i) out[i] = 2 * in[i];
}

struct Counter {
  long total = 0;
  #pragma omp task inout(total)
  void add(long v) { total += v; }
};

int main() {
  std::vector<double> a(1000), b(1000);
  std::iota(a.begin(), a.end(), 0.0);
  twice(1000, a.data(), b.data());
  Counter c;
  for (int i = 1; i <= 10; ++i) c.add(i);
  double sum = 0;
  const double *pb = b.data();
  #pragma omp task in([1000]pb) out(sum)
  {
    if constexpr (sizeof(double) == 8) sum = std::accumulate(pb, pb + 1000, 0.0);
  }
  #pragma omp taskwait
  if (sum != 999000.0 || c.total != 55) {
    std::printf("FAILED: sum %g total %ld\n", sum, c.total);
    return 1;
  }
  std::printf("annotated C++: all results correct\n");
  return 0;
}
