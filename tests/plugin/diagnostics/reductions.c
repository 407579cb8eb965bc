// Errors about reductions and taskgroups (issue 19), with their whole texts.
double d;
int counter;
struct pair { int a, b; };

// expected-error@+1 {{expected '#pragma omp declare reduction(name : type : combiner)', optionally followed by 'initializer(omp_priv = expression)'}}
#pragma omp declare reduction(merge : struct pair) initializer(omp_priv = {0, 0})

// expected-error@+1 {{OpenMP directive '#pragma omp declare target' is not supported by nanort (supported: task, taskwait, taskgroup, taskloop, taskiter, taskgraph, target, critical, atomic, declare reduction)}}
#pragma omp declare target

#pragma oss task reduction(+: n) // expected-error {{reduction item 'n' names parameter 'n', which the task receives by value: reduce through a pointer ('[1]n' with 'n' a pointer) or a reference}}
void by_value(int n);
void by_value(int n) { (void)n; }

#pragma oss task reduction(+: counter) // expected-error {{reduction item 'counter' of function task 'global_item' must go through a parameter (a pointer or a reference): the body receives its private copy there}}
void global_item(void) { counter++; }

#pragma omp target device(opencl) ndrange(1, n, 8) copy_deps
#pragma omp task reduction(+: [n]x) // expected-error {{'reduction' on a task with device(opencl): reductions run on CPU workers only (a task with reductions has device smp)}}
void kernel_sum(int n, int *x);

void f(int n, int (*m)[4]) {
  int x = 0;
  struct pair p = {0, 0};
  // expected-error@+1 {{reduction operator '&' is not defined for type 'double' (item 'd')}}
  #pragma oss task reduction(&: d)
  d += 1;
  // expected-error@+1 {{reduction operator '+' is not defined for type 'struct pair' (item 'p')}}
  #pragma oss task reduction(+: p)
  p.a++;
  // expected-error@+1 {{no reduction 'merge' is declared for type 'int' (item 'x'): the built-in operators are +, -, *, &, |, ^, &&, ||, min and max; declare others with '#pragma omp declare reduction(merge : int : ...)'}}
  #pragma oss task reduction(merge: x)
  x++;
  // expected-error@+1 {{expected an operator and ':' at the start of 'reduction' (+, -, *, &, |, ^, &&, ||, min, max, or the name of a declare reduction)}}
  #pragma oss task reduction(x)
  x++;
  // expected-error@+1 {{expected a list after ':' in 'reduction'}}
  #pragma oss task reduction(+:)
  x++;
  // expected-error@+1 {{reduction item 'm[0;n][0;4]' must be contiguous: a variable, an array, a section of one dimension (v[a;n], v[a:b]) or a shaped pointer ([n]p)}}
  #pragma oss task reduction(+: m[0;n][0;4])
  m[0][0]++;
  // expected-error@+1 {{variable 'x' of reduction item 'x' cannot be private or firstprivate: the task works on its private copy of the variable itself}}
  #pragma oss task reduction(+: x) firstprivate(x)
  x++;
  // expected-error@+1 {{cannot tell the element type of reduction item 'p.a': its base must be a variable, an array or a pointer named by itself}}
  #pragma oss task reduction(+: p.a)
  p.a++;
  // expected-error@+1 {{clause 'task_reduction' is not allowed on '#pragma omp task'}}
  #pragma omp task task_reduction(+: x)
  x++;
  // expected-error@+1 {{clause 'in_reduction' is not allowed on '#pragma omp taskgroup'}}
  #pragma omp taskgroup in_reduction(+: x)
  x++;
  // expected-error@+1 {{a taskgroup cannot apply to a declaration: put the statement in a block}}
  #pragma omp taskgroup
  int y = 0;
  (void)y;
  #pragma omp taskgroup
  {
    if (n)
      return; // expected-error {{'return' cannot leave a taskgroup}}
  }
  // expected-error@+1 {{'#pragma omp declare reduction' inside a function is not supported: declare it at file or namespace scope}}
  #pragma omp declare reduction(plus : int : omp_out += omp_in)
}
