// taskiter_bench: ns per task of a loop whose iterations create the same tasks, submitted
// task by task (every iteration's tasks made, their dependences matched) against recorded
// once and replayed (nanort_taskiter_begin / _end), side by side in one process.
//
//   taskiter_bench [--threads T] [--tasks N] [--width W] [--repeats R] [--quick]
//
// Patterns, W tasks per iteration, N tasks in all (N / W iterations):
//   independent  tasks with no accesses, each adds 1 to a slot of its own
//   chain        tasks inout one counter, in a chain across the iterations too
//   fan          rounds of a writer (inout src), 8 readers (in src, out dst[k]) and a join
//                (in every dst, inout acc)
//   distinct     tasks inout a slot of their own (many addresses, no order between them)
// The submitted form makes every iteration's tasks and waits once at the end (as a program
// without taskiter would); the replayed form records the first iteration and replays the
// rest, one iteration after another. Results are checked against the sequential values.
#include <nanort/nanort.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct alignas(64) Slot {
  long value = 0;
};

struct AddArgs {
  long *value;
};
void add_one(void *args) { ++*static_cast<AddArgs *>(args)->value; }
struct CopyArgs {
  const long *src;
  long *dst;
};
void copy_value(void *args) {
  auto *a = static_cast<CopyArgs *>(args);
  *a->dst = *a->src;
}
constexpr int kFan = 8;
struct JoinArgs {
  const Slot *dst;
  long *acc;
};
void join(void *args) {
  auto *a = static_cast<JoinArgs *>(args);
  for (int k = 0; k < kFan; ++k) *a->acc += a->dst[k].value;
}

constexpr nanort_task_impl impl(nanort_smp_fn fn) {
  return nanort_task_impl{NANORT_DEVICE_SMP, fn, nullptr, nullptr, nullptr, 0};
}
constexpr nanort_task_impl add_impl = impl(&add_one), copy_impl = impl(&copy_value),
                           join_impl = impl(&join);
constexpr nanort_task_site add_site{NANORT_ABI_VERSION, "add", __FILE__, __LINE__, &add_impl, 1,
                                    nullptr};
constexpr nanort_task_site copy_site{NANORT_ABI_VERSION, "copy", __FILE__, __LINE__, &copy_impl,
                                     1, nullptr};
constexpr nanort_task_site join_site{NANORT_ABI_VERSION, "join", __FILE__, __LINE__, &join_impl,
                                     1, nullptr};

void ok(nanort_status status, const char *what) {
  if (status == NANORT_SUCCESS) return;
  std::fprintf(stderr, "taskiter_bench: %s failed: %s\n", what, nanort_last_error());
  std::exit(1);
}

template <class Args>
void task(const nanort_task_site &site, const Args &args,
          std::initializer_list<std::pair<const void *, nanort_access_mode>> accesses) {
  nanort_task *t = nanort_task_create(&site, sizeof(Args));
  if (!t) ok(NANORT_ERROR_INTERNAL, "nanort_task_create");
  std::memcpy(nanort_task_args(t), &args, sizeof(Args));
  for (const auto &[address, mode] : accesses)
    ok(nanort_task_access(t, address, sizeof(long), mode), "nanort_task_access");
  ok(nanort_task_submit(t), "nanort_task_submit");
}

enum class Pattern { independent, chain, fan, distinct };
const char *name(Pattern p) {
  switch (p) {
    case Pattern::independent: return "independent";
    case Pattern::chain: return "chain";
    case Pattern::fan: return "fan";
    case Pattern::distinct: return "distinct";
  }
  return "?";
}

struct Data {
  std::vector<Slot> slots;
  Slot counter, src, acc;
  std::vector<Slot> dst = std::vector<Slot>(kFan);
};

// One iteration's tasks; returns how many it made.
long iteration(Pattern p, Data &d, long width) {
  switch (p) {
    case Pattern::independent:
      for (long i = 0; i < width; ++i) task(add_site, AddArgs{&d.slots[i].value}, {});
      return width;
    case Pattern::chain:
      for (long i = 0; i < width; ++i)
        task(add_site, AddArgs{&d.counter.value}, {{&d.counter.value, NANORT_INOUT}});
      return width;
    case Pattern::fan: {
      const long rounds = std::max(1L, width / (kFan + 2));
      for (long r = 0; r < rounds; ++r) {
        task(add_site, AddArgs{&d.src.value}, {{&d.src.value, NANORT_INOUT}});
        for (int k = 0; k < kFan; ++k)
          task(copy_site, CopyArgs{&d.src.value, &d.dst[k].value},
               {{&d.src.value, NANORT_IN}, {&d.dst[k].value, NANORT_OUT}});
        nanort_task *t = nanort_task_create(&join_site, sizeof(JoinArgs));
        const JoinArgs args{d.dst.data(), &d.acc.value};
        std::memcpy(nanort_task_args(t), &args, sizeof args);
        for (int k = 0; k < kFan; ++k)
          ok(nanort_task_access(t, &d.dst[k].value, sizeof(long), NANORT_IN), "access");
        ok(nanort_task_access(t, &d.acc.value, sizeof(long), NANORT_INOUT), "access");
        ok(nanort_task_submit(t), "nanort_task_submit");
      }
      return rounds * (kFan + 2);
    }
    case Pattern::distinct:
      for (long i = 0; i < width; ++i)
        task(add_site, AddArgs{&d.slots[i].value}, {{&d.slots[i].value, NANORT_INOUT}});
      return width;
  }
  return 0;
}

