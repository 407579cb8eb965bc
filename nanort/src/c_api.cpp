// The C ABI: argument checks, and the one place where exceptions become status codes.
#include <nanort/nanort.h>

#include <nanort/dc/human_size.hpp>
#include <nanort/dc/invariant.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "config.hpp"
#include "cuda/cuda_backend.hpp"
#include "runtime.hpp"

using nanort::rt::Runtime;
using nanort::rt::Task;

namespace {

// The last error of each thread, whole (one line per failed task at a taskwait: any length).
// nanort_last_error() must stay usable in exit handlers, which run after the thread_local
// destructors of the thread calling exit(): so the text is reached through plain thread_locals
// that nothing destroys. It lives on the heap while the thread's C++ objects live; a holder
// frees it when they are destroyed and leaves it in a fixed buffer, cut at a line boundary
// with a note of how much is left out. Failures after that (in exit handlers), or when the
// heap is exhausted, use the fixed buffer the same way.
thread_local char *heap_error = nullptr;  // malloc'd, heap_capacity bytes
thread_local std::size_t heap_capacity = 0;
thread_local bool error_on_heap = false;  // else in fixed_error
thread_local bool holder_gone = false;
thread_local char fixed_error[4096];

// 'text' into fixed_error; a longer one is cut after a line (else a word) in its last part
// and ends with "... (N more characters)".
void store_cut(const char *text, std::size_t length) noexcept {
  constexpr std::size_t room = sizeof fixed_error - 1;
  if (length <= room) {
    std::memcpy(fixed_error, text, length);
    fixed_error[length] = '\0';
    return;
  }
  const std::size_t keep = room - 48;  // what the note needs, at most
  std::size_t cut = keep;
  for (std::size_t i = keep; i > keep / 2 && cut == keep; --i)
    if (text[i - 1] == '\n') cut = i;
  for (std::size_t i = keep; i > keep / 2 && cut == keep; --i)
    if (text[i - 1] == ' ') cut = i;
  std::memcpy(fixed_error, text, cut);
  std::snprintf(fixed_error + cut, sizeof fixed_error - cut, "%s... (%zu more characters)",
                text[cut - 1] == '\n' || text[cut - 1] == ' ' ? "" : " ", length - cut);
}

// Its first use in a thread registers its destructor for that thread's end.
struct ErrorHolder {
  ~ErrorHolder() {
    holder_gone = true;
    if (error_on_heap) store_cut(heap_error, std::strlen(heap_error));
    error_on_heap = false;
    std::free(heap_error);
    heap_error = nullptr;
    heap_capacity = 0;
  }
  void hold() noexcept {}
};
thread_local ErrorHolder error_holder;

nanort_status fail(nanort_status status, const std::string &message) noexcept {
  if (!holder_gone) {
    error_holder.hold();  // frees the heap text when the thread ends
    if (message.size() + 1 > heap_capacity) {
      const std::size_t capacity = std::max<std::size_t>(message.size() + 1, 256);
      if (char *bigger = static_cast<char *>(std::realloc(heap_error, capacity))) {
        heap_error = bigger;
        heap_capacity = capacity;
      }
    }
    if (message.size() + 1 <= heap_capacity) {
      std::memcpy(heap_error, message.c_str(), message.size() + 1);
      error_on_heap = true;
      return status;
    }
  }
  store_cut(message.data(), message.size());
  error_on_heap = false;
  return status;
}

// Runs 'body', mapping exceptions to a status.
template <class Body>
nanort_status guarded(Body &&body) {
  try {
    return body();
  } catch (const nanort::rt::NoDeviceError &e) {
    return fail(NANORT_ERROR_NO_DEVICE, e.what());
  } catch (const nanort::rt::TaskFailedError &e) {
    return fail(NANORT_ERROR_TASK_FAILED, e.what());
  } catch (const nanort::InternalError &e) {  // a bug of nanort's: the message says so
    return fail(NANORT_ERROR_INTERNAL, e.what());
  } catch (const std::logic_error &e) {  // the caller's mistake
    return fail(NANORT_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc &) {
    return fail(NANORT_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return fail(NANORT_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(NANORT_ERROR_INTERNAL, "unknown internal error");
  }
}

Task *as_task(nanort_task *task) { return reinterpret_cast<Task *>(task); }

// A C caller may pass any int where an enum is expected; in C++ loading such a value as the
// enum type is undefined, so enum parameters are looked at as the int they were passed as.
template <class Enum>
int as_int(const Enum &value) {
  static_assert(sizeof(Enum) == sizeof(int));
  int number;
  std::memcpy(&number, &value, sizeof number);
  return number;
}

}  // namespace

extern "C" {

const char *nanort_last_error(void) {
  return error_on_heap ? heap_error : fixed_error;
}

const char *nanort_status_string(nanort_status status) {
  switch (status) {
    case NANORT_SUCCESS: return "success";
    case NANORT_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case NANORT_ERROR_ABI_MISMATCH: return "ABI version mismatch";
    case NANORT_ERROR_NO_DEVICE: return "no device can run the task";
    case NANORT_ERROR_TASK_FAILED: return "a task failed";
    case NANORT_ERROR_OUT_OF_MEMORY: return "out of memory";
    case NANORT_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

nanort_status nanort_init(void) {
  return guarded([] {
    Runtime::get();
    return NANORT_SUCCESS;
  });
}

void nanort_exit(int status) { Runtime::exit_after_failure(status); }

nanort_status nanort_task_fail(const char *message, void *payload, void (*destroy)(void *)) {
  return guarded([&] {
    Runtime::fail_current_task(message, payload, destroy);
    return NANORT_SUCCESS;
  });
}

void *nanort_take_failure_payload(void) { return Runtime::take_failure_payload(); }

nanort_status nanort_shutdown(void) {
  return guarded([] {
    return Runtime::shutdown() ? NANORT_SUCCESS
                               : fail(NANORT_ERROR_INVALID_ARGUMENT, "the runtime is not running");
  });
}

int nanort_abi_version(void) { return NANORT_ABI_VERSION; }

const char *nanort_version_string(void) { return NANORT_VERSION_STRING; }

int nanort_device_count(nanort_device_kind kind) {
  int count = -1;
  nanort_status status = guarded([&] {
    const int number = as_int(kind);
    if (number < 0 || number >= NANORT_DEVICE_KIND_COUNT)
      return fail(NANORT_ERROR_INVALID_ARGUMENT,
                  "nanort_device_count: unknown device kind " + std::to_string(number));
    count = Runtime::get().device_count(static_cast<nanort_device_kind>(number));
    return NANORT_SUCCESS;
  });
  return status == NANORT_SUCCESS ? count : -1;
}

int nanort_current_worker(void) {
  int worker = -1;
  guarded([&] {
    worker = Runtime::get().current_worker();
    return NANORT_SUCCESS;
  });
  return worker;
}

nanort_task *nanort_task_create(const nanort_task_site *site, size_t args_size) {
  Task *task = nullptr;
  guarded([&] {
    if (!site) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_task_create: site is NULL");
    if (site->abi_version != NANORT_ABI_VERSION)  // only the site's first fields are stable
      return fail(NANORT_ERROR_ABI_MISMATCH,
                  "task site '" + std::string(site->label ? site->label : "(unnamed)") + "' (" +
                      (site->file ? site->file : "?") + ":" + std::to_string(site->line) +
                      ") was compiled for nanort ABI " + std::to_string(site->abi_version) +
                      ", this runtime speaks ABI " + std::to_string(NANORT_ABI_VERSION) +
                      "; rebuild the program against this runtime");
    if (site->num_impls > 0 && !site->impls)
      return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_task_create: impls is NULL");
    task = Runtime::get().create(site, args_size);
    return NANORT_SUCCESS;
  });
  return reinterpret_cast<nanort_task *>(task);
}

void *nanort_task_args(nanort_task *task) { return task ? as_task(task)->args : nullptr; }

nanort_status nanort_task_access(nanort_task *task, const void *address, size_t size,
                                 nanort_access_mode mode) {
  return nanort_task_access_2d(task, address, size, 1, size, mode);
}

namespace {

constexpr size_t kLargest = static_cast<size_t>(PTRDIFF_MAX);  // bytes any object can have

// No object is larger than kLargest bytes: such a size is most often a negative length
// converted to size_t. Says so of "the size of an access" ('which').
std::string implausible_size(const std::string &which, size_t size, const char *unit) {
  return which + ", " + std::to_string(size) + unit +
         ", is more than memory can hold; it looks like a negative length (" +
         std::to_string(static_cast<std::ptrdiff_t>(size)) + ") converted to size_t";
}

// What is wrong with the sizes of an access or copy clause ('what'), or "" (without any
// allocation: every clause of every task comes here).
std::string implausible_clause(const char *what, const void *address, size_t row_bytes, size_t rows,
                               size_t stride_bytes) {
  size_t span = row_bytes;  // from the first byte to the end of the last row
  const bool span_overflows = rows > 1 && (__builtin_mul_overflow(rows - 1, stride_bytes, &span) ||
                                           __builtin_add_overflow(span, row_bytes, &span));
  const bool wraps = reinterpret_cast<std::uintptr_t>(address) > UINTPTR_MAX - span;
  if (row_bytes <= kLargest && rows <= kLargest && (rows <= 1 || stride_bytes <= kLargest) &&
      !span_overflows && span <= kLargest && !wraps)
    return {};
  // A 1-D clause comes as one row whose stride is its size.
  const bool two_d = rows > 1 || stride_bytes != row_bytes;
  const std::string clause = std::string(two_d ? "a 2-D " : what[0] == 'a' ? "an " : "a ") + what;
  if (row_bytes > kLargest)
    return implausible_size((two_d ? "the row size of " : "the size of ") + clause, row_bytes,
                            " bytes");
  if (rows > kLargest) return implausible_size("the row count of " + clause, rows, "");
  if (rows > 1 && stride_bytes > kLargest)
    return implausible_size("the stride of " + clause, stride_bytes, " bytes");
  if (span_overflows || span > kLargest)
    return clause + " of " + std::to_string(rows) + " rows " + std::to_string(stride_bytes) +
           " bytes apart spans more bytes than memory can hold";
  char at[32];
  std::snprintf(at, sizeof at, "%p", address);
  return clause + " of " + nanort::dc::human_size(span) + " at " + at +
         " runs past the end of the address space";
}

// Checks an access or copy clause and returns its region (empty: nothing named).
nanort_status checked_region(Task *t, const char *what, const void *address, size_t row_bytes,
                             size_t rows, size_t stride_bytes, int mode_number,
                             nanort::dc::Region &region) {
  if (mode_number < NANORT_IN || mode_number > NANORT_COMMUTATIVE)
    return fail(NANORT_ERROR_INVALID_ARGUMENT,
                t->describe() + ": " + what + " mode " + std::to_string(mode_number) +
                    " is not one of in, out, inout, concurrent, commutative");
  if (row_bytes == 0 || rows == 0) {  // names nothing
    region = {};
    return NANORT_SUCCESS;
  }
  if (std::string wrong = implausible_clause(what, address, row_bytes, rows, stride_bytes);
      !wrong.empty())
    return fail(NANORT_ERROR_INVALID_ARGUMENT, t->describe() + ": " + wrong);
  if (rows > 1 && stride_bytes < row_bytes)
    return fail(NANORT_ERROR_INVALID_ARGUMENT,
                t->describe() + ": 2-D " + what + " with stride " + std::to_string(stride_bytes) +
                    " bytes shorter than its rows (" + std::to_string(row_bytes) + " bytes)");
  region = nanort::dc::Region::block(address, row_bytes, rows, stride_bytes);
  // A dependence on NULL is only a name to order tasks by (OmpSs programs name pointers that
  // are never dereferenced); data to move needs an address: refused for copies here and, at
  // submit, for accesses of tasks that may run on a device.
  if (!region.empty() && !address && std::string_view(what) != "access")
    return fail(NANORT_ERROR_INVALID_ARGUMENT, t->describe() + ": " + what + " of a NULL address");
  return NANORT_SUCCESS;
}

}  // namespace

nanort_status nanort_task_access_2d(nanort_task *task, const void *address, size_t row_bytes,
                                    size_t rows, size_t stride_bytes, nanort_access_mode mode) {
  return guarded([&] {
    if (!task) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_task_access: task is NULL");
    nanort::dc::Region region;
    const int mode_number = as_int(mode);
    if (nanort_status status = checked_region(as_task(task), "access", address, row_bytes, rows,
                                              stride_bytes, mode_number, region))
      return status;
    if (region.empty()) return NANORT_SUCCESS;  // nothing named, nothing to order
    as_task(task)->accesses.push_back({region, static_cast<nanort_access_mode>(mode_number)});
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_task_copy(nanort_task *task, const void *address, size_t size,
                               nanort_access_mode mode) {
  return nanort_task_copy_2d(task, address, size, 1, size, mode);
}

nanort_status nanort_task_copy_2d(nanort_task *task, const void *address, size_t row_bytes,
                                  size_t rows, size_t stride_bytes, nanort_access_mode mode) {
  return guarded([&] {
    if (!task) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_task_copy: task is NULL");
    nanort::dc::Region region;
    const int mode_number = as_int(mode);
    if (mode_number > NANORT_INOUT)
      return fail(NANORT_ERROR_INVALID_ARGUMENT,
                  as_task(task)->describe() + ": copy mode " + std::to_string(mode_number) +
                      " is not one of in, out, inout");
    if (nanort_status status = checked_region(as_task(task), "copy", address, row_bytes, rows,
                                              stride_bytes, mode_number, region))
      return status;
    if (!region.empty())
      as_task(task)->copies.push_back({region, static_cast<nanort_access_mode>(mode_number)});
    return NANORT_SUCCESS;
  });
}

void nanort_task_set_copy_deps(nanort_task *task, int copy_deps) {
  if (task) as_task(task)->copy_deps = copy_deps != 0;
}

void nanort_task_set_label(nanort_task *task, const char *label) {
  if (task && label) as_task(task)->label = label;
}

void nanort_task_set_location(nanort_task *task, const char *file, int line) {
  if (!task) return;
  as_task(task)->file = file;
  as_task(task)->line = line;
}

void nanort_task_set_priority(nanort_task *task, int priority) {
  if (task) as_task(task)->priority = priority;
}

void nanort_task_set_if(nanort_task *task, int condition) {
  if (task) as_task(task)->undeferred = !condition;
}

void nanort_task_set_final(nanort_task *task, int is_final) {
  if (task) as_task(task)->is_final = is_final != 0;
}

void nanort_task_set_replayable(nanort_task *task, int replayable) {
  if (task) as_task(task)->replayable = replayable != 0;
}

nanort_status nanort_task_set_ndrange(nanort_task *task, int dims, const size_t *global,
                                      const size_t *local) {
  if (!task) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_task_set_ndrange: task is NULL");
  return guarded([&] {
    Task *t = as_task(task);
    if (dims < 1 || dims > 3 || !global)
      return fail(NANORT_ERROR_INVALID_ARGUMENT,
                  t->describe() + ": ndrange needs 1 to 3 dimensions and global sizes, got " +
                      std::to_string(dims) + " dimension(s)");
    for (int d = 0; d < dims; ++d)
      if (local && local[d] == 0)
        return fail(NANORT_ERROR_INVALID_ARGUMENT,
                    t->describe() + ": ndrange local size of dimension " + std::to_string(d) +
                        " is 0");
    for (int d = 0; d < dims; ++d) {
      t->ndrange_global[d] = global[d];
      t->ndrange_local[d] = local ? local[d] : 0;
    }
    t->ndrange_dims = dims;
    return NANORT_SUCCESS;
  });
}

void nanort_task_set_device(nanort_task *task, nanort_device_kind kind, int index) {
  if (!task) return;
  as_task(task)->wanted_kind = as_int(kind);
  as_task(task)->wanted_index = index;
}

void nanort_task_set_shmem(nanort_task *task, size_t bytes) {
  if (task) as_task(task)->shmem_bytes = bytes;
}

nanort_status nanort_task_submit(nanort_task *task) {
  if (!task) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_task_submit: task is NULL");
  as_task(task)->args_constructed = true;  // from here on the argument block is the runtime's
  Runtime *runtime = nullptr;
  nanort_status status = guarded([&] {
    runtime = &Runtime::get();
    return NANORT_SUCCESS;
  });
  if (!runtime) {  // shut down (or failed to start): the handle is consumed all the same
    as_task(task)->drop_ref();
    return status;
  }
  return guarded([&] { return runtime->submit(as_task(task)); });
}

namespace {

// Checks a reduction clause of 'what' ("reduction", "in_reduction") and fills 'entry' with it;
// a status other than success when it is wrong, or when it names nothing (size 0: 'empty').
nanort_status checked_reduction(Task *t, const char *what, void *address, size_t size,
                                const nanort_reduction_op *op, nanort::rt::ReductionEntry &entry,
                                bool &empty) {
  empty = false;
  if (auto why = nanort::rt::resolve_reduction_op(op, entry.op))
    return fail(NANORT_ERROR_INVALID_ARGUMENT, t->describe() + ": " + what + ": " + *why);
  if (size == 0) {  // an empty array section: nothing to reduce
    empty = true;
    return NANORT_SUCCESS;
  }
  if (std::string wrong = implausible_clause(what, address, size, 1, size); !wrong.empty())
    return fail(NANORT_ERROR_INVALID_ARGUMENT, t->describe() + ": " + wrong);
  if (!address)
    return fail(NANORT_ERROR_INVALID_ARGUMENT,
                t->describe() + ": " + what + " of a NULL address");
  if (size % entry.op.element_size != 0)
    return fail(NANORT_ERROR_INVALID_ARGUMENT,
                t->describe() + ": the " + what + " " + entry.op.describe() + " on " +
                    std::to_string(size) + " bytes is not a whole number of its " +
                    std::to_string(entry.op.element_size) + "-byte elements");
  entry.start = reinterpret_cast<std::uintptr_t>(address);
  entry.end = entry.start + size;
  if (t->reductions)
    for (const nanort::rt::ReductionEntry &other : t->reductions->entries)
      if (entry.start < other.end && other.start < entry.end)
        return fail(NANORT_ERROR_INVALID_ARGUMENT,
                    t->describe() + ": the " + what + " on " + std::to_string(size) +
                        " bytes overlaps another reduction of the task");
  return NANORT_SUCCESS;
}

void add_reduction_entry(Task *t, nanort::rt::ReductionEntry &&entry) {
  if (!t->reductions) t->reductions = std::make_unique<nanort::rt::TaskReductions>();
  t->reductions->entries.push_back(std::move(entry));
}

}  // namespace

nanort_status nanort_task_reduction(nanort_task *task, void *address, size_t size,
                                    const nanort_reduction_op *op) {
  if (!task) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_task_reduction: task is NULL");
  return guarded([&] {
    Task *t = as_task(task);
    nanort::rt::ReductionEntry entry;
    bool empty = false;
    if (nanort_status status = checked_reduction(t, "reduction", address, size, op, entry, empty))
      return status;
    if (empty) return NANORT_SUCCESS;
    t->accesses.push_back(
        {nanort::dc::Region::contiguous(address, size), nanort::rt::kReductionAccess});
    add_reduction_entry(t, std::move(entry));
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_task_in_reduction(nanort_task *task, void *address, size_t size,
                                       const nanort_reduction_op *op) {
  if (!task) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_task_in_reduction: task is NULL");
  return guarded([&] {
    Task *t = as_task(task);
    nanort::rt::ReductionEntry entry;
    bool empty = false;
    if (nanort_status status =
            checked_reduction(t, "in_reduction", address, size, op, entry, empty))
      return status;
    if (empty) return NANORT_SUCCESS;
    entry.info = Runtime::get().find_taskgroup_reduction(t, entry.start, entry.end, entry.op);
    entry.in_reduction = true;
    add_reduction_entry(t, std::move(entry));
    return NANORT_SUCCESS;
  });
}

void *nanort_reduction_private(const void *original) {
  void *result = nullptr;
  guarded([&] {
    result = Runtime::reduction_private(original);
    return NANORT_SUCCESS;
  });
  return result;
}

nanort_status nanort_taskgroup_begin(void) {
  return guarded([] {
    Runtime::get().taskgroup_begin();
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_taskgroup_reduction(void *address, size_t size,
                                         const nanort_reduction_op *op) {
  return guarded([&] {
    nanort::rt::ReductionOp resolved;
    if (auto why = nanort::rt::resolve_reduction_op(op, resolved))
      return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_taskgroup_reduction: " + *why);
    if (size == 0) return NANORT_SUCCESS;
    if (std::string wrong = implausible_clause("task_reduction", address, size, 1, size);
        !wrong.empty())
      return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_taskgroup_reduction: " + wrong);
    if (!address)
      return fail(NANORT_ERROR_INVALID_ARGUMENT,
                  "nanort_taskgroup_reduction: task_reduction of a NULL address");
    if (size % resolved.element_size != 0)
      return fail(NANORT_ERROR_INVALID_ARGUMENT,
                  "nanort_taskgroup_reduction: the task_reduction " + resolved.describe() +
                      " on " + std::to_string(size) + " bytes is not a whole number of its " +
                      std::to_string(resolved.element_size) + "-byte elements");
    const auto start = reinterpret_cast<std::uintptr_t>(address);
    Runtime::get().taskgroup_reduction(start, start + size, resolved);
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_taskgroup_end(void) {
  return guarded([] {
    Runtime::get().taskgroup_end();
    return NANORT_SUCCESS;
  });
}

void nanort_task_discard(nanort_task *task) {
  if (task) as_task(task)->drop_ref();
}

void nanort_cuda_register_image(const void *fatbin_image) {
  if (fatbin_image) nanort::rt::register_linked_cuda_image(fatbin_image);
}

int nanort_in_final(void) {
  int result = 0;
  guarded([&] {
    result = Runtime::get().in_final() ? 1 : 0;
    return NANORT_SUCCESS;
  });
  return result;
}

int nanort_in_task(void) { return Runtime::in_task() ? 1 : 0; }

nanort_status nanort_block_until(int (*ready)(void *arg), void *arg) {
  if (!ready) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_block_until: ready is NULL");
  return guarded([&] {
    Runtime::get().block_until(ready, arg);
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_block_call(void (*call)(void *arg), void *arg) {
  if (!call) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_block_call: call is NULL");
  return guarded([&] {
    Runtime::get().blocking_call(call, arg);
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_set_affinity(const char *task, const char *place, double score) {
  if (!task || !*task || !place || !*place || !(score > 0) || score > 1e300)
    return fail(NANORT_ERROR_INVALID_ARGUMENT,
                "nanort_set_affinity: empty task or place name, or a score that is not a "
                "positive number");
  return guarded([&] {
    Runtime::get().set_affinity(task, place, score);
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_host_register(void *address, size_t bytes) {
  if (!address || bytes == 0)
    return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_host_register: NULL address or 0 bytes");
  if (bytes > kLargest)
    return fail(NANORT_ERROR_INVALID_ARGUMENT,
                implausible_size("nanort_host_register: the size", bytes, " bytes"));
  return guarded([&] {
    Runtime::get().host_register(address, bytes);
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_host_unregister(void *address) {
  if (!address) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_host_unregister: NULL address");
  return guarded([&] {
    Runtime::get().host_unregister(address);
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_taskwait(void) {
  return guarded([] { return Runtime::get().taskwait(true); });
}

nanort_status nanort_taskwait_noflush(void) {
  return guarded([] { return Runtime::get().taskwait(false); });
}

nanort_status nanort_taskwait_on(const void *const *addresses, const size_t *sizes,
                                 size_t count) {
  if (count > 0 && (!addresses || !sizes))
    return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_taskwait_on: NULL address or size list");
  for (size_t i = 0; i < count; ++i)
    if (sizes[i] > kLargest)
      return fail(NANORT_ERROR_INVALID_ARGUMENT,
                  implausible_size("nanort_taskwait_on: the size of entry " + std::to_string(i),
                                   sizes[i], " bytes"));
  return guarded([&] { return Runtime::get().taskwait_on(addresses, sizes, count); });
}

nanort_status nanort_taskiter_begin(nanort_taskiter **iter) {
  if (!iter) return fail(NANORT_ERROR_INVALID_ARGUMENT, "nanort_taskiter_begin: iter is NULL");
  *iter = nullptr;
  return guarded([&] {
    *iter = reinterpret_cast<nanort_taskiter *>(Runtime::get().taskiter_begin());
    return NANORT_SUCCESS;
  });
}

nanort_status nanort_taskiter_end(nanort_taskiter *iter, uint64_t replays) {
  if (!iter) return NANORT_SUCCESS;
  return guarded([&] {
    return Runtime::get().taskiter_end(reinterpret_cast<nanort::rt::TaskIter *>(iter), replays);
  });
}

nanort_status nanort_taskiter_replay(nanort_taskiter *iter, uint64_t replays) {
  if (!iter) return NANORT_SUCCESS;
  return guarded([&] {
    return Runtime::get().taskiter_replay(reinterpret_cast<nanort::rt::TaskIter *>(iter),
                                          replays);
  });
}

nanort_status nanort_taskiter_launch(nanort_taskiter *iter, uint64_t replays) {
  if (!iter) return NANORT_SUCCESS;
  return guarded([&] {
    return Runtime::get().taskiter_replay(reinterpret_cast<nanort::rt::TaskIter *>(iter),
                                          replays, true);
  });
}

nanort_status nanort_taskiter_update(nanort_taskiter *iter) {
  if (!iter) return NANORT_SUCCESS;
  return guarded([&] {
    return Runtime::get().taskiter_update(reinterpret_cast<nanort::rt::TaskIter *>(iter));
  });
}

nanort_status nanort_taskgraph_begin(const void *construct, uint64_t graph_id, int reset,
                                     nanort_taskgraph **graph, int *run_block) {
  if (!construct || !graph || !run_block)
    return fail(NANORT_ERROR_INVALID_ARGUMENT,
                "nanort_taskgraph_begin: construct, graph or run_block is NULL");
  *graph = nullptr;
  *run_block = 1;
  return guarded([&] {
    nanort::rt::TaskIter *recording = nullptr;
    bool run = true;
    nanort_status status =
        Runtime::get().taskgraph_begin(construct, graph_id, reset != 0, &recording, run);
    *graph = reinterpret_cast<nanort_taskgraph *>(recording);
    *run_block = run ? 1 : 0;
    return status;
  });
}

nanort_status nanort_taskgraph_end(nanort_taskgraph *graph, int wait) {
  return guarded([&] {
    return Runtime::get().taskgraph_end(reinterpret_cast<nanort::rt::TaskIter *>(graph),
                                        wait != 0);
  });
}

}  // extern "C"
