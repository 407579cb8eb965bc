/* Golden test: reductions and collapse on taskloops. OpenMP's reduction makes the implicit
 * group a taskgroup (its task_reduction before the chunks, in_reduction chunks, the end that
 * combines); OmpSs-2's makes each chunk a reduction task; collapse(2) computes both loops'
 * trip counts, gives each chunk its first iteration of the product and the loops, and turns
 * iterations back into (i, j) in the body and in a dependence per iteration. */
long total(const int *v, int n) {
  long s = 0;
  #pragma omp taskloop grainsize(64) reduction(+: s)
  for (int i = 0; i < n; i++)
    s += v[i];
  return s;
}

void fill(int *m, int rows, int cols, int *best) {
  #pragma oss taskloop collapse(2) num_tasks(4) out(m[i * cols + j]) reduction(max: [1]best)
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      m[i * cols + j] = i - j;
      *best = i - j > *best ? i - j : *best;
    }
  #pragma oss taskwait
}
