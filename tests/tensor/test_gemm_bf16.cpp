// cpu::gemm_bf16: c (m, n) = alpha * op(a) (m, k) @ op(b) (k, n) + beta * c with
// bfloat16 operands, both kernels (AVX512-BF16 where this CPU has it, and the
// float32 sgemm fallback everywhere) against a double-precision loop over the
// same bfloat16 values. The suite test_gemm_bf16_avx2 runs these cases again
// with TINYGPT_ISA=avx2, where gemm_bf16 itself takes the fallback.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"

using namespace tg;
using cpu::Bf16GemmKernel;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The kernels this CPU can run.
std::vector<Bf16GemmKernel> runnable_kernels() {
  if (cpu_has_avx512_bf16()) return {Bf16GemmKernel::avx512_bf16, Bf16GemmKernel::float32_sgemm};
  MESSAGE("this CPU lacks AVX512-BF16: only the float32 sgemm kernel runs here");
  return {Bf16GemmKernel::float32_sgemm};
}

struct Problem {
  bool transpose_a, transpose_b;
  int64_t m, n, k;
  float alpha, beta;
  int64_t padding = 0;  // extra elements at the end of every row of a, b and c
};

std::string describe(const Problem& p) {
  return "m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
         (p.transpose_a ? " a^T" : "") + (p.transpose_b ? " b^T" : "") + " alpha=" + std::to_string(p.alpha) +
         " beta=" + std::to_string(p.beta) + " padding=" + std::to_string(p.padding);
}

// A stored matrix (rows, cols) with rows `stride` apart: values in [-1, 1]
// rounded to bfloat16, and NaN in the padding, which no kernel may read.
std::vector<bfloat16> random_bf16(int64_t rows, int64_t cols, int64_t stride, Generator& generator) {
  std::vector<bfloat16> values(static_cast<size_t>(rows * stride), bfloat16(kNaN));
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t col = 0; col < cols; ++col)
      values[row * stride + col] = static_cast<float>(2 * generator.next_uniform() - 1);
  return values;
}

struct Operands {
  int64_t lda, ldb, ldc;
  std::vector<bfloat16> a, b;
  std::vector<float> c;  // before the product
};

Operands make_operands(const Problem& p, uint64_t seed) {
  Generator generator(seed);
  Operands operands;
  const int64_t a_rows = p.transpose_a ? p.k : p.m, a_cols = p.transpose_a ? p.m : p.k;
  const int64_t b_rows = p.transpose_b ? p.n : p.k, b_cols = p.transpose_b ? p.k : p.n;
  operands.lda = a_cols + p.padding;
  operands.ldb = b_cols + p.padding;
  operands.ldc = p.n + p.padding;
  operands.a = random_bf16(a_rows, a_cols, std::max<int64_t>(1, operands.lda), generator);
  operands.b = random_bf16(b_rows, b_cols, std::max<int64_t>(1, operands.ldb), generator);
  // c's padding holds a marker the product must leave alone; beta == 0 fills c with NaN it must ignore.
  operands.c.assign(static_cast<size_t>(p.m * operands.ldc), 7.0f);
  for (int64_t row = 0; row < p.m; ++row)
    for (int64_t col = 0; col < p.n; ++col)
      operands.c[row * operands.ldc + col] = p.beta == 0 ? kNaN : static_cast<float>(generator.next_uniform());
  return operands;
}

std::vector<float> run(Bf16GemmKernel kernel, const Problem& p, const Operands& operands) {
  std::vector<float> c = operands.c;
  cpu::gemm_bf16(kernel, p.transpose_a, p.transpose_b, p.m, p.n, p.k, p.alpha, operands.a.data(), operands.lda,
                 operands.b.data(), operands.ldb, p.beta, c.data(), operands.ldc);
  return c;
}

