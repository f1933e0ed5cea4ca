// Products with a quantized weight (tensor/quantized_matmul.h) against sums in
// double over the same rounded numbers: the one-row kernels of every set this
// CPU runs (bfloat16 weights with x rounded to bfloat16; int8 weights with x
// in int8 blocks, exact in integers), rows shared any way among threads, and the
// many-row product (panels widened for sgemm) for shapes that do not fill a
// block, a vector or a panel. Products with bfloat16 weights round x to
// bfloat16 on every CPU; on a CPU with AVX512-BF16 they, and those with int8
// weights, take the bfloat16 product (tensor/cpu/gemm_bf16.h), which rounds
// the int8 weights to bfloat16 too.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/bfloat16_rounding.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/quantized_matmul.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

using namespace tg;
using tg::testing::rounded_to_bfloat16;

namespace {

Tensor random_matrix(int64_t rows, int64_t cols, uint64_t seed) {
  Generator generator(seed);
  return normal({rows, cols}, 0.0, 1.0, generator);
}

// W x in double, W the widened matrix (rows, cols) and x as given.
std::vector<double> reference_rows(const Tensor& widened, const std::vector<float>& x) {
  const int64_t rows = widened.size(0), cols = widened.size(1);
  const std::vector<float> w = widened.to_vector<float>();
  std::vector<double> out(static_cast<size_t>(rows));
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t col = 0; col < cols; ++col) out[row] += double(w[row * cols + col]) * x[col];
  return out;
}

// The activations the int8 kernel multiplies: x rounded to int8 blocks and widened.
std::vector<float> rounded_activations(const std::vector<float>& x) {
  cpu::Int8Activations rounded;
  quantize_activations(x.data(), static_cast<int64_t>(x.size()), rounded);
  std::vector<float> widened(x.size());
  for (size_t col = 0; col < x.size(); ++col) widened[col] = rounded.values[col] * rounded.scales[col / 32];
  return widened;
}

// Float32 sums of `cols` terms: a few ulps of the sum of |terms| per term.
double tolerance(const Tensor& widened, const std::vector<float>& x, int64_t row) {
  double magnitude = 0;
  const int64_t cols = widened.size(1);
  const std::vector<float> w = raw::select(widened, 0, row).to_vector<float>();
  for (int64_t col = 0; col < cols; ++col) magnitude += std::abs(double(w[col]) * x[col]);
  return 1e-6 * magnitude * std::sqrt(static_cast<double>(cols)) + 1e-30;
}

// Does a many-row product with these weights take the bfloat16 product
// (tensor/quantized_matmul.h)? Where the CPU has AVX512-BF16.
bool takes_bfloat16_product() { return cpu::bf16_gemm_kernel() == cpu::Bf16GemmKernel::avx512_bf16; }

// x rounded to bfloat16, as the bfloat16 kernels multiply it.
std::vector<float> bfloat16_activations(const std::vector<float>& x) {
  std::vector<float> rounded(x.size());
  for (size_t col = 0; col < x.size(); ++col) rounded[col] = float(bfloat16(x[col]));
  return rounded;
}

}  // namespace

