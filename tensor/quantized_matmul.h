// Products with a reduced-precision weight matrix W (out, in) (tensor/quantized_matrix.h),
// the two shapes inference needs:
//
//   one row     out (out) = W (out, in) @ x (in)       batch-1 decoding: each weight
//               read once for one multiply-add, x rounded once for all rows
//               (RoundedActivations, tensor/quantized_matrix.h): a bfloat16
//               weight times x rounded to bfloat16; an int8 weight multiplied
//               in bytes with x rounded to int8 blocks
//   many rows   y (N, out) = x (N, in) @ W^T           a prompt's prefill, evaluation:
//               bfloat16 W: x rounded to bfloat16 and the bfloat16 product
//               (tensor/cpu/gemm_bf16.h: AVX512-BF16 where the CPU has it);
//               int8 W: widened a panel of rows at a time into a buffer that
//               stays in cache, and each panel multiplied: in bfloat16 with x
//               rounded to bfloat16 where the CPU has AVX512-BF16 (gemm_bf16),
//               else in float32 (sgemm)
//
// Otherwise (int8 W, many rows, no AVX512-BF16) x stays float32; the sums
// always are. A row's result
// does not depend on how rows are shared among threads, so a decode step
// computing its own share (tensor/runtime/team.h) gets the same numbers as
// gemv_rows_quantized.
#pragma once
#include <cstdint>

#include "tinygpt/tensor/quantized_matrix.h"

namespace tg::raw {

// x (in) as the one-row kernels of `weight` multiply it: rounded to int8
// blocks for an int8 W, to bfloat16 for a bfloat16 W, into `rounded` (its
// buffers reused from call to call).
void prepare_activations(const QuantizedMatrix& weight, const float* x, cpu::RoundedActivations& rounded);

// out[r - first] = W[r] . x for rows r in [first, last), on the calling thread;
// x (in) as prepare_activations(weight, x, ...) rounded it, out contiguous.
void gemv_rows_quantized_serial(const QuantizedMatrix& weight, int64_t first, int64_t last,
                                const cpu::RoundedActivations& x, float* out);
// The same for every row, the rows shared among the OpenMP threads.
void gemv_rows_quantized(const QuantizedMatrix& weight, const float* x, float* out);

// x (N, in) float32 -> x @ W^T (N, out) float32. One row takes gemv_rows_quantized.
Tensor matmul_quantized(const Tensor& x, const QuantizedMatrix& weight);

}  // namespace tg::raw
