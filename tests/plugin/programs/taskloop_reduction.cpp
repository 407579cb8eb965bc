// Reductions and collapse on taskloops in C++: a function template whose reduction's type is
// the template's (OpenMP's group), a member function summing a matrix held in a
// std::vector with collapse(2) (OmpSs-2, then taskwait), a declared reduction on a class,
// a reference as the reduction variable, and in_reduction inside a taskgroup. Each result is
// compared with the same loop run in order.
#include <climits>
#include <cstddef>
#include <vector>

#include "check.h"

struct Stats {
  long count = 0;
  long total = 0;
};
#pragma omp declare reduction(merge : Stats : omp_out.count += omp_in.count, \
                                                omp_out.total += omp_in.total)

template <typename T> T sum(const std::vector<T> &v) {
  T s = T();
  #pragma omp taskloop grainsize(50) reduction(+: s)
  for (std::size_t i = 0; i < v.size(); ++i) s += v[i];
  return s;
}

class Matrix {
public:
  Matrix(int rows, int cols) : rows_(rows), cols_(cols), cells_(rows * cols) {
    for (int k = 0; k < rows * cols; ++k) cells_[k] = (k * 41) % 53 - 20;
  }
  long total() const {
    long t = 0;
    #pragma oss taskloop collapse(2) num_tasks(8) reduction(+: t)
    for (int i = 0; i < rows_; ++i)
      for (int j = 0; j < cols_; ++j) t += cells_[i * cols_ + j] * (j + 1);
    #pragma oss taskwait
    return t;
  }
  int largest() const {
    int m = INT_MIN;
    #pragma omp taskloop collapse(2) grainsize(30) reduction(max: m)
    for (int i = 0; i < rows_; ++i)
      for (int j = 0; j < cols_; ++j) m = cells_[i * cols_ + j] > m ? cells_[i * cols_ + j] : m;
    return m;
  }
  long total_in_order() const {
    long t = 0;
    for (int i = 0; i < rows_; ++i)
      for (int j = 0; j < cols_; ++j) t += cells_[i * cols_ + j] * (j + 1);
    return t;
  }
  int largest_in_order() const {
    int m = INT_MIN;
    for (int c : cells_) m = c > m ? c : m;
    return m;
  }

private:
  int rows_, cols_;
  std::vector<int> cells_;
};

static void count_even(const std::vector<int> &v, long &evens) {
  #pragma oss taskloop grainsize(64) reduction(+: evens)
  for (std::size_t i = 0; i < v.size(); ++i) evens += v[i] % 2 == 0;
  #pragma oss taskwait
}

int main() {
  std::vector<double> d(1000);
  std::vector<long> l(777);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = double(i % 10) / 4;
  for (std::size_t i = 0; i < l.size(); ++i) l[i] = long(i * i % 1001) - 400;
  double rd = 0;
  long rl = 0;
  for (double x : d) rd += x;
  for (long x : l) rl += x;
  CHECK(sum(d) == rd); // quarters: exact in any order
  CHECK(sum(l) == rl);

  Matrix m(19, 31);
  CHECK(m.total() == m.total_in_order());
  CHECK(m.largest() == m.largest_in_order());

  Stats st;
  #pragma omp taskloop num_tasks(5) reduction(merge: st)
  for (int i = 0; i < 1000; ++i) {
    st.count += i % 3 == 0;
    st.total += i % 3 == 0 ? i : 0;
  }
  long rc = 0, rt = 0;
  for (int i = 0; i < 1000; ++i) rc += i % 3 == 0, rt += i % 3 == 0 ? i : 0;
  CHECK(st.count == rc && st.total == rt);

  std::vector<int> v(500);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = int(i * 7 % 11);
  long evens = 3, revens = 3;
  count_even(v, evens);
  for (int x : v) revens += x % 2 == 0;
  CHECK(evens == revens);

  long g = 0;
  #pragma omp taskgroup task_reduction(+: g)
  {
    #pragma omp taskloop collapse(2) grainsize(7) in_reduction(+: g)
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j < 12; ++j) g += i * j;
  }
  long rg = 0;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 12; ++j) rg += i * j;
  CHECK(g == rg);
  CHECK_DONE();
}
