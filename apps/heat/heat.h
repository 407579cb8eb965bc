/* Heat: what every version shares besides the GPU: the sizes and options, the initial grid,
 * the CPU reference and the check. The 2-D heat equation at rest, solved by Jacobi sweeps of
 * the 5-point stencil on an n x n float grid whose boundary (first and last rows and columns)
 * is fixed: each step reads grid a and writes grid b, then the two are swapped. The rows are
 * split into blocks; the blocks of a step are independent, so each is its own small kernel
 * (a task in the annotated version), and a step waits for the one before. */
#ifndef HEAT_H
#define HEAT_H
#include "app.h"

/* The kernel's thread block (work-group), also written in heat.cu: 32 columns x 8 rows. */
#define HEAT_LOCAL_X 32
#define HEAT_LOCAL_Y 8

/* --paper: a 16 MiB grid in 32 blocks of 64 rows, 200 steps: 6400 kernels that each read and
 * write about 0.5 MiB, small enough that launching them is a good part of the time. */
#define HEAT_PAPER_N 2048
#define HEAT_PAPER_BLOCKS 32
#define HEAT_PAPER_STEPS 200
/* The defaults (ctest): the CPU reference takes a few milliseconds. */
#define HEAT_SMALL_N 256
#define HEAT_SMALL_BLOCKS 8
#define HEAT_SMALL_STEPS 20

struct heat_config {
  long n;        /* grid points per side */
  int blocks;    /* blocks of rows */
  int steps;     /* Jacobi sweeps */
  int reps;      /* timed repetitions */
  int gpus;      /* native versions: accepted for a common command line; one GPU is used */
  char size[64]; /* for the RESULT line */
};

static inline struct heat_config heat_config(int argc, char **argv, int native) {
  static const char *const native_options[] = {"n", "blocks", "steps", "reps", "paper", "gpus",
                                               NULL};
  static const char *const annotated_options[] = {"n", "blocks", "steps", "reps", "paper", NULL};
  app_check_options(argc, argv, native ? native_options : annotated_options);
  int paper = app_flag(argc, argv, "paper");
  struct heat_config c;
  c.n = app_option(argc, argv, "n", paper ? HEAT_PAPER_N : HEAT_SMALL_N);
  c.blocks = (int)app_option(argc, argv, "blocks", paper ? HEAT_PAPER_BLOCKS : HEAT_SMALL_BLOCKS);
  c.steps = (int)app_option(argc, argv, "steps", paper ? HEAT_PAPER_STEPS : HEAT_SMALL_STEPS);
  c.reps = (int)app_option(argc, argv, "reps", 3);
  c.gpus = (int)app_option(argc, argv, "gpus", 0);
  if (c.n < 3 || c.n > 32768 || c.blocks < 1 || c.blocks > c.n || c.steps < 1 || c.reps < 1) {
    fprintf(stderr, "error: wants 3 <= --n <= 32768, 1 <= --blocks <= n, --steps >= 1, "
                    "--reps >= 1\n");
    exit(APP_FAILED);
  }
  snprintf(c.size, sizeof c.size, "n%ld,blocks%d,steps%d", c.n, c.blocks, c.steps);
  return c;
}

/* Block b's rows [first, first + rows): the n rows split evenly (sizes differ by at most 1). */
static inline int heat_first(const struct heat_config *c, int b) {
  return (int)(c->n * b / c->blocks);
}
static inline int heat_rows(const struct heat_config *c, int b) {
  return heat_first(c, b + 1) - heat_first(c, b);
}

/* The source rows a block reads besides its own: the row above and the row below, where the
 * grid has them (the annotated version's in() dependence). */
static inline int heat_above(int first) { return first > 0; }
static inline int heat_below(int n, int first, int rows) { return first + rows < n; }

/* A deterministic pseudo-random number in [0, 1) for point (i, j) (an integer hash). */
static inline float heat_random(unsigned i, unsigned j) {
  unsigned h = i * 0x27D4EB2Fu ^ (j + 1) * 0x165667B1u;
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return (float)(h >> 8) * (1.0f / 16777216.0f);
}

/* The grid at step 0, written again before every repetition: the first row held at 1, the
 * other boundary points at 0, the interior random in [0, 1) (every block changes at every
 * step, so that a block missed or swept from the wrong grid shows). All values stay in [0, 1]:
 * a sweep takes means. */
static inline void heat_init(long n, float *grid) {
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j)
      grid[i * n + j] = i == 0 ? 1.0f
                        : i == n - 1 || j == 0 || j == n - 1 ? 0.0f
                                                             : heat_random((unsigned)i, (unsigned)j);
}

/* The tolerance. The GPU adds the four neighbours in float ((up + down) + left) + right, then
 * multiplies by 0.25 (exact). With values in [0, 1] the partial sums are at most 2, 3 and 4, so
 * the three roundings add at most 9 * 2^-24, a quarter of that after the multiplication:
 * 2.25 * 2^-24 per sweep. The mean of four values does not enlarge their errors, so after s
 * sweeps a point is off by at most s * 2.25 * 2^-24 from the exact (double) sweeps; 3 * 2^-24
 * per sweep is taken (3.6e-5 after 200 sweeps; float sweeps on the CPU stay within 4% of it).
 * An error moves points by far more, as the random interior keeps an alternating pattern that
 * a sweep flips: at the --paper size a block not swept in one step leaves points off by 1.4e-3
 * (40 times the tolerance), one step less or more by 0.07. */
#define HEAT_TOL_STEP (3.0 / 16777216.0)

/* The CPU reference: the same sweeps in double from the same float grid; the result in out
 * (n * n doubles). */
static inline void heat_reference(long n, int steps, double *out) {
  float *start = (float *)malloc(n * n * sizeof(float));
  double *a = out, *b = (double *)malloc(n * n * sizeof(double));
  heat_init(n, start);
  for (long k = 0; k < n * n; ++k) a[k] = b[k] = start[k]; /* boundaries in both grids */
  for (int s = 0; s < steps; ++s) {
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j) {
        long at = i * n + j;
        b[at] = 0.25 * (a[at - n] + a[at + n] + a[at - 1] + a[at + 1]);
      }
    double *t = a;
    a = b;
    b = t;
  }
  if (a != out) memcpy(out, a, n * n * sizeof(double));
  free(a == out ? b : a);
  free(start);
}

/* Every point of the result against the reference, within steps * HEAT_TOL_STEP. */
static inline int heat_check(const struct heat_config *c, const float *result) {
  long n = c->n, wrong = 0;
  double *want = (double *)malloc(n * n * sizeof(double));
  heat_reference(n, c->steps, want);
  double tolerance = c->steps * HEAT_TOL_STEP;
  for (long k = 0; k < n * n; ++k)
    if (!(fabs(result[k] - want[k]) <= tolerance) && wrong++ < 5)
      fprintf(stderr, "heat: point (%ld, %ld) = %.8g, expected %.8g within %.3g\n", k / n, k % n,
              result[k], want[k], tolerance);
  if (wrong) fprintf(stderr, "heat: %ld of %ld points wrong\n", wrong, n * n);
  free(want);
  return wrong == 0;
}
#endif
