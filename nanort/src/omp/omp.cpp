// libnanort-omp: the OpenMP routines of include/nanort/omp/omp.h, answered by nanort through
// its C ABI. A library of its own, linked by nanocc / nanocxx and nanort_annotate only: a
// program or benchmark that links libnanort and an OpenMP runtime (libgomp) keeps that
// runtime's routines. Semantics: the header's comment and pragma-plugin/README.md.
#include <nanort/nanort.h>
#include <omp.h>

#include <dlfcn.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

// The routines of another OpenMP runtime (libgomp, libomp) that comes after this library in
// the program's lookup order, found once. When there is one, every routine hands its calls to
// it: parallel regions of code built with -fopenmp (the program's or a library's) call these
// routines too and need that runtime's answers. (A runtime that comes before this library is
// found by the program directly.)
struct Other {
  bool present = false;
  void (*set_num_threads)(int) = nullptr;
  int (*get_num_threads)() = nullptr;
  int (*get_max_threads)() = nullptr;
  int (*get_thread_num)() = nullptr;
  int (*get_thread_limit)() = nullptr;
  int (*get_num_procs)() = nullptr;
  int (*in_parallel)() = nullptr;
  int (*in_final)() = nullptr;
  int (*get_level)() = nullptr;
  int (*get_active_level)() = nullptr;
  void (*set_dynamic)(int) = nullptr;
  int (*get_dynamic)() = nullptr;
  void (*set_nested)(int) = nullptr;
  int (*get_nested)() = nullptr;
  double (*get_wtime)() = nullptr;
  double (*get_wtick)() = nullptr;
  // The locks all come from one runtime: the other one's when it has them all.
  void (*init_lock)(omp_lock_t *) = nullptr;
  void (*destroy_lock)(omp_lock_t *) = nullptr;
  void (*set_lock)(omp_lock_t *) = nullptr;
  void (*unset_lock)(omp_lock_t *) = nullptr;
  int (*test_lock)(omp_lock_t *) = nullptr;
  void (*init_nest_lock)(omp_nest_lock_t *) = nullptr;
  void (*destroy_nest_lock)(omp_nest_lock_t *) = nullptr;
  void (*set_nest_lock)(omp_nest_lock_t *) = nullptr;
  void (*unset_nest_lock)(omp_nest_lock_t *) = nullptr;
  int (*test_nest_lock)(omp_nest_lock_t *) = nullptr;
};

template <class F>
void look_up(F &slot, const char *name) {
  slot = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

const Other &other() {
  static const Other found = [] {
    Other o;
    look_up(o.get_thread_num, "omp_get_thread_num");
    if (!o.get_thread_num) return o;
    o.present = true;
    look_up(o.set_num_threads, "omp_set_num_threads");
    look_up(o.get_num_threads, "omp_get_num_threads");
    look_up(o.get_max_threads, "omp_get_max_threads");
    look_up(o.get_thread_limit, "omp_get_thread_limit");
    look_up(o.get_num_procs, "omp_get_num_procs");
    look_up(o.in_parallel, "omp_in_parallel");
    look_up(o.in_final, "omp_in_final");
    look_up(o.get_level, "omp_get_level");
    look_up(o.get_active_level, "omp_get_active_level");
    look_up(o.set_dynamic, "omp_set_dynamic");
    look_up(o.get_dynamic, "omp_get_dynamic");
    look_up(o.set_nested, "omp_set_nested");
    look_up(o.get_nested, "omp_get_nested");
    look_up(o.get_wtime, "omp_get_wtime");
    look_up(o.get_wtick, "omp_get_wtick");
    look_up(o.init_lock, "omp_init_lock");
    look_up(o.destroy_lock, "omp_destroy_lock");
    look_up(o.set_lock, "omp_set_lock");
    look_up(o.unset_lock, "omp_unset_lock");
    look_up(o.test_lock, "omp_test_lock");
    look_up(o.init_nest_lock, "omp_init_nest_lock");
    look_up(o.destroy_nest_lock, "omp_destroy_nest_lock");
    look_up(o.set_nest_lock, "omp_set_nest_lock");
    look_up(o.unset_nest_lock, "omp_unset_nest_lock");
    look_up(o.test_nest_lock, "omp_test_nest_lock");
    const bool all_locks = o.init_lock && o.destroy_lock && o.set_lock && o.unset_lock &&
                           o.test_lock && o.init_nest_lock && o.destroy_nest_lock &&
                           o.set_nest_lock && o.unset_nest_lock && o.test_nest_lock;
    if (!all_locks) {
      o.init_lock = nullptr;
      o.init_nest_lock = nullptr;
    }
    return o;
  }();
  return found;
}

// The team: nanort's CPU workers.
int team_size() {
  const int n = nanort_device_count(NANORT_DEVICE_SMP);
  return n > 0 ? n : 1;
}

double seconds(const timespec &t) { return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9; }

// Locks: the word holds its owner (the address of a thread-local), null when free. A thread
// that waits inside a task gives its CPU worker to other tasks meanwhile.
thread_local char owner_token;
void *me() { return &owner_token; }

std::atomic_ref<void *> word(void *&storage) { return std::atomic_ref<void *>(storage); }

bool try_take(void *&storage) {
  void *expected = nullptr;
  return word(storage).compare_exchange_strong(expected, me(), std::memory_order_acquire,
                                               std::memory_order_relaxed);
}

int try_take_for_wait(void *storage) { return try_take(*static_cast<void **>(storage)) ? 1 : 0; }

void take(void *&storage) {
  for (int spins = 0; spins < 64; ++spins) {
    if (try_take(storage)) return;
    std::this_thread::yield();
  }
  if (nanort_block_until(&try_take_for_wait, &storage) != NANORT_SUCCESS)
    while (!try_take(storage)) std::this_thread::yield();
}

void release(void *&storage) { word(storage).store(nullptr, std::memory_order_release); }

// A nest lock: _lk[0] its owner, _lk[1] the owner's count (read and written by the owner).
std::uintptr_t count(const omp_nest_lock_t *lock) {
  return reinterpret_cast<std::uintptr_t>(lock->_lk[1]);
}
void set_count(omp_nest_lock_t *lock, std::uintptr_t n) {
  lock->_lk[1] = reinterpret_cast<void *>(n);
}
bool owns(omp_nest_lock_t *lock) {
  return word(lock->_lk[0]).load(std::memory_order_relaxed) == me();
}

}  // namespace

