/* A helper without tasks, compiled with --no-openmp: its OpenMP loop is not lowered (nanort
 * would reject 'parallel for') and runs as a plain loop. */
int count_errors(int n, const double *a, double expected) {
  int errors = 0;
  #pragma omp parallel for reduction(+ : errors)
  for (int i = 0; i < n; ++i)
    if (a[i] != expected) ++errors;
  return errors;
}
