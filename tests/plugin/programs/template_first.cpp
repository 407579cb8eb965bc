// Where the lowered code goes in C++: a class template whose member function is a task,
// first in the file (the prologue goes before its template head, on a line of its own), a
// function template task, and a function task whose first caller has an attribute on the
// line before it (the task's code goes before the attribute).
template <typename T>
struct Accumulator {
  #pragma omp task inout(*total)
  void add(T *total, T v) { *total += v; }
};

#pragma omp task inout(*x)
template <typename T> void twice(T *x) { *x *= 2; }

#pragma omp task inout(*x)
void add_ten(long *x) { *x += 10; }

[[maybe_unused]]
static void add_twenty(long *x) {
  add_ten(x);
  add_ten(x);
}

#include "check.h"

int main() {
  Accumulator<long> acc;
  long total = 1;
  for (int i = 0; i < 10; ++i) acc.add(&total, i);
  twice(&total);
  add_twenty(&total);
  #pragma omp taskwait
  CHECK(total == 112);
  CHECK_DONE();
}
