// The data environment of a task lives until its children are done (OmpSs-2; issue 19), in
// C++: an outer task's private std::vector and an object with a destructor are shared by an
// inner task that the outer does not wait for. The object's destructor must run after the
// inner task has ended (not when the outer body returns), once per task. Each result is
// compared with the sequential run.
#include <atomic>
#include <cstdio>
#include <vector>

#include "check.h"

constexpr int kOuter = 12;
std::atomic<int> inner_done[kOuter];
std::atomic<int> destroyed{0}, destroyed_early{0};

struct Tracker {
  int k = -1; // -1: not a task's copy
  long value = 0;
  ~Tracker() {
    if (k < 0)
      return;
    if (!inner_done[k].load())
      ++destroyed_early;
    ++destroyed;
  }
};

static void make_tasks(std::vector<long> &results) {
  Tracker t;
  std::vector<int> v;
  for (int k = 0; k < kOuter; ++k) {
    #pragma oss task private(t, v) shared(results)
    {
      t.k = k;
      v.assign(100, k);
      #pragma oss task shared(t, v, results)
      {
        SLOW();
        long sum = 0;
        for (int x : v)
          sum += x;
        v.push_back(1);
        t.value = sum + static_cast<long>(v.size());
        results[k] = t.value;
        inner_done[k] = 1;
      }
    }
  }
}

// A task whose statement is an atomic construct, and one whose statement is a critical one.
static void accumulate(const std::vector<int> &v, int &atomic_sum, long &critical_sum) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    #pragma omp task shared(v, atomic_sum) firstprivate(i)
    #pragma omp atomic
    atomic_sum += v[i];
    #pragma oss task shared(v, critical_sum) firstprivate(i)
    #pragma oss critical
    critical_sum += 2L * v[i];
  }
}

int main() {
  std::vector<long> results(kOuter);
  make_tasks(results);
  std::vector<int> v(200);
  for (int i = 0; i < 200; ++i)
    v[i] = i * 3 - 7;
  int atomic_sum = 0;
  long critical_sum = 0;
  accumulate(v, atomic_sum, critical_sum);
  #pragma oss taskwait
  for (int k = 0; k < kOuter; ++k)
    CHECK(results[k] == 100L * k + 101);
  CHECK(destroyed.load() == kOuter);
  CHECK(destroyed_early.load() == 0);
  int expect_atomic = 0;
  long expect_critical = 0;
  for (int x : v) {
    expect_atomic += x;
    expect_critical += 2L * x;
  }
  CHECK(atomic_sum == expect_atomic);
  CHECK(critical_sum == expect_critical);
  CHECK_DONE();
}
