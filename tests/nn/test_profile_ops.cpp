// The profile rows of nn's ops (tensor/runtime/profile.h): a Linear's GEMMs under its
// role with exactly 2 M N K FLOPs forward and twice that backward, causal
// attention's block products, LayerNorm's bytes. Counts only, no timing.
#include <doctest/doctest.h>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/tensor/cpu/kernel_arguments.h"
#include "tinygpt/nn/functional/layer_norm.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/tensor/runtime/profile.h"

using namespace tg;

namespace {

const ProfileRow& row_of(const ProfileRecord& record, ProfileFamily family, ProfilePass pass,
                         const std::string& role = "") {
  const ProfileRow* row = record.row(family, pass, role);
  REQUIRE_MESSAGE(row, "no row ", profile_family_name(family), " ", profile_pass_name(pass), " ", role);
  return *row;
}

Tensor random_input(const Shape& shape, uint64_t seed) {
  Generator generator(seed);
  Tensor x = randn(shape, generator);
  x.set_requires_grad(true);
  return x;
}

}  // namespace

TEST_CASE("profile: a Linear's forward and backward GEMMs are its role's, 2 M N K FLOPs each") {
  nn::Linear linear(8, 4);  // (N, 8) @ (8, 4)
  linear.set_profile_role("test.proj");
  const Tensor x = random_input({3, 5, 8}, 1);  // N = 15 rows
  reset_profile();
  {
    const ProfiledStep step;
    backward(sum(linear.forward(x)));
  }
  const ProfileRecord record = profile_record();
  const double one_product = 2.0 * 15 * 8 * 4;
  const ProfileRow& forward = row_of(record, ProfileFamily::gemm, ProfilePass::forward, "test.proj");
  CHECK(forward.calls == 1);
  CHECK(forward.flops == one_product);
  const ProfileRow& backward_row = row_of(record, ProfileFamily::gemm, ProfilePass::backward, "test.proj");
  CHECK(backward_row.calls == 2);  // dx = dy @ W, dW = dy^T @ x
  CHECK(backward_row.flops == 2 * one_product);
  CHECK(record.flops() == 3 * one_product);
  CHECK(record.largest_gemm.m == 15);  // the forward's (15, 8) @ (8, 4), the first of three of equal size
  CHECK(record.largest_gemm.n == 4);
  CHECK(record.largest_gemm.k == 8);
  // The bias: added forward (elementwise), summed over the rows backward (reduce).
  CHECK(row_of(record, ProfileFamily::elementwise, ProfilePass::forward).calls >= 1);
  CHECK(row_of(record, ProfileFamily::reduce, ProfilePass::backward).calls >= 1);
}

TEST_CASE("profile: an unnamed Linear's GEMMs are unlabelled") {
  nn::Linear linear(3, 2, false);
  const Tensor x = random_input({4, 3}, 2);
  reset_profile();
  {
    const ProfiledStep step;
    linear.forward(x);
  }
  const ProfileRecord record = profile_record();
  CHECK(row_of(record, ProfileFamily::gemm, ProfilePass::forward).flops == 2.0 * 4 * 3 * 2);
}

TEST_CASE("profile: causal attention's FLOPs are those of its block products, 2 forward and 4 backward") {
  // T = 100 queries. Forward blocks of 16: the first six see up to 16, 32, ...,
  // 96 keys, the last (4 queries) all 100. Backward blocks of 32: up to 32, 64,
  // 96 keys, then 4 queries seeing 100.
  REQUIRE(cpu::kQueryBlock == 16);
  REQUIRE(cpu::kBackwardQueryBlock == 32);
  const int64_t batch = 2, heads = 3, time = 100, head_size = 4;
  const double forward_multiply_adds =
      (16.0 * (16 + 32 + 48 + 64 + 80 + 96) + 4.0 * 100) * batch * heads * head_size;
  const double backward_multiply_adds = (32.0 * (32 + 64 + 96) + 4.0 * 100) * batch * heads * head_size;
  const Tensor q = random_input({batch, heads, time, head_size}, 3);
  const Tensor k = random_input({batch, heads, time, head_size}, 4);
  const Tensor v = random_input({batch, heads, time, head_size}, 5);
  reset_profile();
  {
    const ProfiledStep step;
    backward(sum(nn::causal_attention(q, k, v)));
  }
  const ProfileRecord record = profile_record();
  CHECK(row_of(record, ProfileFamily::attention, ProfilePass::forward).flops == 2 * 2 * forward_multiply_adds);
  CHECK(row_of(record, ProfileFamily::attention, ProfilePass::backward).flops == 4 * 2 * backward_multiply_adds);
}

TEST_CASE("profile: LayerNorm reads x, weight, bias and writes y, mean, rstd, each once") {
  const Tensor x = random_input({2, 3, 4}, 6);
  const Tensor weight = ones({4}), bias = zeros({4});
  reset_profile();
  {
    const ProfiledStep step;
    nn::layer_norm(x, weight, bias, 1e-5);
  }
  const ProfileRecord record = profile_record();
  const ProfileRow& row = row_of(record, ProfileFamily::layer_norm, ProfilePass::forward);
  CHECK(row.calls == 1);
  CHECK(row.bytes == (24 + 4 + 4 + 24 + 6 + 6) * 4);
}
