/* taskloop as OmpSs-1 and OpenMP programs write it (#pragma omp): a histogram, vector updates
 * with grainsize and num_tasks, negative steps, unsigned and 64-bit bounds, empty ranges, the
 * implicit group (the taskloop waits for its tasks and their descendants),
 * nogroup followed by taskwait, dependences between two taskloops, a taskloop inside a task
 * and in a function that returns. Each result is compared with the same loop run in order. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 1000 };

static void histogram(const int *data, int n, int *hist, int bins) {
  #pragma omp taskloop grainsize(64) shared(hist) label(histogram)
  for (int i = 0; i < n; ++i) {
    #pragma omp atomic
    hist[data[i] % bins]++;
  }
  /* no taskwait: the taskloop waits for its tasks */
}

/* How many tasks a taskloop makes: each counts itself once (its firstprivate copy of 'first'). */
static int chunks_num_tasks(int n, int tasks) {
  int count = 0;
  int first = 1;
  #pragma omp taskloop num_tasks(tasks) firstprivate(first) shared(count)
  for (int i = 0; i < n; ++i)
    if (first) {
      first = 0;
      #pragma omp atomic
      count += 1;
    }
  return count;
}

static int chunks_grainsize(int n, int grain) {
  int count = 0;
  int first = 1;
  #pragma omp taskloop grainsize(grain) firstprivate(first) shared(count)
  for (int i = 0; i < n; ++i)
    if (first) {
      first = 0;
      #pragma omp atomic
      count += 1;
    }
  return count;
}

static int chunks_default(int n) {
  int count = 0;
  int first = 1;
  #pragma omp taskloop firstprivate(first) shared(count)
  for (int i = 0; i < n; ++i)
    if (first) {
      first = 0;
      #pragma omp atomic
      count += 1;
    }
  return count;
}

/* A taskloop inside a task, in a function that returns before the task ends. */
static void scale_later(double *v, int n, double f) {
  #pragma omp task inout(v[0;n])
  {
    #pragma omp taskloop num_tasks(4)
    for (int i = n - 1; i >= 0; --i) {
      SLOW();
      v[i] *= f;
    }
  }
}

/* Run-time errors (TASKLOOP_ERROR=grainsize|step, tests plugin.taskloop.*): the program
 * stops with a message that names the pragma. */
static void runtime_error(const char *which) {
  int zero = (int)strlen(which) - (int)strlen(which), down = zero - 1, hits = 0;
  if (strcmp(which, "grainsize") == 0) {
    #pragma omp taskloop grainsize(zero) shared(hits)
    for (int i = 0; i < 10; ++i) hits++;
  } else {
    #pragma omp taskloop shared(hits)
    for (int i = 0; i < 10; i += down) hits++;
  }
  printf("not stopped: %d\n", hits);
}