TEST_CASE("quantized row kernels: each set's dot products against double") {
  const int64_t rows = 3;
  for (int64_t cols : {1, 8, 31, 32, 33, 64, 96, 100, 255, 256, 300, 768, 1000}) {
    const Tensor weight = random_matrix(rows, cols, 10 + static_cast<uint64_t>(cols));
    const std::vector<float> x = random_matrix(1, cols, 20 + static_cast<uint64_t>(cols)).to_vector<float>();
    for (DType format : {DType::BFloat16, DType::Int8}) {
      const QuantizedMatrix matrix = quantize_matrix(weight, format);
      const Tensor widened = dequantize(matrix);
      // The kernels multiply x rounded to int8 blocks, or to bfloat16.
      const std::vector<float> multiplied = format == DType::Int8 ? rounded_activations(x) : bfloat16_activations(x);
      const std::vector<double> expected = reference_rows(widened, multiplied);
      cpu::RoundedActivations rounded;
      raw::prepare_activations(matrix, x.data(), rounded);
      for (cpu::QuantizedKernelSet set : cpu::quantized_kernel_sets_here()) {
        CAPTURE(cols);
        CAPTURE(dtype_name(format));
        CAPTURE(cpu::quantized_kernel_set_name(set));
        const cpu::QuantizedRowKernels& kernels = cpu::quantized_row_kernels(set);
        std::vector<float> dots(rows);
        if (format == DType::BFloat16)
          kernels.dot_bfloat16_rows(matrix.values.data<bfloat16>(), rows, cols, rounded.bfloat16, dots.data());
        else
          kernels.dot_int8_rows(matrix.values.data<int8_t>(), matrix.scales.data<float>(), rows, cols, rounded.int8,
                                dots.data());
        for (int64_t row = 0; row < rows; ++row)
          CHECK(std::abs(dots[row] - expected[row]) <= tolerance(widened, multiplied, row));
        std::vector<float> row_out(static_cast<size_t>(cols));
        if (format == DType::BFloat16)
          kernels.dequantize_bfloat16_row(matrix.values.data<bfloat16>() + cols, row_out.data(), cols);
        else
          kernels.dequantize_int8_row(matrix.values.data<int8_t>() + cols,
                                      matrix.scales.data<float>() + matrix.scales.size(1), row_out.data(), cols);
        CHECK(row_out == raw::select(widened, 0, 1).to_vector<float>());
        if (format == DType::Int8) {  // and rounded to bfloat16 as tg::bfloat16 rounds
          std::vector<bfloat16> rounded_row(static_cast<size_t>(cols));
          kernels.dequantize_int8_row_to_bfloat16(matrix.values.data<int8_t>() + cols,
                                                  matrix.scales.data<float>() + matrix.scales.size(1),
                                                  rounded_row.data(), cols);
          for (int64_t col = 0; col < cols; ++col) CHECK(rounded_row[col].bits == bfloat16(row_out[col]).bits);
        }
      }
    }
  }
}

TEST_CASE("quantized row kernels: the set in use follows the CPU and TINYGPT_ISA") {
  const bool vnni_bf16 = cpu_has_avx512_vnni() && cpu_has_avx512_bf16();
  const cpu::QuantizedKernelSet expected = active_isa() == Isa::avx2 ? cpu::QuantizedKernelSet::avx2
                                           : vnni_bf16               ? cpu::QuantizedKernelSet::avx512_vnni_bf16
                                                                     : cpu::QuantizedKernelSet::avx512;
  CHECK(cpu::active_quantized_kernel_set() == expected);
  CHECK(cpu::quantized_kernel_sets_here().size() == (vnni_bf16 ? 3u : cpu_has_avx512() ? 2u : 1u));
  CHECK(std::string(cpu::quantized_kernel_set_name(cpu::QuantizedKernelSet::avx512_vnni_bf16)) == "AVX-512 VNNI+BF16");
}

TEST_CASE("gemv_rows_quantized: every row the same whatever the share of rows each thread takes") {
  const int64_t rows = 1000, cols = 200;  // chunks of 240 rows: several per thread, the last one short
  const Tensor weight = random_matrix(rows, cols, 30);
  const std::vector<float> x = random_matrix(1, cols, 31).to_vector<float>();
  for (DType format : {DType::BFloat16, DType::Int8}) {
    const QuantizedMatrix matrix = quantize_matrix(weight, format);
    std::vector<float> whole(rows), pieces(rows);
    raw::gemv_rows_quantized(matrix, x.data(), whole.data());
    cpu::RoundedActivations scratch;
    raw::prepare_activations(matrix, x.data(), scratch);
    for (int64_t first : {0, 1, 7, 500}) {  // uneven pieces, as threads may take
      const int64_t last = first == 500 ? rows : (first == 0 ? 1 : first == 1 ? 7 : 500);
      raw::gemv_rows_quantized_serial(matrix, first, last, scratch, pieces.data() + first);
    }
    CHECK(whole == pieces);
    const std::vector<double> expected =
        reference_rows(dequantize(matrix), format == DType::Int8 ? rounded_activations(x) : bfloat16_activations(x));
    for (int64_t row = 0; row < rows; row += 97) CHECK(whole[row] == doctest::Approx(expected[row]).epsilon(1e-4));
  }
}

