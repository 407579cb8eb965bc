/* NBody: what every version shares besides the GPU: the sizes and options, the initial bodies,
 * the CPU reference and the check. All-pairs gravity (G = 1) with softening, in float, time
 * step after time step (velocity, then position: symplectic Euler). Each step reads all the
 * positions of the previous step and writes the next step's arrays (positions and velocities
 * are double-buffered), block of bs bodies by block, so that the blocks of a step are
 * independent: one task, or one share of a GPU's kernel, per block. */
#ifndef NBODY_H
#define NBODY_H
#include "app.h"

/* A body's position and mass (x, y, z, w = mass), or its velocity (w unused): the layout of
 * CUDA's float4 and OpenCL's float4. */
typedef struct __attribute__((aligned(16))) {
  float x, y, z, w;
} nbody_vec4;

#define NBODY_DT 0.01f   /* time step */
#define NBODY_EPS2 0.01f /* softening squared: a pair's force is m r / (r^2 + eps^2)^(3/2) */
/* The kernels' fixed work-group (thread block) shape, also written in nbody.cu and nbody.cl:
 * NBODY_GROUP bodies, each summed by NBODY_SPLIT work-items. Blocks of bodies are multiples of
 * NBODY_GROUP (1 KiB of positions), so that they start aligned for OpenCL sub-buffers. */
#define NBODY_GROUP 64
#define NBODY_SPLIT 8

struct nbody_config {
  long n, bs;    /* bodies, bodies per block */
  int steps;     /* time steps */
  int reps;      /* timed repetitions */
  int gpus;      /* native versions: the first gpus devices (0: all) */
  char size[64]; /* for the RESULT line */
};

/* Small sizes for PoCL in CI by default; --paper: 262144 bodies in 4 blocks, 4 steps (2.7e11
 * pair interactions; blocks this large keep each task's kernel as efficient as one kernel over
 * all bodies, see README.md). native: takes --gpus. */
static inline struct nbody_config nbody_config(int argc, char **argv, int native) {
  static const char *const native_options[] = {"n", "steps", "bs", "reps", "paper", "gpus", NULL};
  static const char *const annotated_options[] = {"n", "steps", "bs", "reps", "paper", NULL};
  app_check_options(argc, argv, native ? native_options : annotated_options);
  int paper = app_flag(argc, argv, "paper");
  struct nbody_config c;
  c.n = app_option(argc, argv, "n", paper ? 262144 : 1024);
  c.steps = (int)app_option(argc, argv, "steps", paper ? 4 : 3);
  c.bs = app_option(argc, argv, "bs", paper ? 65536 : 256);
  c.reps = (int)app_option(argc, argv, "reps", 3);
  c.gpus = (int)app_option(argc, argv, "gpus", 0);
  if (c.n < 1 || c.n > (1L << 24) || c.steps < 1 || c.bs < 1 || c.bs % NBODY_GROUP != 0 ||
      c.reps < 1) {
    fprintf(stderr, "error: wants 1 <= --n <= 2^24, --steps >= 1, --bs a positive multiple of "
                    "%d, --reps >= 1\n", NBODY_GROUP);
    exit(APP_FAILED);
  }
  snprintf(c.size, sizeof c.size, "n%ld,steps%d,bs%ld", c.n, c.steps, c.bs);
  return c;
}

/* The number of bodies of the block that starts at body first. */
static inline long nbody_length(const struct nbody_config *c, long first) {
  return c->n - first < c->bs ? c->n - first : c->bs;
}

/* A deterministic pseudo-random number in [0, 1) for body i, quantity k (an integer hash). */
static inline float nbody_random(unsigned i, unsigned k) {
  unsigned h = i * 0x9E3779B1u ^ (k + 1) * 0x85EBCA77u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  h ^= h >> 15;
  return (float)(h >> 8) * (1.0f / 16777216.0f);
}

/* The bodies at time 0, written again before every repetition: positions in the cube
 * [-1, 1]^3, masses around 1/n (total mass about 1), small random velocities. */
