// StarPU: codelets on CPU workers only, dependences inferred by StarPU from the access modes
// of registered variable handles (implicit data dependences, sequential consistency), tasks
// submitted with starpu_task_insert and waited for with starpu_task_wait_for_all.
//
// StarPU needs every datum registered before a task may name it. Registration and
// unregistration are not timed: they are a per-datum cost that a program pays once, not a
// per-task one (README.md says so next to the numbers).
#include <starpu.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench {
namespace {

constexpr const char *kName = "starpu";

long *variable(void *buffer) {
  return reinterpret_cast<long *>(STARPU_VARIABLE_GET_PTR(buffer));
}

// Independent tasks touch no registered data: the counter comes as the task's argument
// pointer, given as is (not packed, not freed) so that StarPU pays no argument copy.
void mark_cpu(void *[], void *cl_arg) { ++*static_cast<unsigned char *>(cl_arg); }
void increment_cpu(void *buffers[], void *) { ++*variable(buffers[0]); }
void read_cpu(void *buffers[], void *) { *variable(buffers[1]) = *variable(buffers[0]); }
void join_cpu(void *buffers[], void *cl_arg) {
  // Buffers: the K reader outputs, then the accumulator.
  const int width = *static_cast<const int *>(cl_arg);
  long sum = 0;
  for (int k = 0; k < width; ++k) sum += *variable(buffers[k]);
  *variable(buffers[width]) += sum;
}

struct Codelets {
  starpu_codelet mark{}, increment{}, read{}, join{};
  Codelets() {
    // No performance model: eager needs none, and a model would mean calibration runs.
    mark.cpu_funcs[0] = &mark_cpu;
    mark.nbuffers = 0;
    mark.name = "mark";
    increment.cpu_funcs[0] = &increment_cpu;
    increment.nbuffers = 1;
    increment.modes[0] = STARPU_RW;
    increment.name = "increment";
    read.cpu_funcs[0] = &read_cpu;
    read.nbuffers = 2;
    read.modes[0] = STARPU_R;
    read.modes[1] = STARPU_W;
    read.name = "fan reader";
    // K + 1 buffers may exceed STARPU_NMAXBUFS (8 in Debian's build): a variable count,
    // with modes given per task.
    join.cpu_funcs[0] = &join_cpu;
    join.nbuffers = STARPU_VARIABLE_NBUFFERS;
    join.name = "fan join";
  }
};
Codelets *codelets = nullptr;

void submitted(int status, const char *what) {
  if (status != 0) fail(kName, (std::string(what) + " failed: " + std::to_string(status)).c_str());
}

starpu_data_handle_t register_long(long *value) {
  starpu_data_handle_t handle;
  starpu_variable_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(value),
                                sizeof(long));
  return handle;
}

