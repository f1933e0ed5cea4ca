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
// (kParallelThreshold, tensor/runtime/threads.h).
#pragma once
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "tinygpt/tensor/shape.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg {

// A shape walked by N operands, each with its own strides, simplified: size-1
// dims dropped, and a dim merged into the one before it when every operand steps
// the outer dim once exactly as it steps the inner dim across its whole size (so
// a contiguous tensor of any shape becomes a single dim). StridedLoop runs on
// it, and so do the reductions (tensor/reduce.cpp).
template <size_t N>
struct MergedDims {
  Shape shape;                     // innermost dim last
  std::array<Strides, N> strides;  // per operand, aligned with `shape`

  // Appends the next (inner) dim, of `size`, which operand k steps through by dim_strides[k].
  void push(int64_t size, const std::array<int64_t, N>& dim_strides) {
    if (size == 1) return;
    bool merges = !shape.empty();
    // A step past int64 (only an empty view's free strides can make one) equals no stride: no merge.
    int64_t across = 0;
    for (size_t k = 0; k < N && merges; ++k)
      merges = !__builtin_mul_overflow(dim_strides[k], size, &across) && strides[k].back() == across;
    if (merges) {
      shape.back() *= size;
      for (size_t k = 0; k < N; ++k) strides[k].back() = dim_strides[k];
    } else {
      shape.push_back(size);
      for (size_t k = 0; k < N; ++k) strides[k].push_back(dim_strides[k]);
    }
  }

  // When every dim was dropped (a single element), one size-1 dim of stride 0,
  // so that loops always have an innermost dim.
  void keep_one_dim() {
    if (!shape.empty()) return;
    shape.push_back(1);
    for (size_t k = 0; k < N; ++k) strides[k].push_back(0);
  }

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }

  // Each operand's element offset of the index-th element in row-major order
  // over the first `count` dims.
  std::array<int64_t, N> offsets_of(int64_t index, int64_t count) const {
    std::array<int64_t, N> offsets{};
    for (int64_t d = count - 1; d >= 0; --d) {
      const int64_t position = index % shape[d];
      index /= shape[d];
      for (size_t k = 0; k < N; ++k) offsets[k] += position * strides[k][d];
    }
    return offsets;
  }
};

template <size_t N>
struct StridedLoop {
  MergedDims<N> dims;

  StridedLoop(const Shape& full_shape, const std::array<Strides, N>& full_strides) {
    for (size_t d = 0; d < full_shape.size(); ++d) {
      std::array<int64_t, N> dim_strides;
      for (size_t k = 0; k < N; ++k) dim_strides[k] = full_strides[k][d];
      dims.push(full_shape[d], dim_strides);
    }
    dims.keep_one_dim();
  }

  int64_t numel() const { return tg::numel(dims.shape); }

  template <class Body>
  void run(Body&& body) const {
    const int64_t ndim = dims.ndim();
    const int64_t inner = dims.shape.back();
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
    for (size_t k = 0; k < N; ++k) steps[k] = dims.strides[k][ndim - 1];

#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t unit = 0; unit < units; ++unit) {
      const int64_t row = unit / blocks_per_row;
      const int64_t start = (unit % blocks_per_row) * block;
      std::array<int64_t, N> offsets = dims.offsets_of(row, ndim - 1);  // the row's start, over the outer dims
      for (size_t k = 0; k < N; ++k) offsets[k] += start * steps[k];
      body(offsets, std::min(block, inner - start), steps);
    }
  }
};

}  // namespace tg
