/* An error inside a clause expression is reported at the user's line and column. */
#pragma omp task in([count]x)
void f(int n, int *x) { *x = n; }

int main(void) {
  int y = 0;
  #pragma omp task inout(y) priority(undeclared_priority)
  y++;
  #pragma omp taskwait
  return y;
}
