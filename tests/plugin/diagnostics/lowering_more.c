// More errors found when lowering.

// 'f()' in a definition takes no arguments (C before C23).
#pragma omp task
void no_arguments() {}

// expected-error@+1 {{function task 'kr' needs a prototype}}
#pragma omp task
void kr(); // expected-warning {{a function declaration without a prototype is deprecated in all versions of C and is treated as a zero-parameter prototype in C23, conflicting with a subsequent definition}}
void kr(a) int a; { (void)a; } // expected-warning {{a function definition without a prototype is deprecated in all versions of C and is not supported in C23}}

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
