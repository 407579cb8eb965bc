/* taskiter and taskgraph as OmpSs-2 and OpenMP 6.0 programs write them: a 1-D diffusion whose
 * grid pointers are swapped after each step (taskiter unroll(2), an odd number of steps, and
 * too few steps to replay), a while loop whose condition reads a residual that a task computes,
 * a do-while loop, a 'for' loop that is not canonical, a taskiter of function tasks, one inside
 * an inline task (its shared variables), one in a final task, and taskgraph regions (graph_id,
 * graph_reset, if, nogroup, replayable(0)). Each result is compared with the same loop run in
 * order, where replayed iterations' tasks use the recorded ones' values (the model's rule). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 256, BLOCKS = 8 };

static void smooth_ref(const double *a, double *b, int n) {
  for (int i = 0; i < n; ++i)
    b[i] = (i == 0 || i == n - 1) ? a[i] : 0.5 * a[i] + 0.25 * (a[i - 1] + a[i + 1]);
}

static void init(double *x, int n) {
  for (int i = 0; i < n; ++i) x[i] = (double)((i * 37) % 11);
}

/* 'steps' smoothing steps, a and b swapped after each; the result is in *out. */
static void diffusion(int steps, double **out) {
  double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  init(a, N);
  init(b, N);
  #pragma oss taskiter unroll(2)
  for (int s = 0; s < steps; ++s) {
    for (int k = 0; k < BLOCKS; ++k) {
      int lo = k * (N / BLOCKS), hi = lo + N / BLOCKS;
      #pragma oss task in(a[0;N]) out(b[lo;hi - lo])
      for (int i = lo; i < hi; ++i)
        b[i] = (i == 0 || i == N - 1) ? a[i] : 0.5 * a[i] + 0.25 * (a[i - 1] + a[i + 1]);
    }
    double *t = a;
    a = b;
    b = t;
  }
  #pragma oss taskwait
  *out = a;
  free(b);
}

static void check_diffusion(int steps) {
  double *got;
  diffusion(steps, &got);
  double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  init(a, N);
  for (int s = 0; s < steps; ++s) {
    smooth_ref(a, b, N);
    double *t = a;
    a = b;
    b = t;
  }
  CHECK(memcmp(got, a, N * sizeof *a) == 0);
  free(got);
  free(a);
  free(b);
}

/* Jacobi sweeps until the largest change is small: the condition reads what a task wrote. */
static int converge(double *x, int n, double tol) {
  double *next = malloc(n * sizeof *next);
  double change = 2 * tol;
  int sweeps = 0;
  #pragma oss taskiter
  while (change > tol) {
    #pragma oss task in(x[0;n]) out(next[0;n])
    smooth_ref(x, next, n);
    #pragma oss task in(next[0;n]) inout(x[0;n]) out(change) inout(sweeps)
    {
      double m = 0;
      for (int i = 0; i < n; ++i) {
        double d = fabs(next[i] - x[i]);
        if (d > m) m = d;
        x[i] = next[i];
      }
      change = m;
      ++sweeps;
    }
  }
  #pragma oss taskwait
  free(next);
  return sweeps;
}

static int converge_ref(double *x, int n, double tol) {
  double *next = malloc(n * sizeof *next);
  double change = 2 * tol;
  int sweeps = 0;
  while (change > tol) {
    smooth_ref(x, next, n);
    double m = 0;
    for (int i = 0; i < n; ++i) {
      double d = fabs(next[i] - x[i]);
      if (d > m) m = d;
      x[i] = next[i];
    }
    change = m;
    ++sweeps;
  }
  free(next);
  return sweeps;
}

#pragma oss task inout([n]x)
static void add_one(double *x, int n) {
  for (int i = 0; i < n; ++i) x[i] += 1;
}

/* taskwait in a function the body calls: the replays would not wait there (TASKITER_ERROR). */
static void wait_inside(void) {
  #pragma oss taskwait
}

