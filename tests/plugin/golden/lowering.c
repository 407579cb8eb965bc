/* Golden test: the lowered text of a function task, an inline task and taskwait forms. */
#define N 8

#pragma omp task in([n]x) out(x[0;1]) priority(2)
void f(int n, int *x) { x[0] = n; }

int main(void) {
  int a[N] = {0};
  int k = 1;
  f(N, a);
  #pragma omp task inout(a[1:2]) firstprivate(k) label(inline)
  a[1] += k;
  #pragma omp taskwait on(a[1])
  #pragma omp taskwait
  return a[0] - N;
}