void check(Pattern p, const Data &d, long width, long iterations) {
  auto wrong = [&](const char *what, long got, long want) {
    std::fprintf(stderr, "taskiter_bench: %s: %s is %ld, expected %ld\n", name(p), what, got, want);
    std::exit(1);
  };
  switch (p) {
    case Pattern::independent:
    case Pattern::distinct:
      for (long i = 0; i < width; ++i)
        if (d.slots[i].value != iterations) wrong("a slot", d.slots[i].value, iterations);
      break;
    case Pattern::chain:
      if (d.counter.value != width * iterations) wrong("the counter", d.counter.value, width * iterations);
      break;
    case Pattern::fan: {
      const long rounds = std::max(1L, width / (kFan + 2)) * iterations;
      const long want = kFan * rounds * (rounds + 1) / 2;
      if (d.acc.value != want) wrong("the joined sum", d.acc.value, want);
      break;
    }
  }
}

// ns per task of one run of 'iterations' iterations.
double run(Pattern p, long width, long iterations, bool replayed) {
  Data d;
  d.slots.resize(static_cast<std::size_t>(width));
  long tasks = 0;
  const auto start = Clock::now();
  if (replayed) {
    nanort_taskiter *iter = nullptr;
    ok(nanort_taskiter_begin(&iter), "nanort_taskiter_begin");
    const long per = iteration(p, d, width);
    ok(nanort_taskiter_end(iter, static_cast<std::uint64_t>(iterations - 1)), "nanort_taskiter_end");
    tasks = per * iterations;
  } else {
    for (long it = 0; it < iterations; ++it) tasks += iteration(p, d, width);
    ok(nanort_taskwait(), "nanort_taskwait");
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  check(p, d, width, iterations);
  return ns / static_cast<double>(tasks);
}

long option(int argc, char **argv, const char *flag, long fallback, long low, long high) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], flag)) {
      char *end = nullptr;
      const long v = std::strtol(argv[i + 1], &end, 10);
      if (*end || v < low || v > high) {
        std::fprintf(stderr, "taskiter_bench: %s needs an integer in [%ld, %ld]\n", flag, low, high);
        std::exit(2);
      }
      return v;
    }
  return fallback;
}

}  // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("usage: %s [--threads T] [--tasks N] [--width W] [--repeats R] [--quick]\n"
                  "  (see the head of bench/taskiter_bench.cpp and bench/README.md)\n", argv[0]);
      return 0;
    }
  bool quick = false;
  for (int i = 1; i < argc; ++i) quick = quick || !std::strcmp(argv[i], "--quick");
  const long threads = option(argc, argv, "--threads", 0, 1, 1024);
  const long tasks = option(argc, argv, "--tasks", quick ? 4000 : 1000000, 1, 1L << 30);
  const long width = option(argc, argv, "--width", 1000, 10, 1L << 24);
  const long repeats = option(argc, argv, "--repeats", quick ? 1 : 5, 1, 1000);
  if (threads > 0) setenv("NANORT_CPU_WORKERS", std::to_string(threads).c_str(), 1);
  ok(nanort_init(), "nanort_init");
  const long iterations = std::max(2L, tasks / width);
  std::printf("taskiter_bench: %d CPU workers, %ld iterations of %ld tasks (fan: %ld rounds of "
              "%d readers), best of %ld\n",
              nanort_device_count(NANORT_DEVICE_SMP), iterations, width,
              std::max(1L, width / (kFan + 2)), kFan, repeats);
  std::printf("%-12s %14s %14s %10s\n", "pattern", "submitted ns", "replayed ns", "ratio");
  for (Pattern p : {Pattern::independent, Pattern::chain, Pattern::fan, Pattern::distinct}) {
    run(p, width, 2, false);  // warm: pools, allocator caches
    run(p, width, 2, true);
    double submitted = 1e300, replayed = 1e300;
    for (long r = 0; r < repeats; ++r) {  // alternated, the best of each
      submitted = std::min(submitted, run(p, width, iterations, false));
      replayed = std::min(replayed, run(p, width, iterations, true));
    }
    std::printf("%-12s %14.1f %14.1f %9.2fx\n", name(p), submitted, replayed, submitted / replayed);
  }
  ok(nanort_shutdown(), "nanort_shutdown");
  return 0;
}
