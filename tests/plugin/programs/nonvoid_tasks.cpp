// Function tasks that return a value, in C++: class results (copied or moved into the
// variable, a move-only one, one without a default constructor), results into containers
// and strings ('=' and '+='), member functions and function templates that return a value,
// recursion, the calls of one statement running together. Each result is compared with the
// same computation done by plain functions.
#include "check.h"

#include <memory>
#include <string>
#include <vector>

#pragma omp task
std::vector<int> range(int n) {
  SLOW();
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

#pragma omp task
std::string piece(int i) {
  SLOW();
  return std::string(1, char('a' + i));
}

#pragma omp task
std::unique_ptr<int> boxed(int v) { return std::unique_ptr<int>(new int(v)); }

// Returns its text once 'want' tasks have arrived (or "late" after 20 s).
static int arrived;
#pragma omp task
std::string meet(std::string v, int want) {
  __atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL);
  for (int i = 0; i < 200000 && __atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < want; ++i)
    usleep(100);
  return __atomic_load_n(&arrived, __ATOMIC_ACQUIRE) >= want ? v : "late";
}

struct Meters {
  explicit Meters(double v) : value(v) {}
  double value;
};

#pragma omp task
Meters meters(double v) { return Meters(v); }

#pragma oss task
long fib(int n) {
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2);
}

static long seq_fib(int n) { return n < 2 ? n : seq_fib(n - 1) + seq_fib(n - 2); }

#pragma omp task
template <class T>
T twice(T v) {
  return v + v;
}

struct Account {
  int base;
  #pragma omp task
  int plus(int v) const { return base + v; }
  #pragma omp task
  static int scaled(int v) { return 10 * v; }
};

// Mercurium's own form: the member waits with 'taskwait on' for results it reads.
class Sum {
public:
  int both() {
    int x = one() + one();
    #pragma omp taskwait on(x)
    return x;
  }

private:
  #pragma omp task
  int one() { return 1; }
};

int main() {
  const int N = 8;
  std::vector<std::vector<int>> ranges(N);
  std::string word, seq_word;
  std::vector<std::string> names(N);
  for (int i = 0; i < N; ++i) {
    ranges[i] = range(i);  // tasks write the elements: all run at once
    names[i] = piece(i);
    word += piece(i);      // in order, each after the one before
    seq_word += std::string(1, char('a' + i));
  }
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) {
    CHECK(ranges[i].size() == size_t(i));
    CHECK(names[i] == std::string(1, char('a' + i)));
  }
  CHECK(word == seq_word);

  std::unique_ptr<int> p;
  p = boxed(7);
  std::unique_ptr<int> q = boxed(8);  // waits: the initializer reads the result
  #pragma omp taskwait
  CHECK(p && *p == 7);
  CHECK(q && *q == 8);

  Meters m = meters(2.5);
  CHECK(m.value == 2.5);
  Meters sum = Meters(meters(1.0).value + meters(2.0).value);
  CHECK(sum.value == 3.0);

  std::string met = meet("a", 2) + meet("b", 2);  // both tasks at once, then the sum
  CHECK(met == "ab");
  CHECK(fib(16) == seq_fib(16));
  CHECK(twice(21) == 42);
  CHECK(twice(std::string("ab")) == "abab");

  // Inside an inline task: the result goes into the variable it shares.
  std::string inner;
  #pragma omp task shared(inner)
  {
    inner = piece(3);
    #pragma omp taskwait
  }
  #pragma omp taskwait
  CHECK(inner == "d");

  Account a{5};
  int y = a.plus(1) + a.plus(2);
  CHECK(y == 13);
  CHECK(Account::scaled(4) == 40);
  Sum s;
  CHECK(s.both() == 2);
  CHECK_DONE();
}
