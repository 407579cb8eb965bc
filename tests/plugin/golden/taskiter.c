/* taskiter: a while loop (the condition after each iteration's tasks), a 'for' loop with
 * unroll(2) (the trip count, then the replays at once), both again with update (every
 * iteration's body runs); taskgraph with its clauses. */
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

/* With update: every iteration runs its body; the later ones update the recorded tasks. */
void updated(double *a, double *b, int n, int steps, double *residual) {
  int sweep = 0;
  #pragma oss taskiter update
  while (*residual > 1e-6) {
    #pragma oss task in(a[0;n]) out(b[0;n]) out(*residual) firstprivate(sweep)
    step(a + sweep % 2, b, n - 1);
    ++sweep;
  }
  #pragma oss taskiter unroll(2) update
  for (int s = 0; s < steps; ++s) {
    #pragma oss task in(a[0;n]) out(b[0;n]) firstprivate(s)
    step(a, b, n - s % 2);
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
    #pragma omp task depend(in: b[0:n]) replayable(n > 64)
    step(b, b, n);
    #pragma omp task replayable
    step(a, a, n);
  }
  #pragma omp taskgraph graph_reset
  {
    #pragma omp task depend(inout: a[0:n])
    step(a, a, n);
  }
}
