/* taskiter: a while loop (the condition after each iteration's tasks), a 'for' loop with
 * unroll(2) (the trip count, then the replays at once); taskgraph with its clauses. */
void step(double *a, double *b, int n);

void loops(double *a, double *b, int n, int steps, double *residual) {
  #pragma oss taskiter
  while (*residual > 1e-6) {
    #pragma oss task in(a[0;n]) out(b[0;n]) out(*residual)
    step(a, b, n);
  }
  #pragma oss taskiter unroll(2)
  for (int s = 0; s < steps; ++s) {
    #pragma oss task in(a[0;n]) out(b[0;n])
    step(a, b, n);
    double *t = a;
    a = b;
    b = t;
  }
}

void region(double *a, double *b, int n, int id, int again) {
  #pragma omp taskgraph graph_id(id) graph_reset(again) nogroup
  {
    #pragma omp task depend(in: a[0:n]) depend(out: b[0:n])
    step(a, b, n);
  }
}
