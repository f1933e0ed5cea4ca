// Numeric gradient checks of every elementwise op, incl. broadcast and strided inputs.
#include <doctest/doctest.h>

#include <cmath>

#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/ops.h"
#include "tests/autograd/gradcheck_helpers.h"
#include "tinygpt/autograd/node.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

using namespace tg::testing;

TEST_CASE("binary ops, same shapes") {
  const auto a = input({3, 4}, 1), b = input({3, 4}, 2);
  check_gradients([](auto& x) { return add(x[0], x[1]); }, {a, b});
  check_gradients([](auto& x) { return sub(x[0], x[1]); }, {a, b});
  check_gradients([](auto& x) { return mul(x[0], x[1]); }, {a, b});
  check_gradients([](auto& x) { return div(x[0], x[1]); }, {a, input({3, 4}, 3, 0.5, 2)});
  check_gradients([](auto& x) { return pow(x[0], x[1]); }, {input({3, 4}, 4, 0.5, 2), b});
}

TEST_CASE("binary ops with broadcasting sum gradients back to each shape") {
  const auto matrix = input({3, 4}, 5), row = input({4}, 6), column = input({3, 1}, 7);
  check_gradients([](auto& x) { return add(x[0], x[1]); }, {matrix, row});
  check_gradients([](auto& x) { return sub(x[0], x[1]); }, {column, row});
  check_gradients([](auto& x) { return mul(x[0], x[1]); }, {matrix, column});
  check_gradients([](auto& x) { return div(x[0], x[1]); }, {matrix, input({3, 1}, 8, 0.5, 2)});
  check_gradients([](auto& x) { return mul(x[0], x[1]); }, {input({2, 1, 4}, 9), input({3, 1}, 10)});
}

TEST_CASE("non-contiguous inputs") {
  check_gradients([](auto& x) { return mul(x[0], x[1]); }, {transposed_input({4, 3}, 11), input({3, 4}, 12)});
  Generator generator(13);
  Tensor base = uniform({4, 6}, -1, 1, generator, DType::Float64);
  Tensor stepped = raw::slice(base, 1, 0, 6, 2);  // every other column
  stepped.set_requires_grad();
  check_gradients([](auto& x) { return tanh(x[0]); }, {stepped});
}

TEST_CASE("unary ops") {
  check_gradients([](auto& x) { return neg(x[0]); }, {input({5}, 14)});
  check_gradients([](auto& x) { return exp(x[0]); }, {input({2, 3}, 15)});
  check_gradients([](auto& x) { return log(x[0]); }, {input({2, 3}, 16, 0.2, 3)});
  check_gradients([](auto& x) { return sqrt(x[0]); }, {input({2, 3}, 17, 0.2, 3)});
  check_gradients([](auto& x) { return tanh(x[0]); }, {input({2, 3}, 18)});
  check_gradients([](auto& x) { return pow(x[0], 3.0); }, {input({2, 3}, 19)});
  check_gradients([](auto& x) { return pow(x[0], 2.0); }, {input({2, 3}, 20)});
}

TEST_CASE("scalar operators") {
  check_gradients([](auto& x) { return 2.0 - x[0] * 3.0 + x[0] / 4.0; }, {input({4}, 21)});
  check_gradients([](auto& x) { return 1.0 / x[0]; }, {input({4}, 22, 0.5, 2)});
}

TEST_CASE("where and masked_fill route gradients by the mask") {
  Tensor mask = from_vector<bool>({true, false, true, false, false, true}, {2, 3});
  check_gradients([&](auto& x) { return where(mask, x[0], x[1]); }, {input({2, 3}, 23), input({3}, 24)});
  check_gradients([&](auto& x) { return masked_fill(x[0], mask, -5.0); }, {input({2, 3}, 25)});
}

TEST_CASE("comparisons return bool and carry no gradient") {
  Tensor a = input({3}, 26);
  Tensor c = lt(a, zeros({3}, DType::Float64));
  CHECK(c.dtype() == DType::Bool);
  CHECK_FALSE(c.requires_grad());
}

TEST_CASE("gradcheck itself catches a wrong backward") {
  // A deliberately wrong op: forward x^2, backward claims 3x.
  auto wrong_square = [](const std::vector<Tensor>& x) {
    Tensor y = raw::mul(x[0], x[0]);
    return record("wrong_square", {x[0]}, y, [x = x[0].detach()](const Tensor& dy, const std::vector<bool>&) {
      return std::vector<Tensor>{raw::mul(dy, raw::mul(x, 3.0))};
    });
  };
  CHECK_FALSE(gradcheck(wrong_square, {input({3}, 27)}).ok);
}

TEST_CASE("pow's gradients at base 0 are 0 where torch's are, not NaN") {
  // d/da a^b at a = 0: 0 for b = 0 (a^0 is constant), b * 0^(b-1) otherwise.
  const Tensor a = leaf(from_vector<double>({0, 0, 0, 2}, {4}));
  const Tensor b = leaf(from_vector<double>({0, 1, 2, 0}, {4}));
  backward(sum(pow(a, b)));
  CHECK(a.grad().to_vector<double>() == std::vector<double>{0, 1, 0, 0});
  // d/db a^b = a^b log a: at a = 0 with b >= 0 the limit is 0 (0 * log 0 is NaN).
  CHECK(b.grad().to_vector<double>() == std::vector<double>{0, 0, 0, std::log(2.0)});

  const Tensor x = leaf(from_vector<double>({0, 3}, {2}));
  backward(sum(pow(x, 0.0)));
  CHECK(x.grad().to_vector<double>() == std::vector<double>{0, 0});
}
