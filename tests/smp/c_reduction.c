/* Task reductions from plain C, as lowered code calls them: a histogram over an array section
 * (#pragma oss task reduction(+: hist[0;BINS])) with a writer before and a reader after, a
 * minimum, a user-defined combiner (declare reduction), and an OpenMP taskgroup with
 * in_reduction tasks. Every result is compared with the sequential computation. */
#include <nanort/nanort.h>

#include "c_check.h"
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BINS = 32, VALUES = 200000, CHUNK = 2000 };

static unsigned values[VALUES];

struct init_args { long *hist; };
static void init_bins(void *p) {
  struct init_args *a = (struct init_args *)p;
  for (int b = 0; b < BINS; ++b) a->hist[b] = b;
}

struct count_args { long *hist; int first; };
static void count(void *p) {
  struct count_args *a = (struct count_args *)p;
  long *bins = (long *)nanort_reduction_private(a->hist);
  CHECK(bins != NULL, "no private copy: %s", nanort_last_error());
  for (int i = a->first; i < a->first + CHUNK; ++i) bins[values[i] % BINS] += 1;
}

struct copy_args { const long *from; long *to; };
static void copy_bins(void *p) {
  struct copy_args *a = (struct copy_args *)p;
  memcpy(a->to, a->from, BINS * sizeof(long));
}

struct min_args { double *smallest; double value; };
static void take_min(void *p) {
  struct min_args *a = (struct min_args *)p;
  double *mine = (double *)nanort_reduction_private(a->smallest);
  if (a->value < *mine) *mine = a->value;
}

/* declare reduction(merge: struct span: omp_out = merge(omp_out, omp_in))
 *   initializer(omp_priv = {INT_MAX, INT_MIN}) */
struct span { int low, high; };
static void span_init(void *priv, const void *orig) {
  (void)orig;
  struct span empty = {2147483647, -2147483647 - 1};
  *(struct span *)priv = empty;
}
static void span_merge(void *out, const void *in) {
  struct span *o = (struct span *)out;
  const struct span *i = (const struct span *)in;
  if (i->low < o->low) o->low = i->low;
  if (i->high > o->high) o->high = i->high;
}
struct span_args { struct span *range; int value; };
static void widen(void *p) {
  struct span_args *a = (struct span_args *)p;
  struct span *mine = (struct span *)nanort_reduction_private(a->range);
  if (a->value < mine->low) mine->low = a->value;
  if (a->value > mine->high) mine->high = a->value;
}

struct add_args { int *total; int amount; };
static void add(void *p) {
  struct add_args *a = (struct add_args *)p;
  *(int *)nanort_reduction_private(a->total) += a->amount;
}

