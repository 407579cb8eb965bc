/* Blocked matrix multiplication C = A * B: what every version shares besides the GPU: the
 * sizes and options, the tile layout, the input, the CPU reference and the check. The n x n
 * float matrices are stored tile by tile: nt = n / nb tiles per dimension, in row-major order,
 * each tile a contiguous row-major nb x nb array. C starts at zero and gets one kernel call per
 * tile product C[i][j] += A[i][k] * B[k][j]. */
#ifndef MATMUL_H
#define MATMUL_H
#include "app.h"

/* The tile kernel's index space (matmul.cu, matmul.cl): work-groups (thread blocks) of 16 x 16
 * each computing 64 x 64 elements of C, so nb / 4 work-items per dimension. */
#define MATMUL_THREADS 16
#define MATMUL_PER_THREAD 4

struct matmul_config {
  long n, nb, nt; /* matrix order, tile order, tiles per dimension */
  int reps;       /* timed repetitions */
  int gpus;       /* native versions: the first gpus devices (0: all) */
  char size[64];
};

/* Small sizes for PoCL in CI by default; --paper: n = 16384 (1 GiB per matrix) in tiles of
 * 2048 (16 MiB; a tile's kernel fills a GPU with 1024 thread blocks), 8 x 8 tiles: 512 tile
 * products. native: takes --gpus. */
static inline struct matmul_config matmul_config(int argc, char **argv, int native) {
  static const char *const native_options[] = {"n", "nb", "reps", "paper", "gpus", NULL};
  static const char *const annotated_options[] = {"n", "nb", "reps", "paper", NULL};
  app_check_options(argc, argv, native ? native_options : annotated_options);
  int paper = app_flag(argc, argv, "paper");
  struct matmul_config cfg;
  cfg.n = app_option(argc, argv, "n", paper ? 16384 : 256);
  cfg.nb = app_option(argc, argv, "nb", paper ? 2048 : 64);
  cfg.reps = (int)app_option(argc, argv, "reps", 3);
  cfg.gpus = (int)app_option(argc, argv, "gpus", 0);
  if (cfg.nb < 64 || cfg.nb % 64 || cfg.nb > 16384 || cfg.n < cfg.nb || cfg.n % cfg.nb ||
      cfg.reps < 1) {
    fprintf(stderr, "error: wants --nb a multiple of 64 up to 16384, --n a multiple of --nb, "
                    "--reps >= 1\n");
    exit(APP_FAILED);
  }
  cfg.nt = cfg.n / cfg.nb;
  snprintf(cfg.size, sizeof cfg.size, "n%ld,nb%ld", cfg.n, cfg.nb);
  return cfg;
}

/* Tile (i, j) of a matrix stored tile by tile. */
static inline float *matmul_tile_at(const struct matmul_config *cfg, float *m, long i, long j) {
  return m + (i * cfg->nt + j) * cfg->nb * cfg->nb;
}

/* Element (row, column) of a matrix stored tile by tile. */
static inline float matmul_element(const struct matmul_config *cfg, const float *m, long row,
                                   long column) {
  long nb = cfg->nb;
  return m[(row / nb * cfg->nt + column / nb) * nb * nb + row % nb * nb + column % nb];
}

/* The input: values in [0, 1) with 16 bits of fraction, a hash of the matrix, row and column
 * (the same matrix whatever the tile size). */
static inline float matmul_input(unsigned matrix, long row, long column) {
  unsigned long long h = (unsigned long long)row * 0x9e3779b97f4a7c15ull ^
                         (unsigned long long)column * 0xc2b2ae3d27d4eb4full ^ matrix;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return (float)(h >> 48) / 65536.0f;
}

static inline void matmul_init(const struct matmul_config *cfg, float *a, float *b) {
  for (long i = 0; i < cfg->nt; ++i)
    for (long j = 0; j < cfg->nt; ++j) {
      float *ta = matmul_tile_at(cfg, a, i, j), *tb = matmul_tile_at(cfg, b, i, j);
      for (long r = 0; r < cfg->nb; ++r)
        for (long s = 0; s < cfg->nb; ++s) {
          ta[r * cfg->nb + s] = matmul_input(1, i * cfg->nb + r, j * cfg->nb + s);
          tb[r * cfg->nb + s] = matmul_input(2, i * cfg->nb + r, j * cfg->nb + s);
        }
    }
}

/* C = 0 before every repetition (the kernels accumulate into C). */
static inline void matmul_clear(const struct matmul_config *cfg, float *m) {
  memset(m, 0, (size_t)(cfg->n * cfg->n) * sizeof(float));
}

/* C against products computed in double: every element when n <= 512, else 256 elements
 * chosen by a fixed pseudo-random sequence. The inputs are positive, so float accumulation of
 * the n products has a relative error of about sqrt(n) float epsilons (rounding errors of
 * random sign), n epsilons at worst; 8 sqrt(n) epsilons is several times the former and still
 * far below what a missing or repeated tile product changes (nb / n of the value). */
static inline int matmul_check(const struct matmul_config *cfg, const float *a, const float *b,
                               const float *c) {
  long samples = cfg->n <= 512 ? cfg->n * cfg->n : 256, wrong = 0;
  double tolerance = 8 * sqrt((double)cfg->n) * 1.1920929e-7;
  unsigned long long state = 12345;
  for (long e = 0; e < samples; ++e) {
    long row = e / cfg->n, column = e % cfg->n;
    if (samples < cfg->n * cfg->n) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      row = (long)((state >> 33) % (unsigned long long)cfg->n);
      column = (long)((state >> 13) % (unsigned long long)cfg->n);
    }
    double want = 0;
    for (long k = 0; k < cfg->n; ++k)
      want += (double)matmul_element(cfg, a, row, k) * matmul_element(cfg, b, k, column);
    float got = matmul_element(cfg, c, row, column);
    if (!app_close(got, want, tolerance) && wrong++ < 5)
      fprintf(stderr, "matmul: C[%ld][%ld] = %.8g, expected %.8g\n", row, column, got, want);
  }
  if (wrong) fprintf(stderr, "matmul: %ld of %ld checked elements wrong\n", wrong, samples);
  return wrong == 0;
}
#endif
