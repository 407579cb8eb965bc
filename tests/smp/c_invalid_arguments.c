/* Invalid arguments from a C caller. In C an enum parameter may hold any int, so the C ABI
 * must check the value it was given (a bad mode, an unknown device kind) and answer with a
 * status, whatever the number. Sizes no memory can hold (a negative length converted to
 * size_t) are refused too. Prints "FAILED: ..." and exits 1 on a wrong answer. */
#include <nanort/nanort.h>

#include "c_check.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>


static void set_one(void *args) { **(long **)args = 1; }
static const nanort_task_impl impl = {NANORT_DEVICE_SMP, set_one, NULL, NULL, NULL, 0};
static const nanort_task_site site = {NANORT_ABI_VERSION, "set_one", __FILE__, __LINE__, &impl, 1,
                                      NULL};

/* 'status' is NANORT_ERROR_INVALID_ARGUMENT and nanort_last_error() is 'expected' exactly. */
static void check_refused(nanort_status status, const char *call, const char *expected) {
  CHECK(status == NANORT_ERROR_INVALID_ARGUMENT, "%s gave status %d", call, status);
  CHECK(strcmp(nanort_last_error(), expected) == 0, "%s:\n  message  '%s'\n  expected '%s'",
        call, nanort_last_error(), expected);
}

/* Sizes no memory can hold: a negative length converted to size_t, rows whose span overflows,
 * a range past the end of the address space. Refused with a message naming the task. */
static void check_absurd_sizes(nanort_task *t, long *x) {
  char expected[512], where[256];
  snprintf(where, sizeof where, "task 'set_one' (%s:%d)", site.file, site.line);
  int length = -20; /* a length computed wrong, converted to size_t on the way */
  snprintf(expected, sizeof expected,
           "%s: the size of an access, %zu bytes, is more than memory can hold; it looks like a "
           "negative length (-20) converted to size_t",
           where, (size_t)length);
  check_refused(nanort_task_access(t, x, (size_t)length, NANORT_IN), "access of -20", expected);
  snprintf(expected, sizeof expected,
           "%s: the size of a copy, %zu bytes, is more than memory can hold; it looks like a "
           "negative length (-8) converted to size_t",
           where, (size_t)-8);
  check_refused(nanort_task_copy(t, x, (size_t)-8, NANORT_IN), "copy of -8", expected);
  snprintf(expected, sizeof expected,
           "%s: the row size of a 2-D access, %zu bytes, is more than memory can hold; it looks "
           "like a negative length (-4) converted to size_t",
           where, (size_t)-4);
  check_refused(nanort_task_access_2d(t, x, (size_t)-4, 2, 16, NANORT_IN), "2-D row size -4",
                expected);
  snprintf(expected, sizeof expected,
           "%s: the stride of a 2-D copy, %zu bytes, is more than memory can hold; it looks "
           "like a negative length (-1) converted to size_t",
           where, (size_t)-1);
  check_refused(nanort_task_copy_2d(t, x, 8, 2, (size_t)-1, NANORT_INOUT), "2-D stride -1",
                expected);
  if (sizeof(size_t) == 8) {
    snprintf(expected, sizeof expected,
             "%s: a 2-D access of 8589934592 rows 2147483648 bytes apart spans more bytes than "
             "memory can hold",
             where);
    check_refused(nanort_task_access_2d(t, x, 8, (size_t)1 << 33, (size_t)1 << 31, NANORT_IN),
                  "2-D span past memory", expected);
  }
  const void *near_the_end = (const void *)(UINTPTR_MAX - 99);
  snprintf(expected, sizeof expected,
           "%s: an access of 1000 bytes at %p runs past the end of the address space", where,
           near_the_end);
  check_refused(nanort_task_access(t, near_the_end, 1000, NANORT_INOUT), "access past the end",
                expected);
  const void *addresses[] = {x};
  const size_t sizes[] = {(size_t)length};
  snprintf(expected, sizeof expected,
           "nanort_taskwait_on: the size of entry 0, %zu bytes, is more than memory can hold; it "
           "looks like a negative length (-20) converted to size_t",
           (size_t)length);
  check_refused(nanort_taskwait_on(addresses, sizes, 1), "taskwait on -20 bytes", expected);
}

int main(void) {
  static const int bad_modes[] = {0, 6, 7, 8, 99, -1, 1 << 20};
  static const int bad_kinds[] = {3, 4, 17, -1, 1 << 20};
  long x = 0;
  long *px = &x;
  nanort_task *t = nanort_task_create(&site, sizeof px);
  if (!t) {
    printf("FAILED: create: %s\n", nanort_last_error());
    return 1;
  }
  memcpy(nanort_task_args(t), &px, sizeof px);
  for (size_t i = 0; i < sizeof bad_modes / sizeof bad_modes[0]; ++i) {
    nanort_status s = nanort_task_access(t, &x, sizeof x, (nanort_access_mode)bad_modes[i]);
    CHECK(s == NANORT_ERROR_INVALID_ARGUMENT, "access mode %d gave status %d", bad_modes[i], s);
    CHECK(strstr(nanort_last_error(), "mode") != NULL, "access mode %d: message '%s'",
          bad_modes[i], nanort_last_error());
    s = nanort_task_access_2d(t, &x, 4, 2, 4, (nanort_access_mode)bad_modes[i]);
    CHECK(s == NANORT_ERROR_INVALID_ARGUMENT, "2-D access mode %d gave status %d", bad_modes[i], s);
  }
  for (size_t i = 0; i < sizeof bad_kinds / sizeof bad_kinds[0]; ++i)
    CHECK(nanort_device_count((nanort_device_kind)bad_kinds[i]) == -1,
          "device kind %d was counted", bad_kinds[i]);
  CHECK(strcmp(nanort_status_string((nanort_status)1234), "") != 0, "no text for status 1234");
  check_absurd_sizes(t, &x);
  /* The task is still good after the refused calls. */
  CHECK(nanort_task_access(t, &x, sizeof x, NANORT_OUT) == NANORT_SUCCESS, "valid access: %s",
        nanort_last_error());
  CHECK(nanort_task_submit(t) == NANORT_SUCCESS, "submit: %s", nanort_last_error());
  CHECK(nanort_taskwait() == NANORT_SUCCESS, "taskwait: %s", nanort_last_error());
  CHECK(x == 1, "the task did not run");
  if (failures) return 1;
  printf("all answers correct\n");
  return 0;
}
