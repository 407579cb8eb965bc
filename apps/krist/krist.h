/* krist.h: what every version of the Krist application shares: the options and sizes, the
 * crystal (atoms and reflections, made up deterministically), the CPU reference in double and
 * the validation. The kernels (krist.cu, krist.cl) compute the structure factors
 *   F(h) = sum over atoms j of f_j * exp(2 pi i h . x_j)
 * for each reflection h = (h, k, l), from the fractional coordinates x_j and the scattering
 * factor f_j of each atom. */
#ifndef NANORT_APPS_KRIST_H
#define NANORT_APPS_KRIST_H
#include "app.h"

/* Miller indices run over -KRIST_HKL_MAX .. KRIST_HKL_MAX. */
#define KRIST_HKL_MAX 24

typedef struct krist_problem {
  int atoms;       /* atoms in the unit cell */
  int reflections; /* reflections (h, k, l) */
  int bs;          /* reflections per task (annotated) or per chunk of work (native) */
  int reps;        /* timed repetitions */
  int gpus;        /* --gpus (native versions): the first N devices; 0 = all */
  char size[96];   /* for the RESULT line */
} krist_problem;

/* Reads the options (--gpus only where with_gpus); exits on a bad one. */
static inline krist_problem krist_setup(int argc, char **argv, int with_gpus) {
  static const char *const native[] = {"atoms", "reflections", "bs", "reps", "paper", "gpus",
                                       NULL};
  static const char *const annotated[] = {"atoms", "reflections", "bs", "reps", "paper", NULL};
  app_check_options(argc, argv, with_gpus ? native : annotated);
  int paper = app_flag(argc, argv, "paper");
  krist_problem p;
  /* Small: well under a second on PoCL's CPU device. Paper: 16384 atoms and 2^22
   * reflections (7e10 atom-reflection terms), about 0.1 s per repetition on one H100; blocks of
   * 2^19 reflections, so that one block's kernel fills a GPU (one thread per reflection) and 8
   * blocks share out over the GPUs. */
  p.atoms = (int)app_option(argc, argv, "atoms", paper ? 16384 : 1024);
  p.reflections = (int)app_option(argc, argv, "reflections", paper ? 1 << 22 : 4096);
  p.bs = (int)app_option(argc, argv, "bs", paper ? 1 << 19 : 512);
  p.reps = (int)app_option(argc, argv, "reps", 3);
  p.gpus = (int)app_option(argc, argv, "gpus", 0);
  if (p.atoms < 1 || p.reflections < 1 || p.bs < 1 || p.reps < 1) {
    fprintf(stderr, "error: --atoms, --reflections, --bs and --reps must be positive\n");
    exit(APP_FAILED);
  }
  snprintf(p.size, sizeof p.size, "atoms%d,refl%d,bs%d", p.atoms, p.reflections, p.bs);
  return p;
}

/* A deterministic pseudo-random sequence (a 64-bit linear congruential generator). */
static inline unsigned int krist_random(unsigned long long *state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned int)(*state >> 33);
}

/* The crystal: atoms[4 j .. 4 j + 3] = x, y, z in [0, 1) and f_j (the scattering factors of
 * C, N, O and S, the light atoms of a protein); hkl[3 i .. 3 i + 2] = the Miller indices of
 * reflection i. */
static inline void krist_init(const krist_problem *p, float *atoms, int *hkl) {
  static const float factor[8] = {6, 6, 6, 6, 7, 8, 8, 16};
  unsigned long long state = 12345;
  for (int j = 0; j < p->atoms; ++j) {
    for (int d = 0; d < 3; ++d) atoms[4 * j + d] = (float)krist_random(&state) / 2147483648.0f;
    atoms[4 * j + 3] = factor[krist_random(&state) % 8];
  }
  for (int i = 0; i < 3 * p->reflections; ++i)
    hkl[i] = (int)(krist_random(&state) % (2 * KRIST_HKL_MAX + 1)) - KRIST_HKL_MAX;
}

/* Validation against F(h) in double, on every reflection when the reference costs at most
 * 2^25 atom-reflection terms, otherwise on 2^25 / atoms reflections spread over all of them
 * (every block holds some while bs >= reflections * atoms / 2^25).
 * Tolerance: |F - F_ref| <= 1e-3 * sqrt(sum_j f_j^2), the size of |F| for atoms in general
 * positions. In float, each phase h . x_j is rounded to about (|h| + |k| + |l|) * 2^-24 <=
 * 72 * 6e-8 turns (2.7e-5 radians; subtracting the nearest integer is exact and sincos adds a
 * few ulp), and the running sums lose about 2^-24 * sqrt(atoms / 2) of sqrt(sum f_j^2)
 * (1e-5 at 65536 atoms). These errors add like random ones: together some 3e-5 *
 * sqrt(sum f_j^2), so the tolerance leaves a wide margin while a single missing atom (f >= 6)
 * still shows at the small sizes, and a missing or misplaced block anywhere. */
static inline int krist_check(const krist_problem *p, const float *atoms, const int *hkl,
                              const float *f) {
  const double two_pi = 6.283185307179586;
  double norm = 0;
  for (int j = 0; j < p->atoms; ++j) norm += (double)atoms[4 * j + 3] * atoms[4 * j + 3];
  double tolerance = 1e-3 * sqrt(norm);
  long wanted = (1L << 25) / p->atoms;
  long count = wanted < 1 ? 1 : wanted > p->reflections ? p->reflections : wanted;
  long stride = p->reflections / count;
  long failed = 0;
  for (long s = 0; s < count; ++s) {
    long i = s * stride + (s * 7919) % stride; /* spread over the blocks and within them */
    double re = 0, im = 0;
    for (int j = 0; j < p->atoms; ++j) {
      const float *a = atoms + 4 * j;
      double t = hkl[3 * i] * (double)a[0] + hkl[3 * i + 1] * (double)a[1] +
                 hkl[3 * i + 2] * (double)a[2];
      re += a[3] * cos(two_pi * t);
      im += a[3] * sin(two_pi * t);
    }
    double error = hypot(f[2 * i] - re, f[2 * i + 1] - im);
    if (!(error <= tolerance) && failed++ < 5)
      fprintf(stderr, "error: reflection %ld (%d %d %d): F = %g%+gi, want %g%+gi\n", i,
              hkl[3 * i], hkl[3 * i + 1], hkl[3 * i + 2], f[2 * i], f[2 * i + 1], re, im);
  }
  if (failed)
    fprintf(stderr, "error: %ld of %ld checked reflections differ by more than %g\n", failed,
            count, tolerance);
  return failed == 0;
}
#endif
