// Task pragmas on functions declared inside a function: what is not supported is an error
// naming what to write instead (the supported forms run in tests/plugin/programs/block_tasks.c).
// expected-error@local_tasks.h:3 {{in an included file, a task pragma on a function declared inside a function is not lowered: declare 'in_header_block' with its pragma at file scope}}
#include "local_tasks.h"

#define CALL_IT(p) via_macro(p)
#define APPLY(f, p) f(p)

// expected-error@+1 {{function task 'elsewhere' must be defined in this file, or declared with its pragma in a header that the defining file includes}}
#pragma omp task inout(*p)
void elsewhere(int *p);

struct holder { int m; int v[4]; };

void block_forms(int *x, int m) {
  // A member named as a local variable is not that variable: no error.
  #pragma omp task inout(h->v[0;h->m])
  void member_named(struct holder *h);
  member_named(0);
  // expected-error@+1 {{task 'result' is declared inside a function and returns a value: such a task must return void (declare it with its pragma at file scope to get its result)}}
  #pragma omp task in(*p)
  int result(int *p);
  (void)result(x);

  // expected-error@+1 {{task 'noproto' is declared inside a function without its parameters: write them in this declaration ('noproto(void)' for none)}}
  #pragma omp task
  void noproto();
  noproto();

  // expected-error@+1 {{task 'on_gpu' is declared inside a function, where only 'device(smp)' is supported: declare a cuda task with its pragma at file scope}}
  #pragma omp target device(cuda) ndrange(1, n, 128)
  #pragma omp task inout(p[0;n])
  void on_gpu(float *p, int n);

  // expected-error@+1 {{'implements' on a function declared inside a function is not supported: declare 'other_version' with its pragma at file scope}}
  #pragma omp target device(smp) implements(block_forms)
  #pragma omp task
  void other_version(int *x, int m);

  // expected-error@+1 {{'elsewhere' is also a task at file scope, defined in another file: a task declared inside a function calls its body, which this file must define}}
  #pragma omp task in(*p)
  void elsewhere(int *p);
  elsewhere(x);

  // expected-error@+1 {{the clauses of task 'uses_local', declared inside a function, may name its parameters and what is visible at file scope, not the local variable 'm'}}
  #pragma omp task inout(p[0;m])
  void uses_local(int *p);
  uses_local(x);

  struct point { int x, y; };
  #pragma omp task inout(*p)
  void local_type(struct point *p); // expected-error {{parameter 'p' of task 'local_type' has a type declared inside a function: declare the type at file scope}}

  // expected-error@+1 {{clause 'inprivate' applies to inline tasks: the parameters of a function task are its own copies already (use 'in')}}
  #pragma omp task inprivate(p)
  void copies(int *p);
  copies(x);

  #pragma omp task inout(*p)
  void via_macro(int *p);
  via_macro(x);
  APPLY(via_macro, x); // the name is a macro argument, written here: lowered
  CALL_IT(x); // expected-error {{task 'via_macro' is declared inside a function, so its calls there call a wrapper of their own: name 'via_macro' outside macro bodies in that scope}}
}
