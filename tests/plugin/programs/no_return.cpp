// A C++ OmpSs program written for mcc over g++: member functions declared int that create
// tasks, wait for them and run off their end without 'return' (their callers ignore the
// value). clang traps there unless nanocxx passes -fno-strict-return, as it does. The sums are
// compared with the same loops run sequentially.
#include <cstdio>
#include <vector>

#include "check.h"

struct Blocks {
  std::vector<long> data;
  long total = 0;

  explicit Blocks(int n) : data(n) {}

  int fill() {
    for (int b = 0; b < (int)data.size(); b += 8) {
      long *p = &data[b];
      #pragma omp task out(p[0;8]) firstprivate(b)
      for (int i = 0; i < 8; ++i)
        p[i] = (b + i) * 3L;
    }
    #pragma omp taskwait
  }

  int sum() {
    long *p = data.data();
    int n = (int)data.size();
    #pragma omp task in(p[0;n]) out(total)
    {
      total = 0;
      for (int i = 0; i < n; ++i)
        total += p[i];
    }
    #pragma omp taskwait
  }
};

int main() {
  Blocks b(64);
  b.fill();
  b.sum();
  long expect = 0;
  for (int i = 0; i < 64; ++i)
    expect += i * 3L;
  CHECK(b.total == expect);
  CHECK(b.data[63] == 63 * 3L);
  CHECK_DONE();
}