static inline void nbody_init(long n, nbody_vec4 *pos, nbody_vec4 *vel) {
  for (long i = 0; i < n; ++i) {
    pos[i].x = 2.0f * nbody_random((unsigned)i, 0) - 1.0f;
    pos[i].y = 2.0f * nbody_random((unsigned)i, 1) - 1.0f;
    pos[i].z = 2.0f * nbody_random((unsigned)i, 2) - 1.0f;
    pos[i].w = (0.5f + nbody_random((unsigned)i, 3)) / (float)n;
    vel[i].x = 0.2f * nbody_random((unsigned)i, 4) - 0.1f;
    vel[i].y = 0.2f * nbody_random((unsigned)i, 5) - 0.1f;
    vel[i].z = 0.2f * nbody_random((unsigned)i, 6) - 0.1f;
    vel[i].w = 0.0f;
  }
}

/* In double: the acceleration a of a body at (x, y, z) from the n bodies p, and the sum of the
 * magnitudes of its terms (the scale of the float rounding errors: terms cancel). */
static inline void nbody_accel(long n, const double *p, const double *x, double a[3],
                               double *magnitude) {
  a[0] = a[1] = a[2] = *magnitude = 0.0;
  for (long j = 0; j < n; ++j) {
    double dx = p[4 * j] - x[0], dy = p[4 * j + 1] - x[1], dz = p[4 * j + 2] - x[2];
    double r2 = dx * dx + dy * dy + dz * dz, d2 = r2 + (double)NBODY_EPS2;
    double s = p[4 * j + 3] / (d2 * sqrt(d2));
    a[0] += dx * s;
    a[1] += dy * s;
    a[2] += dz * s;
    *magnitude += sqrt(r2) * s;
  }
}

/* The tolerances. The GPU sums each body's n terms in float: a term carries a few ulp of its
 * own (rsqrt: at most 2), and a float sum of m terms, whose rounding errors have random signs,
 * is off by about sqrt(m) * 2^-24 of the sum of the magnitudes (1.1e-5 for the 32768 terms of a
 * row at n = 262144; m * 2^-24, the bound, is not reached in practice). So the acceleration
 * may be off by NBODY_TOL_ACCEL of that sum, a fifth of what one missing or doubled tile of 64
 * bodies changes (64 / n of it: 2.4e-4 at n = 262144, more for fewer bodies). Each float update
 * (v + a dt, x + v dt) rounds by 2^-24 of its result, a margin of 4 is taken. */
#define NBODY_TOL_ACCEL 5e-5
#define NBODY_TOL_ROUND (4.0 / 16777216.0)

static inline void nbody_to_double(long n, const nbody_vec4 *v, double *d) {
  for (long i = 0; i < n; ++i) {
    d[4 * i] = v[i].x;
    d[4 * i + 1] = v[i].y;
    d[4 * i + 2] = v[i].z;
    d[4 * i + 3] = v[i].w;
  }
}

/* One body's step in double from position x and velocity v, with the tolerances it adds to
 * those already accumulated (tol_v, tol_x). */
static inline void nbody_step_reference(long n, const double *p, double x[3], double v[3],
                                        double *tol_v, double *tol_x) {
  double a[3], magnitude, vmax = 0, xmax = 0;
  nbody_accel(n, p, x, a, &magnitude);
  for (int k = 0; k < 3; ++k) {
    v[k] += a[k] * (double)NBODY_DT;
    x[k] += v[k] * (double)NBODY_DT;
    vmax = fmax(vmax, fabs(v[k]));
    xmax = fmax(xmax, fabs(x[k]));
  }
  *tol_v += NBODY_TOL_ACCEL * (double)NBODY_DT * magnitude + NBODY_TOL_ROUND * vmax;
  *tol_x += (double)NBODY_DT * *tol_v + NBODY_TOL_ROUND * xmax;
}