static void runtime_error(const char *which) {
  int zero = (int)strlen(which) - (int)strlen(which), hits = 0;
  if (strcmp(which, "unroll") == 0) {
    #pragma oss taskiter unroll(zero)
    for (int i = 0; i < 10; ++i) {
      #pragma oss task inout(hits)
      hits++;
    }
  } else {
    #pragma oss taskiter
    for (int i = 0; i < 10; ++i) {
      #pragma oss task inout(hits)
      hits++;
      wait_inside();
    }
  }
  printf("not stopped: %d\n", hits);
}

/* One taskgraph construct: its graphs per id, replayed with their recorded values. */
static void region(double *x, int n, double delta, int id, int reset, int record) {
  #pragma omp taskgraph graph_id(id) graph_reset(reset) if(record)
  {
    for (int k = 0; k < 4; ++k) {
      double *part = x + k * (n / 4);
      #pragma omp task depend(inout: part[0:n/4]) firstprivate(delta)
      for (int i = 0; i < n / 4; ++i) part[i] += delta;
    }
  }
}

/* The same with OpenMP 6.0's saved modifier, which says what every replay does. */
static void region_saved(double *x, int n, double delta) {
  #pragma omp taskgraph
  {
    #pragma omp task depend(inout: x[0:n]) firstprivate(saved: delta, n)
    for (int i = 0; i < n; ++i) x[i] += delta;
  }
}

/* replayable(0): a task kept out of the record, run at the recording encounter only (a log of
 * the first step); replayable alone is the default. */
static void region_logged(double *x, int n, int *log) {
  #pragma omp taskgraph
  {
    #pragma omp task depend(inout: x[0:n]) replayable
    for (int i = 0; i < n; ++i) x[i] += 1;
    #pragma omp task depend(in: x[0:n]) depend(inout: log[0]) replayable(0)
    *log += (int)x[0];
  }
}

/* A function task replayable where its argument says so, and a taskloop's chunks that are not:
 * both evaluated at the recording encounter. */
static int adds;
#pragma omp task inout(*x) replayable(k != 0)
static void add_k(int *x, int k) {
  *x += k;
  ++adds;
}

static void region_mixed(int *v, int *w) {
  #pragma omp taskgraph
  {
    add_k(v, 1);
    add_k(w, 0);
    #pragma omp taskloop replayable(0) nogroup grainsize(2) shared(w)
    for (int i = 0; i < 4; ++i) {
      #pragma omp atomic
      *w += 10;
    }
  }
}

/* graph_reset alone: every encounter records again, with its own values. */
static void region_always(double *x, double delta) {
  #pragma omp taskgraph graph_reset
  {
    #pragma omp task depend(inout: x[0]) firstprivate(delta)
    x[0] += delta;
  }
}

static double region_nogroup(double *x) {
  #pragma omp taskgraph nogroup
  {
    #pragma omp task depend(inout: x[0])
    x[0] *= 2;
  }
  #pragma omp taskwait
  return x[0];
}

