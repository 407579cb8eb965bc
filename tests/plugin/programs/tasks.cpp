// Function and inline tasks in C++: namespaces, extern "C", class-type and reference
// parameters, captures of class-type variables and arrays, nested tasks, static locals.
#include "check.h"

#include <numeric>
#include <string>
#include <vector>

namespace blas {
#pragma omp task in([n]x) inout([n]y)
void axpy(int n, double a, const double *x, double *y) {
  SLOW();
  for (int i = 0; i < n; ++i) y[i] += a * x[i];
}
} // namespace blas

extern "C" {
#pragma oss task out(*r)
void twice(int v, int *r) { *r = 2 * v; }
}

// A class-type parameter is copied into the task at the call.
#pragma omp task out(*out)
static void join(std::vector<std::string> parts, std::string *out) {
  SLOW();
  std::string s;
  for (const std::string &p : parts) s += p;
  *out = s;
}

// A reference parameter is shared (the caller keeps the object alive until taskwait).
#pragma omp task inout(total)
void add_to(long &total, long v) { total += v; }

// Function templates: each instantiation is a task.
#pragma omp task inout([n]x)
template <class T>
void scale(int n, T *x, T f) {
  SLOW();
  for (int i = 0; i < n; ++i) x[i] *= f;
}
#pragma omp task in([N]x) out(*sum)
template <class T, int N>
static void sum_all(const T *x, T *sum) {
  T s = 0;
  for (int i = 0; i < N; ++i) s += x[i];
  *sum = s;
}

// Inline tasks inside a function template, capturing a lambda (a type local to the function).
template <class T>
T apply_twice(T v) {
  T r{};
  auto f = [](T x) { return x + x; };
  #pragma omp task out(r)
  {
    SLOW();
    r = f(f(v));
  }
  #pragma omp taskwait
  return r;
}

// Inline tasks in member functions: 'this' and members, explicit and implicit, nested.
class Grid {
public:
  explicit Grid(int n) : data_(n, 1.0) {}
  void scale(double f) {
    double *d = data_.data();
    int n = size();
    #pragma omp task inout([n]d)
    {
      SLOW();
      for (int i = 0; i < size(); ++i) data_[i] *= f * factor_;
      this->updates_++;
      #pragma omp task shared(d)
      updates_ += 10;
      #pragma omp taskwait
    }
  }
  double sum();
  int size() const { return (int)data_.size(); }
  int updates() const { return updates_; }

private:
  std::vector<double> data_;
  double factor_ = 2.0;
  int updates_ = 0;
};

double Grid::sum() {
  double s = 0;
  const double *d = data_.data();
  int n = size();
  #pragma omp task in([n]d) out(s)
  for (int i = 0; i < n; ++i) s += data_[i];
  #pragma omp taskwait
  return s;
}

template <class T>
struct Box {
  T v{};
  void add(T x) {
    #pragma omp task inout(v)
    v += x;
    #pragma omp taskwait
  }
};

// Member functions as tasks: in the class, out of it, const, static, of a class template.
class Account {
public:
  #pragma omp task inout(balance_) label(deposit)
  void deposit(long v) {
    SLOW();
    balance_ += v;
  }
  #pragma omp task in(balance_) out(*out)
  void read(long *out) const;
  #pragma omp task out(*out)
  static void twice(long v, long *out) { *out = 2 * v; }

private:
  long balance_ = 0;
};
void Account::read(long *out) const { *out = balance_; }

template <class T>
struct Cell {
  T x = 0;
  #pragma omp task inout(x)
  void add(T d) { x += d; }
};

int counter_calls() {
  static int calls = 0; // static locals are shared with inline tasks
  #pragma omp task inout(calls)
  ++calls;
  #pragma omp taskwait
  return calls;
}

// The body waits until the caller has looked at flag.
#pragma omp task out(*flag)
static void gated_set(int *flag, const int *go) {
  wait_for_go(go);
  __atomic_store_n(flag, 1, __ATOMIC_RELAXED);
}

