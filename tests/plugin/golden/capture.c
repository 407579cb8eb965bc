/* Golden test: the captures of an inline task's dependences (issue 19). x and v: their own
 * storage, shared; p, s and rows: named through a pointer they hold, firstprivate; q: shared
 * by its clause; k: firstprivate by default. */
struct span {
  double *data;
  int n;
};

void f(double *p, double *q, struct span s, int k) {
  double x = 0, v[4] = {0};
  double *rows[2] = {p, q};
  #pragma omp task in(p[0;k]) out(x) inout(v[1]) in(s.data[0;s.n]) inout(rows[1][0;2]) in(*q) shared(q)
  {
    x = p[k - 1] + s.data[0] + *q;
    v[1] = rows[1][0];
    p = 0;
  }
  #pragma omp taskwait
}
