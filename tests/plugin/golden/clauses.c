/* The lowered shape of issue 19's clauses: a multidependence (a loop per iterator around the
 * item's access), taskwait with dependences, inprivate (the copy when the task starts) and
 * copy clauses on a task. */
void f(int n, int *v) {
  int x = 1;
  #pragma omp task out({v[i;2], i=0:n-1:2}) inprivate(x) copy_in(x) no_copy_deps
  v[0] = x;
  #pragma oss taskwait in({v[k], k={0, n}}) inout(x)
}
