// nanort's errors for C++: the exception a failing call throws, and how a task's own exception
// travels from its body to the taskwait that collects it. Used by nanort.hpp and by the code
// the pragma plugin writes for C++ (C++11 or later, with or without exceptions).
#pragma once

#include <nanort/nanort.h>

#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace nanort {

// A failure reported by the runtime: a task no device can run, a kernel that failed, a task
// not run after a failure, a bad argument. A task that threw has its own exception rethrown
// instead (see taskwait).
class task_error : public std::runtime_error {
 public:
  task_error(nanort_status status, const std::string &what)
      : std::runtime_error(what), status_(status) {}
  nanort_status status() const noexcept { return status_; }

 private:
  nanort_status status_;
};

namespace detail {

inline void destroy_exception(void *payload) { delete static_cast<std::exception_ptr *>(payload); }

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)

// In a task body's catch (...): the task fails with the exception being handled, which the
// taskwait that collects the failure rethrows.
inline void fail_with_current_exception() noexcept {
  std::string what = "threw an exception of unknown type";
  try {
    throw;
  } catch (const std::exception &e) {
    what = std::string("threw: ") + e.what();
  } catch (...) {
  }
  std::exception_ptr *payload = new (std::nothrow) std::exception_ptr(std::current_exception());
  nanort_task_fail(what.c_str(), payload, payload ? &destroy_exception : nullptr);
}

// Runs a task body; an exception that leaves it fails the task (no exception crosses the
// runtime's C interface).
inline void run_guarded(void (*body)(void *), void *args) noexcept {
  try {
    body(args);
  } catch (...) {
    fail_with_current_exception();
  }
}

// A status that is not NANORT_SUCCESS as an exception: after a failed taskwait, the first
// failed task's own exception if it threw one (nanort_last_error() names every failed task),
// else nanort::task_error with the runtime's message.
inline void raise(nanort_status status) {
  if (status == NANORT_SUCCESS) return;
  const std::string what = nanort_last_error();
  if (status == NANORT_ERROR_TASK_FAILED) {
    if (void *payload = nanort_take_failure_payload()) {
      std::exception_ptr *stored = static_cast<std::exception_ptr *>(payload);
      std::exception_ptr error = *stored;
      delete stored;
      std::rethrow_exception(error);
    }
  }
  throw task_error(status, what);
}

#else  // built without exceptions: a failure ends the program, as in C

inline void run_guarded(void (*body)(void *), void *args) noexcept { body(args); }

inline void raise(nanort_status status) {
  if (status == NANORT_SUCCESS) return;
  std::fprintf(stderr, "nanort: %s\n", nanort_last_error());
  nanort_exit(1);
}

#endif

}  // namespace detail
}  // namespace nanort
