// What the Cholesky versions share: the matrix, its tiles, the tile kernels, the input and the
// check. cholesky.cpp drives the kernels with nanort tasks, cholesky_omp.cpp with OpenMP tasks
// and depend(): the same kernels, tiles and task graph.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cholesky {

struct Matrix {
  int n;
  std::vector<double> values;
  double *tile(int bi, int bj, int nb) { return values.data() + (std::size_t)bi * nb * n + (std::size_t)bj * nb; }
};

// Unblocked Cholesky of one tile (lower part); 'ld' is the row stride.
inline void potrf(double *a, int nb, int ld) {
  for (int k = 0; k < nb; ++k) {
    a[k * ld + k] = std::sqrt(a[k * ld + k]);
    for (int i = k + 1; i < nb; ++i) a[i * ld + k] /= a[k * ld + k];
    for (int j = k + 1; j < nb; ++j)
      for (int i = j; i < nb; ++i) a[i * ld + j] -= a[i * ld + k] * a[j * ld + k];
  }
}

// b := b * inv(l)^T, with l lower triangular.
inline void trsm(const double *l, double *b, int nb, int ld) {
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < nb; ++j) {
      double sum = b[i * ld + j];
      for (int k = 0; k < j; ++k) sum -= b[i * ld + k] * l[j * ld + k];
      b[i * ld + j] = sum / l[j * ld + j];
    }
}

// c := c - a * b^T.
inline void gemm(const double *a, const double *b, double *c, int nb, int ld) {
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < nb; ++j) {
      double sum = 0;
      for (int k = 0; k < nb; ++k) sum += a[i * ld + k] * b[j * ld + k];
      c[i * ld + j] -= sum;
    }
}

inline Matrix spd_matrix(int n) {
  Matrix m{n, std::vector<double>((std::size_t)n * n)};
  unsigned seed = 12345;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      seed = seed * 1103515245u + 12345u;
      double v = (seed >> 8) / double(1u << 24) - 0.5;
      m.values[(std::size_t)i * n + j] = m.values[(std::size_t)j * n + i] = v;
    }
  for (int i = 0; i < n; ++i) m.values[(std::size_t)i * n + i] += n;  // diagonally dominant
  return m;
}

struct Size {
  int n, nb, tiles;
};

// The size from the command line ([n] [tile]); exits with a usage line when it is not valid.
inline Size parse_size(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1536;
  const int nb = argc > 2 ? std::atoi(argv[2]) : 128;
  if (n <= 0 || nb <= 0 || n % nb != 0) {
    std::fprintf(stderr, "usage: %s [n] [tile], with n a multiple of tile (got %d, %d)\n", argv[0], n, nb);
    std::exit(2);
  }
  return {n, nb, n / nb};
}

// || L L^T - A ||_F / || A ||_F over the lower triangle, printed with the rate; the exit status.
inline int report(const Matrix &a, const Matrix &original, double seconds) {
  const int n = a.n;
  double error = 0, norm = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double sum = 0;
      for (int k = 0; k <= j; ++k) sum += a.values[(std::size_t)i * n + k] * a.values[(std::size_t)j * n + k];
      const double ref = original.values[(std::size_t)i * n + j];
      error += (sum - ref) * (sum - ref);
      norm += ref * ref;
    }
  const double residual = std::sqrt(error / norm);
  const double gflops = (double)n * n * n / 3.0 / seconds * 1e-9;
  std::printf("factorised in %.3f s (%.2f GFlop/s), relative residual %.2e: %s\n", seconds, gflops,
              residual, residual < 1e-12 ? "correct" : "WRONG");
  return residual < 1e-12 ? 0 : 1;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace cholesky
