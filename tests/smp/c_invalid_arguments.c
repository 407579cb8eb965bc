/* Invalid arguments from a C caller. In C an enum parameter may hold any int, so the C ABI
 * must check the value it was given (a bad mode, an unknown device kind) and answer with a
 * status, whatever the number. Prints "FAILED: ..." and exits 1 on a wrong answer. */
#include <nanort/nanort.h>

#include "c_check.h"
#include <stdio.h>
#include <string.h>


static void set_one(void *args) { **(long **)args = 1; }
static const nanort_task_impl impl = {NANORT_DEVICE_SMP, set_one, NULL, NULL, NULL, 0};
static const nanort_task_site site = {NANORT_ABI_VERSION, "set_one", __FILE__, __LINE__, &impl, 1,
                                      NULL};

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
