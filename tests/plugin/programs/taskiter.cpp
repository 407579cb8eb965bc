// taskiter and taskgraph in C++: a member function and a function template whose loops are
// taskiters (unroll(2) over swapped std::vector storage, again with update and a source that
// grows with the step, a while loop on a residual), a taskgraph in a member function, a
// refused task's exception out of a taskiter and a thrown exception out of an updated one, the
// same task not replayable in a taskgraph;
// each result compared with the same loop run in order.
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"

template <class T> struct Grid {
  std::vector<T> a, b;
  explicit Grid(int n) : a(n), b(n) {
    for (int i = 0; i < n; ++i) a[i] = b[i] = static_cast<T>((i * 13) % 7);
  }
  // 'steps' smoothing steps over 4 blocks; the result in a.
  void run(int steps) {
    const int n = static_cast<int>(a.size()), bs = n / 4;
    T *from = a.data(), *to = b.data();
    #pragma oss taskiter unroll(2)
    for (int s = 0; s < steps; ++s) {
      for (int k = 0; k < 4; ++k) {
        const int lo = k * bs;
        #pragma oss task in(from[0;n]) out(to[lo;bs])
        for (int i = lo; i < lo + bs; ++i)
          to[i] = (i == 0 || i == n - 1) ? from[i] : (from[i - 1] + 2 * from[i] + from[i + 1]) / 4;
      }
      T *t = from;
      from = to;
      to = t;
    }
    #pragma oss taskwait
    if (from != a.data()) a.swap(b);
  }
  // The same with a source that grows with the step: 'update', so every step's body runs and
  // its tasks carry their own step.
  void run_with_source(int steps) {
    const int n = static_cast<int>(a.size()), bs = n / 4;
    T *from = a.data(), *to = b.data();
    #pragma oss taskiter unroll(2) update
    for (int s = 0; s < steps; ++s) {
      for (int k = 0; k < 4; ++k) {
        const int lo = k * bs;
        const T source = static_cast<T>(s) / 2;
        #pragma oss task in(from[0;n]) out(to[lo;bs]) firstprivate(source)
        for (int i = lo; i < lo + bs; ++i)
          to[i] = ((i == 0 || i == n - 1) ? from[i]
                                          : (from[i - 1] + 2 * from[i] + from[i + 1]) / 4) +
                  (i == n / 2 ? source : T(0));
      }
      T *t = from;
      from = to;
      to = t;
    }
    #pragma oss taskwait
    if (from != a.data()) a.swap(b);
  }
};

template <class T> int halve_until(T &value, T limit) {
  int rounds = 0;
  #pragma oss taskiter
  while (value > limit) {
    #pragma oss task inout(value, rounds)
    {
      value /= 2;
      ++rounds;
    }
  }
  #pragma oss taskwait
  return rounds;
}

struct Counter {
  long total = 0;
  void add(long delta, int again) {
    #pragma omp taskgraph graph_reset(again)
    {
      #pragma omp task depend(inout: total) firstprivate(delta)
      total += delta;
    }
  }
};

int main() {
  for (int steps : {0, 1, 3, 8, 9}) {
    Grid<double> g(64), ref(64);
    g.run(steps);
    for (int s = 0; s < steps; ++s) {
      for (int i = 0; i < 64; ++i)
        ref.b[i] = (i == 0 || i == 63) ? ref.a[i]
                                       : (ref.a[i - 1] + 2 * ref.a[i] + ref.a[i + 1]) / 4;
      ref.a.swap(ref.b);
    }
    CHECK(g.a == ref.a);
  }
  for (int steps : {1, 2, 4, 7, 10}) {
    Grid<double> g(64), ref(64);
    g.run_with_source(steps);
    for (int s = 0; s < steps; ++s) {
      for (int i = 0; i < 64; ++i)
        ref.b[i] = ((i == 0 || i == 63) ? ref.a[i]
                                        : (ref.a[i - 1] + 2 * ref.a[i] + ref.a[i + 1]) / 4) +
                   (i == 32 ? static_cast<double>(s) / 2 : 0.0);
      ref.a.swap(ref.b);
    }
    CHECK(g.a == ref.a);
  }
  // An exception out of an updated iteration's body: the taskiter ends with it (the update
  // under way is dropped), and the iterations before it have run.
  long counted = 0;
  try {
    #pragma oss taskiter update
    for (int i = 0; i < 6; ++i) {
      #pragma oss task inout(counted) firstprivate(i)
      counted += i + 1;
      if (i == 3) throw std::runtime_error("stopped at 3");
    }
  } catch (const std::runtime_error &) {
  }
  #pragma oss taskwait
  CHECK(counted == 1 + 2 + 3);
  double v = 1000;
  float f = 100;
  CHECK(halve_until(v, 1.0) == 10 && v < 1.0);
  CHECK(halve_until(f, 3.0f) == 6);
  Counter c;
  c.add(5, 0);  // records
  c.add(7, 0);  // replays +5
  c.add(1, 1);  // records again
  c.add(9, 0);  // replays +1
  CHECK(c.total == 12);
  // A task a replay cannot repeat (a capture with a destructor): the error leaves the loop as
  // an exception, and the recording ends with it (the taskwait after it is not refused).
  std::vector<int> weights(4, 2);
  int sum = 0;
  bool refused = false;
  try {
    #pragma oss taskiter
    for (int i = 0; i < 3; ++i) {
      #pragma oss task inout(sum) firstprivate(weights)
      sum += weights[0];
    }
  } catch (const std::exception &e) {
    refused = std::string(e.what()).find("destructor") != std::string::npos;
  }
  #pragma oss taskwait
  CHECK(refused && sum == 0);
  // The same task, not replayable: it runs with the recorded iteration only (OpenMP 6.0's
  // replayable(false), here in a taskgraph with a name kept in a std::string).
  std::vector<std::string> log;
  long steps = 0;
  for (int e = 0; e < 3; ++e) {
    #pragma omp taskgraph
    {
      #pragma omp task depend(inout: steps)
      steps += 1;
      std::string entry = "recorded at encounter " + std::to_string(e);
      #pragma omp task depend(in: steps) depend(inout: log) firstprivate(entry) replayable(false)
      log.push_back(entry);
    }
  }
  #pragma omp taskwait
  CHECK(steps == 3 && log.size() == 1 && log[0] == "recorded at encounter 0");
  CHECK_DONE();
}
