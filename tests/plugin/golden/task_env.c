/* Golden: private and firstprivate variables of a task that creates tasks are named in its
 * argument block; a task whose statement is an atomic or a critical construct. */
void f(int *out, int n) {
  int c = 0, k = n;
  #pragma oss task private(c) firstprivate(k)
  {
    c = k;
    #pragma oss task shared(c)
    *out = c;
  }
  #pragma oss task private(c)
  c = 1;
  #pragma omp task concurrent(*out)
  #pragma omp atomic
  *out += n;
  #pragma omp task
  #pragma omp critical
  *out += n;
}
