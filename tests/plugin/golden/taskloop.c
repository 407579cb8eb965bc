/* Golden test: taskloops. OpenMP's (chunks with a token, and the wait on it at the end) and
 * OmpSs-2's (no wait), a dependence that names the loop variable (per iteration, merged),
 * one that does not (once per chunk). */
void scale(double *a, const double *b, int n, double f) {
  #pragma omp taskloop grainsize(64)
  for (int i = 0; i < n; i++)
    a[i] *= f;

  #pragma oss taskloop in(b[i - 1], b[i]) out(a[i]) in(f)
  for (int i = n - 1; i >= 1; i -= 2)
    a[i] = b[i - 1] + b[i] * f;
  #pragma oss taskwait
}
