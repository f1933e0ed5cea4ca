#include <doctest/doctest.h>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/tensor/cpu/attention_kernels.h"
#include "test_functional_helpers.h"

using namespace tg;

namespace {

// q, k, v as a GPT makes them: strided views of one (B, T, 3C) projection,
// qkv -> (B, T, 3, NH, HS) -> select part -> permute to (B, NH, T, HS). No copies.
std::vector<Tensor> qkv_views(int64_t batch, int64_t positions, int64_t heads, int64_t head_size, Generator& generator,
                              DType dtype) {
  const Tensor qkv = randn({batch, positions, 3, heads, head_size}, generator, dtype);
  std::vector<Tensor> parts;
  for (int64_t part = 0; part < 3; ++part) {
    Tensor view = raw::permute(raw::select(qkv, 2, part), {0, 2, 1, 3});
    view.set_requires_grad();
    parts.push_back(view);
  }
  return parts;
}

Tensor fused(const std::vector<Tensor>& in) { return nn::causal_attention(in[0], in[1], in[2]); }

// causal_attention on the three views of one (B, T, 3C) projection, as split_heads makes them.
Tensor attention_of_views(const Tensor& qkv, int64_t heads) {
  const Tensor parts = reshape(qkv, {qkv.size(0), qkv.size(1), 3, heads, qkv.size(2) / 3 / heads});
  const auto part = [&](int64_t index) { return permute(select(parts, 2, index), {0, 2, 1, 3}); };
  return nn::causal_attention(part(0), part(1), part(2));
}
Tensor reference(const std::vector<Tensor>& in) { return nn::causal_attention_reference(in[0], in[1], in[2]); }

}  // namespace

TEST_CASE("causal_attention of one head by hand") {
  // Two positions, HS = 1: query 0 sees only key 0, so y_0 = v_0; query 1 weighs
  // keys 0 and 1 by softmax(q_1 k_j / 1) = softmax(0, ln 3) = (1/4, 3/4).
  const Tensor q = from_vector<double>({5.0, 1.0}, {1, 1, 2, 1});
  const Tensor k = from_vector<double>({0.0, std::log(3.0)}, {1, 1, 2, 1});
  const Tensor v = from_vector<double>({8.0, 4.0}, {1, 1, 2, 1});
  const std::vector<double> y = nn::causal_attention(q, k, v).to_vector<double>();
  CHECK(y[0] == doctest::Approx(8.0));
  CHECK(y[1] == doctest::Approx(0.25 * 8 + 0.75 * 4));
}

TEST_CASE("causal_attention gradients match central differences on strided q, k, v (float64)") {
  Generator generator(7);
  test::check_gradients(fused, qkv_views(2, 4, 2, 3, generator, DType::Float64));
}

TEST_CASE("causal_attention gradients with fewer queries than keys (KV cache)") {
  Generator generator(8);
  const Tensor q = test::random_leaf({1, 2, 2, 3}, generator, DType::Float64);
  const Tensor k = test::random_leaf({1, 2, 5, 3}, generator, DType::Float64);
  const Tensor v = test::random_leaf({1, 2, 5, 3}, generator, DType::Float64);
  test::check_gradients(fused, {q, k, v});
}

TEST_CASE("causal_attention matches its reference composition (float32, several query blocks)") {
  Generator generator(9);
  SUBCASE("Tq == Tk, strided views") { test::check_matches_reference(fused, reference, qkv_views(2, 70, 3, 8, generator, DType::Float32)); }
  SUBCASE("Tq < Tk") {
    const Tensor q = test::random_leaf({2, 2, 67, 8}, generator);
    const Tensor k = test::random_leaf({2, 2, 75, 8}, generator);
    const Tensor v = test::random_leaf({2, 2, 75, 8}, generator);
    test::check_matches_reference(fused, reference, {q, k, v});
  }
  SUBCASE("one query (generation step)") {
    const Tensor q = test::random_leaf({1, 2, 1, 8}, generator);
    const Tensor k = test::random_leaf({1, 2, 9, 8}, generator);
    const Tensor v = test::random_leaf({1, 2, 9, 8}, generator);
    test::check_matches_reference(fused, reference, {q, k, v});
  }
}

TEST_CASE("causal_attention of one query without grad (attend_one_query, no BLAS) matches the reference") {
  Generator generator(12);
  NoGradGuard no_grad;
  for (const int64_t keys : {1, 5, 33, 130}) {
    CAPTURE(keys);
    // Keys and values with rows NH * HS apart (permuted (B, T, NH, HS)), as the general path reads them.
    const Tensor q = randn({2, 3, 1, 16}, generator);
    const Tensor k = raw::permute(randn({2, keys, 3, 16}, generator), {0, 2, 1, 3});
    const Tensor v = raw::permute(randn({2, keys, 3, 16}, generator), {0, 2, 1, 3});
    CHECK(test::relative_error(nn::causal_attention(q, k, v), nn::causal_attention_reference(q, k, v)) < 1e-5);
  }
}

