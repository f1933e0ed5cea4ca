// The layers: hand-checkable values, shapes, gradient checks in float64, errors.
#include <doctest/doctest.h>

#include <cmath>

#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/block.h"
#include "tinygpt/nn/dropout.h"
#include "tinygpt/nn/embedding.h"
#include "tinygpt/nn/gelu.h"
#include "tinygpt/nn/init.h"
#include "tinygpt/nn/layer_norm.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/positional.h"
#include "tinygpt/tensor/view.h"

using namespace tg;
using namespace tg::nn;

namespace {

void check_close(const std::vector<double>& actual, const std::vector<double>& expected, double tolerance = 1e-6) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(tolerance));
}

TransformerOptions tiny_options(DType dtype = DType::Float64) {
  TransformerOptions options;
  options.n_embd = 8;
  options.n_head = 2;
  options.dtype = dtype;
  return options;
}

// Every parameter of `module` drawn from N(0, 0.3^2) (LayerNorm weights around 1),
// so gradient checks see generic values rather than the zeros layers start with.
void randomize(Module& module, uint64_t seed) {
  Generator generator(seed);
  for (const auto& [name, parameter] : module.named_parameters())
    init::normal_(parameter, name.ends_with("ln_1.weight") || name.ends_with("ln_2.weight") ? 1.0 : 0.0, 0.3, generator);
}

}  // namespace

TEST_CASE("Linear: y = x W^T + b, by hand") {
  Linear linear(2, 3);
  raw::copy_(linear.weight(), from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  raw::copy_(linear.bias(), from_vector<float>({0.5, -1, 2}));
  const Tensor y = linear.forward(from_vector<float>({1, 1, 0, 2}, {2, 2}));
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.to_vector<float>() == std::vector<float>{3.5, 6, 13, 4.5, 7, 14});
}

