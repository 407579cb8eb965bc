// Helpers for the OpenCL tests: the devices the ICD loader finds (numbered as
// NANORT_OPENCL_DEVICES numbers them), a fixture that runs a test on one of them, task sites
// with an OpenCL kernel built from embedded source, CPU tasks running a lambda, and a small
// builder for tasks through the C ABI.
//
//   const ClModule kModule(R"CL( __kernel void add(__global int *x, int v) { ... } )CL", "add.cl");
//   struct AddArgs { int *x; int v; };
//   const ClSite kAdd(kModule, "add", {buffer(offsetof(AddArgs, x)), value<int>(offsetof(AddArgs, v))});
//
//   ASSERT_OK(Task(kAdd, AddArgs{x, 1}).inout(x, n).ndrange({n}).submit());
//   ASSERT_OK(cpu_task("check", [=] { ... }).in(x, n).submit());
//   ASSERT_OK(nanort_taskwait());
//
// Sites and modules must live as long as the process (the runtime keeps pointers to them and
// keys its built programs by the module's address): define them at namespace scope.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <gtest/gtest.h>
#include <nanort/nanort.h>
#include "status_checks.hpp"

#include <stdlib.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

namespace nanort_cl_test {

// ---------------------------------------------------------------------------------------------
// Devices

struct ClDevice {
  int index = -1;  // as NANORT_OPENCL_DEVICES numbers the devices; -1: none found
  std::string name;
  std::string platform;
  std::string type;  // gpu, cpu, accelerator, other
  bool fp64 = false;
  std::size_t base_alignment = 1;  // bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8)
};

inline std::string cl_device_string(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS) return "?";
  std::string text(size, '\0');
  clGetDeviceInfo(device, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// How gtest shows a parameter: "OpenCL device 0 (cpu): NAME, PLATFORM".
inline void PrintTo(const ClDevice &device, std::ostream *out) {
  if (device.index < 0)
    *out << "no OpenCL device";
  else
    *out << "OpenCL device " << device.index << " (" << device.type << "): " << device.name
         << ", " << device.platform;
}

// Every device of every platform, in the order the runtime lists them (platform by platform,
// device by device; platforms whose devices cannot be listed are left out, as it does).
inline std::vector<ClDevice> list_opencl_devices() {
  std::vector<ClDevice> found;
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0)
    return found;
  std::vector<cl_platform_id> platforms(platform_count);
  if (clGetPlatformIDs(platform_count, platforms.data(), nullptr) != CL_SUCCESS) return found;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS)
      continue;
    std::size_t size = 0;
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size);
    std::string platform_name(size, '\0');
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, platform_name.data(), nullptr);
    while (!platform_name.empty() && platform_name.back() == '\0') platform_name.pop_back();
    for (cl_device_id id : ids) {
      ClDevice device;
      device.index = static_cast<int>(found.size());
      device.name = cl_device_string(id, CL_DEVICE_NAME);
      device.platform = platform_name;
      cl_device_type type = 0;
      clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
      device.type = (type & CL_DEVICE_TYPE_GPU)           ? "gpu"
                    : (type & CL_DEVICE_TYPE_CPU)         ? "cpu"
                    : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator"
                                                          : "other";
      cl_device_fp_config fp64 = 0;
      clGetDeviceInfo(id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, nullptr);
      device.fp64 = fp64 != 0;
      cl_uint align_bits = 8;
      clGetDeviceInfo(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, nullptr);
      device.base_alignment = align_bits >= 8 ? align_bits / 8 : 1;
      found.push_back(std::move(device));
    }
  }
  return found;
}

// Test parameters: every device found, or one "no device" entry whose tests skip.
inline std::vector<ClDevice> device_params() {
  std::vector<ClDevice> devices = list_opencl_devices();
  if (devices.empty()) devices.push_back(ClDevice{});
  return devices;
}

// "dev0_cpu", "dev1_gpu", or "no_device".
inline std::string device_param_name(const ::testing::TestParamInfo<ClDevice> &info) {
  if (info.param.index < 0) return "no_device";
  return "dev" + std::to_string(info.param.index) + "_" + info.param.type;
}

