// The lowered shape of reductions (issue 19): an inline task's pointer to the variable turned
// to its private copy when the body starts, a function task's pointer parameter passed as the
// copy, weakreduction (registered, body untouched), a taskgroup with task_reduction and an
// in_reduction task, and a declare reduction's typedef and functions.
struct span { int lo, hi; };
#pragma omp declare reduction(merge : struct span : omp_out.lo = omp_out.lo < omp_in.lo ? omp_out.lo : omp_in.lo) initializer(omp_priv = {0, 0})

#pragma oss task reduction(+: [n]p)
void add(int n, int *p) { p[0] += n; }

#pragma oss task weakreduction(+: [n]p)
void add_all(int n, int *p) { add(n, p); }

void f(int n, int *v, long *hist) {
  long sum = 0;
  struct span s = {0, 0};
  #pragma oss task reduction(+: sum) reduction(merge: s) reduction(max: hist[2;n])
  sum += v[0] + hist[2] + s.lo;
  #pragma omp taskgroup task_reduction(+: sum)
  {
    #pragma omp task in_reduction(+: sum)
    sum++;
  }
  add_all(n, v);
}
