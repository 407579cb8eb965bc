/* Uses the C ABI by hand, from C: two dependent tasks. */
#include <nanort/nanort.h>
#include <stdio.h>

static void add_one(void *args) { **(int **)args += 1; }
static const nanort_task_impl impl = {NANORT_DEVICE_SMP, add_one, NULL, NULL, NULL, 0};
static const nanort_task_site site = {NANORT_ABI_VERSION, "add_one", __FILE__, __LINE__, &impl, 1, NULL};

int main(void) {
  int value = 40;
  for (int i = 0; i < 2; ++i) {
    nanort_task *t = nanort_task_create(&site, sizeof(int *));
    int *p = &value;
    *(int **)nanort_task_args(t) = p;
    nanort_task_access(t, &value, sizeof value, NANORT_INOUT);
    if (nanort_task_submit(t) != NANORT_SUCCESS) return 1;
  }
  if (nanort_taskwait() != NANORT_SUCCESS) return 1;
  printf("value %d\n", value);
  return value == 42 ? 0 : 1;
}