double run_independent(const Params &params) {
  std::vector<unsigned char> marks(static_cast<std::size_t>(params.tasks), 0);
  const auto start = Clock::now();
  for (long i = 0; i < params.tasks; ++i)
    submitted(starpu_task_insert(&codelets->mark, STARPU_CL_ARGS_NFREE, &marks[i],
                                 sizeof(unsigned char), 0),
              "starpu_task_insert");
  submitted(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
  const double seconds = seconds_since(start);
  check_all_ones(marks.data(), params.tasks, kName, Pattern::independent);
  return seconds;
}

double run_chain(const Params &params) {
  Slot counter;
  starpu_data_handle_t handle = register_long(&counter.value);
  const auto start = Clock::now();
  for (long i = 0; i < params.tasks; ++i)
    submitted(starpu_task_insert(&codelets->increment, STARPU_RW, handle, 0),
              "starpu_task_insert");
  submitted(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
  const double seconds = seconds_since(start);
  starpu_data_unregister(handle);
  check(counter.value == params.tasks, kName, Pattern::chain, "the counter", counter.value,
        params.tasks);
  return seconds;
}

double run_fan(const Params &params) {
  int width = params.fan_width;
  const long rounds = fan_rounds(params);
  Slot src, acc;
  std::vector<Slot> dst(static_cast<std::size_t>(width));
  starpu_data_handle_t src_handle = register_long(&src.value);
  starpu_data_handle_t acc_handle = register_long(&acc.value);
  std::vector<starpu_data_handle_t> dst_handles;
  for (Slot &slot : dst) dst_handles.push_back(register_long(&slot.value));
  std::vector<starpu_data_descr> join_buffers;
  for (starpu_data_handle_t handle : dst_handles) join_buffers.push_back({handle, STARPU_R});
  join_buffers.push_back({acc_handle, STARPU_RW});

  const auto start = Clock::now();
  for (long r = 0; r < rounds; ++r) {
    submitted(starpu_task_insert(&codelets->increment, STARPU_RW, src_handle, 0),
              "starpu_task_insert");
    for (int k = 0; k < width; ++k)
      submitted(starpu_task_insert(&codelets->read, STARPU_R, src_handle, STARPU_W,
                                   dst_handles[k], 0),
                "starpu_task_insert");
    submitted(starpu_task_insert(&codelets->join, STARPU_DATA_MODE_ARRAY, join_buffers.data(),
                                 static_cast<int>(join_buffers.size()), STARPU_CL_ARGS_NFREE,
                                 &width, sizeof(width), 0),
              "starpu_task_insert");
  }
  submitted(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
  const double seconds = seconds_since(start);

  starpu_data_unregister(src_handle);
  starpu_data_unregister(acc_handle);
  for (starpu_data_handle_t handle : dst_handles) starpu_data_unregister(handle);
  check(acc.value == fan_expected_sum(params), kName, Pattern::fan, "the joined sum", acc.value,
        fan_expected_sum(params));
  return seconds;
}

double run_distinct(const Params &params) {
  std::vector<long> values(static_cast<std::size_t>(params.tasks), 0);
  std::vector<starpu_data_handle_t> handles;
  handles.reserve(values.size());
  for (long &value : values) handles.push_back(register_long(&value));
  const auto start = Clock::now();
  for (starpu_data_handle_t handle : handles)
    submitted(starpu_task_insert(&codelets->increment, STARPU_RW, handle, 0),
              "starpu_task_insert");
  submitted(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
  const double seconds = seconds_since(start);
  for (starpu_data_handle_t handle : handles) starpu_data_unregister(handle);
  check_all_ones(values.data(), params.tasks, kName, Pattern::distinct);
  return seconds;
}

std::string description;

int start(const Params &params) {
  // Quiet, CPU workers only, and a scheduler that needs no performance model (so no
  // calibration runs and no model files in the timings). A value the user exported wins,
  // except the worker count, asked to match the other systems: StarPU starts as many as its
  // build allows (STARPU_MAXCPUS, 4 in Debian's), and the benchmark reports what it got.
  setenv("STARPU_SILENT", "1", 0);
  setenv("STARPU_SCHED", "eager", 0);
  setenv("STARPU_CALIBRATE", "0", 0);
  setenv("STARPU_NCPU", std::to_string(params.threads).c_str(), 1);
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = params.threads;
  conf.ncuda = 0;
  conf.nopencl = 0;
  conf.nmic = 0;
  conf.nmpi_ms = 0;
  if (starpu_init(&conf) != 0) fail(kName, "starpu_init failed");
  codelets = new Codelets();

  // Context 0 is the global one, which every worker belongs to.
  const starpu_sched_policy *policy = starpu_sched_ctx_get_sched_policy(0);
  const unsigned workers = starpu_cpu_worker_get_count();
  description = "StarPU " + std::to_string(STARPU_MAJOR_VERSION) + "." +
                std::to_string(STARPU_MINOR_VERSION) + "." +
                std::to_string(STARPU_RELEASE_VERSION) + ": scheduler " +
                (policy && policy->policy_name ? policy->policy_name : "?") + ", " +
                std::to_string(workers) +
                " CPU workers plus the submitting main thread, no CUDA/OpenCL workers";
  if (workers != static_cast<unsigned>(params.threads))
    description += " (asked for " + std::to_string(params.threads) + "; this build allows at most " +
                   std::to_string(STARPU_MAXCPUS) + ")";
  return static_cast<int>(workers);
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

void stop() {
  starpu_shutdown();
  delete codelets;
  codelets = nullptr;
}

const char *describe() { return description.c_str(); }

}  // namespace

System starpu_system() { return {kName, true, &start, &run, &stop, &describe}; }

}  // namespace bench
