// Gradients of indexing, joining and splitting: exact small cases and numeric checks.
#include <doctest/doctest.h>

#include "tinygpt/autograd/ops.h"
#include "tests/autograd/gradcheck_helpers.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

using namespace tg::testing;

TEST_CASE("embedding backward: each table row collects the gradients of its ids") {
  const Tensor table = leaf(zeros({3, 2}));
  const Tensor ids = from_vector<int64_t>({0, 2, 0});
  const Tensor rows = embedding(table, ids);  // (3, 2)
  backward(rows, from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  // Row 0 was read twice (positions 0 and 2): [1, 2] + [5, 6].
  CHECK(table.grad().to_vector<float>() == std::vector<float>{6, 8, 0, 0, 3, 4});
  CHECK_FALSE(ids.grad().defined());
}

TEST_CASE("index_select gradcheck: repeated indices, any dim, transposed input") {
  const Tensor repeated = from_vector<int64_t>({2, 0, 2, 1});
  check_gradients([&](auto& x) { return index_select(x[0], 0, repeated); }, {input({3, 4}, 1)});
  check_gradients([&](auto& x) { return index_select(x[0], -1, repeated); }, {input({2, 3}, 2)});
  check_gradients([&](auto& x) { return index_select(x[0], 1, repeated); },
             {leaf(raw::transpose(values({3, 3, 2}, 3), 0, 1))});
}

TEST_CASE("gather gradcheck: as cross-entropy picks targets, and along dim 0") {
  const Tensor targets = from_vector<int64_t>({3, 0, 3}, {3, 1});  // one class per row
  check_gradients([&](auto& x) { return gather(x[0], 1, targets); }, {input({3, 4}, 4)});
  const Tensor index = from_vector<int64_t>({1, 1, 0, 0, 1, 1}, {2, 3});
  check_gradients([&](auto& x) { return gather(x[0], 0, index); }, {input({2, 3}, 5)});
  check_gradients([&](auto& x) { return gather(x[0], 1, index); }, {leaf(raw::transpose(values({3, 2}, 6), 0, 1))});
}

TEST_CASE("embedding gradcheck: ids of shape (B, T) with repeats") {
  const Tensor ids = from_vector<int64_t>({4, 1, 1, 0, 4, 2}, {2, 3});
  check_gradients([&](auto& x) { return embedding(x[0], ids); }, {input({5, 3}, 7)});
}

TEST_CASE("cat gradcheck: inputs of different sizes, transposed, one constant") {
  check_gradients([](auto& x) { return cat({x[0], x[1]}, 1); },
             {input({2, 3}, 8), leaf(raw::transpose(values({1, 2}, 9), 0, 1))});
  check_gradients([](auto& x) { return cat({x[0], x[1], x[0]}, 0); }, {input({1, 3}, 10), values({2, 3}, 11)});
}

TEST_CASE("split gradcheck: pieces used unevenly (one twice, one not at all)") {
  check_gradients(
      [](auto& x) {
        const std::vector<Tensor> pieces = split(x[0], std::vector<int64_t>{1, 2, 3}, 1);
        return cat({mul(pieces[2], pieces[2]), pieces[0], pieces[0]}, 1);
      },
      {input({2, 6}, 12)});
  check_gradients(
      [](auto& x) {
        const std::vector<Tensor> chunks = split(x[0], 2, 0);  // sizes 2, 2, 1
        return cat({chunks[2], mul(chunks[0], chunks[1])}, 0);
      },
      {input({5, 2}, 13)});
}

TEST_CASE("split of a size-0 dim: one empty piece that still carries the gradient") {
  const Tensor x = leaf(zeros({0, 3}));
  const std::vector<Tensor> pieces = split(x, 2, 0);
  REQUIRE(pieces.size() == 1);
  CHECK(pieces[0].shape() == Shape{0, 3});
  CHECK(pieces[0].requires_grad());
  backward(sum(pieces[0] * 2.0));
  CHECK(x.grad().shape() == Shape{0, 3});
}

TEST_CASE("split and cat: without grad mode the pieces are plain views") {
  const Tensor x = input({2, 4}, 14);
  NoGradGuard no_grad;
  const std::vector<Tensor> pieces = split(x, 2, 1);
  CHECK_FALSE(pieces[0].requires_grad());
  CHECK(pieces[1].storage() == x.storage());
  CHECK_FALSE(cat(pieces, 1).requires_grad());
}

TEST_CASE("embedding of a 0-d table is refused, not read past its shape") {
  const Tensor ids = from_vector(std::vector<int64_t>{0}, {1});
  CHECK_THROWS_AS(embedding(leaf(zeros({})), ids), Error);
}
