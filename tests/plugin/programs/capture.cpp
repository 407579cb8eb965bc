// Data sharing of the variables that inline tasks name in dependences, in C++ (issue 19):
// a pointer through which a section is named is firstprivate (also through a reference to it
// and in a template), a variable whose own storage is the dependence is shared, an object
// whose copy would run a constructor stays shared, members are reached through 'this'. Each
// task waits until the program has changed what the task must not see.
#include "check.h"

#include <string>
#include <vector>

namespace {

constexpr int N = 16;
int go;

bool all(const double *x, int from, int to, double v) {
  for (int i = from; i < to; ++i)
    if (x[i] != v) return false;
  return true;
}

// A reference to the caller's pointer: the task copies the pointer, the caller's changes
// afterwards are not the task's.
void fill_later(double *&p, int n, double v) {
  #pragma omp task out(p[0;n])
  {
    wait_for_go(&go);
    for (int i = 0; i < n; ++i) p[i] = v;
  }
  p = nullptr;
}

// A function template that returns before its task runs; the total is a reference to the
// caller's scalar: its own storage, shared.
template <class T>
void sum_later(const T *x, int n, T &total) {
  #pragma omp task in(x[0;n]) inout(total)
  {
    wait_for_go(&go);
    for (int i = 0; i < n; ++i) total += x[i];
  }
}

void clobber_stack() __attribute__((noinline));
void clobber_stack() {
  volatile unsigned char junk[8192];
  for (unsigned i = 0; i < sizeof junk; ++i) junk[i] = 0;
}

// Members: reached through 'this' when the body runs (the object is not copied).
class Buffer {
public:
  explicit Buffer(int n) : storage_(n, 1.0), data_(storage_.data()), n_(n) {}
  void scale(double f) {
    #pragma omp task inout(this->data_[0;n_])
    for (int i = 0; i < n_; ++i) data_[i] *= f;
  }
  double first() const { return data_[0]; }

private:
  std::vector<double> storage_;
  double *data_;
  int n_;
};

// Copying it runs a constructor (the string): named through its pointer member, it stays
// shared.
struct Labelled {
  std::string name;
  double *data;
  int n;
  int runs;
};
// Plain data: copied, as in C.
struct Plain {
  double *data;
  int n;
  int runs;
};

} // namespace

int main() {
  double b1[N], b2[N];
  for (int i = 0; i < N; ++i) b1[i] = 0.0, b2[i] = 0.0;

  for (int i = 0; i < N; ++i) b2[i] = 0.5;
  double *p = b1;
  fill_later(p, N, 3.0);
  CHECK(p == nullptr);
  double total = 1.0;
  sum_later(b2, N, total);
  clobber_stack();
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(all(b1, 0, N, 3.0));
  CHECK(total == 1.0 + 0.5 * N);
  for (int i = 0; i < N; ++i) b2[i] = 0.0;

  // in(p[0;n]) out(q), q a scalar: q shared, p firstprivate.
  double sum = 0.0;
  double *src = b1;
  go = 0;
  #pragma omp task in(src[0;N]) out(sum)
  {
    wait_for_go(&go);
    for (int i = 0; i < N; ++i) sum += src[i];
  }
  src = b2;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(sum == 3.0 * N);

  // A pointer assigned in the body: the task's own copy.
  double *cur = b2;
  #pragma omp task out(cur[0;N])
  for (int i = 0; i < N; ++i) *cur++ = i;
  #pragma omp taskwait
  CHECK(cur == b2 && b2[N - 1] == N - 1);

  // An array of pointers: the row the dependence names, after the program replaced it.
  double *rows[2] = {b1, b2};
  go = 0;
  #pragma omp task inout(rows[0][0;N])
  {
    wait_for_go(&go);
    for (int i = 0; i < N; ++i) rows[0][i] = 7.0;
  }
  rows[0] = b2;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(all(b1, 0, N, 7.0) && b2[0] == 0.0);

  Buffer buf(N);
  buf.scale(4.0);
  #pragma omp taskwait
  CHECK(buf.first() == 4.0);

  Labelled l{"l", b1, N, 0};
  Plain pl{b2, N, 0};
  #pragma omp task inout(l.data[0;l.n]) inout(pl.data[0;pl.n])
  {
    l.data[0] = 1.0;
    pl.data[0] = 2.0;
    l.runs++;  // the program's l
    pl.runs++; // the task's copy
  }
  #pragma omp taskwait
  CHECK(b1[0] == 1.0 && b2[0] == 2.0 && l.runs == 1 && pl.runs == 0);
  CHECK_DONE();
}