int main(void) {
  if (getenv("TASKLOOP_ERROR")) {
    runtime_error(getenv("TASKLOOP_ERROR"));
    return 0;
  }
  int *data = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i) data[i] = (i * 7919) % 1013;

  /* A histogram, against the same loop in order. */
  int hist[16], ref[16];
  memset(hist, 0, sizeof hist);
  memset(ref, 0, sizeof ref);
  histogram(data, N, hist, 16);
  for (int i = 0; i < N; ++i) ref[data[i] % 16]++;
  CHECK(memcmp(hist, ref, sizeof hist) == 0);

  /* Vector updates: grainsize, num_tasks, a step of 3, a negative step. */
  double *x = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
  double *rx = malloc(N * sizeof(double)), *ry = malloc(N * sizeof(double));
  for (int i = 0; i < N; ++i) x[i] = rx[i] = i, y[i] = ry[i] = 1.0;
  #pragma omp taskloop grainsize(100)
  for (int i = 0; i < N; ++i) y[i] += 2.0 * x[i];
  for (int i = 0; i < N; ++i) ry[i] += 2.0 * rx[i];
  #pragma omp taskloop num_tasks(7)
  for (int i = 2; i < N; i += 3) x[i] = -x[i];
  for (int i = 2; i < N; i += 3) rx[i] = -rx[i];
  int j;
  #pragma omp taskloop grainsize(10)
  for (j = N - 1; j >= 0; j -= 5) y[j] -= 1.0;
  for (j = N - 1; j >= 0; j -= 5) ry[j] -= 1.0;
  #pragma omp taskloop num_tasks(3) if(0) priority(2)
  for (int i = N - 1; i > N / 2; i--) y[i] *= 0.5;
  for (int i = N - 1; i > N / 2; i--) ry[i] *= 0.5;
  CHECK(memcmp(x, rx, N * sizeof(double)) == 0);
  CHECK(memcmp(y, ry, N * sizeof(double)) == 0);

  /* The number of tasks: num_tasks(t) makes t (fewer when there are fewer iterations);
   * grainsize(g) makes as many as hold g iterations each; without them, 4 per CPU worker
   * (NANORT_CPU_WORKERS=2). */
  CHECK(chunks_num_tasks(100, 5) == 5);
  CHECK(chunks_num_tasks(3, 10) == 3);
  CHECK(chunks_grainsize(100, 10) == 10);
  CHECK(chunks_grainsize(100, 30) == 3);
  CHECK(chunks_grainsize(5, 30) == 1);
  CHECK(chunks_default(100) == 8);
  CHECK(chunks_default(5) == 5);

  /* Unsigned and 64-bit bounds, negative ranges, empty ranges. */
  unsigned long usum = 0, uref = 0;
  #pragma omp taskloop grainsize(16) shared(usum)
  for (unsigned long u = N; u > 0; u--) {
    #pragma omp atomic
    usum += u * u;
  }
  for (unsigned long u = N; u > 0; u--) uref += u * u;
  CHECK(usum == uref);
  long long big = 0, bigref = 0;
  #pragma omp taskloop num_tasks(4) shared(big)
  for (long long v = LLONG_MAX - 40; v <= LLONG_MAX - 1; v += 2) {
    #pragma omp atomic
    big += v - (LLONG_MAX - 100);
  }
  for (long long v = LLONG_MAX - 40; v <= LLONG_MAX - 1; v += 2) bigref += v - (LLONG_MAX - 100);
  CHECK(big == bigref);
  int neg = 0, negref = 0;
  #pragma omp taskloop grainsize(5) shared(neg)
  for (int i = -50; i < 50; i += 3) {
    #pragma omp atomic
    neg += i;
  }
  for (int i = -50; i < 50; i += 3) negref += i;
  CHECK(neg == negref);
  int ran = 0;
  #pragma omp taskloop shared(ran)
  for (int i = 5; i < 5; ++i) ran = 1;
  #pragma omp taskloop grainsize(1) shared(ran)
  for (unsigned u = 0; u < 0u; ++u) ran = 1;
  #pragma omp taskloop num_tasks(4) shared(ran)
  for (int i = 10; i > 10; i--) ran = 1;
  CHECK(ran == 0);

  /* The implicit group: the taskloop waits for its tasks and for the tasks that the
   * iterations create. */
  int *deep = calloc(N, sizeof(int));
  #pragma omp taskloop grainsize(250)
  for (int i = 0; i < N; i += 100) {
    #pragma omp task firstprivate(i)
    {
      SLOW();
      deep[i] = 1;
    }
  }
  int deep_count = 0;
  for (int i = 0; i < N; ++i) deep_count += deep[i];
  CHECK(deep_count == N / 100);

  /* nogroup, then dependences on the elements between two taskloops, then taskwait. */
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i) a[i] = -1;
  #pragma omp taskloop grainsize(50) out(a[i]) nogroup
  for (int i = 0; i < N; ++i) {
    if (i % 50 == 0) SLOW();
    a[i] = i;
  }
  #pragma omp taskloop grainsize(70) inout(a[i]) nogroup
  for (int i = 0; i < N; ++i) a[i] = 2 * a[i] + 1;
  #pragma omp taskwait
  int a_ok = 1;
  for (int i = 0; i < N; ++i) a_ok &= a[i] == 2 * i + 1;
  CHECK(a_ok);

  /* A taskloop inside a task. */
  double *v = malloc(64 * sizeof(double));
  for (int i = 0; i < 64; ++i) v[i] = i;
  scale_later(v, 64, 3.0);
  #pragma omp taskwait
  int v_ok = 1;
  for (int i = 0; i < 64; ++i) v_ok &= v[i] == 3.0 * i;
  CHECK(v_ok);

  free(data), free(x), free(y), free(rx), free(ry), free(deep), free(a), free(v);
  CHECK_DONE();
}