#define SITE(name, fn)                                                                   \
  static const nanort_task_impl name##_impl = {NANORT_DEVICE_SMP, fn, NULL, NULL, NULL, 0}; \
  static const nanort_task_site name = {NANORT_ABI_VERSION, #name, __FILE__, __LINE__,      \
                                        &name##_impl, 1, NULL}
SITE(init_site, init_bins);
SITE(count_site, count);
SITE(copy_site, copy_bins);
SITE(min_site, take_min);
SITE(span_site, widen);
SITE(add_site, add);

static nanort_task *create(const nanort_task_site *site, const void *args, size_t size) {
  nanort_task *t = nanort_task_create(site, size);
  CHECK(t != NULL, "create: %s", nanort_last_error());
  memcpy(nanort_task_args(t), args, size);
  return t;
}

static void submit(nanort_task *t) {
  nanort_status s = nanort_task_submit(t);
  CHECK(s == NANORT_SUCCESS, "submit: %s", nanort_last_error());
}

int main(void) {
  unsigned seed = 7;
  for (int i = 0; i < VALUES; ++i) values[i] = seed = seed * 1664525u + 1013904223u;

  /* The histogram lives in hist[4;BINS]; the bins around it are not touched. */
  long storage[BINS + 8];
  for (int i = 0; i < BINS + 8; ++i) storage[i] = -1;
  long *hist = storage + 4, seen[BINS];
  static const nanort_reduction_op sum_long = {NANORT_ABI_VERSION, NANORT_REDUCE_SUM,
                                               NANORT_TYPE_LONG, 0, NULL, NULL, NULL, NULL};
  struct init_args ia = {hist};
  nanort_task *t = create(&init_site, &ia, sizeof ia);
  CHECK(nanort_task_access(t, hist, BINS * sizeof(long), NANORT_OUT) == NANORT_SUCCESS, "%s",
        nanort_last_error());
  submit(t);
  for (int first = 0; first < VALUES; first += CHUNK) {
    struct count_args ca = {hist, first};
    t = create(&count_site, &ca, sizeof ca);
    CHECK(nanort_task_reduction(t, hist, BINS * sizeof(long), &sum_long) == NANORT_SUCCESS,
          "%s", nanort_last_error());
    submit(t);
  }
  struct copy_args cp = {hist, seen};
  t = create(&copy_site, &cp, sizeof cp);
  CHECK(nanort_task_access(t, hist, BINS * sizeof(long), NANORT_IN) == NANORT_SUCCESS, "%s",
        nanort_last_error());
  submit(t);

  double smallest = DBL_MAX;
  static const nanort_reduction_op min_double = {NANORT_ABI_VERSION, NANORT_REDUCE_MIN,
                                                 NANORT_TYPE_DOUBLE, sizeof(double), NULL, NULL,
                                                 NULL, NULL};
  struct span range = {0, 0};
  static const nanort_reduction_op merge = {NANORT_ABI_VERSION, NANORT_REDUCE_USER, 0,
                                            sizeof(struct span), span_init, span_merge, NULL,
                                            "merge"};
  for (int i = 0; i < 500; ++i) {
    struct min_args ma = {&smallest, (double)(values[i] % 100000) / 7.0};
    t = create(&min_site, &ma, sizeof ma);
    CHECK(nanort_task_reduction(t, &smallest, sizeof smallest, &min_double) == NANORT_SUCCESS,
          "%s", nanort_last_error());
    submit(t);
    struct span_args sa = {&range, (int)(values[i] % 2001) - 1000};
    t = create(&span_site, &sa, sizeof sa);
    CHECK(nanort_task_reduction(t, &range, sizeof range, &merge) == NANORT_SUCCESS, "%s",
          nanort_last_error());
    submit(t);
  }

  /* #pragma omp taskgroup task_reduction(+: total) with in_reduction tasks */
  int total = 3;
  static const nanort_reduction_op sum_int = {NANORT_ABI_VERSION, NANORT_REDUCE_SUM,
                                              NANORT_TYPE_INT, 0, NULL, NULL, NULL, NULL};
  CHECK(nanort_taskgroup_begin() == NANORT_SUCCESS, "%s", nanort_last_error());
  CHECK(nanort_taskgroup_reduction(&total, sizeof total, &sum_int) == NANORT_SUCCESS, "%s",
        nanort_last_error());
  for (int i = 1; i <= 1000; ++i) {
    struct add_args aa = {&total, i};
    t = create(&add_site, &aa, sizeof aa);
    CHECK(nanort_task_in_reduction(t, &total, sizeof total, &sum_int) == NANORT_SUCCESS, "%s",
          nanort_last_error());
    submit(t);
  }
  CHECK(nanort_taskgroup_end() == NANORT_SUCCESS, "%s", nanort_last_error());
  CHECK(total == 3 + 1000 * 1001 / 2, "taskgroup sum %d", total);

  CHECK(nanort_taskwait() == NANORT_SUCCESS, "taskwait: %s", nanort_last_error());

  long expected[BINS];
  for (int b = 0; b < BINS; ++b) expected[b] = b;
  for (int i = 0; i < VALUES; ++i) expected[values[i] % BINS] += 1;
  for (int b = 0; b < BINS; ++b) {
    CHECK(seen[b] == expected[b], "bin %d read after the reduction: %ld, expected %ld", b,
          seen[b], expected[b]);
    CHECK(hist[b] == expected[b], "bin %d: %ld, expected %ld", b, hist[b], expected[b]);
  }
  for (int i = 0; i < 4; ++i)
    CHECK(storage[i] == -1 && storage[BINS + 4 + i] == -1, "a byte outside the section changed");
  double expected_min = DBL_MAX;
  struct span expected_range = {0, 0};
  for (int i = 0; i < 500; ++i) {
    double value = (double)(values[i] % 100000) / 7.0;
    if (value < expected_min) expected_min = value;
    int v = (int)(values[i] % 2001) - 1000;
    if (v < expected_range.low) expected_range.low = v;
    if (v > expected_range.high) expected_range.high = v;
  }
  CHECK(smallest == expected_min, "min %g, expected %g", smallest, expected_min);
  CHECK(range.low == expected_range.low && range.high == expected_range.high,
        "span [%d, %d], expected [%d, %d]", range.low, range.high, expected_range.low,
        expected_range.high);
  if (failures) return 1;
  printf("reduction results correct\n");
  return 0;
}
