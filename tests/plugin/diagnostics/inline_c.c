// Errors about the captures of inline tasks in C.
#define USE_Y (y += 1)

void f(int n) {
  int x = 0, y = 0;
  int vla[n];
  struct local { int a; } l = {1};
  const int c = 2;
  #pragma omp task inout(x)
  {
    #pragma omp task inout(x) // nested tasks are lowered in C too
    x++;
    #pragma omp task inout(*p) // a function task declared in a block, inside an inline task
    void nested_declared(int *p);
    nested_declared(&x);
  }
  // expected-error@+1 {{variable 'x' must be listed in a data-sharing clause (default(none))}}
  #pragma omp task default(none)
  x++;
  // The dependences decide for p (firstprivate) and y (shared): default(none) asks nothing.
  int *p = &x;
  #pragma omp task default(none) in(p[0;1]) out(y)
  y = p[0];
  // A variable-length array is captured (tests/plugin/programs/vla.c), a function pointer
  // whose result is variably modified is not.
  #pragma omp task
  vla[0] = 1;
  // expected-error@+1 {{inprivate variable 'vla' has a variably modified type (a variable-length array or a pointer to its rows), which inprivate does not copy yet: use firstprivate(vla), which copies it when the task is created}}
  #pragma omp task inprivate(vla)
  vla[1] = vla[0];
  int (*(*rows)(void))[n] = 0;
  // expected-error@+1 {{variable 'rows' has a variably modified type that inline tasks cannot capture (only variable-length arrays and pointers to them)}}
  #pragma omp task
  (void)rows;
  // expected-error@+1 {{variable 'l' has a type declared inside the function}}
  #pragma omp task
  l.a = 2;
  // expected-error@+1 {{private variable 'c' cannot be const}}
  #pragma omp task private(c)
  (void)c;
  #pragma omp task shared(y)
  USE_Y; // expected-error {{variable 'y' is used through a macro body inside a C inline task}}
}

int g(int *x) {
  #pragma omp task shared(x)
  {
    if (*x) return 1; // expected-error {{'return' cannot leave a task}}
    *x = 1;
  }
  #pragma omp critical
  {
    if (*x) goto out; // expected-error {{'goto' cannot leave a critical region}}
  }
out:
  return 0;
}