// Against the product in double of the same bfloat16 values. A float32 sum of k
// terms errs by at most about k * 2^-24 times the sum of their magnitudes; alpha,
// beta and the final rounding add a few more units.
void check_product(Bf16GemmKernel kernel, const Problem& p, uint64_t seed) {
  INFO(cpu::bf16_gemm_kernel_name(kernel), ": ", describe(p));
  const Operands operands = make_operands(p, seed);
  const std::vector<float> c = run(kernel, p, operands);
  auto a_at = [&](int64_t i, int64_t q) {
    return double(operands.a[p.transpose_a ? q * operands.lda + i : i * operands.lda + q]);
  };
  auto b_at = [&](int64_t q, int64_t j) {
    return double(operands.b[p.transpose_b ? j * operands.ldb + q : q * operands.ldb + j]);
  };
  int64_t wrong = 0;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      double product = 0, magnitude = 0;
      for (int64_t q = 0; q < p.k; ++q) {
        product += a_at(i, q) * b_at(q, j);
        magnitude += std::abs(a_at(i, q) * b_at(q, j));
      }
      const double before = operands.c[i * operands.ldc + j];
      const double expected = p.alpha * product + (p.beta == 0 ? 0.0 : p.beta * before);
      const double scale = std::abs(p.alpha) * magnitude + std::abs(p.beta == 0 ? 0.0 : p.beta * before);
      const double tolerance = (static_cast<double>(p.k) + 4) * std::ldexp(1.0, -24) * scale + 1e-30;
      const float actual = c[i * operands.ldc + j];
      if (!(std::abs(actual - expected) <= tolerance) && wrong++ < 5)
        FAIL_CHECK("c(", i, ", ", j, ") = ", actual, ", expected ", expected, " +- ", tolerance);
    }
    for (int64_t j = p.n; j < operands.ldc; ++j) REQUIRE(c[i * operands.ldc + j] == 7.0f);  // padding untouched
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("gemm_bf16: a 2x3 times 3x2 product checked by hand, exact in both kernels") {
  const std::vector<bfloat16> a = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};     // (2, 3)
  const std::vector<bfloat16> b = {7.0f, 8.0f, 9.0f, 10.0f, 11.0f, 12.0f};  // (3, 2)
  for (Bf16GemmKernel kernel : runnable_kernels()) {
    INFO(cpu::bf16_gemm_kernel_name(kernel));
    std::vector<float> c(4, kNaN);
    cpu::gemm_bf16(kernel, false, false, 2, 2, 3, 1.0f, a.data(), 3, b.data(), 2, 0.0f, c.data(), 2);
    // [1*7 + 2*9 + 3*11, 1*8 + 2*10 + 3*12] = [58, 64]; [139, 154] likewise.
    CHECK(c == std::vector<float>{58, 64, 139, 154});
    // a^T (3, 2) stored as a: (2, 3) read transposed; b^T likewise: c = 2 * a^T @ b^T + 1 * c.
    std::vector<float> c3(9, 1.0f);
    cpu::gemm_bf16(kernel, true, true, 3, 3, 2, 2.0f, a.data(), 3, b.data(), 2, 1.0f, c3.data(), 3);
    // a^T = [[1,4],[2,5],[3,6]], b^T = [[7,9,11],[8,10,12]]: row 0 = [1*7+4*8, 1*9+4*10, 1*11+4*12] = [39, 49, 59].
    CHECK(c3 == std::vector<float>{79, 99, 119, 109, 137, 165, 139, 175, 211});
  }
}

TEST_CASE("gemm_bf16: every shape, transpose, alpha and beta against a double loop") {
  // Sizes around the kernel's tiles (8 rows x 48 columns), k blocks (384), row
  // blocks (192) and column blocks (3072); odd k; one row or column; big enough
  // to run on both threads (m n k >= 2^20) with one row block or several; and
  // for the float32 fallback, several widened panels of op(a)'s rows (600 x 40)
  // or of op(b)'s columns (40 x 700), the last one short.
  const std::vector<std::array<int64_t, 3>> shapes = {
      {1, 1, 1},     {1, 1, 2},    {2, 3, 1},     {7, 5, 3},      {8, 48, 16},  {9, 49, 17},
      {17, 47, 255}, {33, 97, 385}, {16, 96, 769}, {1, 130, 33},  {130, 1, 33}, {200, 150, 64},
      {3, 3100, 5},  {1, 3100, 520}, {64, 64, 1},  {600, 40, 33}, {40, 700, 520}};
  const std::vector<std::array<float, 2>> alpha_betas = {{1.0f, 0.0f}, {0.5f, 2.0f}, {-1.5f, 1.0f}};
  uint64_t seed = 1;
  for (Bf16GemmKernel kernel : runnable_kernels())
    for (const auto& [m, n, k] : shapes)
      for (int transposes = 0; transposes < 4; ++transposes) {
        const auto [alpha, beta] = alpha_betas[seed % alpha_betas.size()];
        const int64_t padding = seed % 3 == 0 ? 3 : 0;
        check_product(kernel, {(transposes & 1) != 0, (transposes & 2) != 0, m, n, k, alpha, beta, padding}, seed++);
      }
}

TEST_CASE("gemm_bf16: beta = 0 overwrites NaN in c; alpha = 0 or k = 0 only scales c and reads neither operand") {
  for (Bf16GemmKernel kernel : runnable_kernels()) {
    INFO(cpu::bf16_gemm_kernel_name(kernel));
    check_product(kernel, {false, true, 37, 53, 29, 1.0f, 0.0f, 2}, 99);  // c starts as NaN (make_operands)
    const std::vector<bfloat16> poisoned(64, bfloat16(kNaN));
    std::vector<float> c = {1, 2, 3, 4, 5, 6};  // (2, 3)
    cpu::gemm_bf16(kernel, false, false, 2, 3, 4, 0.0f, poisoned.data(), 4, poisoned.data(), 3, 0.5f, c.data(), 3);
    CHECK(c == std::vector<float>{0.5f, 1, 1.5f, 2, 2.5f, 3});
    cpu::gemm_bf16(kernel, false, false, 2, 3, 0, 1.0f, nullptr, 1, nullptr, 3, 2.0f, c.data(), 3);
    CHECK(c == std::vector<float>{1, 2, 3, 4, 5, 6});
    std::fill(c.begin(), c.end(), kNaN);
    cpu::gemm_bf16(kernel, false, false, 2, 3, 0, 1.0f, nullptr, 1, nullptr, 3, 0.0f, c.data(), 3);
    CHECK(c == std::vector<float>(6, 0.0f));
  }
}

