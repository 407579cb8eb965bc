// Function tasks that return a value: accepted on the host (their calls deliver the result,
// see programs/nonvoid_tasks.c); device tasks and tasks with versions return void.

#pragma omp task
int value(void) { return 1; }

#pragma omp task in(*v)
double first(const double *v) { return v[0]; }

// expected-error@+2 {{function task 'kernel_value' returns a value, which a device(opencl) task cannot: make it return void and write the result through a pointer parameter named in an out() clause}}
#pragma omp target device(opencl) ndrange(1, n, 64)
#pragma omp task in([n]x)
int kernel_value(int n, const float *x);

// expected-error@+2 {{function task 'cuda_value' returns a value, which a device(cuda) task cannot: make it return void and write the result through a pointer parameter named in an out() clause}}
#pragma omp target device(cuda) ndrange(1, n, 64)
#pragma omp task in([n]x)
float cuda_value(int n, const float *x);

// expected-error@+1 {{function task 'versioned' returns a value, so it cannot have versions ('implements') yet: make it return void and write the result through a pointer parameter named in an out() clause}}
#pragma omp task
int versioned(int n) { return n; }
#pragma omp target device(smp) implements(versioned)
#pragma omp task
void other(int n) { (void)n; }

int use(void) {
  double d = 2.0;
  int x = value();
  x += value() + (int)first(&d);
  return x;
}
