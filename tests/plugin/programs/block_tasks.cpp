// Function tasks declared inside a function, in C++ (issue 19): in a function of a namespace,
// in a member function, in a lambda; a reference parameter; a std::vector's data; the same
// function with other clauses in two functions that create tasks and return. Every result is
// compared with the same computation run sequentially.
#include <cstdlib>
#include <vector>

#include "check.h"

namespace blocks {

// Creates the tasks and returns: the caller waits.
void scale_all(std::vector<double> &v, double f, int bs) {
  #pragma omp task inout(a[0;n])
  void scale(double *a, int n, double f);
  for (int i = 0; i < (int)v.size(); i += bs)
    scale(v.data() + i, bs, f);
}

// The same function, read-only: after the writers of its block.
void total_all(const std::vector<double> &v, std::vector<double> &totals, int bs) {
  #pragma oss task in(a[0;n]) out(*t)
  void total(const double *a, int n, double *t);
  for (int i = 0; i < (int)v.size(); i += bs)
    total(v.data() + i, bs, &totals[i / bs]);
}

void scale(double *a, int n, double f) {
  SLOW();
  for (int i = 0; i < n; ++i) a[i] *= f;
}

void total(const double *a, int n, double *t) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += a[i];
  *t = s;
}

} // namespace blocks

// A reference parameter, in a member function and in a lambda.
void accumulate(long &acc, long v) {
  SLOW();
  acc = acc * 3 + v;
}

struct Counter {
  long value = 1;
  void run(int n) {
    #pragma omp task inout(acc)
    void accumulate(long &acc, long v);
    for (int k = 0; k < n; ++k)
      accumulate(value, k);
  }
};

int main() {
  const int n = 48, bs = 8;
  std::vector<double> v(n), expect(n);
  for (int i = 0; i < n; ++i) v[i] = expect[i] = i * 0.5;
  std::vector<double> totals(n / bs), expect_totals(n / bs, 0.0);
  blocks::scale_all(v, 4.0, bs);
  blocks::total_all(v, totals, bs);
  #pragma omp taskwait
  for (int i = 0; i < n; ++i) expect[i] *= 4.0;
  for (int i = 0; i < n; ++i) expect_totals[i / bs] += expect[i];
  for (int i = 0; i < n; ++i) CHECK(v[i] == expect[i]);
  for (int b = 0; b < n / bs; ++b) CHECK(totals[b] == expect_totals[b]);

  Counter c;
  c.run(5);
  long lam = 2;
  auto twice = [&lam]() {
    #pragma oss task inout(acc)
    void accumulate(long &acc, long v);
    accumulate(lam, 7);
    accumulate(lam, 8);
  };
  twice();
  #pragma omp taskwait
  long expect_c = 1, expect_lam = 2;
  for (int k = 0; k < 5; ++k) expect_c = expect_c * 3 + k;
  expect_lam = (expect_lam * 3 + 7) * 3 + 8;
  CHECK(c.value == expect_c);
  CHECK(lam == expect_lam);
  CHECK_DONE();
}
