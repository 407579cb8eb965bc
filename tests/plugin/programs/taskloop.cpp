// taskloop in C++: a function template over a std::vector, a member function whose loop
// reads members (dependences on a member's elements), a lambda in the loop's body, size_t
// bounds with a step, a taskloop inside a task, OpenMP's group (omp) and OmpSs-2's taskwait
// (oss). Each result is compared with the same loop run in order.
#include <cstddef>
#include <cstdio>
#include <numeric>
#include <vector>

#include "check.h"

template <typename T> void axpy(T alpha, const std::vector<T> &x, std::vector<T> &y) {
  #pragma omp taskloop grainsize(100) shared(x, y)
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += alpha * x[i];
}

class Field {
public:
  explicit Field(int n) : n_(n), values_(n, 1) {}
  void relax() {
    #pragma oss taskloop grainsize(16) inout(values_[i]) in(weights_[i % 4])
    for (int i = n_ - 1; i >= 0; i -= 1) {
      if (i % 16 == 0) SLOW();
      values_[i] = values_[i] * weights_[i % 4] + i;
    }
    #pragma oss taskloop num_tasks(3) inout(values_[i])
    for (int i = 0; i < n_; ++i) values_[i] -= 1;
    #pragma oss taskwait
  }
  long sum() const { return std::accumulate(values_.begin(), values_.end(), 0L); }
  long sum_in_order() const {
    std::vector<long> v(n_, 1);
    for (int i = n_ - 1; i >= 0; i -= 1) v[i] = v[i] * weights_[i % 4] + i;
    for (int i = 0; i < n_; ++i) v[i] -= 1;
    return std::accumulate(v.begin(), v.end(), 0L);
  }

private:
  int n_;
  std::vector<long> values_;
  long weights_[4] = {2, 3, 5, 7};
};

int main() {
  std::vector<double> x(1000), y(1000, 1.0), ry(1000, 1.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(i) / 4;
  axpy(2.0, x, y);
  for (std::size_t i = 0; i < x.size(); ++i) ry[i] += 2.0 * x[i];
  CHECK(y == ry);

  Field f(200);
  f.relax();
  CHECK(f.sum() == f.sum_in_order());

  // A lambda in the body, size_t bounds with a step of 3.
  std::vector<int> squares(300, 0), rsquares(300, 0);
  auto square = [](std::size_t k) { return int(k * k % 1000); };
  #pragma omp taskloop num_tasks(6) shared(squares)
  for (std::size_t k = 1; k < squares.size(); k += 3) squares[k] = square(k);
  for (std::size_t k = 1; k < rsquares.size(); k += 3) rsquares[k] = square(k);
  CHECK(squares == rsquares);

  // A taskloop inside a task: its group ends before the task's own code goes on.
  int total = 0;
  #pragma omp task shared(total, squares)
  {
    std::vector<int> part(10, 0);
    #pragma omp taskloop grainsize(1) shared(part, squares)
    for (int k = 0; k < 10; ++k)
      for (std::size_t m = k; m < squares.size(); m += 10) part[k] += squares[m];
    total = std::accumulate(part.begin(), part.end(), 0);
  }
  #pragma omp taskwait
  CHECK(total == std::accumulate(rsquares.begin(), rsquares.end(), 0));
  CHECK_DONE();
}
