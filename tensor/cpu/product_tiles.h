// Matrix products cut into tiles fixed by their shapes alone, each tile one
// single-threaded call, the tiles shared among however many threads there are:
// the same numbers on any thread count, whatever the BLAS kernels.
//
// OpenBLAS's Haswell kernels (any AVX2 CPU) need this: with them an element of
// a product depends on how the call is split between threads and on the call's
// size (tensor/runtime/threads.h: blas_results_independent_of_threads), so a change of
// thread count would change a training run's numbers. Its AVX-512 kernels do
// not, and there the callers make one call per product instead.
//
//   c (m, n) = op(a) (m, k) @ op(b) (k, n) + beta * c     (cpu::gemm's contract, tensor/cpu/gemm.h)
//
// is cut along c's longer side into at most `max_tiles` tiles of at least
// kMinTileExtent rows or columns: every tile reads again the operand it shares
// with the others (op(b) when cutting rows, op(a) when cutting columns), and
// that is the smaller one. Products added together run together: a static
// schedule gives each thread a contiguous run of tiles, so on two threads the
// backward's dx and dW each get a thread of their own.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace tg::cpu {

class ProductTiles {
 public:
  static constexpr int64_t kMinTileExtent = 32;

  // Adds c = op(a) @ op(b) + beta * c, each tile computed by a call
  // gemm(transpose_a, transpose_b, rows, columns, k, 1, a, lda, b, ldb, beta, c, ldc)
  // with a, b and c moved to the tile's first row or column.
  template <class Gemm, class In, class Out>
  void add(int64_t max_tiles, Gemm gemm, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
           const In* a, int64_t lda, const In* b, int64_t ldb, Out beta, Out* c, int64_t ldc) {
    const bool cut_rows = m > n;
    const int64_t extent = cut_rows ? m : n;
    const int64_t tiles = std::clamp<int64_t>(extent / kMinTileExtent, 1, max_tiles);
    for (int64_t tile = 0; tile < tiles; ++tile) {
      const int64_t first = tile * extent / tiles, count = (tile + 1) * extent / tiles - first;
      if (cut_rows) {  // c[first : first + count, :] = op(a)[first : first + count, :] @ op(b)
        const In* a_rows = transpose_a ? a + first : a + first * lda;
        tiles_.push_back([=] {
          gemm(transpose_a, transpose_b, count, n, k, Out(1), a_rows, lda, b, ldb, beta, c + first * ldc, ldc);
        });
      } else {  // c[:, first : first + count] = op(a) @ op(b)[:, first : first + count]
        const In* b_columns = transpose_b ? b + first * ldb : b + first;
        tiles_.push_back([=] {
          gemm(transpose_a, transpose_b, m, count, k, Out(1), a, lda, b_columns, ldb, beta, c + first, ldc);
        });
      }
    }
  }

  // Runs every tile added; inside the parallel region each BLAS call keeps to
  // its own thread.
  void run() const {
    const int64_t count = static_cast<int64_t>(tiles_.size());
#pragma omp parallel for schedule(static)
    for (int64_t tile = 0; tile < count; ++tile) tiles_[static_cast<size_t>(tile)]();
  }

 private:
  std::vector<std::function<void()>> tiles_;
};

}  // namespace tg::cpu
