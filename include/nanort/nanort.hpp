// nanort for C++ without pragmas: tasks from lambdas, with accesses named fluently.
//
//     nanort::task("axpy").in(x, n).inout(y, n).spawn([=] { axpy(n, a, x, y); });
//     nanort::taskwait();   // rethrows the exception of a task that threw
//
// Lambdas are moved into the task's argument block, so captures of any type work; their
// destructor runs when the task is done. Needs C++17 or later.
//
// Errors: a call the runtime refuses throws nanort::task_error. taskwait() after a failed
// task throws the first failed task's own exception if it threw one (its type, as thrown),
// else nanort::task_error; nanort_last_error() names every failed task and its location.
#pragma once

#include <nanort/error.hpp>
#include <nanort/nanort.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if __cplusplus >= 202002L && __has_include(<source_location>)
#include <source_location>
#define NANORT_HAVE_SOURCE_LOCATION 1
#endif

namespace nanort {

namespace detail {
inline void check(nanort_status status) { raise(status); }

template <class F>
void call_callable(void *args) {
  (*static_cast<F *>(args))();
}

template <class F>
void run_callable(void *args) {
  run_guarded(&call_callable<F>, args);
}

template <class F>
void destroy_callable(void *args) {
  static_cast<F *>(args)->~F();
}

// The element type of a built-in reduction (nanort_reduction_type).
template <class T>
constexpr std::uint32_t reduction_type() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) return NANORT_TYPE_BOOL;
  else if constexpr (std::is_same_v<U, char>) return NANORT_TYPE_CHAR;
  else if constexpr (std::is_same_v<U, signed char>) return NANORT_TYPE_SIGNED_CHAR;
  else if constexpr (std::is_same_v<U, unsigned char>) return NANORT_TYPE_UNSIGNED_CHAR;
  else if constexpr (std::is_same_v<U, short>) return NANORT_TYPE_SHORT;
  else if constexpr (std::is_same_v<U, unsigned short>) return NANORT_TYPE_UNSIGNED_SHORT;
  else if constexpr (std::is_same_v<U, int>) return NANORT_TYPE_INT;
  else if constexpr (std::is_same_v<U, unsigned>) return NANORT_TYPE_UNSIGNED_INT;
  else if constexpr (std::is_same_v<U, long>) return NANORT_TYPE_LONG;
  else if constexpr (std::is_same_v<U, unsigned long>) return NANORT_TYPE_UNSIGNED_LONG;
  else if constexpr (std::is_same_v<U, long long>) return NANORT_TYPE_LONG_LONG;
  else if constexpr (std::is_same_v<U, unsigned long long>) return NANORT_TYPE_UNSIGNED_LONG_LONG;
  else if constexpr (std::is_same_v<U, float>) return NANORT_TYPE_FLOAT;
  else if constexpr (std::is_same_v<U, double>) return NANORT_TYPE_DOUBLE;
  else if constexpr (std::is_same_v<U, long double>) return NANORT_TYPE_LONG_DOUBLE;
  else return 0;
}

template <class T>
nanort_reduction_op builtin_op(nanort_reduction_operator op) {
  static_assert(reduction_type<T>() != 0,
                "built-in reductions take arithmetic types; give other types a "
                "nanort_reduction_op with NANORT_REDUCE_USER");
  return nanort_reduction_op{NANORT_ABI_VERSION, static_cast<std::uint32_t>(op),
                             reduction_type<T>(), sizeof(T), nullptr, nullptr, nullptr, nullptr};
}

// One static site per callable type: labels and locations are set per task.
template <class F>
struct callable_site {
  static constexpr nanort_task_impl impl{NANORT_DEVICE_SMP, &run_callable<F>, nullptr, nullptr,
                                         nullptr, 0};
  static constexpr nanort_task_site site{
      NANORT_ABI_VERSION, nullptr, nullptr, 0, &impl, 1,
      std::is_trivially_destructible_v<F> ? nullptr : &destroy_callable<F>};
};
}  // namespace detail

class task {
 public:
  // The task's location is where it is made (for messages, statistics and traces).
#ifdef NANORT_HAVE_SOURCE_LOCATION
  explicit task(const char *label = nullptr,
                std::source_location where = std::source_location::current())
      : label_(label), file_(where.file_name()), line_(static_cast<int>(where.line())) {}
#else  // C++17: the compilers' builtins (GCC, Clang)
  explicit task(const char *label = nullptr, const char *file = __builtin_FILE(),
                int line = __builtin_LINE())
      : label_(label), file_(file), line_(line) {}
#endif

