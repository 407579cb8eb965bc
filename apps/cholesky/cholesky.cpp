// Tiled Cholesky factorisation (A = L * L^T) with nanort tasks, on CPU workers.
//
// The matrix stays in its ordinary row-major layout; every task names the tiles it touches as
// 2-D blocks, and the runtime derives the classic potrf / trsm / syrk / gemm task graph from
// those accesses. The result is checked against the input: || L L^T - A || / || A ||.
// cholesky_omp.cpp is the same program with OpenMP tasks (libgomp), to compare with.
//
//   cholesky [n] [tile]      defaults: 1536 128
#include <nanort/nanort.hpp>

#include "cholesky_kernels.hpp"

using namespace cholesky;

int main(int argc, char **argv) {
  const auto [n, nb, tiles] = parse_size(argc, argv);
  Matrix a = spd_matrix(n);
  const Matrix original = a;
  std::printf("Tiled Cholesky: %d x %d doubles, %d x %d tiles of %d, %d CPU workers\n", n, n, tiles,
              tiles, nb, nanort::cpu_workers());

  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < tiles; ++k) {
    double *akk = a.tile(k, k, nb);
    nanort::task("potrf").block(akk, nb, nb, n, NANORT_INOUT).spawn([=] { potrf(akk, nb, n); });
    for (int i = k + 1; i < tiles; ++i) {
      double *aik = a.tile(i, k, nb);
      nanort::task("trsm")
          .block(akk, nb, nb, n, NANORT_IN)
          .block(aik, nb, nb, n, NANORT_INOUT)
          .spawn([=] { trsm(akk, aik, nb, n); });
    }
    for (int i = k + 1; i < tiles; ++i) {
      double *aik = a.tile(i, k, nb);
      for (int j = k + 1; j <= i; ++j) {
        double *ajk = a.tile(j, k, nb), *aij = a.tile(i, j, nb);
        nanort::task(i == j ? "syrk" : "gemm")
            .block(aik, nb, nb, n, NANORT_IN)
            .block(ajk, nb, nb, n, NANORT_IN)
            .block(aij, nb, nb, n, NANORT_INOUT)
            .spawn([=] { gemm(aik, ajk, aij, nb, n); });
      }
    }
  }
  nanort::taskwait();
  return report(a, original, seconds_since(start));
}
