// Errors about what a pragma applies to.

// expected-error@+1 {{'#pragma omp target' must be followed by a '#pragma omp task' line}}
#pragma omp target device(smp)
void lonely(void);

// expected-error@+1 {{'#pragma omp taskwait' must be inside a function body}}
#pragma omp taskwait

void f(int *x) {
  // expected-error@+1 {{'#pragma omp target' applies to function declarations only}}
  #pragma omp target device(smp)
  #pragma omp task
  *x = 1;
  // expected-error@+1 {{'#pragma omp critical' must be followed by a statement}}
  #pragma omp critical
}

// expected-error@+1 {{'#pragma oss atomic' must be followed by a statement}}
#pragma oss atomic
void g(void) {}

#define TASK _Pragma("omp task")
void h(int *x) {
  TASK // expected-error {{pragmas written with _Pragma or __pragma are not supported yet}}
  *x = 2;
  // expected-error@+1 {{'#pragma omp task' must be followed by a function declaration or a statement}}
  #pragma omp task
}
