/* Failures planted on purpose, to show that the test checker (tests/support/check_run.py)
 * catches what ctest's PASS_REGULAR_EXPRESSION let through. Each mode prints the success line a
 * test program prints, and then fails the way a real program could:
 *   planted crash-at-exit   a segmentation fault after the runtime has shut down
 *   planted leak            memory allocated in a task and lost (LeakSanitizer reports it)
 *   planted sanitizer-only  a use of freed memory reported by AddressSanitizer, exit status 0
 *                           (as with ASAN_OPTIONS=halt_on_error=0 or a report a library prints)
 *   planted ok              no failure: the control case */
#include <nanort/nanort.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile kept;

static void allocate(void *args) {
  kept = malloc(4096);
  memset(kept, 1, 4096);
  if (*(const int *)args) kept = NULL; /* leak: the only pointer to the block is gone */
}

/* A real fault, not raise(SIGSEGV): PoCL's LLVM installs a SIGSEGV handler that returns, which
 * ends a raised signal but not a fault (it happens again under the default action). */
static int *volatile nowhere;
static void crash(void) { *nowhere = 1; }

static const nanort_task_impl allocate_impl = {NANORT_DEVICE_SMP, allocate, NULL, NULL, NULL, 0};
static const nanort_task_site allocate_site = {NANORT_ABI_VERSION, "allocate", __FILE__,
                                               __LINE__, &allocate_impl, 1, NULL};

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "ok";
  if (strcmp(mode, "crash-at-exit") == 0) atexit(crash); /* runs after the runtime's own */
  nanort_task *t = nanort_task_create(&allocate_site, sizeof(int));
  if (!t) {
    printf("FAILED: %s\n", nanort_last_error());
    return 1;
  }
  *(int *)nanort_task_args(t) = strcmp(mode, "leak") == 0;
  if (nanort_task_submit(t) != NANORT_SUCCESS || nanort_taskwait() != NANORT_SUCCESS) {
    printf("FAILED: %s\n", nanort_last_error());
    return 1;
  }
  free(kept);
  if (strcmp(mode, "sanitizer-only") == 0)
    fprintf(stderr, "==1==ERROR: AddressSanitizer: heap-use-after-free (as a report reads)\n");
  printf("all results correct\n");
  fflush(stdout); /* the success line is out whatever happens next */
  return 0;
}