TEST_CASE("Linear: (B, T, C) input equals the rows one at a time; no bias option") {
  Linear linear(4, 3, false);
  Generator generator(1);
  init::normal_(linear.weight(), 0, 1, generator);
  CHECK(linear.named_parameters().size() == 1);
  const Tensor x = randn({2, 5, 4}, generator);
  const Tensor y = linear.forward(x);
  REQUIRE(y.shape() == Shape{2, 5, 3});
  for (int64_t b = 0; b < 2; ++b) {
    const Tensor rows = linear.forward(raw::select(x, 0, b));  // (5, 3)
    const std::vector<float> expected = rows.to_vector<float>();
    const std::vector<float> actual = raw::select(y, 0, b).to_vector<float>();
    for (size_t i = 0; i < expected.size(); ++i) CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

TEST_CASE("Linear: gradcheck in float64, including a transposed (non-contiguous) input") {
  Linear linear(3, 2, true, DType::Float64);
  Generator generator(2);
  init::normal_(linear.weight(), 0, 1, generator);
  init::normal_(linear.bias(), 0, 1, generator);
  Tensor x = randn({2, 4, 3}, generator, DType::Float64).set_requires_grad();
  Tensor x_transposed = raw::transpose(randn({2, 3, 4}, generator, DType::Float64), 1, 2);
  x_transposed.set_requires_grad();
  for (const Tensor& input : {x, x_transposed}) {
    const GradcheckResult result =
        gradcheck([&](const std::vector<Tensor>& in) { return linear.forward(in[0]); }, {input, linear.weight(), linear.bias()});
    INFO(result.report);
    CHECK(result.ok);
  }
}

TEST_CASE("Linear: a wrong input width names the shapes") {
  Linear linear(3, 2);
  CHECK_THROWS_WITH_AS(linear.forward(zeros({2, 4})), doctest::Contains("Linear: input of shape (2, 4) needs a last dim of 3"),
                       Error);
}

TEST_CASE("Embedding: rows by id; repeated ids add their gradients") {
  Embedding embedding(4, 2);
  raw::copy_(embedding.weight(), from_vector<float>({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2}));
  const Tensor ids = from_vector<int64_t>({3, 1, 3}, {1, 3});
  const Tensor rows = embedding.forward(ids);
  CHECK(rows.shape() == Shape{1, 3, 2});
  CHECK(rows.to_vector<float>() == std::vector<float>{30, 31, 10, 11, 30, 31});
  backward(sum(rows));
  CHECK(embedding.weight().grad().to_vector<float>() == std::vector<float>{0, 0, 1, 1, 0, 0, 2, 2});
}

TEST_CASE("LayerNorm: normalises the last dim, weight 1 and bias 0 at the start") {
  LayerNorm norm(3);
  const Tensor y = norm.forward(from_vector<float>({1, 2, 3}, {1, 3}));
  const double scale = 1 / std::sqrt(2.0 / 3.0 + 1e-5);  // mean 2, biased variance 2/3
  const std::vector<float> values = y.to_vector<float>();
  CHECK(values[0] == doctest::Approx(-scale));
  CHECK(values[1] == doctest::Approx(0.0));
  CHECK(values[2] == doctest::Approx(scale));
  LayerNorm without_bias(3, false);
  CHECK(without_bias.named_parameters().size() == 1);
  CHECK(without_bias.forward(from_vector<float>({1, 2, 3}, {1, 3})).to_vector<float>() == values);
}

TEST_CASE("GELU module: tanh approximation and exact erf at x = 1") {
  const Tensor one = from_vector<double>({1.0});
  CHECK(GELU(GeluApproximation::Tanh).forward(one).item<double>() == doctest::Approx(0.8411919906082768).epsilon(1e-12));
  CHECK(GELU(GeluApproximation::Erf).forward(one).item<double>() == doctest::Approx(0.8413447460685429).epsilon(1e-12));
}

TEST_CASE("Dropout: active in training, the identity in eval") {
  Dropout dropout(0.5, std::make_shared<Generator>(7));
  const Tensor x = ones({1000});
  const std::vector<float> trained = dropout.forward(x).to_vector<float>();
  int64_t zeros_seen = 0;
  for (float value : trained) {
    CHECK((value == 0.0f || value == 2.0f));  // survivors scaled by 1 / (1 - p)
    zeros_seen += value == 0.0f;
  }
  CHECK(zeros_seen > 400);
  CHECK(zeros_seen < 600);
  dropout.eval();
  CHECK(dropout.forward(x).is_same(x));
  CHECK_THROWS_WITH_AS(Dropout(1.0, std::make_shared<Generator>(0)), doctest::Contains("p must be in [0, 1)"), Error);
}

TEST_CASE("sinusoidal positions: sin on even channels, cos on odd, frequencies 10000^(-2i/C)") {
  const Tensor table = sinusoidal_table(3, 4, DType::Float64);
  const double slow = std::pow(10000.0, -2.0 / 4.0);
  check_close(table.to_vector<double>(), {0, 1, 0, 1,                                            // position 0
                                          std::sin(1.0), std::cos(1.0), std::sin(slow), std::cos(slow),  // position 1
                                          std::sin(2.0), std::cos(2.0), std::sin(2 * slow), std::cos(2 * slow)});
  SinusoidalPositions positions(3, 4, DType::Float64);
  CHECK(positions.named_parameters().empty());
  check_close(positions.forward(2, 1).to_vector<double>(), raw::narrow(table, 0, 1, 2).to_vector<double>());
}

TEST_CASE("sinusoidal positions: rows are computed when asked, so a block_size of 2^40 costs nothing up front") {
  // A 3 KB checkpoint can declare it (tests/fuzz/corpus/checkpoint/sinusoidal_block_size_2_40): the
  // whole (2^40, 4) table, 32 TB of doubles, was computed when the model was built.
  const int64_t block_size = int64_t{1} << 40;
  SinusoidalPositions positions(block_size, 4, DType::Float64);
  const double last = static_cast<double>(block_size - 1), slow = last / std::pow(10000.0, 2.0 / 4.0);
  CHECK(positions.forward(1, block_size - 1).to_vector<double>() ==
        std::vector<double>{std::sin(last), std::cos(last), std::sin(slow), std::cos(slow)});
  CHECK_THROWS_WITH_AS(positions.forward(2, block_size - 1),
                       doctest::Contains("outside the table of 1099511627776 positions"), Error);
}

TEST_CASE("learned positions: rows offset.., an error past block_size") {
  LearnedPositions positions(4, 2);
  raw::copy_(positions.weight(), from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2}));
  CHECK(positions.forward(2, 1).to_vector<float>() == std::vector<float>{2, 3, 4, 5});
  CHECK_THROWS_WITH_AS(positions.forward(2, 3), doctest::Contains("outside the table of 4 positions"), Error);
}

TEST_CASE("init: xavier bounds and normal statistics") {
  Generator generator(3);
  Tensor weight = zeros({200, 300});
  init::xavier_uniform_(weight, generator);
  const double bound = std::sqrt(6.0 / 500.0);
  double sum_of_squares = 0, largest = 0;
  for (float value : weight.to_vector<float>()) {
    largest = std::max(largest, std::abs(static_cast<double>(value)));
    sum_of_squares += value * value;
  }
  CHECK(largest <= bound);
  CHECK(std::sqrt(sum_of_squares / 60000) == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.02));
  init::xavier_normal_(weight, generator);
  sum_of_squares = 0;
  for (float value : weight.to_vector<float>()) sum_of_squares += value * value;
  CHECK(std::sqrt(sum_of_squares / 60000) == doctest::Approx(std::sqrt(2.0 / 500.0)).epsilon(0.02));
  CHECK_THROWS_WITH_AS(init::xavier_uniform_(zeros({3}), generator), doctest::Contains("needs a 2-D weight"), Error);
}

