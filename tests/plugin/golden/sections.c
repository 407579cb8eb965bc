/* Golden test: the checks of array sections and shapes when a task is created (issue 18). */
float g[8];

#pragma omp task inout(x[i;n]) in(g[i:j]) depend(in: x[i:n]) in([n]x)
void f(int i, int j, int n, float *x) { x[i] = g[j] + n; }

int main(void) {
  float m[4][4] = {{0}};
  int r = 1, c = 2;
  #pragma omp task inout(m[r;2][c;c]) label(block)
  m[r][c] = 1;
  #pragma omp taskwait on(m[r;1][0;c])
  f(0, 1, 2, m[0]);
  #pragma omp taskwait
  return 0;
}
