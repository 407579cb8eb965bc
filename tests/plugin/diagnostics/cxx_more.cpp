// More C++ errors.
struct Counter {
  int v;
  Counter &operator+=(int d) { v += d; return *this; }
};
struct NotTrivial {
  NotTrivial() = default;
  NotTrivial(const NotTrivial &o) : v(o.v) {}
  int v = 0;
};

// expected-error@+1 {{operators and conversion functions cannot be tasks}}
#pragma omp task
void operator-(Counter a) { (void)a; }

void f() {
  NotTrivial arr[2];
  // expected-error@+1 {{firstprivate array 'arr' must be trivially copyable}}
  #pragma omp task
  (void)arr[0].v;
  // Named through a pointer member, but copying runs a constructor: shared, not copied.
  struct Row {
    NotTrivial keep;
    double *data;
  } rows[2] = {};
  #pragma omp task inout(rows[0].data[0;1])
  rows[0].data[0] = 1;
  Counter c{0};
  // expected-error@+1 {{'#pragma omp atomic' applies to 'x op= expr;', 'x++;', '++x;', 'x--;' or '--x;'}}
  #pragma omp atomic
  c += 1;
}

struct WithKernel {
  // expected-error@+2 {{a member function cannot have a device(opencl) version}}
  #pragma omp target device(smp, opencl) ndrange(1, n)
  #pragma omp task
  void run(int n) { (void)n; }
};