TEST_CASE("attention: a single position attends only to itself, so y = c_proj(v)") {
  for (bool rope : {false, true}) {
    TransformerOptions options = tiny_options();
    options.rope = rope;  // position 0 is not rotated
    CausalSelfAttention attention(options, std::make_shared<Generator>(0));
    randomize(attention, 4);
    Generator generator(5);
    const Tensor x = randn({2, 1, 8}, generator, DType::Float64);
    const Tensor v = raw::narrow(attention.qkv().forward(x), 2, 16, 8);  // the third C columns of qkv
    check_close(attention.forward(x).to_vector<double>(), attention.c_proj().forward(v).to_vector<double>(), 1e-12);
  }
}

TEST_CASE("split_heads: q, k, v are views of qkv's thirds, head by head; RoPE turns q and k only") {
  TransformerOptions options = tiny_options();  // C = 8, NH = 2, HS = 4
  // qkv (B, T, 3C) = (2, 3, 24), holding qkv[b, t, c] = 72b + 24t + c.
  const Tensor qkv = raw::view(arange(2 * 3 * 24, DType::Float64), {2, 3, 24});
  const QKVHeads heads = split_heads(qkv, options, 0);  // (B, NH, T, HS) each
  CHECK(heads.q.shape() == Shape{2, 2, 3, 4});
  // Element (b, h, t, d) of part p (q 0, k 1, v 2) is qkv[b, t, p * C + h * HS + d].
  CHECK(raw::select(raw::select(raw::select(heads.k, 0, 0), 0, 1), 0, 2).to_vector<double>() ==
        std::vector<double>{24 * 2 + 8 + 4, 24 * 2 + 8 + 5, 24 * 2 + 8 + 6, 24 * 2 + 8 + 7});  // b 0, h 1, t 2
  CHECK(raw::select(raw::select(raw::select(heads.v, 0, 1), 0, 0), 0, 1).to_vector<double>() ==
        std::vector<double>{72 + 24 + 16, 72 + 24 + 17, 72 + 24 + 18, 72 + 24 + 19});  // b 1, h 0, t 1
  CHECK(heads.q.data<double>() == qkv.data<double>());  // a view, no copy
  options.rope = true;
  const QKVHeads turned = split_heads(qkv, options, 5);
  CHECK(turned.v.data<double>() == heads.v.data<double>());
  CHECK(turned.q.to_vector<double>() != heads.q.to_vector<double>());
  CHECK(turned.k.to_vector<double>() != heads.k.to_vector<double>());
  CHECK_THROWS_WITH_AS(split_heads(zeros({2, 3, 16}, DType::Float64), options, 0),
                       doctest::Contains("split_heads: qkv of shape (2, 3, 16) must be (B, T, (NH + 2 KVH) HD) = (B, T, 24)"), Error);
}

TEST_CASE("attention: a later position never changes an earlier output") {
  TransformerOptions options = tiny_options();
  options.rope = true;
  CausalSelfAttention attention(options, std::make_shared<Generator>(0));
  randomize(attention, 6);
  Generator generator(7);
  const Tensor x = randn({1, 5, 8}, generator, DType::Float64);
  const Tensor changed = raw::clone(x);
  fill_(raw::narrow(changed, 1, 4, 1), 3.0);
  const Tensor before = raw::narrow(attention.forward(x), 1, 0, 4);
  const Tensor after = raw::narrow(attention.forward(changed), 1, 0, 4);
  CHECK(before.to_vector<double>() == after.to_vector<double>());
  CHECK_THROWS_WITH_AS(attention.forward(zeros({1, 5, 6}, DType::Float64)), doctest::Contains("must be (B, T, C) with C = 8"),
                       Error);
}

TEST_CASE("Block: gradcheck in float64 through LayerNorm, attention (learned and RoPE) and the MLP") {
  for (bool rope : {false, true}) {
    TransformerOptions options = tiny_options();
    options.rope = rope;
    options.gelu = rope ? GeluApproximation::Erf : GeluApproximation::Tanh;
    Block block(options, std::make_shared<Generator>(0));
    randomize(block, 8);
    Generator generator(9);
    const Tensor x = randn({2, 3, 8}, generator, DType::Float64).set_requires_grad();
    const auto named = block.named_parameters();
    std::vector<Tensor> inputs{x};
    for (const auto& [name, parameter] : named)
      if (name == "ln_1.weight" || name == "attn.qkv.weight" || name == "attn.c_proj.bias" || name == "ln_2.bias" ||
          name == "mlp.c_fc.bias" || name == "mlp.c_proj.weight")
        inputs.push_back(parameter);
    REQUIRE(inputs.size() == 7);
    const GradcheckResult result = gradcheck([&](const std::vector<Tensor>& in) { return block.forward(in[0]); }, inputs);
    INFO("rope ", rope, ": ", result.report);
    CHECK(result.ok);
  }
}

TEST_CASE("transformer options: errors name the field") {
  TransformerOptions options = tiny_options();
  options.n_head = 3;
  CHECK_THROWS_WITH_AS(options.validate(), doctest::Contains("n_embd 8 is not divisible by n_head 3"), Error);
  options.n_head = 8;
  options.rope = true;  // HS = 1
  CHECK_THROWS_WITH_AS(options.validate(), doctest::Contains("head size 1"), Error);
}
