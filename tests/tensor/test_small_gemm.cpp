// cpu::small_gemm, attention's per-head products: c (m, n) = alpha * a (m, k) @ b (k, n) + beta * c,
// against a textbook loop in double, over every edge of its tiles; and the
// vector helpers beside it (tensor/cpu/simd.h). These are the copies compiled for
// AVX2; the AVX-512 ones are checked against them through attention (tests/nn/test_kernel_table.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/cpu/simd.h"
#include "tinygpt/tensor/cpu/small_gemm.h"

using namespace tg;

namespace {

template <class T>
std::vector<T> random_values(int64_t count, Generator& generator) {
  std::vector<T> values(static_cast<size_t>(count));
  for (T& value : values) value = static_cast<T>(2 * generator.next_uniform() - 1);
  return values;
}

// One product's operands: a stored (m, k) or, when transposed, (k, m); b (k, n)
// and c (m, n) in rows wider than they need (ldb = n + 3, ldc = n + 5), so that
// reading or writing past a row's end would show.
template <class T>
struct Product {
  int64_t m, n, k;
  bool transposed_a;
  std::vector<T> a, b, c;
  int64_t ldb, ldc;
  int64_t a_row_stride() const { return transposed_a ? 1 : k; }
  int64_t a_col_stride() const { return transposed_a ? m : 1; }
  T a_at(int64_t i, int64_t p) const { return a[i * a_row_stride() + p * a_col_stride()]; }

  Product(int64_t m_, int64_t n_, int64_t k_, bool transposed_a_, uint64_t seed)
      : m(m_), n(n_), k(k_), transposed_a(transposed_a_), ldb(n_ + 3), ldc(n_ + 5) {
    Generator generator(seed);
    a = random_values<T>(m * k, generator);
    b = random_values<T>(k * ldb, generator);
    c = random_values<T>(m * ldc, generator);
  }

  void run(T alpha, T beta) {
    cpu::small_gemm(m, n, k, alpha, a.data(), b.data(), beta, c.data(),
                    {.a_row = a_row_stride(), .a_col = a_col_stride(), .b_row = ldb, .c_row = ldc});
  }
};

// small_gemm against the double loop; c's padding must be untouched.
template <class T>
void check_product(int64_t m, int64_t n, int64_t k, bool transposed_a, T alpha, T beta) {
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  CAPTURE(transposed_a);
  Product<T> product(m, n, k, transposed_a, static_cast<uint64_t>(m * 10000 + n * 100 + k));
  const std::vector<T> c_before = product.c;
  product.run(alpha, beta);
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < product.ldc; ++j) {
      const T got = product.c[i * product.ldc + j];
      if (j >= n) {  // padding
        CHECK(got == c_before[i * product.ldc + j]);
        continue;
      }
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double term = double(product.a_at(i, p)) * double(product.b[p * product.ldb + j]);
        sum += term;
        magnitude += std::fabs(term);
      }
      const double expected = alpha * sum + beta * double(c_before[i * product.ldc + j]);
      CHECK(std::fabs(got - expected) <= tolerance * (1 + magnitude + std::fabs(expected)));
    }
  }
}

}  // namespace

TEST_CASE("small_gemm: every tile edge (rows, column panels, single columns), float and double") {
  // Rows around the tile heights (6 and 8), columns around one and two vectors
  // of float (8 and 16 lanes) and double (4 and 8), depths from 0.
  for (const int64_t m : {1, 5, 6, 7, 8, 9, 13, 16, 17, 64})
    for (const int64_t n : {1, 3, 4, 8, 12, 16, 17, 24, 31, 32, 33, 48, 64, 70})
      for (const int64_t k : {0, 1, 7, 32})
        for (const bool transposed_a : {false, true}) {
          check_product<float>(m, n, k, transposed_a, 1.0f, 0.0f);
          check_product<double>(m, n, k, transposed_a, 1.0, 0.0);
        }
}

