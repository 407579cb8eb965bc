// nanort through its C ABI, the way the pragma plugin lowers a task pragma: one static site
// per pragma with one smp implementation, then create / copy the argument block / name the
// accesses / submit, and nanort_taskwait() at the end.
#include <nanort/nanort.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench {
namespace {

constexpr const char *kName = "nanort";

// --- Task bodies and their argument blocks --------------------------------------------------

struct MarkArgs {
  unsigned char *mark;
};
void mark_body(void *args) { ++*static_cast<MarkArgs *>(args)->mark; }

struct IncrementArgs {
  long *value;
};
void increment_body(void *args) { ++*static_cast<IncrementArgs *>(args)->value; }

struct ReadArgs {
  const long *src;
  long *dst;
};
void read_body(void *args) {
  auto *a = static_cast<ReadArgs *>(args);
  *a->dst = *a->src;
}

struct JoinArgs {
  const Slot *dst;
  int width;
  long *acc;
};
void join_body(void *args) {
  auto *a = static_cast<JoinArgs *>(args);
  long sum = 0;
  for (int k = 0; k < a->width; ++k) sum += a->dst[k].value;
  *a->acc += sum;
}

// --- Sites: what the plugin emits once per pragma (static storage) ---------------------------

constexpr nanort_task_impl smp_impl(nanort_smp_fn fn) {
  return nanort_task_impl{NANORT_DEVICE_SMP, fn, nullptr, nullptr, nullptr, 0};
}
constexpr nanort_task_impl mark_impl = smp_impl(&mark_body);
constexpr nanort_task_impl increment_impl = smp_impl(&increment_body);
constexpr nanort_task_impl read_impl = smp_impl(&read_body);
constexpr nanort_task_impl join_impl = smp_impl(&join_body);

constexpr nanort_task_site make_site(const char *label, int line, const nanort_task_impl *impl) {
  return nanort_task_site{NANORT_ABI_VERSION, label, __FILE__, line, impl, 1, nullptr};
}
constexpr nanort_task_site mark_site = make_site("mark", __LINE__, &mark_impl);
constexpr nanort_task_site increment_site = make_site("increment", __LINE__, &increment_impl);
constexpr nanort_task_site read_site = make_site("fan reader", __LINE__, &read_impl);
constexpr nanort_task_site join_site = make_site("fan join", __LINE__, &join_impl);

// --- The calls, checked: a failed call would make the timing meaningless ---------------------

void ok(nanort_status status, const char *call) {
  if (status == NANORT_SUCCESS) return;
  std::string message = std::string(call) + " failed: " + nanort_status_string(status) + ": " +
                        nanort_last_error();
  fail(kName, message.c_str());
}

template <class Args>
nanort_task *create(const nanort_task_site &site, const Args &args) {
  nanort_task *task = nanort_task_create(&site, sizeof(Args));
  if (!task) fail(kName, nanort_last_error());
  std::memcpy(nanort_task_args(task), &args, sizeof(Args));
  return task;
}

void access(nanort_task *task, const void *address, std::size_t size, nanort_access_mode mode) {
  ok(nanort_task_access(task, address, size, mode), "nanort_task_access");
}

void submit(nanort_task *task) { ok(nanort_task_submit(task), "nanort_task_submit"); }

// --- Patterns ---------------------------------------------------------------------------------

double run_independent(const Params &params) {
  std::vector<unsigned char> marks(static_cast<std::size_t>(params.tasks), 0);
  const auto start = Clock::now();
  for (long i = 0; i < params.tasks; ++i) submit(create(mark_site, MarkArgs{&marks[i]}));
  ok(nanort_taskwait(), "nanort_taskwait");
  const double seconds = seconds_since(start);
  check_all_ones(marks.data(), params.tasks, kName, Pattern::independent);
  return seconds;
}

double run_chain(const Params &params) {
  Slot counter;
  const auto start = Clock::now();
  for (long i = 0; i < params.tasks; ++i) {
    nanort_task *task = create(increment_site, IncrementArgs{&counter.value});
    access(task, &counter.value, sizeof(long), NANORT_INOUT);
    submit(task);
  }
  ok(nanort_taskwait(), "nanort_taskwait");
  const double seconds = seconds_since(start);
  check(counter.value == params.tasks, kName, Pattern::chain, "the counter", counter.value,
        params.tasks);
  return seconds;
}

double run_fan(const Params &params) {
  const int width = params.fan_width;
  Slot src, acc;
  std::vector<Slot> dst(static_cast<std::size_t>(width));
  const long rounds = fan_rounds(params);
  const auto start = Clock::now();
  for (long r = 0; r < rounds; ++r) {
    nanort_task *writer = create(increment_site, IncrementArgs{&src.value});
    access(writer, &src.value, sizeof(long), NANORT_INOUT);
    submit(writer);
    for (int k = 0; k < width; ++k) {
      nanort_task *reader = create(read_site, ReadArgs{&src.value, &dst[k].value});
      access(reader, &src.value, sizeof(long), NANORT_IN);
      access(reader, &dst[k].value, sizeof(long), NANORT_OUT);
      submit(reader);
    }
    nanort_task *join = create(join_site, JoinArgs{dst.data(), width, &acc.value});
    for (int k = 0; k < width; ++k) access(join, &dst[k].value, sizeof(long), NANORT_IN);
    access(join, &acc.value, sizeof(long), NANORT_INOUT);
    submit(join);
  }
  ok(nanort_taskwait(), "nanort_taskwait");
  const double seconds = seconds_since(start);
  check(acc.value == fan_expected_sum(params), kName, Pattern::fan, "the joined sum", acc.value,
        fan_expected_sum(params));
  return seconds;
}

double run_distinct(const Params &params) {
  // Plain longs, packed: the point is many distinct addresses, as in a blocked array.
  std::vector<long> values(static_cast<std::size_t>(params.tasks), 0);
  const auto start = Clock::now();
  for (long i = 0; i < params.tasks; ++i) {
    nanort_task *task = create(increment_site, IncrementArgs{&values[i]});
    access(task, &values[i], sizeof(long), NANORT_INOUT);
    submit(task);
  }
  ok(nanort_taskwait(), "nanort_taskwait");
  const double seconds = seconds_since(start);
  check_all_ones(values.data(), params.tasks, kName, Pattern::distinct);
  return seconds;
}

std::string description;

int start(const Params &params) {
  // The runtime reads its worker count once, at its first call.
  setenv("NANORT_CPU_WORKERS", std::to_string(params.threads).c_str(), 1);
  ok(nanort_init(), "nanort_init");
  const int workers = nanort_device_count(NANORT_DEVICE_SMP);
  if (workers != params.threads) fail(kName, "the runtime did not start the workers asked for");
  description = std::string("nanort ") + nanort_version_string() + ": " +
                std::to_string(workers) + " CPU workers (the submitting thread is one of them " +
                "while it waits), C ABI, one static site per pattern";
  return workers;
}

double run(Pattern pattern, const Params &params) {
  switch (pattern) {
    case Pattern::independent: return run_independent(params);
    case Pattern::chain: return run_chain(params);
    case Pattern::fan: return run_fan(params);
    case Pattern::distinct: return run_distinct(params);
  }
  return 0;
}

// Its workers (threads of a TBB arena) go away before the next system runs, TBB's included.
// The runtime does not start again after this; the benchmark does not need it to.
void stop() { ok(nanort_shutdown(), "nanort_shutdown"); }

const char *describe() { return description.c_str(); }

}  // namespace

System nanort_system() { return {kName, true, &start, &run, &stop, &describe}; }

}  // namespace bench
