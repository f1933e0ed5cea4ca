#include <doctest/doctest.h>

#include <cmath>

#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/tensor/elementwise.h"
#include "test_functional_helpers.h"

using namespace tg;

TEST_CASE("cross_entropy by hand") {
  // Uniform logits over 4 classes: the loss is ln 4 whatever the target.
  const Tensor logits = zeros({2, 4}, DType::Float64);
  CHECK(nn::cross_entropy(logits, from_vector<int64_t>({1, 3})).item<double>() == doctest::Approx(std::log(4.0)));
  // Logits (0, ln 3): probabilities (1/4, 3/4).
  const Tensor two = from_vector<double>({0.0, std::log(3.0)}, {1, 2});
  CHECK(nn::cross_entropy(two, from_vector<int64_t>({0})).item<double>() == doctest::Approx(std::log(4.0)));
  CHECK(nn::cross_entropy(two, from_vector<int64_t>({1})).item<double>() == doctest::Approx(std::log(4.0 / 3.0)));
}

TEST_CASE("cross_entropy gradient is (softmax - onehot) / N_valid") {
  Tensor logits = from_vector<double>({0.0, std::log(3.0), 5.0, 5.0}, {2, 2});
  logits.set_requires_grad();
  backward(nn::cross_entropy(logits, from_vector<int64_t>({1, -100})));  // row 1 ignored: N_valid = 1
  const std::vector<double> grad = logits.grad().to_vector<double>();
  CHECK(grad[0] == doctest::Approx(0.25));
  CHECK(grad[1] == doctest::Approx(-0.25));
  CHECK(grad[2] == 0.0);
  CHECK(grad[3] == 0.0);
}

TEST_CASE("cross_entropy gradients match central differences (float64, with ignored rows)") {
  Generator generator(12);
  const Tensor logits = test::random_leaf({5, 7}, generator, DType::Float64);
  const Tensor targets = from_vector<int64_t>({3, -1, 0, 6, -1});
  test::check_gradients([&](const std::vector<Tensor>& in) { return nn::cross_entropy(in[0], targets, -1); }, {logits});
}

TEST_CASE("cross_entropy matches its reference composition (float32)") {
  Generator generator(13);
  Tensor logits = randn({37, 65}, generator);
  logits = raw::mul(logits, 4.0);  // spread out the probabilities
  logits.set_requires_grad();
  Tensor targets = randint({37}, 0, 65, generator);
  targets.data<int64_t>()[5] = -100;
  test::check_matches_reference([&](const std::vector<Tensor>& in) { return nn::cross_entropy(in[0], targets); },
                                [&](const std::vector<Tensor>& in) { return nn::cross_entropy_reference(in[0], targets); },
                                {logits});
}

TEST_CASE("cross_entropy of unbatched logits (V) and a 0-d target is one row, as in torch") {
  // Logits (0, ln 3, 0): probabilities (1/5, 3/5, 1/5), so target 1 costs ln(5/3)
  // and the gradient is softmax - onehot = (1/5, -2/5, 1/5).
  const Tensor target = scalar(1, DType::Int64);
  for (const auto& loss_of : {&nn::cross_entropy, &nn::cross_entropy_reference}) {
    Tensor logits = from_vector<double>({0.0, std::log(3.0), 0.0}, {3});
    logits.set_requires_grad();
    const Tensor loss = loss_of(logits, target, -100);
    CHECK(loss.dim() == 0);
    CHECK(loss.item<double>() == doctest::Approx(std::log(5.0 / 3.0)));
    backward(loss);
    const std::vector<double> grad = logits.grad().to_vector<double>();
    REQUIRE(grad.size() == 3);
    CHECK(grad[0] == doctest::Approx(0.2));
    CHECK(grad[1] == doctest::Approx(-0.4));
    CHECK(grad[2] == doctest::Approx(0.2));
  }
  Generator generator(14);
  const Tensor logits = test::random_leaf({7}, generator, DType::Float64);
  const Tensor three = scalar(3, DType::Int64);
  test::check_gradients([&](const std::vector<Tensor>& in) { return nn::cross_entropy(in[0], three); }, {logits});
  test::check_gradients([&](const std::vector<Tensor>& in) { return nn::cross_entropy_reference(in[0], three); },
                        {logits});
  CHECK(std::isnan(nn::cross_entropy(zeros({3}), scalar(-100, DType::Int64)).item<float>()));
  CHECK_THROWS_WITH_AS(nn::cross_entropy(zeros({3}), from_vector<int64_t>({1})),
                       doctest::Contains("logits of shape (3,) need targets of shape (), got (1,)"), Error);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(scalar(0), scalar(0, DType::Int64)),
                       doctest::Contains("logits must be floating with shape (..., V), got float32 of shape ()"), Error);
}

TEST_CASE("cross_entropy with every target ignored is NaN, as in torch") {
  CHECK(std::isnan(nn::cross_entropy(zeros({2, 3}), from_vector<int64_t>({-100, -100})).item<float>()));
}

TEST_CASE("cross_entropy errors name shapes and values") {
  CHECK_THROWS_WITH_AS(nn::cross_entropy(zeros({4, 3}), zeros({5}, DType::Int64)),
                       doctest::Contains("cross_entropy: logits of shape (4, 3) need targets of shape (4,), got (5,)"), Error);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(zeros({2, 3}), from_vector<int64_t>({0, 3})),
                       doctest::Contains("target 3 at row 1 is outside [0, 3)"), Error);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(zeros({2, 3}), zeros({2})), doctest::Contains("targets must be int64, got float32"), Error);
}

TEST_CASE("cross_entropy_reference agrees with the fused op where 0 * inf lurks") {
  for (const bool fused : {true, false}) {
    CAPTURE(fused);
    const auto loss_of = [&](const Tensor& logits, const Tensor& targets) {
      return fused ? nn::cross_entropy(logits, targets) : nn::cross_entropy_reference(logits, targets);
    };
    // Every target ignored: the loss is NaN (0 / 0, as torch), the gradient 0.
    Tensor all_ignored = from_vector<double>({0.5, -1.0, 2.0, 0.0}, {2, 2});
    all_ignored.set_requires_grad();
    const Tensor nan_loss = loss_of(all_ignored, from_vector<int64_t>({-100, -100}));
    CHECK(std::isnan(nan_loss.item<double>()));
    backward(nan_loss);
    CHECK(all_ignored.grad().to_vector<double>() == std::vector<double>{0, 0, 0, 0});

    // An ignored row with a -inf logit counts for nothing.
    Tensor with_inf = from_vector<double>({-INFINITY, 1.0, 0.0, std::log(3.0)}, {2, 2});
    with_inf.set_requires_grad();
    const Tensor loss = loss_of(with_inf, from_vector<int64_t>({-100, 1}));
    CHECK(loss.item<double>() == doctest::Approx(std::log(4.0 / 3.0)));
    backward(loss);
    const std::vector<double> grad = with_inf.grad().to_vector<double>();
    CHECK(grad[0] == 0.0);
    CHECK(grad[1] == 0.0);
    CHECK(grad[2] == doctest::Approx(0.25));
    CHECK(grad[3] == doctest::Approx(-0.25));
  }
}
