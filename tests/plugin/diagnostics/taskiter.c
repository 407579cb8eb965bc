// Errors about taskiter loops and taskgraph regions: what they apply to, jumps out of them,
// waits that a replay would skip, and their clauses.
void work(int *p);

void not_a_loop(int *p) {
  // expected-error@+1 {{'#pragma oss taskiter' must be followed by a 'for', 'while' or 'do' loop}}
  #pragma oss taskiter
  work(p);
}

void no_condition(int *p) {
  #pragma oss taskiter
  // expected-error@+1 {{the loop of '#pragma oss taskiter' needs a condition: the replays go on while it holds}}
  for (int i = 0;; ++i) {
    #pragma oss task inout(p[0])
    work(p);
  }
}

void jumps(int *p, int n) {
  #pragma oss taskiter
  for (int i = 0; i < n; ++i) {
    #pragma oss task inout(p[0])
    work(p);
    // expected-error@+1 {{'break' cannot leave the loop of a taskiter (the iterations after the first are replays of its tasks, which do not run the loop's own code)}}
    if (p[0]) break;
  }
  #pragma omp taskiter
  while (n > 0) {
    // expected-error@+1 {{'return' cannot leave the loop of a taskiter}}
    if (p[1]) return;
    #pragma oss task inout(p[0])
    work(p);
  }
  // A break of a loop inside, and continue: allowed.
  #pragma oss taskiter
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (j == 2) break;
      #pragma oss task inout(p[j])
      work(p + j);
    }
    if (i == 1) continue;
  }
}

void waits(int *p, int n) {
  #pragma oss taskiter
  for (int i = 0; i < n; ++i) {
    #pragma oss task inout(p[0])
    work(p);
    // expected-error@+1 {{'#pragma oss taskwait' cannot be in the body of '#pragma oss taskiter' outside a task: a replay runs only the recorded tasks and would not wait there}}
    #pragma oss taskwait
  }
  #pragma oss taskiter
  for (int i = 0; i < n; ++i) {
    // A taskwait in a task of the body waits for that task's children: allowed.
    #pragma oss task inout(p[0])
    {
      #pragma oss task inout(p[0])
      work(p);
      #pragma oss taskwait
    }
  }
  #pragma omp taskiter
  for (int i = 0; i < n; ++i) {
    // expected-error@+1 {{'#pragma omp taskgroup' cannot be in the body of '#pragma omp taskiter' outside a task}}
    #pragma omp taskgroup
    {
      #pragma omp task
      work(p);
    }
  }
}

void unroll(int *p, int n) {
  // expected-error@+2 {{'#pragma oss taskiter' must be followed by a 'for' loop}}
  // expected-note@+1 {{'unroll' needs a 'for' loop whose trip count is known when it starts: the iterations recorded together are replayed together}}
  #pragma oss taskiter unroll(2)
  while (n-- > 0) {
    #pragma oss task inout(p[0])
    work(p);
  }
  // expected-note@+1 {{'unroll' needs a 'for' loop}}
  #pragma oss taskiter unroll(2)
  // expected-error@+1 {{the condition of a taskloop's loop must compare 'i' with its bound}}
  for (int i = 0; p[i] != 0; ++i) {
    #pragma oss task inout(p[0])
    work(p);
  }
  // expected-error@+1 {{clause 'update' takes no argument}}
  #pragma oss taskiter update(1)
  for (int i = 0; i < n; ++i) {
    #pragma oss task inout(p[0])
    work(p);
  }
  // expected-error@+1 {{clause 'grainsize' is not allowed on '#pragma oss taskiter'}}
  #pragma oss taskiter grainsize(4)
  for (int i = 0; i < n; ++i) {
    #pragma oss task inout(p[0])
    work(p);
  }
}

void regions(int *p, int n) {
  // expected-error@+1 {{a taskgraph cannot apply to a declaration: put the statement in a block}}
  #pragma omp taskgraph
  int x = 0;
  (void)x;
  #pragma omp taskgraph graph_id(n)
  {
    #pragma omp task
    work(p);
    // expected-error@+1 {{'return' cannot leave a taskgraph region}}
    if (p[0]) return;
  }
  for (int i = 0; i < n; ++i) {
    #pragma omp taskgraph
    {
      #pragma omp task
      work(p);
      // expected-error@+1 {{'continue' cannot leave a taskgraph region}}
      if (p[0]) continue;
    }
  }
  #pragma omp taskgraph
  {
    #pragma omp task depend(inout: p[0])
    work(p);
    // expected-error@+1 {{'#pragma omp taskwait' cannot be in the body of '#pragma omp taskgraph' outside a task}}
    #pragma omp taskwait
  }
  // expected-error@+1 {{clause 'unroll' is not allowed on '#pragma omp taskgraph'}}
  #pragma omp taskgraph unroll(2)
  {
    #pragma omp task
    work(p);
  }
  // expected-error@+1 {{expected a variable name in 'firstprivate'}}
  #pragma omp task firstprivate(saved:)
  work(p);
  // expected-error@+1 {{expected a variable name in 'firstprivate'}}
  #pragma omp task firstprivate(saved: p + 1)
  work(p);
  // expected-error@+1 {{clause 'graph_id' is not allowed on '#pragma omp task'}}
  #pragma omp task graph_id(1)
  work(p);
  // expected-error@+1 {{clause 'replayable' is not allowed on '#pragma omp taskgraph'}}
  #pragma omp taskgraph replayable(0)
  {
    #pragma omp task
    work(p);
  }
  // expected-error@+1 {{clause 'replayable' appears twice}}
  #pragma omp task replayable replayable(0)
  work(p);
  // expected-error@+1 {{clause 'replayable' has an empty argument}}
  #pragma omp task replayable()
  work(p);
}
