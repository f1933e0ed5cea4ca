// API misuse: every wrong call throws tg::Error whose message names the op and
// the shapes, dims or values involved; nothing crashes, and (run under the
// sanitizer build) nothing reads out of bounds or overflows on the way. After a
// throw the tensors involved are as they were.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/nn/functional/layer_norm.h"
#include "tinygpt/nn/functional/rope.h"

using namespace tg;
using doctest::Contains;

namespace {

Tensor leaf(const Shape& shape) {
  Tensor x = ones(shape);
  x.set_requires_grad();
  return x;
}

}  // namespace

TEST_CASE("misuse: mismatched shapes throw, naming the op and both shapes") {
  const Tensor a = zeros({2, 3});
  CHECK_THROWS_WITH_AS(add(a, zeros({4})),
                       Contains("add: shapes (2, 3) and (4,) cannot be broadcast together (dim 1: 3 vs 4)"), Error);
  CHECK_THROWS_WITH_AS(mul(a, zeros({2, 3}, DType::Float64)), Contains("mul: dtypes float32 and float64 differ"),
                       Error);
  CHECK_THROWS_WITH_AS(where(zeros({2, 3}, DType::Bool), a, zeros({4})), Contains("where: shapes (2, 3) and (4,)"),
                       Error);
  CHECK_THROWS_WITH_AS(masked_fill(zeros({3}), zeros({2, 3}, DType::Bool), 0.0),
                       Contains("masked_fill: mask of shape (2, 3) does not broadcast to the input's shape (3,)"),
                       Error);
  CHECK_THROWS_WITH_AS(matmul(a, zeros({4, 5})),
                       Contains("matmul: shapes (2, 3) and (4, 5) cannot be multiplied (3 != 4)"), Error);
  CHECK_THROWS_WITH_AS(matmul(zeros({2, 2, 3}), zeros({3, 3, 4})),
                       Contains("matmul: batch dims of shapes (2, 2, 3) and (3, 3, 4)"), Error);
  CHECK_THROWS_WITH_AS(matmul(scalar(1.0), a),
                       Contains("matmul: both operands need at least 1 dim, got shapes () and (2, 3)"), Error);
  CHECK_THROWS_WITH_AS(cat({a, zeros({2, 4})}, 0),
                       Contains("cat: tensor 1 has shape (2, 4) but tensor 0 has shape (2, 3)"), Error);
  CHECK_THROWS_WITH_AS(split(a, std::vector<int64_t>{1, 1}, 1),
                       Contains("split: sizes (1, 1) sum to 2, not to the size 3 of dim 1 (shape (2, 3))"), Error);
  CHECK_THROWS_WITH_AS(view(a, {4}), Contains("view: shape (4,) is invalid for input of 6 elements"), Error);
  CHECK_THROWS_WITH_AS(view(transpose(a, 0, 1), {6}),
                       Contains("view: a tensor of shape (3, 2) and strides (1, 3) cannot be viewed as shape (6,)"),
                       Error);
  CHECK_THROWS_WITH_AS(reshape(a, {-1, -1}), Contains("reshape: only one size may be -1, got (-1, -1)"), Error);
  CHECK_THROWS_WITH_AS(expand(a, {4, 3}), Contains("expand: shape (2, 3) cannot be expanded to (4, 3) (dim 0: 2 vs 4)"),
                       Error);
  CHECK_THROWS_WITH_AS(gather(a, 1, from_vector<int64_t>({0, 1, 0}, {3, 1})),
                       Contains("gather: index of shape (3, 1) is larger than the tensor of shape (2, 3) in dim 0"),
                       Error);
  CHECK_THROWS_WITH_AS(nn::layer_norm(a, zeros({2}), zeros({3})),
                       Contains("layer_norm: x of shape (2, 3) needs weight and bias of shape (3,), got (2,) and (3,)"),
                       Error);
  CHECK_THROWS_WITH_AS(nn::causal_attention(zeros({1, 1, 2, 4}), zeros({1, 1, 2, 8}), zeros({1, 1, 2, 8})),
                       Contains("causal_attention: q (1, 1, 2, 4) and k (1, 1, 2, 8) must agree in B, NH and HS"),
                       Error);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(a, from_vector<int64_t>({0})),
                       Contains("cross_entropy: logits of shape (2, 3) need targets of shape (2,), got (1,)"), Error);
  CHECK_THROWS_WITH_AS(
      nn::rope(zeros({1, 1, 2, 3})),
      Contains("rope: x must be floating (B, NH, T, HS) with HS even, got float32 of shape (1, 1, 2, 3)"), Error);
}