TEST_CASE("small_gemm: alpha scales the product and beta adds c; beta 0 ignores c, even NaN") {
  check_product<float>(17, 40, 9, false, 0.125f, 1.0f);
  check_product<float>(17, 40, 9, true, -2.0f, 0.5f);
  check_product<double>(9, 20, 64, false, 0.5, -1.0);

  Product<float> product(9, 33, 5, false, 7);
  std::fill(product.c.begin(), product.c.end(), std::numeric_limits<float>::quiet_NaN());
  product.run(1.0f, 0.0f);
  for (int64_t i = 0; i < product.m; ++i)
    for (int64_t j = 0; j < product.n; ++j) CHECK(std::isfinite(product.c[i * product.ldc + j]));
}

TEST_CASE("small_gemm: an element's sum is the same bits whatever block of c it is computed in") {
  // Attention multiplies blocks of a head's rows and keys: the same (i, j)
  // must not depend on which tile (or the one-column path) computes it, with
  // or without beta. The sanitize build (-O1) runs this too, where the
  // compiler forms no FMA by itself.
  for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{0.25f, 0.75f}}) {
    Product<float> whole(20, 40, 32, false, 11);
    const std::vector<float> c_before = whole.c;
    whole.run(alpha, beta);
    for (const int64_t first_row : {0, 3, 8, 19})
      for (const int64_t first_col : {0, 5, 16, 39}) {
        const int64_t rows = std::min<int64_t>(7, whole.m - first_row);
        const int64_t cols = std::min<int64_t>(9, whole.n - first_col);
        std::vector<float> part(static_cast<size_t>(rows * cols));
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) part[i * cols + j] = c_before[(first_row + i) * whole.ldc + first_col + j];
        cpu::small_gemm(rows, cols, whole.k, alpha, whole.a.data() + first_row * whole.k, whole.b.data() + first_col,
                        beta, part.data(), {.a_row = whole.k, .a_col = 1, .b_row = whole.ldb, .c_row = cols});
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            CHECK(part[i * cols + j] == whole.c[(first_row + i) * whole.ldc + first_col + j]);
      }
  }
}

TEST_CASE("small_gemm: transpose_rows turns (rows, cols) with strided rows into (cols, rows)") {
  Generator generator(3);
  const int64_t rows = 13, cols = 5, from_stride = 9, to_stride = 15;
  const std::vector<float> from = random_values<float>(rows * from_stride, generator);
  std::vector<float> to(static_cast<size_t>(cols * to_stride), -7.0f);
  cpu::transpose_rows(rows, cols, from.data(), from_stride, to.data(), to_stride);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < to_stride; ++i)
      CHECK(to[j * to_stride + i] == (i < rows ? from[i * from_stride + j] : -7.0f));
}

TEST_CASE("simd: max_of, sum_of and dot against plain loops, every length from 1 to 40") {
  Generator generator(5);
  for (int64_t count = 1; count <= 40; ++count) {
    CAPTURE(count);
    std::vector<float> a = random_values<float>(count, generator), b = random_values<float>(count, generator);
    // The largest anywhere: first, in the middle, last (a lane of a whole vector or a leftover).
    for (const int64_t at : {int64_t{0}, count / 2, count - 1}) {
      std::vector<float> values = a;
      values[at] = 5.0f;
      CHECK(cpu::simd::max_of(values.data(), count) == 5.0f);
    }
    std::vector<float> all_negative(static_cast<size_t>(count), -std::numeric_limits<float>::infinity());
    all_negative[count - 1] = -3.0f;
    CHECK(cpu::simd::max_of(all_negative.data(), count) == -3.0f);
    CHECK(cpu::simd::max_of(all_negative.data(), 0) == -std::numeric_limits<float>::infinity());

    double sum = 0, product_sum = 0, magnitude = 0;
    for (int64_t i = 0; i < count; ++i) {
      sum += a[i];
      product_sum += double(a[i]) * b[i];
      magnitude += std::fabs(a[i]) + std::fabs(double(a[i]) * b[i]);
    }
    CHECK(std::fabs(cpu::simd::sum_of(a.data(), count) - sum) <= 1e-6 * (1 + magnitude));
    CHECK(std::fabs(cpu::simd::dot(a.data(), b.data(), count) - product_sum) <= 1e-6 * (1 + magnitude));
  }
}
