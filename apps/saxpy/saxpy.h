/* SAXPY: what every version shares besides the GPU: the sizes and options, the input, the CPU
 * reference and the check. y = a*x + y on n floats, in blocks of bs elements (one task, or one
 * set of asynchronous copies and a kernel, per block). */
#ifndef SAXPY_H
#define SAXPY_H
#include "app.h"

#define SAXPY_A 1.5f
/* Kernels take the block length as an int; 256 threads (work-items) per block. */
#define SAXPY_LOCAL 256

struct saxpy_config {
  long n, bs; /* elements, elements per block */
  int reps;   /* timed repetitions */
  int gpus;   /* native versions: the first gpus devices (0: all) */
  char size[64];
};

/* Small sizes for PoCL in CI by default; --paper: 2^28 floats (1 GiB per array), 16 blocks
 * of 64 MiB, so that two GPUs get 8 blocks each to pipeline. native: takes --gpus. */
static inline struct saxpy_config saxpy_config(int argc, char **argv, int native) {
  static const char *const native_options[] = {"n", "bs", "reps", "paper", "gpus", NULL};
  static const char *const annotated_options[] = {"n", "bs", "reps", "paper", NULL};
  app_check_options(argc, argv, native ? native_options : annotated_options);
  int paper = app_flag(argc, argv, "paper");
  struct saxpy_config cfg;
  cfg.n = app_option(argc, argv, "n", paper ? 1L << 28 : 1L << 22);
  cfg.bs = app_option(argc, argv, "bs", paper ? 1L << 24 : 1L << 18);
  cfg.reps = (int)app_option(argc, argv, "reps", 3);
  cfg.gpus = (int)app_option(argc, argv, "gpus", 0);
  if (cfg.n < 1 || cfg.bs < 1 || cfg.bs > (1L << 30) || cfg.reps < 1) {
    fprintf(stderr, "error: wants --n >= 1, 1 <= --bs <= 2^30, --reps >= 1\n");
    exit(APP_FAILED);
  }
  snprintf(cfg.size, sizeof cfg.size, "n%ld,bs%ld", cfg.n, cfg.bs);
  return cfg;
}

/* The length of the block that starts at element i. */
static inline long saxpy_length(const struct saxpy_config *cfg, long i) {
  return cfg->n - i < cfg->bs ? cfg->n - i : cfg->bs;
}

/* The input, written again before every repetition (y is updated in place). The values are
 * multiples of 1/4 and 1/2 below 1000, so that a*x + y is exact in float. */
static inline float saxpy_x(long i) { return (float)(i % 1000) * 0.25f; }
static inline float saxpy_y(long i) { return (float)(i % 777) * 0.5f; }

static inline void saxpy_init(long n, float *x, float *y) {
  for (long i = 0; i < n; ++i) {
    x[i] = saxpy_x(i);
    y[i] = saxpy_y(i);
  }
}

/* Every element against a*x + y computed in double. The result is exact in float (see above),
 * so any difference is an error. */
static inline int saxpy_check(long n, const float *y) {
  long wrong = 0;
  for (long i = 0; i < n; ++i) {
    double want = (double)SAXPY_A * saxpy_x(i) + saxpy_y(i);
    if (y[i] != want && wrong++ < 5)
      fprintf(stderr, "saxpy: y[%ld] = %.8g, expected %.8g\n", i, y[i], want);
  }
  if (wrong) fprintf(stderr, "saxpy: %ld of %ld elements wrong\n", wrong, n);
  return wrong == 0;
}
#endif