TEST_CASE("matmul_quantized: x W^T for many rows equals the product with the widened weights (or their bfloat16 product)") {
  struct Case {
    int64_t rows_in, out_features, in_features;
  };
  // Panels of W split unevenly (333 rows in 2 of 167 on 2 threads) and, with
  // in = 1000, panels held to their least rows (128) rather than filled to a size.
  for (const Case& shape :
       {Case{2, 3, 5}, Case{5, 130, 45}, Case{64, 333, 96}, Case{17, 1000, 200}, Case{3, 300, 1000}}) {
    CAPTURE(shape.rows_in);
    CAPTURE(shape.out_features);
    CAPTURE(shape.in_features);
    const Tensor weight = random_matrix(shape.out_features, shape.in_features, 40 + static_cast<uint64_t>(shape.out_features));
    const Tensor x = random_matrix(shape.rows_in, shape.in_features, 50);
    for (DType format : {DType::BFloat16, DType::Int8}) {
      const QuantizedMatrix matrix = quantize_matrix(weight, format);
      // The weights the product reads: int8 ones rounded to bfloat16 where it takes the bfloat16 product.
      const Tensor widened = format == DType::Int8 && takes_bfloat16_product()
                                 ? rounded_to_bfloat16(dequantize(matrix))
                                 : dequantize(matrix);
      const Tensor y = raw::matmul_quantized(x, matrix);
      REQUIRE(y.shape() == Shape{shape.rows_in, shape.out_features});
      for (int64_t row = 0; row < shape.rows_in; ++row) {
        std::vector<float> x_row = raw::select(x, 0, row).to_vector<float>();
        if (format == DType::BFloat16 || takes_bfloat16_product())  // x rounded to bfloat16 too
          for (float& value : x_row) value = float(bfloat16(value));
        const std::vector<double> expected = reference_rows(widened, x_row);
        const std::vector<float> got = raw::select(y, 0, row).to_vector<float>();
        for (int64_t col = 0; col < shape.out_features; ++col)
          CHECK(std::abs(got[col] - expected[col]) <= tolerance(widened, x_row, col));
      }
    }
  }
}

TEST_CASE("matmul_quantized: one row takes the one-row kernel; a strided x is read as it lies") {
  const Tensor weight = random_matrix(50, 64, 60);
  const Tensor x = random_matrix(3, 64, 61);
  const QuantizedMatrix matrix = quantize_matrix(weight, DType::Int8);
  std::vector<float> expected(50);
  const std::vector<float> second_row = raw::select(x, 0, 1).to_vector<float>();
  raw::gemv_rows_quantized(matrix, second_row.data(), expected.data());
  CHECK(raw::matmul_quantized(raw::narrow(x, 0, 1, 1), matrix).to_vector<float>() == expected);
  const Tensor transposed = raw::transpose(random_matrix(64, 3, 62), 0, 1);  // (3, 64), not contiguous
  CHECK(raw::matmul_quantized(transposed, matrix).to_vector<float>() ==
        raw::matmul_quantized(raw::contiguous(transposed), matrix).to_vector<float>());
  CHECK_THROWS_WITH_AS(raw::matmul_quantized(random_matrix(2, 63, 1), matrix),
                       doctest::Contains("x of float32 shape (2, 63) cannot multiply a weight of shape (50, 64)"), Error);
}
