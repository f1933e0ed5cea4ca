// Quantized layers (nn/quantize.h): a Linear, an Embedding and a learned
// position table with bfloat16 or int8 weights compute what their float32
// selves would with the widened weights; the parameter list names the values
// and scales; inference only.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "tests/bfloat16_rounding.h"
#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/embedding.h"
#include "tinygpt/nn/init.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/positional.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "tinygpt/tensor/index.h"
#include "tinygpt/tensor/reduce.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"
#include "tinygpt/tensor/matmul.h"

using namespace tg;
using tg::testing::rounded_to_bfloat16;

namespace {

// A little model: two Linears and an embedding, each initialised N(0, 1).
class TwoLayers : public nn::Module {
 public:
  TwoLayers() {
    table = register_module("table", std::make_shared<nn::Embedding>(9, 40));
    first = register_module("first", std::make_shared<nn::Linear>(40, 70));
    second = register_module("second", std::make_shared<nn::Linear>(70, 5, /*bias=*/false));
    Generator generator(1);
    for (const Tensor& parameter : parameters()) nn::init::normal_(parameter, 0.0, 1.0, generator);
  }
  std::string describe() const override { return "TwoLayers"; }
  std::shared_ptr<nn::Embedding> table;
  std::shared_ptr<nn::Linear> first, second;
};

void check_close(const Tensor& got, const Tensor& expected, double tolerance) {
  REQUIRE(got.shape() == expected.shape());
  const std::vector<float> a = got.to_vector<float>(), b = expected.to_vector<float>();
  if (tolerance == 0) {
    CHECK(a == b);
    return;
  }
  for (size_t index = 0; index < a.size(); ++index) CHECK(a[index] == doctest::Approx(b[index]).epsilon(tolerance));
}

}  // namespace

TEST_CASE("Linear: quantized, it multiplies by the widened weight (many rows and one; bfloat16 weights round x)") {
  for (DType format : {DType::BFloat16, DType::Int8}) {
    CAPTURE(dtype_name(format));
    TwoLayers model;
    const Tensor weight = model.first->weight(), bias = model.first->bias();
    model.first->quantize(format);
    CHECK(model.first->is_quantized());
    CHECK(model.first->weight().dtype() == format);
    CHECK_FALSE(model.first->weight().requires_grad());
    const Tensor widened = dequantize(model.first->quantized_weight());
    NoGradGuard no_grad;
    Generator generator(2);
    const Tensor x = randn({2, 3, 40}, generator);
    // Many rows with bfloat16 weights, and with int8 weights on a CPU with
    // AVX512-BF16, take the bfloat16 product: x (and int8 weights) rounded too.
    const bool bfloat16_product =
        format == DType::BFloat16 || cpu::bf16_gemm_kernel() == cpu::Bf16GemmKernel::avx512_bf16;
    const Tensor multiplied = bfloat16_product ? rounded_to_bfloat16(x) : x;
    const Tensor read = bfloat16_product ? rounded_to_bfloat16(widened) : widened;
    check_close(model.first->forward(x), nn::linear(multiplied, read, bias), 1e-4);
    if (format == DType::BFloat16) {  // one row: x rounded to bfloat16 too
      const Tensor one = randn({1, 40}, generator);
      check_close(model.first->forward(one), nn::linear(rounded_to_bfloat16(one), widened, bias), 1e-4);
    }
    // and the widened weight is within the format's rounding of the float32 one
    const std::vector<float> before = weight.to_vector<float>(), after = widened.to_vector<float>();
    double error = 0, size = 0;
    for (size_t index = 0; index < before.size(); ++index) {
      error += (before[index] - after[index]) * (before[index] - after[index]);
      size += before[index] * before[index];
    }
    CHECK(std::sqrt(error / size) < (format == DType::BFloat16 ? 3e-3 : 1.5e-2));
  }
}

TEST_CASE("Linear: one row with int8 weights rounds x to int8 blocks, within their error of float32") {
  TwoLayers model;
  model.first->quantize(DType::Int8);
  const Tensor widened = dequantize(model.first->quantized_weight());
  NoGradGuard no_grad;
  Generator generator(3);
  const Tensor x = randn({1, 40}, generator);
  const std::vector<float> got = model.first->forward(x).to_vector<float>();
  const std::vector<float> exact = nn::linear(x, widened, model.first->bias()).to_vector<float>();
  double worst = 0;
  for (size_t index = 0; index < got.size(); ++index) worst = std::max(worst, double(std::abs(got[index] - exact[index])));
  CHECK(worst > 0);     // x was rounded
  CHECK(worst < 0.5);   // by at most half a step of max|x|/127 per term: sum |w| * 0.5 * 2.5 / 127 ~ 0.4
}

