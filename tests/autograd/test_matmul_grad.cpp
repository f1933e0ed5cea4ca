// Gradients of the matrix product: exact small cases and numeric checks.
#include <doctest/doctest.h>

#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/ops.h"
#include "tests/autograd/gradcheck_helpers.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

using namespace tg::testing;

namespace {

void check_matmul(const Tensor& a, const Tensor& b) {
  const GradcheckResult result = gradcheck([](auto& x) { return matmul(x[0], x[1]); }, {a, b});
  INFO("shapes ", shape_str(a.shape()), " @ ", shape_str(b.shape()), ": ", result.report);
  CHECK(result.ok);
}

}  // namespace

TEST_CASE("matmul backward: a row times a column, by hand") {
  const Tensor a = leaf(from_vector<float>({1, 2}, {1, 2}));
  const Tensor b = leaf(from_vector<float>({3, 4}, {2, 1}));
  const Tensor c = matmul(a, b);  // [[1*3 + 2*4]] = [[11]]
  CHECK(c.item<float>() == 11);
  backward(c);
  CHECK(a.grad().to_vector<float>() == std::vector<float>{3, 4});  // dA = dC @ B^T
  CHECK(b.grad().to_vector<float>() == std::vector<float>{1, 2});  // dB = A^T @ dC
  CHECK(a.grad().shape() == Shape{1, 2});
  CHECK(b.grad().shape() == Shape{2, 1});
}

TEST_CASE("matmul backward: only the gradients that are needed") {
  const Tensor a = leaf(ones({2, 3}));
  const Tensor b = ones({3, 2});  // a constant
  backward(matmul(a, b), ones({2, 2}));
  CHECK(a.grad().to_vector<float>() == std::vector<float>(6, 2.0f));  // each row of B sums to 2
  CHECK_FALSE(b.grad().defined());
  NoGradGuard no_grad;
  CHECK_FALSE(matmul(a, b).requires_grad());
}

TEST_CASE("matmul backward: a weight shared by every batch sums its gradient over the batch") {
  const Tensor x = ones({2, 3, 4});  // (B, T, C)
  const Tensor w = leaf(ones({4, 5}));
  backward(matmul(x, w), ones({2, 3, 5}));
  CHECK(w.grad().shape() == Shape{4, 5});
  CHECK(w.grad().to_vector<float>() == std::vector<float>(20, 6.0f));  // B * T = 6 rows of ones
}

TEST_CASE("matmul gradcheck: 2-D, transposed and sliced inputs") {
  check_matmul(input({3, 4}, 1), input({4, 5}, 2));
  check_matmul(transposed_input({4, 3}, 3), input({4, 2}, 4));
  check_matmul(input({2, 4}, 5), transposed_input({3, 4}, 6));  // A @ B^T with B stored (N, K)
  check_matmul(transposed_input({4, 3}, 7), transposed_input({2, 4}, 8));
  check_matmul(leaf(raw::slice(values({3, 8}, 9), 1, 0, 8, 2)), input({4, 2}, 10));  // stepped columns
}

TEST_CASE("matmul gradcheck: batched, with broadcast batch dims") {
  check_matmul(input({2, 3, 4}, 11), input({2, 4, 2}, 12));
  check_matmul(input({2, 3, 4}, 13), input({4, 2}, 14));        // one weight for every batch
  check_matmul(input({3, 4}, 15), input({2, 4, 2}, 16));        // one left matrix for every batch
  check_matmul(input({2, 1, 3, 4}, 17), input({3, 4, 2}, 18));  // both broadcast -> (2, 3, 3, 2)
  check_matmul(transposed_input({2, 4, 3}, 19), transposed_input({1, 2, 4}, 20));
  check_matmul(leaf(raw::permute(values({3, 2, 4}, 21), {1, 0, 2})), input({4, 2}, 22));  // batch not outermost
}

TEST_CASE("matmul gradcheck: 1-D operands") {
  check_matmul(input({4}, 23), input({4}, 24));         // dot product
  check_matmul(input({4}, 25), input({4, 3}, 26));      // row vector
  check_matmul(input({3, 4}, 27), input({4}, 28));      // column vector
  check_matmul(input({4}, 29), input({2, 4, 3}, 30));   // vector times a batch
  check_matmul(input({2, 3, 4}, 31), input({4}, 32));
}

TEST_CASE("matmul backward with an empty K or N: empty or zero gradients, as torch") {
  // (2, 3, K) @ (K, N): a batched operand times a 2-D one, whose gradient folds
  // the batch into the rows.
  for (const auto& [k, n] : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {5, 0}, {0, 0}}) {
    CAPTURE(k);
    CAPTURE(n);
    const Tensor a = leaf(ones({2, 3, k})), b = leaf(ones({k, n}));
    const Tensor c = matmul(a, b);
    CHECK(c.shape() == Shape{2, 3, n});
    backward(sum(c));
    CHECK(a.grad().shape() == Shape{2, 3, k});
    CHECK(b.grad().shape() == Shape{k, n});
    for (float value : a.grad().to_vector<float>()) CHECK(value == 0.0f);  // N = 0: nothing flowed back
    for (float value : b.grad().to_vector<float>()) CHECK(value == 0.0f);  // K = 0 or N = 0: empty or zero
  }
}
