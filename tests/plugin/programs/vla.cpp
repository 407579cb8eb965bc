// Variable-length arrays (clang's and g++'s C++ extension) in C++ inline tasks (issue 19): a
// matrix shared through its dependences, a copy taken by firstprivate while the function goes
// on changing the original, private scratch, rows reached through a pointer, a task inside a
// task and a member function. Each result is compared with the same work done sequentially.
#include <cstdlib>

#include "check.h"

static int go;

static long matrix_sum(int n) {
  int x[n][n], y[n][n];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      x[i][j] = y[i][j] = j - i;
  // x: shared by its dependence; y: the task's own copy.
  #pragma omp task inout(x) firstprivate(y)
  {
    wait_for_go(&go);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        x[i][j] *= 2;
        y[i][j] *= 2;
      }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      y[i][j] = 1000; // after the copy: the task must not see it
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  long total = 0;
  #pragma omp task in(x) shared(total)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      total += x[i][j];
  #pragma omp taskwait
  CHECK(y[0][0] == 1000 && x[n - 1][0] == 2 * (1 - n));
  return total;
}

static long scratch_sums(int tasks, int n) {
  int scratch[n];
  long sums[8] = {0};
  for (int t = 0; t < tasks; ++t) {
    #pragma omp task private(scratch) out(sums[t])
    {
      for (int i = 0; i < n; ++i)
        scratch[i] = t * i;
      long s = 0;
      for (int i = 0; i < n; ++i)
        s += scratch[i];
      sums[t] = s + (long)(sizeof scratch / sizeof scratch[0]);
    }
  }
  #pragma omp taskwait
  long total = 0;
  for (int t = 0; t < tasks; ++t)
    total += sums[t];
  return total;
}

struct Grid {
  int rows, cols;
  long checksum = 0;
  void run() {
    auto g = (int (*)[cols])std::calloc(rows, sizeof(int) * cols);
    for (int r = 0; r < rows; ++r) {
      #pragma omp task out(g[r][0;cols])
      {
        SLOW();
        for (int c = 0; c < cols; ++c)
          g[r][c] = r + c;
      }
    }
    #pragma omp task in(g[0;rows][0;cols])
    {
      long s = 0;
      for (int r = 0; r < rows; ++r) {
        int row[cols];
        for (int c = 0; c < cols; ++c)
          row[c] = g[r][c];
        #pragma omp task firstprivate(row) shared(s)
        {
          long local = 0;
          for (int c = 0; c < cols; ++c)
            local += row[c];
          #pragma omp atomic
          s += local;
        }
      }
      #pragma omp taskwait
      checksum = s;
    }
    #pragma omp taskwait
    std::free(g);
  }
};

int main() {
  int n = 9;
  long expect = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      expect += 2 * (j - i);
  CHECK(matrix_sum(n) == expect);

  long sums = 0;
  for (int t = 0; t < 6; ++t)
    for (int i = 0; i < 5; ++i)
      sums += t * i;
  CHECK(scratch_sums(6, 5) == sums + 6 * 5);

  Grid grid{7, 5};
  grid.run();
  long gs = 0;
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 5; ++c)
      gs += r + c;
  CHECK(grid.checksum == gs);
  CHECK_DONE();
}