extern "C" {

void omp_set_num_threads(int num_threads) {
  if (other().set_num_threads) return other().set_num_threads(num_threads);
  if (num_threads < 1) return;  // OpenMP asks for a positive number
  if (num_threads > 4096) num_threads = 4096;
  setenv("NANORT_CPU_WORKERS", std::to_string(num_threads).c_str(), 1);
}

int omp_get_num_threads(void) {
  if (other().get_num_threads) return other().get_num_threads();
  return team_size();
}

int omp_get_max_threads(void) {
  if (other().get_max_threads) return other().get_max_threads();
  return team_size();
}

int omp_get_thread_num(void) {
  if (other().present) return other().get_thread_num();
  const int worker = nanort_current_worker();
  return worker >= 0 ? worker : team_size() - 1;
}

int omp_get_thread_limit(void) {
  if (other().get_thread_limit) return other().get_thread_limit();
  return team_size();
}

int omp_get_num_procs(void) {
  if (other().get_num_procs) return other().get_num_procs();
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

int omp_in_parallel(void) {
  if (other().in_parallel) return other().in_parallel();
  return team_size() > 1 ? 1 : 0;
}

int omp_in_final(void) {
  if (other().in_final) return other().in_final();
  return nanort_in_final();
}

int omp_get_level(void) {
  if (other().get_level) return other().get_level();
  return 0;
}

int omp_get_active_level(void) {
  if (other().get_active_level) return other().get_active_level();
  return 0;
}

void omp_set_dynamic(int dynamic_threads) {
  if (other().set_dynamic) other().set_dynamic(dynamic_threads);
}

int omp_get_dynamic(void) {
  if (other().get_dynamic) return other().get_dynamic();
  return 0;
}

void omp_set_nested(int nested) {
  if (other().set_nested) other().set_nested(nested);
}

int omp_get_nested(void) {
  if (other().get_nested) return other().get_nested();
  return 0;
}

double omp_get_wtime(void) {
  if (other().get_wtime) return other().get_wtime();
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return seconds(now);
}

double omp_get_wtick(void) {
  if (other().get_wtick) return other().get_wtick();
  timespec tick{};
  clock_getres(CLOCK_MONOTONIC, &tick);
  return seconds(tick);
}

void omp_init_lock(omp_lock_t *lock) {
  if (other().init_lock) return other().init_lock(lock);
  lock->_lk = nullptr;
}

void omp_destroy_lock(omp_lock_t *lock) {
  if (other().init_lock) return other().destroy_lock(lock);
  lock->_lk = nullptr;
}

void omp_set_lock(omp_lock_t *lock) {
  if (other().init_lock) return other().set_lock(lock);
  take(lock->_lk);
}

void omp_unset_lock(omp_lock_t *lock) {
  if (other().init_lock) return other().unset_lock(lock);
  release(lock->_lk);
}

int omp_test_lock(omp_lock_t *lock) {
  if (other().init_lock) return other().test_lock(lock);
  return try_take(lock->_lk) ? 1 : 0;
}

void omp_init_nest_lock(omp_nest_lock_t *lock) {
  if (other().init_nest_lock) return other().init_nest_lock(lock);
  lock->_lk[0] = nullptr;
  set_count(lock, 0);
}

void omp_destroy_nest_lock(omp_nest_lock_t *lock) {
  if (other().init_nest_lock) return other().destroy_nest_lock(lock);
  omp_init_nest_lock(lock);
}

void omp_set_nest_lock(omp_nest_lock_t *lock) {
  if (other().init_nest_lock) return other().set_nest_lock(lock);
  if (!owns(lock)) take(lock->_lk[0]);
  set_count(lock, count(lock) + 1);
}

void omp_unset_nest_lock(omp_nest_lock_t *lock) {
  if (other().init_nest_lock) return other().unset_nest_lock(lock);
  const std::uintptr_t left = count(lock) - 1;
  set_count(lock, left);
  if (left == 0) release(lock->_lk[0]);
}

int omp_test_nest_lock(omp_nest_lock_t *lock) {
  if (other().init_nest_lock) return other().test_nest_lock(lock);
  if (!owns(lock) && !try_take(lock->_lk[0])) return 0;
  set_count(lock, count(lock) + 1);
  return static_cast<int>(count(lock));
}

}  // extern "C"
