// The tiled Cholesky of cholesky.cpp with OpenMP tasks (g++ -fopenmp, libgomp): the same
// kernels, tiles and task graph, for side-by-side figures. A tile is named in depend() by its
// first element: tiles never overlap, so that address stands for the whole tile (OpenMP
// matches dependences by address, not by range). Threads: OMP_NUM_THREADS.
//
//   cholesky_omp [n] [tile]      defaults: 1536 128
#include <omp.h>

#include "cholesky_kernels.hpp"

using namespace cholesky;

int main(int argc, char **argv) {
  const auto [n, nb, tiles] = parse_size(argc, argv);
  Matrix a = spd_matrix(n);
  const Matrix original = a;
  std::printf("Tiled Cholesky: %d x %d doubles, %d x %d tiles of %d, %d OpenMP threads\n", n, n,
              tiles, tiles, nb, omp_get_max_threads());

#pragma omp parallel
  {}  // the thread pool starts before the clock, as nanort's workers do
  const auto start = std::chrono::steady_clock::now();
#pragma omp parallel
#pragma omp single
  for (int k = 0; k < tiles; ++k) {
    double *akk = a.tile(k, k, nb);
#pragma omp task depend(inout: akk[0]) firstprivate(akk)
    potrf(akk, nb, n);
    for (int i = k + 1; i < tiles; ++i) {
      double *aik = a.tile(i, k, nb);
#pragma omp task depend(in: akk[0]) depend(inout: aik[0]) firstprivate(akk, aik)
      trsm(akk, aik, nb, n);
    }
    for (int i = k + 1; i < tiles; ++i) {
      double *aik = a.tile(i, k, nb);
      for (int j = k + 1; j <= i; ++j) {
        double *ajk = a.tile(j, k, nb), *aij = a.tile(i, j, nb);
#pragma omp task depend(in: aik[0], ajk[0]) depend(inout: aij[0]) firstprivate(aik, ajk, aij)
        gemm(aik, ajk, aij, nb, n);
      }
    }
  }
  return report(a, original, seconds_since(start));
}
