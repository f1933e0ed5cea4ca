// cpu::gemv_rows, the kernel of batch-1 generation: out (N) = alpha * w (N, K) @ x (K) + beta * out,
// against a textbook loop in double, and through raw::matmul's one-row dispatch.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/cpu/gemv.h"
#include "tinygpt/tensor/matmul.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

std::vector<float> random_floats(int64_t count, Generator& generator) {
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = static_cast<float>(2 * generator.next_uniform() - 1);
  return values;
}

// alpha * w (N, K) @ x (K) + beta * out, in double; rows of w are w_row_stride apart.
std::vector<double> naive_gemv(int64_t n, int64_t k, double alpha, const std::vector<float>& w, int64_t w_row_stride,
                               const std::vector<float>& x, double beta, const std::vector<float>& out) {
  std::vector<double> expected(static_cast<size_t>(n));
  for (int64_t row = 0; row < n; ++row) {
    double dot = 0;
    for (int64_t col = 0; col < k; ++col) dot += double(w[row * w_row_stride + col]) * x[col];
    expected[row] = alpha * dot + (beta == 0 ? 0.0 : beta * out[row]);
  }
  return expected;
}

// The kernel (parallel and serial) and the plain reference loop against the double loop.
void check_gemv(int64_t n, int64_t k, int64_t w_row_stride, float alpha, float beta) {
  Generator generator(static_cast<uint64_t>(n * 1000 + k));
  const std::vector<float> w = random_floats(n * w_row_stride, generator), x = random_floats(k, generator);
  const std::vector<float> out_before = random_floats(n, generator);
  const std::vector<double> expected = naive_gemv(n, k, alpha, w, w_row_stride, x, beta, out_before);
  std::vector<float> fast = out_before, serial = out_before, reference = out_before;
  cpu::gemv_rows(n, k, alpha, w.data(), w_row_stride, x.data(), beta, fast.data());
  cpu::gemv_rows_serial(n, k, alpha, w.data(), w_row_stride, x.data(), beta, serial.data());
  cpu::gemv_rows_reference(n, k, alpha, w.data(), w_row_stride, x.data(), beta, reference.data());
  CHECK(serial == fast);  // one kernel, whichever thread runs a row: the same bits
  // A float dot of K terms in [-1, 1]: the error grows about like sqrt(K) ulps.
  const double tolerance = 1e-5 * std::sqrt(static_cast<double>(k) + 1);
  for (int64_t row = 0; row < n; ++row) {
    CAPTURE(n);
    CAPTURE(k);
    CAPTURE(row);
    REQUIRE(std::abs(fast[row] - expected[row]) <= tolerance * (1 + std::abs(expected[row])));
    REQUIRE(std::abs(reference[row] - expected[row]) <= tolerance * (1 + std::abs(expected[row])));
  }
}

}  // namespace

TEST_CASE("gemv_rows: a 2x3 product checked by hand") {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6}, x = {1, 0, -1};
  std::vector<float> out = {10, 20};
  cpu::gemv_rows(2, 3, 1, w.data(), 3, x.data(), 0, out.data());
  CHECK(out == std::vector<float>{-2, -2});  // 1 - 3, 4 - 6
  cpu::gemv_rows(2, 3, 2, w.data(), 3, x.data(), 0.5f, out.data());
  CHECK(out == std::vector<float>{-5, -5});  // 2 * -2 + 0.5 * -2
}

TEST_CASE("gemv_rows: odd sizes, every tail of the 32- and 8-column steps") {
  for (const int64_t n : {1, 3, 17, 130})
    for (const int64_t k : {1, 7, 8, 9, 31, 32, 33, 71, 768, 771}) check_gemv(n, k, k, 1, 0);
}

TEST_CASE("gemv_rows: large enough to run in parallel, uneven chunks") {
  check_gemv(2307, 768, 768, 1, 0);  // 2307 rows: chunks of 64 leave a short last one
  check_gemv(777, 3075, 3075, 1, 0);
}

TEST_CASE("gemv_rows: rows further apart than K (a slice of a wider matrix)") {
  check_gemv(5, 19, 24, 1, 0);
  check_gemv(300, 100, 131, 1, 0);
}

TEST_CASE("gemv_rows: alpha and beta accumulate into out as in BLAS") {
  check_gemv(13, 45, 45, 0.5f, 1);
  check_gemv(260, 257, 257, -2, 0.25f);
  // beta == 0 overwrites: NaN already in out must not leak into the result.
  const std::vector<float> w = {1, 1}, x = {2, 3};
  std::vector<float> out = {std::numeric_limits<float>::quiet_NaN()};
  cpu::gemv_rows(1, 2, 1, w.data(), 2, x.data(), 0, out.data());
  CHECK(out[0] == 5);
  out[0] = std::numeric_limits<float>::quiet_NaN();
  cpu::gemv_rows_reference(1, 2, 1, w.data(), 2, x.data(), 0, out.data());
  CHECK(out[0] == 5);
}

TEST_CASE("matmul: one row times a transposed weight goes through gemv_rows") {
  Generator generator(7);
  const Tensor w = randn({301, 70}, generator);  // (out, in), as a Linear stores it
  const std::vector<float> wv = w.to_vector<float>();
  const auto check_row = [&](const Tensor& x_row) {  // x_row (1, 70)
    const std::vector<float> xv = raw::contiguous(x_row).to_vector<float>();
    const std::vector<double> expected = naive_gemv(301, 70, 1, wv, 70, xv, 0, std::vector<float>(301));
    const std::vector<float> actual = raw::matmul(x_row, raw::transpose(w, 0, 1)).to_vector<float>();  // (1, 301)
    REQUIRE(actual.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) REQUIRE(actual[i] == doctest::Approx(expected[i]).epsilon(1e-5));
  };
  check_row(randn({1, 70}, generator));
  // A row whose elements are not adjacent: a column of a (70, 3) tensor read as a row.
  check_row(raw::transpose(raw::slice(randn({70, 3}, generator), 1, 1, 2), 0, 1));
}

TEST_CASE("gemv_rows_serial_batch: each row of activations gets gemv_rows_serial's bits, 1 to 8 of them") {
  for (const int64_t k : {1, 7, 8, 31, 32, 33, 72, 100}) {
    for (const int64_t count : {1, 2, 3, 4, 5, 8}) {
      CAPTURE(k);
      CAPTURE(count);
      Generator generator(static_cast<uint64_t>(k * 100 + count));
      const int64_t n = 5, stride = k + 3;
      const std::vector<float> w = random_floats(n * stride, generator);
      std::vector<std::vector<float>> xs, outs(count, std::vector<float>(n, std::nanf(""))), alone;
      std::vector<const float*> x_rows;
      std::vector<float*> out_rows;
      for (int64_t s = 0; s < count; ++s) {
        xs.push_back(random_floats(k, generator));
        alone.emplace_back(n);
        cpu::gemv_rows_serial(n, k, 1.0f, w.data(), stride, xs.back().data(), 0.0f, alone.back().data());
      }
      for (int64_t s = 0; s < count; ++s) {
        x_rows.push_back(xs[s].data());
        out_rows.push_back(outs[s].data());
      }
      cpu::gemv_rows_serial_batch(n, k, w.data(), stride, x_rows.data(), out_rows.data(), count);
      for (int64_t s = 0; s < count; ++s) CHECK(outs[s] == alone[s]);
    }
  }
}