int main() {
  // A call only creates the task.
  int flag = 0, go = 0;
  gated_set(&flag, &go);
  CHECK(__atomic_load_n(&flag, __ATOMIC_RELAXED) == 0);
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(flag == 1);

  const int n = 100;
  std::vector<double> x(n, 1.0), y(n, 2.0);
  double *px = x.data(), *py = y.data();
  blas::axpy(n, 3.0, px, py);
  double sum = 0;
  #pragma omp task in([n]py) out(sum)
  sum = std::accumulate(py, py + n, 0.0);
  #pragma omp taskwait
  CHECK(sum == 5.0 * n);

  int r = 0;
  twice(21, &r);
  #pragma omp taskwait on(r)
  CHECK(r == 42);

  std::vector<std::string> parts{"a", "b", "c"};
  std::string joined;
  join(parts, &joined);
  parts.clear(); // the task has its own copy
  #pragma omp taskwait
  CHECK(joined == "abc");

  long total = 0;
  for (int i = 1; i <= 10; ++i) add_to(total, i);
  #pragma omp taskwait
  CHECK(total == 55);

  // Firstprivate class-type and array variables: copies taken at creation.
  std::string word = "task";
  int arr[3] = {1, 2, 3};
  std::string seen;
  int arr_sum = 0;
  #pragma omp task out(seen, arr_sum)
  {
    SLOW();
    seen = word;
    arr_sum = arr[0] + arr[1] + arr[2];
  }
  word = "changed";
  arr[0] = 100;
  #pragma omp taskwait
  CHECK(seen == "task");
  CHECK(arr_sum == 6);

  // Nested tasks, with names used only in the nested pragmas.
  int a = 0, b = 0;
  int m = 3;
  #pragma omp task inout(a, b)
  {
    #pragma omp task out(a) firstprivate(m)
    {
      SLOW();
      a = m;
    }
    #pragma omp task in(a) out(b)
    b = a + 1;
    #pragma omp taskwait
  }
  #pragma omp taskwait
  CHECK(a == 3 && b == 4);

  CHECK(counter_calls() == 1);
  CHECK(counter_calls() == 2);

  double d4[4] = {1, 2, 3, 4};
  int k4[4] = {1, 1, 1, 1};
  scale(4, d4, 2.0);
  scale<int>(4, k4, 3);
  double dsum = 0;
  int ksum = 0;
  sum_all<double, 4>(d4, &dsum);
  sum_all<int, 4>(k4, &ksum);
  #pragma omp taskwait
  CHECK(dsum == 20.0);
  CHECK(ksum == 12);

  Grid grid(4);
  grid.scale(3.0);
  #pragma omp taskwait
  CHECK(grid.sum() == 24.0);
  CHECK(grid.updates() == 11);
  Box<long> box;
  box.add(5);
  box.add(6);
  CHECK(box.v == 11);

  Account account;
  for (int i = 1; i <= 4; ++i) account.deposit(i);
  long balance = 0, doubled = 0;
  account.read(&balance);
  Account::twice(21, &doubled);
  Cell<double> cell;
  cell.add(1.5);
  cell.add(2.5);
  #pragma omp taskwait
  CHECK(balance == 10);
  CHECK(doubled == 42);
  CHECK(cell.x == 4.0);

  CHECK(apply_twice(3) == 12);
  CHECK(apply_twice(std::string("ab")) == "abababab");

  // critical and atomic in C++ tasks.
  long crit = 0;
  double atom = 0;
  for (int i = 0; i < 20; ++i) {
    #pragma omp task shared(crit, atom)
    {
      #pragma omp critical
      {
        long t = crit;
        usleep(100);
        crit = t + 1;
      }
      #pragma omp atomic
      atom += 0.25;
    }
  }
  #pragma omp taskwait
  CHECK(crit == 20);
  CHECK(atom == 5.0);

  // A lambda created inside the task body.
  int lam = 0;
  #pragma omp task out(lam)
  {
    auto twice_of = [](int v) { return 2 * v; };
    lam = twice_of(8);
  }
  #pragma omp taskwait
  CHECK(lam == 16);
  CHECK_DONE();
}
