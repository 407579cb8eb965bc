/* julia.h: what every version of the Julia set application shares: the options and sizes, the
 * view of the complex plane, the colour of a pixel, the CPU reference and the validation. The
 * kernels (julia.cu, julia.cl) compute the same escape-time iteration and colour. */
#ifndef NANORT_APPS_JULIA_H
#define NANORT_APPS_JULIA_H
#include "app.h"

/* z -> z^2 + c with c = -0.123 + 0.745i (Douady's rabbit): a connected Julia set with a large
 * interior (about a fifth of the view), whose pixels iterate up to the limit. */
#define JULIA_CRE (-0.123f)
#define JULIA_CIM 0.745f
/* The view: [-1.4, 1.4] along the wider side, centred on 0 (the set is symmetric under
 * z -> -z, so the top and bottom halves of the image cost the same). */
#define JULIA_HALF 1.4f

typedef struct julia_problem {
  int width, height; /* pixels */
  int slice;         /* rows per task (annotated) or per chunk of work (native) */
  int iters;         /* iteration limit */
  float x0, y0;      /* the complex number of pixel (row 0, column 0): top left */
  float step;        /* distance between neighbouring pixels */
  int reps;          /* timed repetitions */
  int gpus;          /* --gpus (native versions): the first N devices; 0 = all */
  char size[96];     /* for the RESULT line */
} julia_problem;

/* Reads the options (--gpus only where with_gpus); exits on a bad one. */
static inline julia_problem julia_setup(int argc, char **argv, int with_gpus) {
  static const char *const native[] = {"width", "height", "slice", "iters", "reps", "paper",
                                       "gpus", NULL};
  static const char *const annotated[] = {"width", "height", "slice", "iters", "reps", "paper",
                                          NULL};
  app_check_options(argc, argv, with_gpus ? native : annotated);
  int paper = app_flag(argc, argv, "paper");
  julia_problem p;
  /* Small: well under a second on PoCL's CPU device. Paper: 8192 x 8192 and 20000 iterations,
   * about 0.1 s per repetition on one H100 (the interior pixels dominate); slices of 512 rows
   * (4M pixels: one slice's kernel fills a GPU many times over), 16 of them to share out. */
  p.width = (int)app_option(argc, argv, "width", paper ? 8192 : 512);
  p.height = (int)app_option(argc, argv, "height", paper ? 8192 : 384);
  p.slice = (int)app_option(argc, argv, "slice", paper ? 512 : 32);
  p.iters = (int)app_option(argc, argv, "iters", paper ? 20000 : 256);
  p.reps = (int)app_option(argc, argv, "reps", 3);
  p.gpus = (int)app_option(argc, argv, "gpus", 0);
  if (p.width < 1 || p.height < 1 || p.slice < 1 || p.iters < 1 || p.reps < 1) {
    fprintf(stderr, "error: --width, --height, --slice, --iters and --reps must be positive\n");
    exit(APP_FAILED);
  }
  int wide = p.width > p.height ? p.width : p.height;
  p.step = 2.0f * JULIA_HALF / (float)wide;
  p.x0 = -0.5f * (float)(p.width - 1) * p.step;
  p.y0 = 0.5f * (float)(p.height - 1) * p.step;
  snprintf(p.size, sizeof p.size, "%dx%d,slice%d,iters%d", p.width, p.height, p.slice, p.iters);
  return p;
}

/* Escape time: the iterations z stays inside |z| <= 2, at most iters (the kernels' loop). */
static inline int julia_escape(float x, float y, int iters) {
  int i = 0;
  for (; i < iters; ++i) {
    float x2 = x * x, y2 = y * y;
    if (x2 + y2 > 4.0f) break;
    y = 2.0f * x * y + JULIA_CIM;
    x = x2 - y2 + JULIA_CRE;
  }
  return i;
}

/* The pixel's colour, 0xAARRGGBB, opaque: black inside the set, a palette of the escape time
 * outside (never 0, so an unwritten pixel shows). The kernels compute the same. */
static inline unsigned int julia_colour(int i, int iters) {
  unsigned int t = (unsigned int)i;
  if (i >= iters) return 0xFF000000u;
  return 0xFF000000u | ((t * 11u & 255u) << 16) | ((t * 5u & 255u) << 8) | (255u - (t * 3u & 255u));
}

/* Validation against the CPU reference in the same float arithmetic: every pixel of images up
 * to 2^20 pixels, otherwise every stride-th pixel in row-major order (stride odd, so the
 * samples move along the columns and every slice holds many of them). Devices may round
 * differently (fused multiply-adds in the starting point and the iteration), and the
 * iteration is chaotic near the Julia set: a last-bit difference grows until the pixel
 * escapes some iterations earlier or later. So up to 0.1% of the checked pixels may differ
 * (seen: under 0.01% with the defaults on PoCL and on NVIDIA GPUs); a slice that is missing,
 * misplaced or wrong differs in nearly all its pixels (no two rows of the view are alike, and
 * 0 is no colour), and even one wrong row of the default small image is 0.26% of it. */
static inline int julia_check(const julia_problem *p, const unsigned int *image) {
  long pixels = (long)p->width * p->height;
  long stride = pixels <= (1L << 20) ? 1 : (pixels >> 14) | 1;
  long checked = 0, differ = 0, first = -1;
  for (long k = 0; k < pixels; k += stride) {
    int row = (int)(k / p->width), col = (int)(k % p->width);
    float x = p->x0 + (float)col * p->step, y = p->y0 - (float)row * p->step;
    unsigned int want = julia_colour(julia_escape(x, y, p->iters), p->iters);
    ++checked;
    if (image[k] != want) {
      if (first < 0) first = k;
      ++differ;
    }
  }
  int ok = differ * 1000 <= checked;
  if (differ)
    fprintf(ok ? stdout : stderr,
            "%s: %ld of %ld checked pixels differ from the CPU reference (at most 0.1%% may); "
            "first at row %ld column %ld: 0x%08X\n",
            ok ? "note" : "error", differ, checked, first / p->width, first % p->width,
            image[first]);
  return ok;
}
#endif
