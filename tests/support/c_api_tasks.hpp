// Tasks made through the C ABI the way the plugin's lowered code makes them, for the tests of
// that ABI: a static site per task function, a copy of the arguments in the argument block,
// the task's accesses and reductions, then submit.
#pragma once

#include <nanort/nanort.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <initializer_list>

namespace nanort_test {

struct Access {
  const void *address;
  std::size_t bytes;
  nanort_access_mode mode;
};

struct Reduction {
  void *address;
  std::size_t bytes;
  const nanort_reduction_op *op;
};

// A static site 'name' whose one implementation runs 'fn' on the CPU; SITE_AT gives it the
// file and line that the runtime's messages name.
#define SITE_AT(name, fn, file, line)                                                      \
  const nanort_task_impl name##_impl{NANORT_DEVICE_SMP, fn, nullptr, nullptr, nullptr, 0}; \
  const nanort_task_site name{NANORT_ABI_VERSION, #name, file, line, &name##_impl, 1, nullptr}
#define SITE(name, fn) SITE_AT(name, fn, __FILE__, __LINE__)

// Creates a task of 'site' with a copy of 'args' and the given accesses and reductions; not
// yet submitted.
template <class Args>
nanort_task *make_task(const nanort_task_site &site, const Args &args,
                       std::initializer_list<Access> accesses = {},
                       std::initializer_list<Reduction> reductions = {}) {
  nanort_task *task = nanort_task_create(&site, sizeof(Args));
  EXPECT_NE(task, nullptr) << nanort_last_error();
  if (!task) return nullptr;
  std::memcpy(nanort_task_args(task), &args, sizeof(Args));
  for (const Access &a : accesses)
    EXPECT_EQ(nanort_task_access(task, a.address, a.bytes, a.mode), NANORT_SUCCESS)
        << nanort_last_error();
  for (const Reduction &r : reductions)
    EXPECT_EQ(nanort_task_reduction(task, r.address, r.bytes, r.op), NANORT_SUCCESS)
        << nanort_last_error();
  return task;
}

template <class Args>
void spawn(const nanort_task_site &site, const Args &args,
           std::initializer_list<Access> accesses = {},
           std::initializer_list<Reduction> reductions = {}) {
  nanort_task *task = make_task(site, args, accesses, reductions);
  ASSERT_NE(task, nullptr);
  ASSERT_EQ(nanort_task_submit(task), NANORT_SUCCESS) << nanort_last_error();
}

inline void expect_taskwait_ok() {
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
}

}  // namespace nanort_test
