// Products with a reduced-precision weight matrix W (out, in) (tensor/quantized_matrix.h),
// the two shapes inference needs:
//
//   one row     out (out) = W (out, in) @ x (in)       batch-1 decoding: each weight
//               read once for one multiply-add: a bfloat16 weight widened to
//               float32 in registers; an int8 weight multiplied in bytes with x
//               rounded to int8 blocks (Int8Activations, tensor/quantized_matrix.h)
//   many rows   y (N, out) = x (N, in) @ W^T           a prompt's prefill, evaluation:
//               bfloat16 W: x rounded to bfloat16 and the bfloat16 product
//               (tensor/gemm_bf16.h: AVX512-BF16 where the CPU has it);
//               int8 W: widened a panel of rows at a time into a buffer that
//               stays in cache, and each panel multiplied: in bfloat16 with x
//               rounded to bfloat16 where the CPU has AVX512-BF16 (gemm_bf16),
//               else in float32 (sgemm)
//
// Otherwise the activations stay float32; the sums always are. A row's result
// does not depend on how rows are shared among threads, so a decode step
// computing its own share (tensor/team.h) gets the same numbers as
// gemv_rows_quantized.
#pragma once
#include <cstdint>

#include "tensor/quantized_matrix.h"

namespace tg::raw {

// x (in) as the one-row kernels of `weight` read it: for an int8 W rounded
// into x_int8 (its buffers reused from call to call); nothing for bfloat16.
void prepare_activations(const QuantizedMatrix& weight, const float* x, Int8Activations& x_int8);

// out[r - first] = W[r] . x for rows r in [first, last), on the calling thread.
// x (in) and out contiguous; x_int8 from prepare_activations(weight, x, ...).
void gemv_rows_quantized_serial(const QuantizedMatrix& weight, int64_t first, int64_t last, const float* x,
                                const Int8Activations& x_int8, float* out);
// The same for every row, the rows shared among the OpenMP threads.
void gemv_rows_quantized(const QuantizedMatrix& weight, const float* x, float* out);

// x (N, in) float32 -> x @ W^T (N, out) float32. One row takes gemv_rows_quantized.
Tensor matmul_quantized(const Tensor& x, const QuantizedMatrix& weight);

}  // namespace tg::raw