TEST_CASE("gemm_bf16: the two kernels agree on a training-sized product, and threads do not change the bits") {
  const Problem p{false, true, 256, 384, 384, 1.0f, 0.0f};  // x (B*T, C) @ W^T, W (3C, C) as stored
  const Operands operands = make_operands(p, 5);
  const std::vector<Bf16GemmKernel> kernels = runnable_kernels();
  const std::vector<float> first = run(kernels.front(), p, operands);
  for (Bf16GemmKernel kernel : kernels) {
    INFO(cpu::bf16_gemm_kernel_name(kernel));
    const std::vector<float> c = run(kernel, p, operands);
    double largest_difference = 0;
    for (size_t i = 0; i < c.size(); ++i)
      largest_difference = std::max(largest_difference, double(std::abs(c[i] - first[i])));
    CHECK(largest_difference < 1e-4);  // |c| ~ sqrt(384)/3: float sums in two orders
  }
  // Each element's sum runs in one fixed order, whichever thread computes its tile: the AVX512-BF16
  // kernel's tiles, or OpenBLAS's where its kernels sum the same way on any thread count. Where they do
  // not (Haswell's, Zen's), the sgemm fallback is not either, and its callers cut each product in tiles
  // fixed by its shape (autograd/linear_op.cpp, tested in tests/training/).
  if (kernels.front() == Bf16GemmKernel::float32_sgemm && !blas_results_independent_of_threads()) {
    MESSAGE("OpenBLAS's " << blas_kernels() << " kernels depend on the thread count: not checked here");
    return;
  }
  const int threads = num_threads();
  set_num_threads(1);
  const std::vector<float> one_thread = run(kernels.front(), p, operands);
  set_num_threads(threads);
  CHECK(run(kernels.front(), p, operands) == one_thread);
}

TEST_CASE("gemm_bf16: the kernel is chosen by the CPU and TINYGPT_ISA") {
  const char* asked = std::getenv("TINYGPT_ISA");
  const bool avx2_forced = asked && std::string(asked) == "avx2";
  const Bf16GemmKernel expected =
      cpu_has_avx512_bf16() && !avx2_forced ? Bf16GemmKernel::avx512_bf16 : Bf16GemmKernel::float32_sgemm;
  CHECK(cpu::bf16_gemm_kernel() == expected);
  CHECK(std::string(cpu::bf16_gemm_kernel_name(Bf16GemmKernel::avx512_bf16)) == "AVX512-BF16");
  CHECK(std::string(cpu::bf16_gemm_kernel_name(Bf16GemmKernel::float32_sgemm)) == "float32 sgemm");
  // The dispatching entry point computes what its kernel does.
  const Problem p{true, false, 20, 60, 21, 1.0f, 0.5f};
  const Operands operands = make_operands(p, 11);
  std::vector<float> c = operands.c;
  cpu::gemm_bf16(p.transpose_a, p.transpose_b, p.m, p.n, p.k, p.alpha, operands.a.data(), operands.lda,
                 operands.b.data(), operands.ldb, p.beta, c.data(), operands.ldc);
  CHECK(c == run(expected, p, operands));
}

TEST_CASE("gemm_bf16: misuse throws, naming the argument") {
  const std::vector<bfloat16> a(16), b(16);
  std::vector<float> c(16);
  auto message_of = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const Error& error) {
      return error.what();
    }
    return "(no error)";
  };
  CHECK(message_of([&] {
          cpu::gemm_bf16(false, false, -1, 2, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2);
        }) == "gemm_bf16: sizes must be in [0, 2^31), got m=-1, n=2, k=2");
  CHECK(message_of([&] { cpu::gemm_bf16(false, false, 2, 2, 3, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2); }) ==
        "gemm_bf16: lda=2 must be at least the 3 elements of a stored row");
  CHECK(message_of([&] { cpu::gemm_bf16(false, true, 2, 2, 3, 1.0f, a.data(), 3, b.data(), 2, 0.0f, c.data(), 2); }) ==
        "gemm_bf16: ldb=2 must be at least the 3 elements of a stored row (b transposed)");
  CHECK(message_of([&] { cpu::gemm_bf16(false, false, 2, 4, 2, 1.0f, a.data(), 2, b.data(), 4, 0.0f, c.data(), 3); }) ==
        "gemm_bf16: ldc=3 must be at least n=4");
  if (!cpu_has_avx512_bf16())
    CHECK(message_of([&] {
            cpu::gemm_bf16(Bf16GemmKernel::avx512_bf16, false, false, 1, 1, 1, 1.0f, a.data(), 1, b.data(), 1, 0.0f,
                           c.data(), 1);
          }) == "gemm_bf16: the AVX512-BF16 kernel was asked for, but this CPU lacks AVX512-BF16");
}