/* Compares a body's float position and velocity with x and v, within tol_x and tol_v. */
static inline int nbody_compare(long i, const char *what, const nbody_vec4 *pos,
                                const nbody_vec4 *vel, const double *x, const double *v,
                                double tol_x, double tol_v, long *wrong) {
  const float got_x[3] = {pos->x, pos->y, pos->z}, got_v[3] = {vel->x, vel->y, vel->z};
  int ok = 1;
  for (int k = 0; k < 3; ++k)
    ok = ok && fabs(got_x[k] - x[k]) <= tol_x && fabs(got_v[k] - v[k]) <= tol_v;
  if (!ok && (*wrong)++ < 5)
    fprintf(stderr,
            "nbody: %s: body %ld at (%.8g, %.8g, %.8g) velocity (%.8g, %.8g, %.8g), expected "
            "(%.8g, %.8g, %.8g) and (%.8g, %.8g, %.8g) within %.3g and %.3g\n",
            what, i, got_x[0], got_x[1], got_x[2], got_v[0], got_v[1], got_v[2], x[0], x[1], x[2],
            v[0], v[1], v[2], tol_x, tol_v);
  return ok;
}

/* Checks the results. pos[s % 2] and vel[s % 2] hold step s, so after the last step both the
 * last step and the one before are on the host.
 * - The last step: for a sample of bodies (all up to 4096 bodies, else 1024 spread over all
 *   blocks), computed in double from the previous step's float positions and velocities.
 * - The whole run, where it is cheap (n^2 * steps <= 2^28): every body after all the steps,
 *   simulated in double from the initial bodies, within the tolerances accumulated step by
 *   step (the float run drifts from the double one by its rounding errors; over a few small
 *   steps of this smooth system they are not amplified noticeably). */
static inline int nbody_check(const struct nbody_config *c, nbody_vec4 *const pos[2],
                              nbody_vec4 *const vel[2]) {
  long n = c->n, wrong = 0;
  const nbody_vec4 *last_pos = pos[c->steps % 2], *last_vel = vel[c->steps % 2];
  double *p = (double *)malloc(4 * n * sizeof(double));
  double *q = (double *)malloc(4 * n * sizeof(double));
  double *v = (double *)malloc(4 * n * sizeof(double));

  nbody_to_double(n, pos[(c->steps - 1) % 2], p);
  nbody_to_double(n, vel[(c->steps - 1) % 2], v);
  long samples = n <= 4096 ? n : 1024, stride = n / samples;
  for (long k = 0; k < samples; ++k) {
    long i = k * stride + k % stride; /* every offset within blocks, in turn */
    double x[3] = {p[4 * i], p[4 * i + 1], p[4 * i + 2]};
    double u[3] = {v[4 * i], v[4 * i + 1], v[4 * i + 2]};
    double tol_v = 0, tol_x = 0;
    nbody_step_reference(n, p, x, u, &tol_v, &tol_x);
    nbody_compare(i, "last step", &last_pos[i], &last_vel[i], x, u, tol_x, tol_v, &wrong);
    if (last_pos[i].w != pos[(c->steps - 1) % 2][i].w && wrong++ < 5)
      fprintf(stderr, "nbody: the mass of body %ld changed\n", i);
  }

  if ((double)n * (double)n * c->steps <= (double)(1L << 28)) {
    nbody_vec4 *p0 = (nbody_vec4 *)malloc(n * sizeof *p0);
    nbody_vec4 *v0 = (nbody_vec4 *)malloc(n * sizeof *v0);
    double *tol = (double *)calloc(2 * n, sizeof(double)); /* tol_v, tol_x per body */
    nbody_init(n, p0, v0);
    nbody_to_double(n, p0, p);
    nbody_to_double(n, v0, v);
    for (int s = 0; s < c->steps; ++s) {
      for (long i = 0; i < n; ++i) { /* q: the next step's positions (p stays whole) */
        memcpy(&q[4 * i], &p[4 * i], 4 * sizeof(double));
        nbody_step_reference(n, p, &q[4 * i], &v[4 * i], &tol[2 * i], &tol[2 * i + 1]);
      }
      double *t = p;
      p = q;
      q = t;
    }
    for (long i = 0; i < n; ++i)
      nbody_compare(i, "all steps", &last_pos[i], &last_vel[i], &p[4 * i], &v[4 * i],
                    tol[2 * i + 1], tol[2 * i], &wrong);
    free(p0);
    free(v0);
    free(tol);
  }
  if (wrong) fprintf(stderr, "nbody: %ld wrong results\n", wrong);
  free(p);
  free(q);
  free(v);
  return wrong == 0;
}
#endif