TEST_CASE("attend_one_query by hand: rows further apart than the head size") {
  // HS = 2, two keys stored 3 floats apart: scores = (q . k_j) / sqrt 2 = (0, ln 3),
  // so the weights are (1/4, 3/4).
  const float root2 = std::sqrt(2.0f);
  const std::vector<float> q = {1, 0};
  const std::vector<float> k = {0, 9, -1, std::log(3.0f) * root2, 1, -1};
  const std::vector<float> v = {8, 4, -1, 0, 12, -1};
  std::vector<float> scores(2), y(2);
  cpu::attend_one_query(q.data(), k.data(), v.data(), 2, 2, 3, 3, scores.data(), y.data());
  CHECK(scores[0] == doctest::Approx(0.25));
  CHECK(scores[1] == doctest::Approx(0.75));
  CHECK(y[0] == doctest::Approx(0.25 * 8 + 0.75 * 0));
  CHECK(y[1] == doctest::Approx(0.25 * 4 + 0.75 * 12));
}

TEST_CASE("causal_attention: a later key or value never changes an earlier output") {
  Generator generator(10);
  const Tensor q = randn({1, 2, 6, 4}, generator), k = randn({1, 2, 6, 4}, generator), v = randn({1, 2, 6, 4}, generator);
  const std::vector<float> before = nn::causal_attention(q, k, v).to_vector<float>();
  // Change position 4 of k and v: outputs at positions 0..3 must be bitwise the same.
  fill_(raw::narrow(k, 2, 4, 1), 9.0);
  fill_(raw::narrow(v, 2, 4, 1), -9.0);
  const std::vector<float> after = nn::causal_attention(q, k, v).to_vector<float>();
  const size_t channels = 2 * 4;
  for (size_t i = 0; i < 4 * channels; ++i) CHECK(before[i] == after[i]);
  bool position_4_changed = false;
  for (size_t i = 4 * channels; i < 5 * channels; ++i) position_4_changed |= before[i] != after[i];
  CHECK(position_4_changed);
}

TEST_CASE("causal_attention_qkv: central differences (float64), and the numbers of causal_attention on views") {
  Generator generator(12);
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::causal_attention_qkv(in[0], 2); },
                        {test::random_leaf({2, 4, 3 * 2 * 3}, generator, DType::Float64)});
  // Two query blocks (T = 70), 3 heads of 8: forward and d_qkv as the views' path gives them.
  const Tensor on_qkv = test::random_leaf({2, 70, 3 * 3 * 8}, generator), dy = randn({2, 70, 3 * 8}, generator);
  Tensor on_views = raw::clone(on_qkv);
  on_views.set_requires_grad();
  const Tensor y = nn::causal_attention_qkv(on_qkv, 3), expected = attention_of_views(on_views, 3);
  backward(y, dy);
  backward(expected, dy);
  CHECK(y.to_vector<float>() == expected.to_vector<float>());
  CHECK(on_qkv.grad().to_vector<float>() == on_views.grad().to_vector<float>());
}

TEST_CASE("causal_attention_qkv names the shape it cannot use") {
  CHECK_THROWS_WITH_AS(nn::causal_attention_qkv(zeros({2, 3, 10}), 2),
                       doctest::Contains("qkv of shape (2, 3, 10) must be (B, T, 3C) with C a multiple of 2 heads"),
                       Error);
  CHECK_THROWS_WITH_AS(nn::causal_attention_qkv(zeros({6, 12}), 2), doctest::Contains("qkv of shape (6, 12)"), Error);
}

TEST_CASE("causal_attention names the shapes it cannot use") {
  CHECK_THROWS_WITH_AS(nn::causal_attention(zeros({2, 2, 3, 4}), zeros({2, 2, 3, 8}), zeros({2, 2, 3, 8})),
                       doctest::Contains("causal_attention: q (2, 2, 3, 4) and k (2, 2, 3, 8) must agree"), Error);
  CHECK_THROWS_WITH_AS(nn::causal_attention(zeros({1, 1, 4, 2}), zeros({1, 1, 3, 2}), zeros({1, 1, 3, 2})),
                       doctest::Contains("at least as many keys as queries, got q (1, 1, 4, 2) and k (1, 1, 3, 2)"), Error);
  CHECK_THROWS_WITH_AS(nn::causal_attention(zeros({1, 4, 2}), zeros({1, 1, 4, 2}), zeros({1, 1, 4, 2})),
                       doctest::Contains("must be (B, NH, T, HS), got q (1, 4, 2)"), Error);
  CHECK_THROWS_WITH_AS(nn::causal_attention(zeros({1, 1, 2, 2}), zeros({1, 1, 2, 2}), zeros({1, 1, 3, 2})),
                       doctest::Contains("k (1, 1, 2, 2) and v (1, 1, 3, 2) must have the same shape"), Error);
}

TEST_CASE("causal_mask: keys after each query's position are masked, with and without a cache") {
  CHECK(tg::nn::causal_mask(3, 3).to_vector<bool>() ==
        std::vector<bool>{false, true, true, false, false, true, false, false, false});
  // Two new queries at positions 2 and 3 of 4 keys.
  CHECK(tg::nn::causal_mask(2, 4).to_vector<bool>() ==
        std::vector<bool>{false, false, false, true, false, false, false, false});
  CHECK_THROWS_WITH_AS(tg::nn::causal_mask(3, 2), doctest::Contains("1 <= queries <= keys, got 3 and 2"), tg::Error);
}