// The data of a test that tasks use, kept until every task is done (the destructor waits):
// a test that returns early (a failed ASSERT) must not leave tasks or copies back from a
// device writing to freed memory.
class KeptData {
 public:
  KeptData() = default;
  KeptData(const KeptData &) = delete;
  KeptData &operator=(const KeptData &) = delete;
  ~KeptData() {
    if (!kept_.empty()) nanort_taskwait();
  }
  template <class T, class... Args>
  T &make(Args &&...args) {
    auto made = std::make_shared<T>(std::forward<Args>(args)...);
    kept_.push_back(made);
    return *made;
  }

 private:
  std::vector<std::shared_ptr<void>> kept_;
};

// Runs each test on one OpenCL device: NANORT_OPENCL_DEVICES selects it before the runtime
// starts. ctest runs every case in a process of its own; run by hand, a binary's cases for
// other devices than the first one started skip.
class OnDevice : public ::testing::TestWithParam<ClDevice> {
 protected:
  void SetUp() override {
    const ClDevice &d = GetParam();
    if (d.index < 0) {
      // NANORT_REQUIRE (set by the GPU machines' test scripts): the runtime refuses to start
      // without the devices required, and the test fails with its reason instead of skipping.
      if (std::getenv("NANORT_REQUIRE")) ASSERT_OK(nanort_init());
      GTEST_SKIP() << "no OpenCL device: the ICD loader found no platform with a device "
                      "(on Debian, pocl-opencl-icd provides one on the CPU)";
    }
    if (runtime_stopped())
      GTEST_SKIP() << "an earlier test in this process stopped the runtime (ctest runs each "
                      "case in a process of its own)";
    static int started_on = -1;
    if (started_on >= 0 && started_on != d.index)
      GTEST_SKIP() << "this process runs the runtime on OpenCL device " << started_on
                   << " already (ctest runs each case in a process of its own)";
    if (started_on < 0) {
      setenv("NANORT_OPENCL_DEVICES", std::to_string(d.index).c_str(), 1);
      started_on = d.index;
    }
    ASSERT_OK(nanort_init());
    const int count = nanort_device_count(NANORT_DEVICE_OPENCL);
    if (count == 0)
      GTEST_SKIP() << "the runtime has no OpenCL device (NANORT_OPENCL_DEVICES=" << d.index
                   << ", " << d.name << ")";
    ASSERT_EQ(count, 1) << "NANORT_OPENCL_DEVICES=" << d.index << " should open one device";
  }
  const ClDevice &device() const { return GetParam(); }
  // nanort_shutdown() inside a test (the runtime does not start again in this process).
  static nanort_status stop_runtime() {
    runtime_stopped() = true;
    return nanort_shutdown();
  }
  static bool &runtime_stopped() {
    static bool stopped = false;
    return stopped;
  }
  // An array or a value that lives until the test's tasks are done.
  template <class T = int>
  std::vector<T> &array(std::size_t n, T fill = T()) {
    return data_.make<std::vector<T>>(n, fill);
  }
  template <class T>
  T &keep(T initial) {
    return data_.make<T>(initial);
  }

 private:
  KeptData data_;
};

#define NANORT_INSTANTIATE_ON_DEVICES(suite)                                      \
  INSTANTIATE_TEST_SUITE_P(OpenCL, suite,                                         \
                           ::testing::ValuesIn(::nanort_cl_test::device_params()), \
                           ::nanort_cl_test::device_param_name)

// ---------------------------------------------------------------------------------------------
// Sites

// Embedded OpenCL C source. Must live for the whole process (namespace scope).
struct ClModule {
  nanort_kernel_module module;
  ClModule(const char *source, const char *origin, const char *options = nullptr)
      : module{NANORT_ABI_VERSION, NANORT_MODULE_OPENCL_SOURCE, source, 0, options, origin} {}
  ClModule(const ClModule &) = delete;
  ClModule &operator=(const ClModule &) = delete;
};

// Kernel parameters: where each one lies in the argument block.
inline nanort_kernel_arg buffer(std::size_t offset) {
  return {static_cast<uint32_t>(offset), sizeof(void *), NANORT_ARG_BUFFER};
}
template <class T>
nanort_kernel_arg value(std::size_t offset) {
  return {static_cast<uint32_t>(offset), sizeof(T), NANORT_ARG_VALUE};
}
// __local memory: 'bytes', or 0 for the task's shmem size.
inline nanort_kernel_arg local(std::size_t bytes = 0) {
  return {0, static_cast<uint32_t>(bytes), NANORT_ARG_LOCAL};
}

