// nanort_last_error() in an exit handler, which runs after the main thread's thread_local
// objects are destroyed: it still gives the thread's last message, cut after a line when it is
// long, with a note of how much is left out (the whole message is there until then:
// CApi.LongFailureMessageIsKeptWhole). Prints "FAILED: ..." and exits 1 on a wrong answer.
#include <nanort/nanort.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace {

void fail_task(void *) { throw std::runtime_error("boom from a task"); }
const nanort_task_impl impl{NANORT_DEVICE_SMP, fail_task, nullptr, nullptr, nullptr, 0};
const nanort_task_site site{NANORT_ABI_VERSION, "failing", "kernels/failing.c", 7, &impl, 1,
                            nullptr};

char *whole = nullptr;  // the message the taskwait gave (malloc'd: nothing destroys it)

void check_at_exit() {
  const char *seen = nanort_last_error();
  const std::size_t whole_length = std::strlen(whole);
  // "<the first lines of the message>\n... (N more characters)"
  const char *note = std::strstr(seen, "... (");
  const std::size_t kept = note ? static_cast<std::size_t>(note - seen) : 0;
  char expected_note[64];
  std::snprintf(expected_note, sizeof expected_note, "... (%zu more characters)",
                whole_length - kept);
  const bool ok = note && kept > 0 && seen[kept - 1] == '\n' &&
                  std::strncmp(seen, whole, kept) == 0 && std::strcmp(note, expected_note) == 0;
  if (ok)
    std::printf("the message at exit: %zu of %zu characters, cut after a line\n", kept,
                whole_length);
  else
    std::printf("FAILED: the message at exit is '%s'\n", seen);
  std::fflush(stdout);
  std::free(whole);
  if (!ok) std::_Exit(1);
}

}  // namespace

int main() {
  for (int i = 0; i < 200; ++i) {
    nanort_task *task = nanort_task_create(&site, 0);
    if (!task || nanort_task_submit(task) != NANORT_SUCCESS) {
      std::printf("FAILED: task %d: %s\n", i, nanort_last_error());
      return 1;
    }
  }
  if (nanort_taskwait() != NANORT_ERROR_TASK_FAILED) {
    std::printf("FAILED: the taskwait saw no failed task\n");
    return 1;
  }
  whole = strdup(nanort_last_error());
  if (std::strlen(whole) < 8192) {
    std::printf("FAILED: a message of only %zu characters: '%s'\n", std::strlen(whole), whole);
    return 1;
  }
  std::printf("the message at the taskwait: %zu characters\n", std::strlen(whole));
  std::atexit(check_at_exit);
  return 0;
}