TEST_CASE("misuse: dims out of range or repeated throw, naming the op, the dim and the rank") {
  const Tensor a = zeros({2, 3});
  CHECK_THROWS_WITH_AS(sum(a, {2}), Contains("sum: dim 2 is out of range for a tensor with 2 dims (expected -2..1)"),
                       Error);
  CHECK_THROWS_WITH_AS(mean(a, {-3}),
                       Contains("mean: dim -3 is out of range for a tensor with 2 dims (expected -2..1)"), Error);
  CHECK_THROWS_WITH_AS(var(a, {5}), Contains("var: dim 5 is out of range for a tensor with 2 dims (expected -2..1)"),
                       Error);
  CHECK_THROWS_WITH_AS(sum(a, {1, -1}), Contains("sum: dim -1 appears more than once in dims (1, -1)"), Error);
  CHECK_THROWS_WITH_AS(max(a, 2), Contains("max: dim 2 is out of range for a tensor with 2 dims (expected -2..1)"),
                       Error);
  CHECK_THROWS_WITH_AS(argmax(a, -3),
                       Contains("argmax: dim -3 is out of range for a tensor with 2 dims (expected -2..1)"), Error);
  CHECK_THROWS_WITH_AS(argmax(zeros({0, 3}), 0), Contains("argmax: dim 0 of a tensor of shape (0, 3) is empty"), Error);
  CHECK_THROWS_WITH_AS(softmax(a, 2),
                       Contains("softmax: dim 2 is out of range for a tensor with 2 dims (expected -2..1)"), Error);
  CHECK_THROWS_WITH_AS(log_softmax(a, -3),
                       Contains("log_softmax: dim -3 is out of range for a tensor with 2 dims (expected -2..1)"),
                       Error);
  CHECK_THROWS_WITH_AS(cat({a, a}, 2), Contains("cat: dim 2 is out of range for a tensor with 2 dims (expected -2..1)"),
                       Error);
  CHECK_THROWS_WITH_AS(index_select(a, 2, from_vector<int64_t>({0})),
                       Contains("index_select: dim 2 is out of range for a tensor with 2 dims (expected -2..1)"),
                       Error);
  CHECK_THROWS_WITH_AS(transpose(a, 0, 2),
                       Contains("transpose: dim 2 is out of range for a tensor with 2 dims (expected -2..1)"), Error);
  CHECK_THROWS_WITH_AS(slice(a, 2, 0, 3, 1),
                       Contains("slice: dim 2 is out of range for a tensor with 2 dims (expected -2..1)"), Error);
  CHECK_THROWS_WITH_AS(squeeze(a, 0), Contains("squeeze: dim 0 has size 2, not 1 (shape (2, 3))"), Error);
  CHECK_THROWS_WITH_AS(unsqueeze(a, 4), Contains("unsqueeze: dim 4 is out of range for a tensor with 3 dims"), Error);
  CHECK_THROWS_WITH_AS(permute(a, {0}), Contains("permute: 1 dims given for a tensor of shape (2, 3)"), Error);
  CHECK_THROWS_WITH_AS(permute(a, {0, 0}), Contains("permute: dim 0 appears twice in (0, 0)"), Error);
  CHECK_THROWS_WITH_AS(select(a, 1, 3), Contains("select: index 3 is out of range for dim 1 of size 3 (shape (2, 3))"),
                       Error);
  CHECK_THROWS_WITH_AS(narrow(a, 1, 2, 2),
                       Contains("narrow: start 2 + length 2 is out of range for dim 1 of size 3 (shape (2, 3))"), Error);
  CHECK_THROWS_WITH_AS(slice(a, 1, 0, 3, 0), Contains("slice: step must be positive, got 0"), Error);
  CHECK_THROWS_WITH_AS(split(a, int64_t{0}, 1), Contains("split: chunk size 0 is only allowed for a dim of size 0, not for dim 1 of size 3 (shape (2, 3))"), Error);
}

