// More errors found when lowering.

// expected-error@+1 {{function task 'kr' needs a prototype}}
#pragma omp task
void kr() {}

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
