// C++ forms of older OmpSs programs (issue 19), each result compared with the same work done
// sequentially: private(c) of a reference parameter (the task gets its own object of the
// referenced type, OpenMP 4.5) and '#pragma omp atomic' on a type that depends on a template
// parameter, instantiated for several types.
#include <vector>

#include "check.h"

// c is the caller's variable; private(c) gives the task a fresh int, so the caller's keeps its
// value. a is shared (its dependence names it), d firstprivate.
void update(int &a, int &c, int &d) {
  #pragma omp task inout(a) private(c) firstprivate(d)
  {
    c = 40;
    d += 1;
    a += c + d;
  }
  #pragma omp taskwait
}

template <class T> T add_all(const std::vector<T> &v) {
  T total = T();
  for (size_t i = 0; i < v.size(); ++i) {
    #pragma omp task shared(total) firstprivate(i)
    {
      #pragma omp atomic
      total += v[i];
    }
  }
  #pragma omp taskwait
  return total;
}

template <class T> struct Counter {
  T hits = 0;
  void hit_many(int n) {
    for (int i = 0; i < n; ++i) {
      #pragma omp task
      {
        #pragma omp atomic
        hits++;
      }
    }
    #pragma omp taskwait
  }
};

int main() {
  int a = 1, c = 7, d = 2;
  update(a, c, d);
  CHECK(a == 1 + 40 + 3 && c == 7 && d == 2);

  std::vector<long> vl;
  std::vector<double> vd;
  long sl = 0;
  double sd = 0;
  for (int i = 0; i < 200; ++i) {
    vl.push_back(i * 3L);
    vd.push_back(i * 0.5);
    sl += i * 3L;
    sd += i * 0.5;
  }
  CHECK(add_all(vl) == sl);
  CHECK(add_all(vd) == sd); // halves: every partial sum is exact
  Counter<unsigned> k;
  k.hit_many(300);
  CHECK(k.hits == 300u);
  CHECK_DONE();
}
