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

// A function task declared in a block (OmpSs allows it; nanort wants it at file scope).
void declares(int *x) {
  // expected-error@+1 {{a task pragma on a function declared inside a function is not supported: declare 'block_task' with its pragma at file scope (its calls after that are tasks)}}
  #pragma omp task inout(*x)
  void block_task(int *x);
  block_task(x);
}