TEST_CASE("Embedding and LearnedPositions: quantized, they look up the widened rows") {
  for (DType format : {DType::BFloat16, DType::Int8}) {
    TwoLayers model;
    model.table->quantize(format);
    const Tensor ids = from_vector<int64_t>({4, 0, 8}, {1, 3});
    const Tensor widened = dequantize(model.table->quantized_weight());
    check_close(model.table->forward(ids), raw::view(raw::embedding(widened, raw::view(ids, {3})), {1, 3, 40}), 0);

    nn::LearnedPositions positions(10, 40);
    Generator generator(4);
    nn::init::normal_(positions.weight(), 0.0, 1.0, generator);
    positions.quantize(format);
    check_close(positions.forward(3, 5), raw::narrow(dequantize(positions.quantized_weight()), 0, 5, 3), 0);
    CHECK_THROWS_WITH_AS(positions.forward(3, 8), doctest::Contains("positions 8 .. 10 are outside the table"), Error);
  }
}

TEST_CASE("quantize_weights: every weight matrix, named as before, the int8 scales beside them") {
  TwoLayers model;
  nn::quantize_weights(model, DType::Int8);
  std::vector<std::string> names;
  for (const auto& [name, parameter] : model.named_parameters()) names.push_back(name + " " + dtype_name(parameter.dtype()));
  CHECK(names == std::vector<std::string>{"table.weight int8", "table.weight_scale float32", "first.weight int8",
                                          "first.weight_scale float32", "first.bias float32", "second.weight int8",
                                          "second.weight_scale float32"});
  CHECK(nn::quantized_weights(model).size() == 3);
  const auto widened = nn::dequantized_parameters(model);
  REQUIRE(widened.size() == 4);  // the float32 model's names, nothing else
  CHECK(widened[0].first == "table.weight");
  CHECK(widened[0].second.dtype() == DType::Float32);
  CHECK(widened[2].first == "first.bias");
  std::ostringstream tree;
  nn::print_tree(tree, model);
  CHECK(tree.str().find("weight (70, 40) int8, weight_scale (70, 2)") != std::string::npos);
  CHECK_THROWS_WITH_AS(model.first->quantize(DType::BFloat16), doctest::Contains("parameter 'weight' is int8; only float32"),
                       Error);
}

TEST_CASE("a quantized layer is frozen: its input's gradient is the widened weight's, and it has none of its own") {
  for (const DType format : {DType::BFloat16, DType::Int8}) {
    CAPTURE(dtype_name(format));
    TwoLayers model;
    model.first->quantize(format);
    Generator generator(5);
    const Tensor x = randn({3, 40}, generator).set_requires_grad(true);
    const Tensor dy = randn({3, model.first->out_features()}, generator);
    backward(sum(mul(model.first->forward(x), dy)));
    // dx = dy @ W with W the dequantized weight (bfloat16 and int8 widen exactly to float32).
    const Tensor expected = raw::matmul(dy, dequantize(model.first->quantized_weight()));
    CHECK(x.grad().to_vector<float>() == expected.to_vector<float>());
    CHECK_FALSE(model.first->weight().grad().defined());
    NoGradGuard no_grad;
    CHECK_FALSE(model.first->forward(x).requires_grad());
  }
}

TEST_CASE("parse_weight_format: the names, and a clear error for others") {
  CHECK(nn::parse_weight_format("bf16") == DType::BFloat16);
  CHECK(nn::parse_weight_format("bfloat16") == DType::BFloat16);
  CHECK(nn::parse_weight_format("int8") == DType::Int8);
  CHECK(nn::parse_weight_format("f32") == DType::Float32);
  CHECK_THROWS_WITH_AS(nn::parse_weight_format("int4"),
                       doctest::Contains("unknown weight format 'int4': the choices are float32 (f32), bfloat16 (bf16) and int8"),
                       Error);
}

TEST_CASE("quantize_weights with QuantizedValues::Zeros: zero matrices of the right shapes, the weights not read") {
  for (DType format : {DType::BFloat16, DType::Int8}) {
    CAPTURE(dtype_name(format));
    nn::Linear linear(40, 3);
    fill_(linear.weight(), std::nan(""));  // quantize_matrix refuses NaN: reading them would throw
    nn::quantize_weights(linear, format, QuantizedValues::Zeros);
    const QuantizedMatrix matrix = linear.quantized_weight();
    CHECK(matrix.format() == format);
    CHECK(matrix.values.shape() == Shape{3, 40});
    CHECK(raw::sum(raw::to_dtype(dequantize(matrix), DType::Float64)).item<double>() == 0.0);
    if (format == DType::Int8) CHECK(matrix.scales.shape() == Shape{3, 2});
  }
}
