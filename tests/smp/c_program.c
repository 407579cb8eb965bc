/* A plain C program on the C ABI: the header compiles as C, and a small task graph with
 * dependences gives the right results. ctest also runs it with NANORT_STATS=1 and
 * NANORT_TRACE=file to check the statistics and the trace (24 tasks in all). */
#include <nanort/nanort.h>

#include "c_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct chain_args { long *counter; long step; };
static void chain(void *p) {
  struct chain_args *a = (struct chain_args *)p;
  *a->counter = *a->counter * 2 + a->step;
}

/* A block of 'rows' rows of 'cols' ints, 'ld' ints apart. */
struct fill_args { int *first; int rows, cols, ld; int value; };
static void fill(void *p) {
  struct fill_args *a = (struct fill_args *)p;
  for (int r = 0; r < a->rows; ++r)
    for (int c = 0; c < a->cols; ++c) a->first[r * a->ld + c] = a->value;
}

struct sum_args { const int *data; int count; long *result; };
static void sum(void *p) {
  struct sum_args *a = (struct sum_args *)p;
  long total = 0;
  for (int i = 0; i < a->count; ++i) total += a->data[i];
  *a->result = total;
}

struct child_args { long *value; };
static void child(void *p) { *((struct child_args *)p)->value = 99; }

static const nanort_task_impl chain_impl = {NANORT_DEVICE_SMP, chain, NULL, NULL, NULL, 0};
static const nanort_task_impl fill_impl = {NANORT_DEVICE_SMP, fill, NULL, NULL, NULL, 0};
static const nanort_task_impl sum_impl = {NANORT_DEVICE_SMP, sum, NULL, NULL, NULL, 0};
static const nanort_task_impl child_impl = {NANORT_DEVICE_SMP, child, NULL, NULL, NULL, 0};
static const nanort_task_site chain_site = {NANORT_ABI_VERSION, "chain", __FILE__, __LINE__,
                                            &chain_impl, 1, NULL};
static const nanort_task_site fill_site = {NANORT_ABI_VERSION, "fill", __FILE__, __LINE__,
                                           &fill_impl, 1, NULL};
static const nanort_task_site sum_site = {NANORT_ABI_VERSION, "sum", __FILE__, __LINE__,
                                          &sum_impl, 1, NULL};
/* A label that needs escaping in JSON. */
static const nanort_task_site child_site = {NANORT_ABI_VERSION, "odd \"label\"\\ with\ttab",
                                            __FILE__, __LINE__, &child_impl, 1, NULL};

static void submit(nanort_task *t) {
  nanort_status s = nanort_task_submit(t);
  CHECK(s == NANORT_SUCCESS, "submit: %s", nanort_last_error());
}

static nanort_task *create(const nanort_task_site *site, const void *args, size_t size) {
  nanort_task *t = nanort_task_create(site, size);
  if (!t) {
    printf("FAILED: create: %s\n", nanort_last_error());
    exit(1);
  }
  memcpy(nanort_task_args(t), args, size);
  return t;
}

struct parent_args { long *value; };
static void parent(void *p) {
  struct parent_args *a = (struct parent_args *)p;
  struct child_args c = {a->value};
  nanort_task *t = create(&child_site, &c, sizeof c);
  nanort_task_access(t, a->value, sizeof(long), NANORT_OUT);
  submit(t);
  CHECK(nanort_taskwait() == NANORT_SUCCESS, "taskwait in a task: %s", nanort_last_error());
}
static const nanort_task_impl parent_impl = {NANORT_DEVICE_SMP, parent, NULL, NULL, NULL, 0};
static const nanort_task_site parent_site = {NANORT_ABI_VERSION, "parent", __FILE__, __LINE__,
                                             &parent_impl, 1, NULL};

int main(void) {
  if (nanort_init() != NANORT_SUCCESS) {
    printf("FAILED: init: %s\n", nanort_last_error());
    return 1;
  }
  /* 10 chained tasks */
  long counter = 0, expected = 0;
  for (long i = 0; i < 10; ++i) {
    struct chain_args a = {&counter, i};
    nanort_task *t = create(&chain_site, &a, sizeof a);
    nanort_task_access(t, &counter, sizeof counter, NANORT_INOUT);
    submit(t);
    expected = expected * 2 + i;
  }
  /* 8 writers of slices of a 16 x 16 matrix (2-D column blocks), 4 readers of rows */
  static int matrix[16 * 16];
  for (int j = 0; j < 8; ++j) {
    /* a column pair: 16 rows of 2 ints, 16 ints apart */
    struct fill_args a = {&matrix[2 * j], 16, 2, 16, j + 1};
    nanort_task *t = create(&fill_site, &a, sizeof a);
    CHECK(nanort_task_access_2d(t, &matrix[2 * j], 2 * sizeof(int), 16, 16 * sizeof(int),
                                NANORT_OUT) == NANORT_SUCCESS, "access_2d: %s", nanort_last_error());
    submit(t);
  }
  long row_sums[4] = {0, 0, 0, 0};
  for (int r = 0; r < 4; ++r) {
    struct sum_args a = {&matrix[r * 4 * 16], 16, &row_sums[r]};
    nanort_task *t = create(&sum_site, &a, sizeof a);
    nanort_task_access(t, &matrix[r * 4 * 16], 16 * sizeof(int), NANORT_IN);
    nanort_task_access(t, &row_sums[r], sizeof(long), NANORT_OUT);
    submit(t);
  }
  /* a parent and its child */
  long value = 0;
  struct parent_args pa = {&value};
  nanort_task *t = create(&parent_site, &pa, sizeof pa);
  nanort_task_access(t, &value, sizeof value, NANORT_OUT);
  submit(t);

  CHECK(nanort_taskwait() == NANORT_SUCCESS, "taskwait: %s", nanort_last_error());
  CHECK(counter == expected, "chain gave %ld, expected %ld", counter, expected);
  for (int r = 0; r < 4; ++r) CHECK(row_sums[r] == 2 * 36, "row sum %d is %ld", r, row_sums[r]);
  CHECK(value == 99, "child wrote %ld", value);
  if (failures) return 1;
  printf("all results correct\n");
  fflush(stdout);
  return 0;
}
