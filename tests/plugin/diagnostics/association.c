// Errors about what a pragma applies to.

// expected-error@+1 {{'#pragma omp target' must be followed by a '#pragma omp task' line}}
#pragma omp target device(smp)
void lonely(void);

// expected-error@+1 {{'#pragma omp taskwait' must be inside a function body}}
#pragma omp taskwait

void f(int *x) {
  // An inline task runs on the CPU: target device(smp) is accepted (test below), kernels are
  // functions (issue 19).
  // expected-error@+1 {{'#pragma omp target device(cuda)' applies to function declarations only: an inline task runs on the CPU (device(smp)); for a CUDA kernel, declare it with the target and task pragmas and call it}}
  #pragma omp target device(cuda)
  #pragma omp task
  *x = 1;
  // expected-error@+1 {{'#pragma oss target device(opencl)' applies to function declarations only: an inline task runs on the CPU (device(smp)); for an OpenCL kernel, declare it with the target and task pragmas and call it}}
  #pragma oss target device(smp, opencl)
  #pragma oss task
  *x = 1;
  // expected-error@+1 {{clause 'ndrange' launches a kernel: it applies to function declarations only, not to an inline task}}
  #pragma omp target device(smp) copy_in(*x) ndrange(1, 1)
  #pragma omp task
  *x = 1;
  #pragma omp target device(smp) copy_inout(*x) copy_deps
  #pragma omp task
  *x = 1;
  // expected-error@+1 {{'#pragma omp critical' must be followed by a statement}}
  #pragma omp critical
}

// expected-error@+1 {{'#pragma oss atomic' must be followed by a statement}}
#pragma oss atomic
void g(void) {}

#define TASK _Pragma("omp task")
#define TASK_AND_STATEMENT(v) _Pragma("omp task") v = 1;
#define BAD_CLAUSE _Pragma("omp task inout(")
void h(int *x) {
  TASK // a task, lowered
  *x = 2;
  TASK_AND_STATEMENT(*x) // expected-error {{a macro that holds _Pragma("omp task ...") must expand to that _Pragma alone}}
  BAD_CLAUSE // expected-error {{expected ')' to close 'inout('}}
  *x = 3;
  _Pragma("oss task inout(*x) priority(") // expected-error {{expected ')' to close 'priority('}}
  *x = 4;
  // expected-error@+1 {{'#pragma omp task' must be followed by a function declaration or a statement}}
  #pragma omp task
}

// A function task declared in a block: its calls in the block are tasks (no error; the
// unsupported forms are in local_tasks.c).
void declares(int *x) {
  #pragma omp task inout(*x)
  void block_task(int *x);
  block_task(x);
}

// inprivate (OmpSs-1) copies a variable of the creating function into the task when it
// starts: a function task's parameters are copies already (issue 19).
// expected-error@+1 {{clause 'inprivate' applies to inline tasks: the parameters of a function task are its own copies already (use 'in')}}
#pragma omp task inprivate(n)
void inprivate_function(int n);
