// Array sections that are very likely off by one, in C++ (issue 19): constants that the
// preprocessor does not know (const, constexpr), references to arrays, templates.
// tests/plugin/tests.cmake checks every warning and note, with its line and column, and that
// there are no others.
#include <array>

constexpr int n = 32;
const int bs = 8;
double table[n];

#pragma omp task inout(table[0:n])
void whole_table() { table[0] = 1; }

#pragma omp task out(r[0:bs])
void by_reference(double (&r)[bs]) { r[0] = 0; }

template <int M>
void in_template(int (&a)[M], int i) {
  // The size depends on the template's argument: not judged.
  #pragma omp task inout(a[0:M])
  a[0] = i;
  // The bound's form is judged without the size.
  #pragma omp task in(a[i:i+M])
  (void)a[i];
  #pragma omp taskwait
}

void calls() {
  int a[4] = {0};
  in_template(a, 0);
  std::array<double, n> s{};
  double *p = s.data();
  // Correct, or of sizes the plugin does not see.
  #pragma omp task inout(table[0:n-1], table[0;n], p[0:n])
  p[0] = table[0];
  #pragma omp task depend(inout: table[0:n], p[0:n])
  p[0] = table[0];
  #pragma omp taskwait
}
