/* taskiter with OmpSs-2's update clause, as programs write it: every iteration runs its body,
 * so that the tasks of later iterations carry their own firstprivate values (the time step,
 * the loop variable, a value the body computes) while their dependences are matched once.
 * A 1-D diffusion with a source that grows with time, its grids swapped after each step
 * (unroll(2) update, an odd number of steps and too few to replay), a while loop whose
 * condition reads what the tasks computed, a 'for' loop without unroll, a function task given
 * the step, and a loop in a final task. Each result is compared with the same loop run in
 * order, every iteration with its own values. UPDATE_ERROR: an iteration that creates other
 * tasks than the recorded one stops the program, naming the task. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 256, BLOCKS = 8 };

static double source(int step) { return 0.125 * (double)(step % 7 + 1); }

static void smooth_ref(const double *a, double *b, int n, int step) {
  for (int i = 0; i < n; ++i)
    b[i] = (i == 0 || i == n - 1) ? a[i] : 0.5 * a[i] + 0.25 * (a[i - 1] + a[i + 1]);
  b[n / 2] += source(step);
}

static void init(double *x, int n) {
  for (int i = 0; i < n; ++i) x[i] = (double)((i * 37) % 11);
}

/* 'steps' steps, each adding the step's source at the middle, a and b swapped after each. */
static void diffusion(int steps, double **out) {
  double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  init(a, N);
  init(b, N);
  #pragma oss taskiter unroll(2) update
  for (int s = 0; s < steps; ++s) {
    double q = source(s); /* computed by the body: each iteration's own */
    for (int k = 0; k < BLOCKS; ++k) {
      int lo = k * (N / BLOCKS), hi = lo + N / BLOCKS;
      #pragma oss task in(a[0;N]) out(b[lo;hi - lo]) firstprivate(q)
      {
        for (int i = lo; i < hi; ++i)
          b[i] = (i == 0 || i == N - 1) ? a[i] : 0.5 * a[i] + 0.25 * (a[i - 1] + a[i + 1]);
        if (lo <= N / 2 && N / 2 < hi) b[N / 2] += q;
      }
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
    smooth_ref(a, b, N, s);
    double *t = a;
    a = b;
    b = t;
  }
  CHECK(memcmp(got, a, N * sizeof *a) == 0);
  free(got);
  free(a);
  free(b);
}

/* A while loop: each sweep halves the distance to a target that moves with the sweep number;
 * the condition reads the change a task computed. */
static int relax(double *x, double *change) {
  int sweeps = 0;
  *change = 1;
  #pragma oss taskiter update
  while (*change > 1e-3) {
    double target = 10.0 + 1.0 / (sweeps + 1);
    #pragma oss task inout(x[0]) out(change[0]) firstprivate(target)
    {
      double next = 0.5 * (x[0] + target);
      change[0] = fabs(next - x[0]);
      x[0] = next;
    }
    ++sweeps;
  }
  return sweeps;
}

static int relax_ref(double *x) {
  int sweeps = 0;
  double change = 1;
  while (change > 1e-3) {
    double target = 10.0 + 1.0 / (sweeps + 1);
    double next = 0.5 * (x[0] + target);
    change = fabs(next - x[0]);
    x[0] = next;
    ++sweeps;
  }
  return sweeps;
}

/* A function task given the step. */
#pragma oss task inout(sum[0])
static void add_step(double *sum, int step) {
  sum[0] = sum[0] * 0.5 + step;
}

static void runtime_error(const char *which) {
  double x[2] = {0, 0};
  if (strcmp(which, "data") == 0) {
    #pragma oss taskiter update
    for (int s = 0; s < 6; ++s) {
      #pragma oss task inout(x[s % 2]) /* other data in every other iteration */
      x[s % 2] += 1;
    }
  } else {
    #pragma oss taskiter update
    for (int s = 0; s < 6; ++s) {
      for (int k = 0; k <= (s > 2); ++k) { /* one task more from the fourth iteration */
        #pragma oss task inout(x[0])
        x[0] += 1;
      }
    }
  }
  printf("not stopped: %g %g\n", x[0], x[1]);
}

int main(void) {
  if (getenv("UPDATE_ERROR")) {
    runtime_error(getenv("UPDATE_ERROR"));
    return 0;
  }
  check_diffusion(11); /* recorded 2, updated and replayed 4 x 2, the last one as written */
  check_diffusion(12);
  check_diffusion(3); /* too few to replay: every step as written */
  check_diffusion(1);

  double x = 0, change = 0, y = 0;
  int sweeps = relax(&x, &change);
  int sweeps_ref = relax_ref(&y);
  CHECK(sweeps == sweeps_ref && x == y);
  printf("relax: %d sweeps, x = %.6f\n", sweeps, x);

  /* A canonical 'for' loop without unroll: each iteration one update and one replay. */
  double sum = 0, sum_ref = 0;
  #pragma oss taskiter update
  for (int s = 0; s < 25; ++s) add_step(&sum, s);
  #pragma oss taskwait
  for (int s = 0; s < 25; ++s) sum_ref = sum_ref * 0.5 + s;
  CHECK(sum == sum_ref);

  /* In a final task nothing is recorded: every iteration runs as written. */
  double in_final = 0;
  #pragma oss task final(1) inout(in_final)
  {
    #pragma oss taskiter update
    for (int s = 0; s < 4; ++s) {
      #pragma oss task inout(in_final)
      in_final = in_final * 10 + s;
    }
  }
  #pragma oss taskwait
  CHECK(in_final == 123);
  CHECK_DONE();
}
