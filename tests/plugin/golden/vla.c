/* Golden test: variable-length arrays and pointers to their rows in C inline tasks (issue
 * 19). a: a pointer to rows of ts x ts doubles, firstprivate (its dependence is through it),
 * declared again in the body with the row lengths the block carries; v: a VLA named in a
 * dependence, shared (its address); w: firstprivate, its bytes after the argument block;
 * s: private, its room there too. */
void f(int n, int ts, double (*a)[ts][ts]) {
  int v[n], w[n], s[n];
  #pragma omp task inout(a[1][0;ts][0;ts]) out(v) firstprivate(w) private(s)
  {
    s[0] = w[n - 1];
    v[0] = s[0] + (int)a[1][ts - 1][ts - 1];
  }
  #pragma omp taskwait
}
