// More errors found when lowering.

// C before C23: 'void f()' says nothing of the parameters; the definition does.
#pragma omp task
void no_parameters() {}

// expected-error@+1 {{function task 'kr' needs a prototype: its definition lists its parameters without their types in the parentheses (old style)}}
#pragma omp task
void kr(x) int *x; { *x = 1; } // expected-warning {{a function definition without a prototype is deprecated}}

// expected-error@+1 {{function task 'declared_only' needs a prototype: it is declared without parameters ('declared_only()') and not defined in this file; declare its parameters, or 'declared_only(void)'}}
#pragma omp task
void declared_only();
void call_declared_only(void) { declared_only(); }

// Declared with its pragma, neither defined nor used here: nothing to do.
#pragma omp task inout([n]x)
void never_used(int *x, int n);

// expected-error@+1 {{function task 'used_not_defined' must be defined in this file, or declared with its pragma in a header that the defining file includes}}
#pragma omp task inout([n]x)
void used_not_defined(int *x, int n);
void call_used_not_defined(int *x) { used_not_defined(x, 1); }

#define NAME named
// expected-error@+1 {{the name of function task 'named' comes from a macro}}
#pragma omp task
void NAME(int *x) { *x = 1; }

// expected-error@+1 {{variably modified parameter types are not supported yet}}
#pragma omp task
void vla_param(int n, int (*m)[n], int (*(*f)(void))[n]) { (void)m; (void)f; }

void g(int *x) {
  // expected-error@+1 {{'#pragma omp atomic' applies to 'x op= expr;', 'x++;', '++x;', 'x--;' or '--x;'}}
  #pragma omp atomic
  *x = *x + 1;
  typedef int v4 __attribute__((vector_size(16)));
  v4 v = {0, 0, 0, 0};
  // expected-error@+1 {{the target of an atomic update must have a scalar type}}
  #pragma omp atomic
  v += 1;
}
