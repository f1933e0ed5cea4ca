#include "tinygpt/tensor/quantized_matmul.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "tinygpt/tensor/cpu/bfloat16_convert.h"
#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/cpu/widened_panels.h"
#include "tinygpt/tensor/view.h"

namespace tg::raw {

namespace {

// Rows a thread takes at a time in a one-row product (about 48 KB of int8, 96
// KB of bfloat16 for in = 768): dynamic chunks, as tensor/cpu/gemv.cpp explains.
constexpr int64_t kChunkWeights = 48 * 1024;

}  // namespace

void prepare_activations(const QuantizedMatrix& weight, const float* x, cpu::RoundedActivations& rounded) {
  if (weight.format() == DType::Int8)
    quantize_activations(x, weight.cols(), rounded.int8);
  else
    round_activations(x, weight.cols(), rounded.bfloat16);
}

void gemv_rows_quantized_serial(const QuantizedMatrix& weight, int64_t first, int64_t last,
                                const cpu::RoundedActivations& x, float* out) {
  const int64_t cols = weight.cols();
  const cpu::QuantizedRowKernels& kernels = cpu::quantized_row_kernels();
  if (weight.format() == DType::BFloat16) {
    kernels.dot_bfloat16_rows(weight.values.data<bfloat16>() + first * cols, last - first, cols, x.bfloat16, out);
    return;
  }
  const int64_t blocks = weight.scales.size(1);
  kernels.dot_int8_rows(weight.values.data<int8_t>() + first * cols, weight.scales.data<float>() + first * blocks,
                        last - first, cols, x.int8, out);
}

void gemv_rows_quantized(const QuantizedMatrix& weight, const float* x, float* out) {
  cpu::RoundedActivations rounded;  // rounded once, read by every thread
  prepare_activations(weight, x, rounded);
  const int64_t rows = weight.rows();
  const int64_t rows_per_chunk = std::max<int64_t>(8, kChunkWeights / std::max<int64_t>(1, weight.cols()));
  const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t first = chunk * rows_per_chunk, last = std::min(rows, first + rows_per_chunk);
    gemv_rows_quantized_serial(weight, first, last, rounded, out + first);
  }
}

Tensor matmul_quantized(const Tensor& x, const QuantizedMatrix& weight) {
  check(x.dim() == 2 && x.dtype() == DType::Float32 && x.size(1) == weight.cols(), "matmul_quantized: x of ",
        dtype_name(x.dtype()), " shape ", x.shape(), " cannot multiply a weight of shape ", weight.values.shape(),
        " (x needs (N, ", weight.cols(), ") float32)");
  ProfileScope scope(ProfileFamily::gemm, "quantized");
  const Tensor rows_in = raw::contiguous(x);
  const int64_t rows = x.size(0), out_features = weight.rows(), in_features = weight.cols();
  scope.add_flops(2.0 * static_cast<double>(rows) * static_cast<double>(out_features) * static_cast<double>(in_features));
  scope.add_bytes_of(x, weight.values, weight.scales);
  Tensor y = Tensor::empty({rows, out_features}, DType::Float32);
  const float* input = rows_in.data<float>();
  float* output = y.data<float>();
  if (rows == 1) {
    gemv_rows_quantized(weight, input, output);
    return y;
  }
  const bool bfloat16_products = cpu::bf16_gemm_kernel() == cpu::Bf16GemmKernel::avx512_bf16;
  // x rounded to bfloat16: for every product but int8 weights through sgemm.
  Tensor x_bf16;
  if (weight.format() == DType::BFloat16 || bfloat16_products) {
    x_bf16 = Tensor::empty({rows, in_features}, DType::BFloat16);
    cpu::float_to_bfloat16_rows(rows, in_features, input, in_features, x_bf16.data<bfloat16>(), in_features);
  }
  if (weight.format() == DType::BFloat16 && bfloat16_products) {
    // The bfloat16 product (tensor/cpu/gemm_bf16.h): on a CPU with AVX512-BF16
    // twice sgemm's speed, and W is read as stored.
    cpu::gemm_bf16(false, true, rows, out_features, in_features, 1.0f, x_bf16.data<bfloat16>(), in_features,
              weight.values.data<bfloat16>(), in_features, 0.0f, output, out_features);
    return y;
  }
  // Each thread widens a panel of W's rows into its own buffer and multiplies
  // x by it on its own (BLAS inside a parallel region runs on the calling thread):
  // y[:, panel] (N, P) = x (N, in) @ panel^T (in, P).
  const int64_t panel_rows = cpu::widened_panel_rows(out_features, in_features);
  const int64_t panels = (out_features + panel_rows - 1) / panel_rows;
  if (bfloat16_products) {
    // Where the CPU multiplies bfloat16 pairs (VDPBF16PS), panels widened to
    // bfloat16 and x rounded to bfloat16 go twice as fast as float32 through sgemm.
    const cpu::QuantizedRowKernels& kernels = cpu::quantized_row_kernels();
    const int8_t* values = weight.values.data<int8_t>();
    const float* scales = weight.scales.data<float>();
    const int64_t blocks = weight.scales.size(1);
#pragma omp parallel
    {
      std::vector<bfloat16> panel(static_cast<size_t>(panel_rows * in_features));
#pragma omp for schedule(dynamic, 1)
      for (int64_t index = 0; index < panels; ++index) {
        const int64_t first = index * panel_rows, count = std::min(panel_rows, out_features - first);
        for (int64_t row = first; row < first + count; ++row)
          kernels.dequantize_int8_row_to_bfloat16(values + row * in_features, scales + row * blocks,
                                                  panel.data() + (row - first) * in_features, in_features);
        cpu::gemm_bf16(false, true, rows, count, in_features, 1.0f, x_bf16.data<bfloat16>(), in_features, panel.data(),
                  in_features, 0.0f, output + first, out_features);
      }
    }
    return y;
  }
  // Without bfloat16 products, bfloat16 weights are widened panel by panel as
  // int8 ones are, never the whole matrix at once, and multiply x rounded to
  // bfloat16 as the one-row product and gemm_bf16 do: the CPU changes only the
  // order of the float32 sums.
  Tensor x_rounded;
  if (weight.format() == DType::BFloat16) {
    x_rounded = Tensor::empty({rows, in_features}, DType::Float32);
    cpu::bfloat16_to_float_rows(rows, in_features, x_bf16.data<bfloat16>(), in_features, x_rounded.data<float>(),
                                in_features);
    input = x_rounded.data<float>();
  }
#pragma omp parallel
  {
    std::vector<float> panel(static_cast<size_t>(panel_rows * in_features));
#pragma omp for schedule(dynamic, 1)
    for (int64_t index = 0; index < panels; ++index) {
      const int64_t first = index * panel_rows, count = std::min(panel_rows, out_features - first);
      dequantize_rows(weight, first, count, panel.data());
      cpu::gemm(false, true, rows, count, in_features, 1.0f, input, in_features, panel.data(), in_features, 0.0f,
           output + first, out_features);
    }
  }
  return y;
}

}  // namespace tg::raw