  // Element counts, not bytes.
  template <class T>
  task &in(const T *data, std::size_t count = 1) {
    return access(data, count * sizeof(T), NANORT_IN);
  }
  template <class T>
  task &out(T *data, std::size_t count = 1) {
    return access(data, count * sizeof(T), NANORT_OUT);
  }
  template <class T>
  task &inout(T *data, std::size_t count = 1) {
    return access(data, count * sizeof(T), NANORT_INOUT);
  }
  template <class T>
  task &concurrent(T *data, std::size_t count = 1) {
    return access(data, count * sizeof(T), NANORT_CONCURRENT);
  }
  template <class T>
  task &commutative(T *data, std::size_t count = 1) {
    return access(data, count * sizeof(T), NANORT_COMMUTATIVE);
  }
  // A rows x cols block of a row-major matrix whose rows are 'ld' elements apart.
  template <class T>
  task &block(const T *first, std::size_t rows, std::size_t cols, std::size_t ld,
              nanort_access_mode mode) {
    add({first, cols * sizeof(T), rows, ld * sizeof(T), mode});
    return *this;
  }

  task &access(const void *address, std::size_t bytes, nanort_access_mode mode) {
    add({address, bytes, 1, bytes, mode});
    return *this;
  }
  // OmpSs-2 reduction(op: data[0;count]): the body reaches its private copy through
  // nanort::reduction_private(data). 'op' is one of NANORT_REDUCE_SUM ... NANORT_REDUCE_OR for
  // arithmetic T; a user-defined operator (NANORT_REDUCE_USER) comes as a nanort_reduction_op.
  template <class T>
  task &reduction(nanort_reduction_operator op, T *data, std::size_t count = 1) {
    reductions_.push_back({data, count * sizeof(T), detail::builtin_op<T>(op), false});
    return *this;
  }
  template <class T>
  task &reduction(const nanort_reduction_op &op, T *data, std::size_t count = 1) {
    reductions_.push_back({data, count * sizeof(T), op, false});
    return *this;
  }
  // OpenMP in_reduction(op: data[0;count]), in a reduction of an enclosing nanort::taskgroup.
  template <class T>
  task &in_reduction(nanort_reduction_operator op, T *data, std::size_t count = 1) {
    reductions_.push_back({data, count * sizeof(T), detail::builtin_op<T>(op), true});
    return *this;
  }
  template <class T>
  task &in_reduction(const nanort_reduction_op &op, T *data, std::size_t count = 1) {
    reductions_.push_back({data, count * sizeof(T), op, true});
    return *this;
  }
  task &priority(int value) {
    priority_ = value;
    return *this;
  }
  task &when(bool condition) {  // the if clause
    if_ = condition;
    return *this;
  }
  task &final(bool is_final = true) {
    final_ = is_final;
    return *this;
  }
  // OpenMP 6.0's replayable clause: false runs the task whenever a taskiter's or taskgraph's
  // body runs, unrecorded (a lambda's captures have a destructor: a recording refuses it).
  task &replayable(bool value = true) {
    replayable_ = value;
    return *this;
  }

  template <class F>
  void spawn(F &&body) {
    using Fn = std::decay_t<F>;
    static_assert(alignof(Fn) <= 16, "task bodies aligned beyond 16 bytes are not supported");
    nanort_task *t = nanort_task_create(&detail::callable_site<Fn>::site, sizeof(Fn));
    if (!t) throw task_error(NANORT_ERROR_INVALID_ARGUMENT, nanort_last_error());
    Fn *stored;
    try {
      stored = ::new (nanort_task_args(t)) Fn(std::forward<F>(body));
    } catch (...) {
      nanort_task_discard(t);
      throw;
    }
    nanort_task_set_label(t, label_);
    nanort_task_set_location(t, file_, line_);
    if (priority_ != 0) nanort_task_set_priority(t, priority_);
    if (!if_) nanort_task_set_if(t, 0);
    if (final_) nanort_task_set_final(t, 1);
    if (!replayable_) nanort_task_set_replayable(t, 0);
    for (std::size_t i = 0; i < count_; ++i) {
      const pending_access &a = i < kInline ? inline_[i] : more_[i - kInline];
      nanort_status s =
          a.rows == 1 ? nanort_task_access(t, a.address, a.row_bytes, a.mode)
                      : nanort_task_access_2d(t, a.address, a.row_bytes, a.rows, a.stride, a.mode);
      if (s != NANORT_SUCCESS) {
        stored->~Fn();  // not submitted: the body is still ours to destroy
        nanort_task_discard(t);
        detail::check(s);
      }
    }
    for (const pending_reduction &r : reductions_) {
      nanort_status s = r.in_reduction ? nanort_task_in_reduction(t, r.address, r.bytes, &r.op)
                                       : nanort_task_reduction(t, r.address, r.bytes, &r.op);
      if (s != NANORT_SUCCESS) {
        stored->~Fn();
        nanort_task_discard(t);
        detail::check(s);
      }
    }
    detail::check(nanort_task_submit(t));
  }