TEST_CASE("misuse: indices out of range or not int64 throw, naming the index and where it points") {
  const Tensor a = zeros({2, 3});
  CHECK_THROWS_WITH_AS(
      index_select(a, 1, from_vector<int64_t>({0, 3})),
      Contains("index_select: index 3 at position 1 is out of range for dim 1 of size 3 (shape (2, 3))"), Error);
  CHECK_THROWS_WITH_AS(index_select(a, 1, from_vector<int64_t>({-1})),
                       Contains("index_select: index -1 at position 0 is out of range for dim 1"), Error);
  CHECK_THROWS_WITH_AS(index_select(a, 1, zeros({2})),
                       Contains("index_select: indices must be int64, got float32 of shape (2,)"), Error);
  CHECK_THROWS_WITH_AS(gather(a, 1, from_vector<int64_t>({0, 5}, {2, 1})),
                       Contains("gather: index 5 at position (1, 0) is out of range for dim 1 of size 3"), Error);
  CHECK_THROWS_WITH_AS(embedding(zeros({5, 4}), from_vector<int64_t>({1, 5})),
                       Contains("embedding: id 5 at position 1 is out of range for a vocabulary of 5 rows"), Error);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(a, from_vector<int64_t>({0, 3})),
                       Contains("cross_entropy: target 3 at row 1 is outside [0, 3)"), Error);
  CHECK_THROWS_WITH_AS(nn::cross_entropy_reference(a, from_vector<int64_t>({-2, 0})),
                       Contains("cross_entropy: target -2 at row 0 is outside [0, 3)"), Error);
}

TEST_CASE("misuse: backward on a non-scalar without a gradient, or through a released graph, throws") {
  const Tensor x = leaf({2, 3});
  CHECK_THROWS_WITH_AS(backward(x * 2.0),
                       Contains("backward: output of shape (2, 3) is not a scalar; pass its gradient explicitly"),
                       Error);
  CHECK_THROWS_WITH_AS(backward(x * 2.0, zeros({3})),
                       Contains("backward: gradient of shape (3,) for an output of shape (2, 3)"), Error);
  CHECK_THROWS_WITH_AS(backward(x * 2.0, zeros({2, 3}, DType::Float64)),
                       Contains("backward: gradient dtype float64 for an output of dtype float32"), Error);
  CHECK_THROWS_WITH_AS(backward(zeros({1})), Contains("backward: the tensor does not require grad"), Error);
  CHECK_THROWS_WITH_AS(zeros({2}, DType::Int64).set_requires_grad(),
                       Contains("set_requires_grad: only floating-point tensors can require grad, got int64"), Error);
  CHECK(x.grad().defined() == false);  // none of the calls above got as far as a gradient

  // Twice through one graph: the first backward released it. The second throws
  // before adding anything, even where a fresh node (the product) comes first.
  const Tensor loss = sum(exp(x));
  backward(loss);
  const std::vector<float> once = x.grad().to_vector<float>();
  CHECK_THROWS_WITH_AS(backward(loss),
                       Contains("backward: the graph through 'sum' was already released by an earlier backward; "
                                "pass keep_graph = true to that one"),
                       Error);
  CHECK_THROWS_WITH_AS(backward(loss * 3.0), Contains("the graph through 'sum' was already released"), Error);
  CHECK(x.grad().to_vector<float>() == once);

  // What the message advises works: with keep_graph, the second backward adds the same again.
  const Tensor y = leaf({2});
  const Tensor kept = sum(y * y);
  backward(kept, Tensor(), /*keep_graph=*/true);
  backward(kept);
  CHECK(y.grad().to_vector<float>() == std::vector<float>{4, 4});
}

// 2^40 * 2^40 elements wrap around int64 to 0: refused, not an empty tensor.
TEST_CASE("misuse: sizes whose element count overflows int64 throw") {
  const int64_t huge = int64_t{1} << 40;
  CHECK_THROWS_AS(zeros({huge, huge}), Error);
  CHECK_THROWS_AS(expand(zeros({1, 1}), {huge, huge}), Error);
}