// A task site with an OpenCL implementation, and an smp one after it when 'smp' is given.
// The pragma location is where the site is defined. Must live for the whole process.
class ClSite {
 public:
  ClSite(const ClModule &module, const char *kernel, std::vector<nanort_kernel_arg> args,
         const char *label = nullptr, nanort_smp_fn smp = nullptr,
         std::source_location where = std::source_location::current())
      : args_(std::move(args)) {
    impls_[0] = {NANORT_DEVICE_OPENCL, nullptr, kernel, &module.module, args_.data(),
                 static_cast<uint32_t>(args_.size())};
    impls_[1] = {NANORT_DEVICE_SMP, smp, nullptr, nullptr, nullptr, 0};
    site_ = {NANORT_ABI_VERSION, label ? label : kernel, where.file_name(),
             static_cast<int>(where.line()), impls_, smp ? 2u : 1u, nullptr};
  }
  ClSite(const ClSite &) = delete;
  ClSite &operator=(const ClSite &) = delete;
  const nanort_task_site *get() const { return &site_; }
  const char *label() const { return site_.label; }
  const char *file() const { return site_.file; }
  int line() const { return site_.line; }
  // "label (file:line)" as the runtime names the task in messages.
  std::string where() const { return std::string(site_.file) + ":" + std::to_string(site_.line); }

 private:
  std::vector<nanort_kernel_arg> args_;
  nanort_task_impl impls_[2];
  nanort_task_site site_;
};

// CPU tasks running a std::function kept in the argument block.
namespace detail {
inline void run_function(void *args) { (**static_cast<std::function<void()> **>(args))(); }
inline void destroy_function(void *args) { delete *static_cast<std::function<void()> **>(args); }
inline const nanort_task_impl cpu_impl{NANORT_DEVICE_SMP, &run_function, nullptr, nullptr,
                                       nullptr, 0};
inline const nanort_task_site cpu_site{NANORT_ABI_VERSION, "cpu", nullptr, 0, &cpu_impl, 1,
                                       &destroy_function};
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Tasks

// Builds one task; submit() hands it over (a task not submitted is discarded).
class Task {
 public:
  template <class Args>
  Task(const ClSite &site, const Args &args) : task_(nanort_task_create(site.get(), sizeof(Args))) {
    if (!task_) {
      status_ = NANORT_ERROR_INVALID_ARGUMENT;
      error_ = nanort_last_error();
      return;
    }
    std::memcpy(nanort_task_args(task_), &args, sizeof(Args));
  }
  // A CPU task running 'body'.
  Task(const char *label, std::function<void()> body)
      : task_(nanort_task_create(&detail::cpu_site, sizeof(void *))) {
    if (!task_) {
      status_ = NANORT_ERROR_INVALID_ARGUMENT;
      error_ = nanort_last_error();
      return;
    }
    cpu_body_ = new std::function<void()>(std::move(body));
    std::memcpy(nanort_task_args(task_), &cpu_body_, sizeof(void *));
    nanort_task_set_label(task_, label);
  }
  Task(const Task &) = delete;
  Task &operator=(const Task &) = delete;
  ~Task() { discard(); }