 private:
  struct pending_access {
    const void *address;
    std::size_t row_bytes, rows, stride;
    nanort_access_mode mode;
  };
  struct pending_reduction {
    void *address;
    std::size_t bytes;
    nanort_reduction_op op;
    bool in_reduction;
  };
  // The first few accesses live in the builder itself: no allocation for the usual task.
  static constexpr std::size_t kInline = 4;
  void add(const pending_access &a) {
    if (count_ < kInline)
      inline_[count_] = a;
    else
      more_.push_back(a);
    ++count_;
  }
  const char *label_;
  const char *file_;
  int line_;
  int priority_ = 0;
  bool if_ = true;
  bool final_ = false;
  bool replayable_ = true;
  pending_access inline_[kInline];
  std::vector<pending_access> more_;
  std::size_t count_ = 0;
  std::vector<pending_reduction> reductions_;
};

// In a task's body: its private copy of 'original' (an element of the data it reduces).
template <class T>
T *reduction_private(T *original) {
  void *copy = nanort_reduction_private(original);
  if (!copy) throw task_error(NANORT_ERROR_INVALID_ARGUMENT, nanort_last_error());
  return static_cast<T *>(copy);
}

// OpenMP taskgroup with task_reduction clauses: its destructor ends it (waits for the tasks
// created since, and combines the reductions); end() does so and throws on failure.
//
//     {
//       nanort::taskgroup group;
//       group.reduction(NANORT_REDUCE_SUM, &x);
//       nanort::task().in_reduction(NANORT_REDUCE_SUM, &x).spawn([&] { ... });
//     }
class taskgroup {
 public:
  taskgroup() { detail::check(nanort_taskgroup_begin()); }
  taskgroup(const taskgroup &) = delete;
  taskgroup &operator=(const taskgroup &) = delete;
  ~taskgroup() {
    if (open_) (void)nanort_taskgroup_end();
  }
  template <class T>
  taskgroup &reduction(nanort_reduction_operator op, T *data, std::size_t count = 1) {
    const nanort_reduction_op built = detail::builtin_op<T>(op);
    detail::check(nanort_taskgroup_reduction(data, count * sizeof(T), &built));
    return *this;
  }
  template <class T>
  taskgroup &reduction(const nanort_reduction_op &op, T *data, std::size_t count = 1) {
    detail::check(nanort_taskgroup_reduction(data, count * sizeof(T), &op));
    return *this;
  }
  void end() {
    open_ = false;
    detail::check(nanort_taskgroup_end());
  }

 private:
  bool open_ = true;
};

inline void taskwait() { detail::check(nanort_taskwait()); }
inline void taskwait_noflush() { detail::check(nanort_taskwait_noflush()); }
template <class T>
void taskwait_on(const T *data, std::size_t count = 1) {
  const void *address = data;
  std::size_t bytes = count * sizeof(T);
  detail::check(nanort_taskwait_on(&address, &bytes, 1));
}
// OmpSs-2's taskiter: 'body' (one iteration, which submits tasks) runs once while its tasks
// are recorded, then the recorded tasks run 'replays' more times, their dependences matched
// once (nanort_taskiter_end). The tasks' lambdas must be trivially copyable (captures of
// pointers and numbers): a replay repeats their bytes, and a capture that needs a destructor
// is refused (task_error). Returns once every replay has ended. Inside a final task nothing is
// recorded and 'body' runs replays + 1 times.
template <class Body>
void taskiter(std::uint64_t replays, Body &&body) {
  nanort_taskiter *iter = nullptr;
  detail::check(nanort_taskiter_begin(&iter));
  if (!iter) {
    for (std::uint64_t k = 0; k <= replays; ++k) body();
    return;
  }
  try {
    body();
  } catch (...) {
    nanort_taskiter_end(iter, 0);  // (waits for what the body made; the body's error wins)
    throw;
  }
  detail::check(nanort_taskiter_end(iter, replays));
}

// OmpSs-2's taskiter with the update clause: body(i) runs for every i in [0, iterations);
// the tasks of body(0) are recorded and run, those of each later body(i) give their lambdas
// (the same tasks on the same data, other captured values) to the recorded tasks, which are
// replayed with them (nanort_taskiter_update), their dependences matched once. Inside a
// final task every body's tasks run as usual.
template <class Body>
void taskiter_update(std::uint64_t iterations, Body &&body) {
  if (iterations == 0) return;
  nanort_taskiter *iter = nullptr;
  detail::check(nanort_taskiter_begin(&iter));
  if (!iter) {
    for (std::uint64_t i = 0; i < iterations; ++i) body(i);
    return;
  }
  try {
    body(std::uint64_t{0});
    for (std::uint64_t i = 1; i < iterations; ++i) {
      detail::check(nanort_taskiter_update(iter));
      body(i);
      // (Launched while more follow: the next body runs during this replay.)
      detail::check(i + 1 < iterations ? nanort_taskiter_launch(iter, 1)
                                       : nanort_taskiter_replay(iter, 1));
    }
  } catch (...) {
    nanort_taskiter_end(iter, 0);  // (waits for what ran; the first error wins)
    throw;
  }
  detail::check(nanort_taskiter_end(iter, 0));
}

inline int cpu_workers() { return nanort_device_count(NANORT_DEVICE_SMP); }
inline int device_count(nanort_device_kind kind) { return nanort_device_count(kind); }

}  // namespace nanort
