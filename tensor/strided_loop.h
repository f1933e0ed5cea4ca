// The one loop every elementwise kernel runs on: walk a shape with N operands,
// each with its own strides (0 on a broadcast dim), in parallel.
//
// Dims are first simplified: size-1 dims dropped, and neighbouring dims merged
// when every operand steps through them as one (so a contiguous tensor of any
// shape becomes a single dim). The body is then called on "runs" along the
// innermost dim:
//
//   body(offsets, count, steps)   // offsets[k]: element offset of operand k's first element
//                                 // steps[k]:   operand k's stride along the run
//
// so kernels write a plain inner loop that the compiler vectorises when the
// steps are 1. Work is split over OpenMP threads when there is enough of it
// (kParallelThreshold, tensor/threads.h).
#pragma once
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "tensor/shape.h"
#include "tensor/threads.h"

namespace tg {

template <size_t N>
struct StridedLoop {
  Shape shape;                     // simplified shape, innermost dim last
  std::array<Strides, N> strides;  // per operand, aligned with `shape`

  StridedLoop(const Shape& full_shape, const std::array<Strides, N>& full_strides) {
    for (size_t d = 0; d < full_shape.size(); ++d) {
      if (full_shape[d] == 1) continue;
      // Dim d (inner) merges into the last kept dim (outer) when, for every operand,
      // stepping the outer dim once equals stepping the inner dim across its whole size.
      bool merges = !shape.empty();
      for (size_t k = 0; k < N && merges; ++k) merges = strides[k].back() == full_strides[k][d] * full_shape[d];
      if (merges) {
        shape.back() *= full_shape[d];
        for (size_t k = 0; k < N; ++k) strides[k].back() = full_strides[k][d];
      } else {
        shape.push_back(full_shape[d]);
        for (size_t k = 0; k < N; ++k) strides[k].push_back(full_strides[k][d]);
      }
    }
    if (shape.empty()) {  // a single element
      shape.push_back(1);
      for (size_t k = 0; k < N; ++k) strides[k].push_back(0);
    }
  }

  int64_t numel() const { return tg::numel(shape); }

  template <class Body>
  void run(Body&& body) const {
    const int64_t ndim = static_cast<int64_t>(shape.size());
    const int64_t inner = shape.back();
    const int64_t total = numel();
    if (total == 0) return;
    const int64_t rows = total / inner;
    // Split long rows into blocks so that a single huge row still uses every thread.
    const int threads = total >= kParallelThreshold ? omp_get_max_threads() : 1;
    int64_t block = inner;
    if (threads > 1 && rows < 4 * threads) {
      const int64_t pieces = (4 * threads + rows - 1) / rows;
      block = std::max<int64_t>(4096, (inner + pieces - 1) / pieces);
    }
    const int64_t blocks_per_row = (inner + block - 1) / block;
    const int64_t units = rows * blocks_per_row;

    std::array<int64_t, N> steps;
    for (size_t k = 0; k < N; ++k) steps[k] = strides[k][ndim - 1];

#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t unit = 0; unit < units; ++unit) {
      int64_t row = unit / blocks_per_row;
      const int64_t start = (unit % blocks_per_row) * block;
      std::array<int64_t, N> offsets{};
      for (int64_t d = ndim - 2; d >= 0; --d) {  // row index -> offsets over the outer dims
        const int64_t index = row % shape[d];
        row /= shape[d];
        for (size_t k = 0; k < N; ++k) offsets[k] += index * strides[k][d];
      }
      for (size_t k = 0; k < N; ++k) offsets[k] += start * steps[k];
      body(offsets, std::min(block, inner - start), steps);
    }
  }
};

}  // namespace tg
