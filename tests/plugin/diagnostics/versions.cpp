// Versions (implements) in C++: overloads, namespaces, members and templates.

namespace lib {
void scale(int n, float *x, float f); // an overload that is not a task

#pragma omp task inout([n]x)
void scale(int n, float *x) { for (int i = 0; i < n; ++i) x[i] *= 2; }

// Accepted: 'scale' is the overload that is a task; the version is looked up from its own
// namespace outwards, and declared after the task in the namespace reopened.
namespace detail {
#pragma omp target device(opencl) ndrange(1, n, 64) implements(scale)
#pragma omp task
__kernel void scale_cl(int n, __global float *x);
} // namespace detail
} // namespace lib

namespace lib {
#pragma omp target device(smp) implements(scale)
#pragma omp task inout([len]v)
void scale_later(int len, float *v) { for (int i = 0; i < len; ++i) v[i] += v[i]; }
} // namespace lib

#pragma omp task inout(*x)
void run(int *x) { *x += 1; }

void call_run(int *x) { run(x); } // the code that makes run's tasks goes before this

namespace other {
// expected-error@+1 {{'late' is declared after 'run', in another scope or file: declare it before 'run' (the code that makes the task calls its smp version)}}
#pragma omp target device(smp) implements(run)
#pragma omp task
void late(int *x);
} // namespace other

struct Box {
  #pragma omp task inout(*x)
  void add(int *x) { *x += 1; }
  // expected-error@+1 {{versions of member functions and function templates are not supported yet}}
  #pragma omp target device(smp) implements(add)
  #pragma omp task
  void add_fast(int *x) { *x += 1; }
};

#pragma omp task inout(*x)
void plain_task(int *x) { *x = 0; }

// expected-error@+1 {{versions of member functions and function templates are not supported yet}}
#pragma omp target device(smp) implements(plain_task)
#pragma omp task
template <typename T> void templated(T *x) { *x = 0; }

// expected-error@+1 {{'by_reference' cannot implement 'plain_task': parameter 1 has type 'int &' here and 'int *' in 'plain_task'}}
#pragma omp target device(smp) implements(plain_task)
#pragma omp task
void by_reference(int &x);

void use(float *x) {
  lib::scale(4, x);
  // expected-error@+1 {{'scale_later' is a version of function task 'scale': call 'scale', whose task runs one of its versions}}
  lib::scale_later(4, x);
}
