// Multidependences in C++ (issue 19): a function template whose tasks name the blocks of a
// std::vector through operator[], an OmpSs-2 range with its end included, and a member
// function; with them, inprivate, onready, taskwait with dependences and target device(smp)
// before an inline task, in C++. Compared with the sequential computation.
#include <numeric>
#include <vector>

#include "check.h"

template <typename T>
void scale_blocks(std::vector<T> &v, int nb, int bs, T factor) {
  for (int b = 0; b < nb; ++b) {
    #pragma oss task inout(v[b * bs;bs]) firstprivate(b)
    {
      SLOW();
      for (int i = 0; i < bs; ++i) v[b * bs + i] *= factor;
    }
  }
}

template <typename T>
T total(const std::vector<T> &v, int nb, int bs) {
  T sum = 0;
  #pragma oss task in({v[b * bs;bs], b=0:nb-1}) shared(sum)
  sum = std::accumulate(v.begin(), v.begin() + nb * bs, T(0));
  #pragma oss taskwait
  return sum;
}

struct Grid {
  std::vector<double> cells;
  int rows, cols;
  Grid(int r, int c) : cells(r * c, 1.0), rows(r), cols(c) {}
  void bump_rows() {
    for (int r = 0; r < rows; ++r) {
      #pragma oss task inout(cells[r * cols;cols]) firstprivate(r)
      {
        SLOW();
        for (int c = 0; c < cols; ++c) cells[r * cols + c] += r;
      }
    }
  }
  double sum_rows() {
    double s = 0;
    #pragma oss task in({cells[r * cols;cols], r=0;rows}) shared(s)
    for (double c : cells) s += c;
    #pragma oss taskwait
    return s;
  }
};

// inprivate copies when the task starts, after the writer before it: 5, not 1.
int inprivate_seen() {
  int v = 1;
  double a[3] = {0, 0, 0};
  #pragma omp task out(v, a)
  {
    SLOW();
    v = 5;
    a[2] = 2.5;
  }
  int seen = 0;
  #pragma omp target device(smp) copy_out(seen)
  #pragma omp task inprivate(v, a)
  {
    seen = v + (a[2] == 2.5 ? 10 : 0);
    v = 0;
    a[2] = 0;
  }
  #pragma omp taskwait depend(inout: v)
  return v == 5 && a[2] == 2.5 ? seen : -1;
}

// onready's action runs after the writer of v, before the body.
static void note(int *where, int value) { *where = value; }
int onready_seen() {
  int v = 1, seen = 0;
  #pragma oss task out(v)
  {
    SLOW();
    v = 3;
  }
  #pragma oss task onready(note(&seen, v)) in(v) shared(seen)
  seen *= 2;
  #pragma oss taskwait
  return seen;
}

// onready on function tasks, a template among them: the action sees the arguments.
#pragma oss task onready(note(n, k)) inout(*n)
void add_one(int *n, int k) { *n += 1; }

#pragma oss task onready(note(n, (int)k)) inout(*n)
template <typename T>
void twice(int *n, T k) { *n *= 2; }

int main() {
  CHECK(inprivate_seen() == 15);
  CHECK(onready_seen() == 6);
  int a = 0, b = 0;
  add_one(&a, 41);
  twice(&b, 5.0);
  #pragma oss taskwait
  CHECK(a == 42 && b == 10);
  const int nb = 8, bs = 32;
  std::vector<long> v(nb * bs);
  std::iota(v.begin(), v.end(), 0L);
  std::vector<long> seq = v;
  for (long &x : seq) x *= 3;
  scale_blocks(v, nb, bs, 3L);
  CHECK(total(v, nb, bs) == std::accumulate(seq.begin(), seq.end(), 0L));

  Grid g(6, 10);
  g.bump_rows();
  double expected = 0;
  for (int r = 0; r < 6; ++r) expected += 10.0 * (1 + r);
  CHECK(g.sum_rows() == expected);
  CHECK_DONE();
}