  template <class T>
  Task &in(const T *data, std::size_t count) { return access(data, count * sizeof(T), NANORT_IN); }
  template <class T>
  Task &out(const T *data, std::size_t count) { return access(data, count * sizeof(T), NANORT_OUT); }
  template <class T>
  Task &inout(const T *data, std::size_t count) {
    return access(data, count * sizeof(T), NANORT_INOUT);
  }
  template <class T>
  Task &copy_in(const T *data, std::size_t count) { return copy(data, count * sizeof(T), NANORT_IN); }
  template <class T>
  Task &copy_out(const T *data, std::size_t count) {
    return copy(data, count * sizeof(T), NANORT_OUT);
  }
  template <class T>
  Task &copy_inout(const T *data, std::size_t count) {
    return copy(data, count * sizeof(T), NANORT_INOUT);
  }
  Task &access(const void *address, std::size_t bytes, nanort_access_mode mode) {
    if (task_) check(nanort_task_access(task_, address, bytes, mode));
    return *this;
  }
  Task &copy(const void *address, std::size_t bytes, nanort_access_mode mode) {
    if (task_) check(nanort_task_copy(task_, address, bytes, mode));
    return *this;
  }
  Task &access_2d(const void *address, std::size_t row_bytes, std::size_t rows,
                  std::size_t stride_bytes, nanort_access_mode mode) {
    if (task_) check(nanort_task_access_2d(task_, address, row_bytes, rows, stride_bytes, mode));
    return *this;
  }
  Task &ndrange(std::initializer_list<std::size_t> global,
                std::initializer_list<std::size_t> local = {}) {
    if (task_) {
      std::vector<std::size_t> g(global), l(local);
      check(nanort_task_set_ndrange(task_, static_cast<int>(g.size()), g.data(),
                                    l.empty() ? nullptr : l.data()));
    }
    return *this;
  }
  Task &shmem(std::size_t bytes) {
    if (task_) nanort_task_set_shmem(task_, bytes);
    return *this;
  }
  Task &copy_deps(bool on) {
    if (task_) nanort_task_set_copy_deps(task_, on ? 1 : 0);
    return *this;
  }
  Task &final(bool on) {
    if (task_) nanort_task_set_final(task_, on ? 1 : 0);
    return *this;
  }
  Task &label(const char *text) {
    if (task_) nanort_task_set_label(task_, text);
    return *this;
  }
  Task &on_device(nanort_device_kind kind, int index) {
    if (task_) nanort_task_set_device(task_, kind, index);
    return *this;
  }
  Task &location(const char *file, int line) {
    if (task_) nanort_task_set_location(task_, file, line);
    return *this;
  }

  // Submits the task. After an error in the calls above (a test's own mistake), the task is
  // discarded, the test fails with that error, and its status is returned.
  nanort_status submit() {
    if (status_ != NANORT_SUCCESS) {
      discard();
      ADD_FAILURE() << "building the task failed: " << error_;
      return status_;
    }
    nanort_task *task = task_;
    task_ = nullptr;
    cpu_body_ = nullptr;  // the runtime deletes it (args_destroy)
    return nanort_task_submit(task);
  }

 private:
  void check(nanort_status status) {
    if (status != NANORT_SUCCESS && status_ == NANORT_SUCCESS) {
      status_ = status;
      error_ = nanort_last_error();
    }
  }
  void discard() {
    if (task_) nanort_task_discard(task_);
    task_ = nullptr;
    delete cpu_body_;  // a discarded task does not call args_destroy
    cpu_body_ = nullptr;
  }

  nanort_task *task_ = nullptr;
  std::function<void()> *cpu_body_ = nullptr;
  nanort_status status_ = NANORT_SUCCESS;
  std::string error_;
};

// Results go home only at the flushing taskwait (NANORT_WRITE_BACK=taskwait, which the OpenCL
// tests run with): the tests that check where data lives between taskwaits need it.
inline bool lazy_write_back() {
  const char *mode = std::getenv("NANORT_WRITE_BACK");
  return mode && std::string(mode) == "taskwait";
}
#define SKIP_UNLESS_LAZY_WRITE_BACK()                                                   \
  do {                                                                                  \
    if (!lazy_write_back())                                                             \
      GTEST_SKIP() << "checks where results live between taskwaits "                   \
                      "(runs with NANORT_WRITE_BACK=taskwait)";                         \
  } while (0)

inline Task cpu_task(const char *label, std::function<void()> body) {
  return Task(label, std::move(body));
}

// ---------------------------------------------------------------------------------------------
// Messages

inline ::testing::AssertionResult contains(const std::string &text, const std::string &fragment) {
  if (text.find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << fragment << "' is not in:\n" << text;
}

inline std::size_t occurrences(const std::string &text, const std::string &fragment) {
  std::size_t count = 0;
  for (std::size_t at = text.find(fragment); at != std::string::npos;
       at = text.find(fragment, at + fragment.size()))
    ++count;
  return count;
}

}  // namespace nanort_cl_test