int main(void) {
  if (getenv("TASKITER_ERROR")) {
    runtime_error(getenv("TASKITER_ERROR"));
    return 0;
  }
  check_diffusion(11); /* recorded 2, replayed 4 x 2, the last one as usual */
  check_diffusion(12);
  check_diffusion(3);  /* fewer than two groups: nothing replays */
  check_diffusion(1);
  check_diffusion(0);

  double x[64], y[64];
  init(x, 64);
  init(y, 64);
  CHECK(converge(x, 64, 1e-3) == converge_ref(y, 64, 1e-3));
  CHECK(memcmp(x, y, sizeof x) == 0);

  /* do-while: the body runs once before the condition. */
  int count = 0, limit = 7;
  #pragma oss taskiter
  do {
    #pragma oss task inout(count)
    count += 2;
  } while (count < limit);
  CHECK(count == 8);

  /* A loop that is not canonical: its tasks keep the recorded i (1) in every replay. */
  int sum = 0, iterations = 0;
  #pragma oss taskiter
  for (int i = 1; i < 1000; i *= 2) {
    #pragma oss task inout(sum) firstprivate(i)
    sum += i;
    ++iterations; /* the body's own code: the recorded iteration only */
  }
  #pragma oss taskwait
  CHECK(sum == 10 && iterations == 1);

  /* Function tasks, 5 iterations. */
  double v[32];
  memset(v, 0, sizeof v);
  #pragma oss taskiter
  for (int i = 0; i < 5; ++i) {
    add_one(v, 16);
    add_one(v + 16, 16);
    add_one(v, 32);
  }
  #pragma oss taskwait
  for (int i = 0; i < 32; ++i) CHECK(v[i] == 10);

  /* Inside an inline task: its shared variables, and its own children. */
  int total = 0, rounds = 6;
  #pragma oss task shared(total, rounds)
  {
    #pragma oss taskiter
    for (int r = 0; r < rounds; ++r) {
      #pragma oss task inout(total)
      total += 3;
    }
    #pragma oss taskwait
  }
  #pragma oss taskwait
  CHECK(total == 18);

  /* In a final task nothing records: every iteration runs. */
  int in_final = 0, body_runs = 0;
  #pragma oss task final(1) shared(in_final, body_runs)
  {
    #pragma oss taskiter
    for (int r = 0; r < 4; ++r) {
      #pragma oss task inout(in_final)
      in_final += r;
      ++body_runs;
    }
  }
  #pragma oss taskwait
  CHECK(in_final == 6 && body_runs == 4);

  /* taskgraph: recorded at the first encounter, replayed with the recorded delta after. */
  double g[64], h[64];
  memset(g, 0, sizeof g);
  memset(h, 0, sizeof h);
  region(g, 64, 1.0, 0, 0, 1); /* records graph 0: +1 */
  region(g, 64, 5.0, 0, 0, 1); /* replays: +1 */
  region(h, 64, 2.0, 1, 0, 1); /* records graph 1 (h): +2 */
  region(g, 64, 7.0, 0, 0, 1); /* replays graph 0: +1 */
  region(h, 64, 9.0, 1, 0, 1); /* replays graph 1: +2 */
  for (int i = 0; i < 64; ++i) CHECK(g[i] == 3 && h[i] == 4);
  region(g, 64, 10.0, 0, 1, 1); /* graph_reset: records again, +10 */
  region(g, 64, 20.0, 0, 0, 1); /* replays: +10 */
  region(g, 64, 100.0, 0, 0, 0); /* if(0): runs the region as written, +100 */
  region(g, 64, 30.0, 0, 0, 1); /* replays the graph of the reset: +10 */
  for (int i = 0; i < 64; ++i) CHECK(g[i] == 133);
  double s[8] = {0};
  region_saved(s, 8, 1.5); /* records: +1.5 */
  region_saved(s, 8, 4.0); /* replays with the saved delta: +1.5 */
  for (int i = 0; i < 8; ++i) CHECK(s[i] == 3);
  double one = 1;
  for (int r = 0; r < 3; ++r) region_nogroup(&one);
  CHECK(one == 8);
  double r[16] = {0};
  int log = 0;
  for (int e = 0; e < 4; ++e) region_logged(r, 16, &log);
  for (int i = 0; i < 16; ++i) CHECK(r[i] == 4); /* the recorded task, every encounter */
  CHECK(log == 1);                               /* the unrecorded one, the first only */
  int once = 0, each = 0;
  for (int e = 0; e < 3; ++e) region_mixed(&each, &once);
  #pragma omp taskwait
  CHECK(each == 3 && once == 40 && adds == 4);
  double q = 0;
  region_always(&q, 1);
  region_always(&q, 2);
  region_always(&q, 3);
  CHECK(q == 6);
  CHECK_DONE();
}
