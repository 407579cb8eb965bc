/* What every version of every application shares, so that the versions differ only in how
 * they drive the GPU: the command line, the clock, the repetition loop's report, reading a
 * kernel file next to the executable. Not counted as host code in Table I (every version
 * would need the same lines). C and C++ (native CUDA host code is C++). */
#ifndef NANORT_APPS_APP_H
#define NANORT_APPS_APP_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Exit statuses: 0 results correct, 1 wrong results or a failed call, 77 nothing to run on
 * (ctest: skipped). */
enum { APP_OK = 0, APP_FAILED = 1, APP_SKIP = 77 };

static inline double app_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --name=value from the command line, or fallback. A malformed value stops the program. */
static inline long app_option(int argc, char **argv, const char *name, long fallback) {
  size_t len = strlen(name);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2) == 0 && strncmp(a + 2, name, len) == 0 && a[2 + len] == '=') {
      char *end = NULL;
      long v = strtol(a + 3 + len, &end, 10);
      if (end == a + 3 + len || *end != '\0' || v < 0) {
        fprintf(stderr, "error: --%s wants a non-negative integer, got '%s'\n", name, a + 3 + len);
        exit(APP_FAILED);
      }
      return v;
    }
  }
  return fallback;
}

/* --name on the command line. */
static inline int app_flag(int argc, char **argv, const char *name) {
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], "--", 2) == 0 && strcmp(argv[i] + 2, name) == 0) return 1;
  return 0;
}

/* Refuses options this program does not know, so that a typo is not silently ignored.
 * known: a null-terminated list of names (without --). */
static inline void app_check_options(int argc, char **argv, const char *const *known) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    int ok = 0;
    for (const char *const *k = known; *k && !ok; ++k) {
      size_t len = strlen(*k);
      ok = strncmp(a, "--", 2) == 0 && strncmp(a + 2, *k, len) == 0 &&
           (a[2 + len] == '\0' || a[2 + len] == '=');
    }
    if (!ok) {
      fprintf(stderr, "error: unknown option '%s'; options:", a);
      for (const char *const *k = known; *k; ++k) fprintf(stderr, " --%s", *k);
      fprintf(stderr, "\n");
      exit(APP_FAILED);
    }
  }
}

static inline int app_compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The warm-up's seconds (repetition -1), for app_report; -1 if it was not recorded. */
static double app_warmup_seconds = -1;

/* Keeps the seconds repetition 'rep' took: a timed one (0, 1, ...) in times[rep], the warm-up
 * (-1) for the report. */
static inline void app_record(double *times, int rep, double seconds) {
  if (rep < 0) app_warmup_seconds = seconds;
  else times[rep] = seconds;
}

/* The line the scripts read: one per run.
 *   RESULT app=matmul version=annotated_cuda devices=2 size=... reps=5 best_ms=... median_ms=...
 *          first_ms=... warmup_ms=... check=ok
 * first_ms: the first timed repetition (after the warm-up), which pays for what the runtime
 * does once and late (page-locking ordinary memory that moves, for one); warmup_ms: the
 * warm-up itself (device start-up, first copies, allocations).
 * times: the seconds of each timed repetition, in order (sorted in place). */
static inline void app_report(const char *app, const char *version, int devices,
                              const char *size, double *times, int reps, int ok) {
  double first = times[0];
  qsort(times, (size_t)reps, sizeof *times, app_compare_doubles);
  double median = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
  printf("RESULT app=%s version=%s devices=%d size=%s reps=%d best_ms=%.3f median_ms=%.3f "
         "first_ms=%.3f warmup_ms=%.3f check=%s\n",
         app, version, devices, size, reps, 1e3 * times[0], 1e3 * median, 1e3 * first,
         1e3 * app_warmup_seconds, ok ? "ok" : "FAILED");
}

/* The text of a kernel file that the build copies next to the executable (native OpenCL
 * programs build their kernels from source at run time, as OpenCL programs do). */
static inline char *app_read_kernel_file(const char *name, size_t *length) {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) n = 0;
  path[n] = '\0';
  char *slash = strrchr(path, '/');
  if (slash) slash[1] = '\0';
  else path[0] = '\0';
  if (strlen(path) + strlen(name) + 1 > sizeof path) return NULL;
  strcat(path, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "error: cannot open the kernel file %s\n", path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = (char *)malloc((size_t)size + 1);
  if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "error: cannot read the kernel file %s\n", path);
    fclose(f);
    free(text);
    return NULL;
  }
  fclose(f);
  text[size] = '\0';
  if (length) *length = (size_t)size;
  return text;
}

/* Relative error check with a tolerance (float results against a double CPU reference). */
static inline int app_close(double got, double want, double tolerance) {
  return fabs(got - want) <= tolerance * (fabs(want) > 1 ? fabs(want) : 1);
}
#endif
