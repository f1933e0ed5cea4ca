#include <doctest/doctest.h>

#include "tinygpt/tensor/concat.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/index.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {
// x[i][j] = 10 * i + j: every element says where it came from.
Tensor grid(int64_t rows, int64_t cols, DType dtype = DType::Float32) {
  std::vector<double> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) values.push_back(static_cast<double>(10 * i + j));
  return raw::to_dtype(from_vector<double>(values, {rows, cols}), dtype);
}
}  // namespace

TEST_CASE("index_select: rows and columns, repeated indices") {
  const Tensor x = grid(3, 4);
  const Tensor rows = raw::index_select(x, 0, from_vector<int64_t>({2, 0, 2}));
  CHECK(rows.shape() == Shape{3, 4});
  CHECK(rows.to_vector<float>() == std::vector<float>{20, 21, 22, 23, 0, 1, 2, 3, 20, 21, 22, 23});
  const Tensor columns = raw::index_select(x, -1, from_vector<int64_t>({3, 1}));
  CHECK(columns.shape() == Shape{3, 2});
  CHECK(columns.to_vector<float>() == std::vector<float>{3, 1, 13, 11, 23, 21});
  // A transposed input is read through its strides.
  const Tensor transposed = raw::index_select(raw::transpose(x, 0, 1), 1, from_vector<int64_t>({1}));
  CHECK(transposed.to_vector<float>() == std::vector<float>{10, 11, 12, 13});
  CHECK(raw::index_select(x, 0, from_vector<int64_t>({})).shape() == Shape{0, 4});
}

TEST_CASE("index_select: errors name the index, its position and the dim") {
  const Tensor x = grid(3, 4);
  CHECK_THROWS_WITH_AS(raw::index_select(x, 0, from_vector<int64_t>({0, 3})),
                       "index_select: index 3 at position 1 is out of range for dim 0 of size 3 (shape (3, 4))", Error);
  CHECK_THROWS_WITH_AS(raw::index_select(x, 1, from_vector<int64_t>({-1})), doctest::Contains("index -1 at position 0"),
                       Error);
  CHECK_THROWS_WITH_AS(raw::index_select(x, 0, from_vector<float>({0})), doctest::Contains("must be int64"), Error);
  CHECK_THROWS_WITH_AS(raw::index_select(x, 2, from_vector<int64_t>({0})), doctest::Contains("index_select: dim 2"),
                       Error);
}

TEST_CASE("index_add: repeated indices accumulate") {
  const Tensor source = from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor out = raw::index_add({2, 2}, 0, from_vector<int64_t>({1, 0, 1}), source);
  CHECK(out.to_vector<float>() == std::vector<float>{3, 4, 6, 8});  // row 1 = [1, 2] + [5, 6]
  const Tensor by_column = raw::index_add({2, 3}, 1, from_vector<int64_t>({2, 2}), ones({2, 2}));
  CHECK(by_column.to_vector<float>() == std::vector<float>{0, 0, 2, 0, 0, 2});
  CHECK_THROWS_WITH_AS(raw::index_add({2, 2}, 0, from_vector<int64_t>({0}), source),
                       doctest::Contains("index_add: source of shape (3, 2) does not match shape (2, 2)"), Error);
}

TEST_CASE("index_add: a large accumulation is exact and the same on every run") {
  // Big enough to run in parallel: 4000 rows of 64 into 7 rows.
  const int64_t count = 4000, channels = 64;
  std::vector<int64_t> ids(count);
  for (int64_t i = 0; i < count; ++i) ids[i] = i % 7;
  const Tensor out = raw::index_add({7, channels}, 0, from_vector<int64_t>(ids), ones({count, channels}));
  const std::vector<float> values = out.to_vector<float>();
  for (int64_t v = 0; v < 7; ++v) {
    const float expected = static_cast<float>(count / 7 + (v < count % 7 ? 1 : 0));
    for (int64_t c = 0; c < channels; ++c) REQUIRE(values[v * channels + c] == expected);
  }
}

TEST_CASE("gather and scatter_add, as torch.gather / torch.scatter_add") {
  const Tensor x = grid(2, 3);  // [[0, 1, 2], [10, 11, 12]]
  const Tensor index = from_vector<int64_t>({2, 0, 1, 1}, {2, 2});
  const Tensor picked = raw::gather(x, 1, index);  // out[i][j] = x[i][index[i][j]]
  CHECK(picked.shape() == Shape{2, 2});
  CHECK(picked.to_vector<float>() == std::vector<float>{2, 0, 11, 11});
  const Tensor down = raw::gather(x, 0, from_vector<int64_t>({1, 0, 1}, {1, 3}));  // out[0][j] = x[index[0][j]][j]
  CHECK(down.to_vector<float>() == std::vector<float>{10, 1, 12});
  // A transposed index is read through its strides.
  const Tensor index_t = raw::transpose(from_vector<int64_t>({2, 1, 0, 1}, {2, 2}), 0, 1);  // [[2, 0], [1, 1]]
  CHECK(raw::gather(x, 1, index_t).to_vector<float>() == std::vector<float>{2, 0, 11, 11});

  const Tensor added = raw::scatter_add({2, 3}, 1, index, from_vector<float>({1, 2, 3, 4}, {2, 2}));
  CHECK(added.to_vector<float>() == std::vector<float>{2, 0, 1, 0, 7, 0});  // row 1: 3 + 4 into column 1

  CHECK_THROWS_WITH_AS(raw::gather(x, 1, from_vector<int64_t>({0, 3}, {1, 2})),
                       "gather: index 3 at position (0, 1) is out of range for dim 1 of size 3 (shape (2, 3))", Error);
  CHECK_THROWS_WITH_AS(raw::gather(x, 1, from_vector<int64_t>({0})),
                       doctest::Contains("gather: index of shape (1,) needs as many dims as the tensor of shape "
                                         "(2, 3)"),
                       Error);
  CHECK_THROWS_WITH_AS(raw::gather(x, 1, zeros({3, 1}, DType::Int64)),
                       doctest::Contains("larger than the tensor of shape (2, 3) in dim 0"), Error);
  CHECK_THROWS_WITH_AS(raw::scatter_add({2, 3}, 1, index, zeros({2, 3})),
                       doctest::Contains("scatter_add: source of shape (2, 3) must have the index's shape (2, 2)"),
                       Error);
}

TEST_CASE("embedding: rows of the table for ids of any shape") {
  const Tensor table = grid(4, 3);  // row v = [10v, 10v + 1, 10v + 2]
  const Tensor ids = from_vector<int64_t>({3, 0, 3, 1}, {2, 2});
  const Tensor rows = raw::embedding(table, ids);
  CHECK(rows.shape() == Shape{2, 2, 3});
  CHECK(rows.to_vector<float>() == std::vector<float>{30, 31, 32, 0, 1, 2, 30, 31, 32, 10, 11, 12});
  CHECK(raw::embedding(table, from_vector<int64_t>({2})).shape() == Shape{1, 3});
  CHECK(raw::embedding(table, full({}, 2, DType::Int64)).shape() == Shape{3});

  CHECK_THROWS_WITH_AS(raw::embedding(table, from_vector<int64_t>({0, 1, 2, 7}, {2, 2})),
                       "embedding: id 7 at position (1, 1) is out of range for a vocabulary of 4 rows "
                       "(table shape (4, 3))",
                       Error);
  CHECK_THROWS_WITH_AS(raw::embedding(zeros({4}), ids), doctest::Contains("embedding: table must be 2-D"), Error);
}

TEST_CASE("embedding_backward: repeated ids add up, in parallel, deterministically") {
  const Tensor ids = from_vector<int64_t>({3, 0, 3, 1}, {2, 2});
  const Tensor grad_rows = from_vector<float>({1, 1, 2, 2, 3, 3, 4, 4}, {2, 2, 2});
  const Tensor grad_table = raw::embedding_backward(5, ids, grad_rows);
  CHECK(grad_table.shape() == Shape{5, 2});
  CHECK(grad_table.to_vector<float>() == std::vector<float>{2, 2, 4, 4, 0, 0, 4, 4, 0, 0});

  // A GPT-sized case (B*T = 512 ids of a 65-token vocabulary, C = 128) matches a serial sum.
  Generator generator(4);
  const Tensor many_ids = randint({4, 128}, 0, 65, generator);
  const Tensor many_rows = randn({4, 128, 128}, generator);
  const std::vector<float> result = raw::embedding_backward(65, many_ids, many_rows).to_vector<float>();
  std::vector<float> expected(65 * 128, 0.0f);
  const std::vector<int64_t> id_values = many_ids.to_vector<int64_t>();
  const std::vector<float> row_values = many_rows.to_vector<float>();
  for (size_t n = 0; n < id_values.size(); ++n)
    for (size_t c = 0; c < 128; ++c) expected[id_values[n] * 128 + c] += row_values[n * 128 + c];
  CHECK(result == expected);  // same order of additions: bit-identical

  CHECK_THROWS_WITH_AS(raw::embedding_backward(5, ids, zeros({2, 3, 2})),
                       doctest::Contains("embedding_backward: gradient of shape (2, 3, 2) does not match ids of "
                                         "shape (2, 2)"),
                       Error);
}

TEST_CASE("cat: joins along any dim") {
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor b = from_vector<float>({5, 6}, {2, 1});
  const Tensor side = raw::cat({a, b}, 1);
  CHECK(side.shape() == Shape{2, 3});
  CHECK(side.to_vector<float>() == std::vector<float>{1, 2, 5, 3, 4, 6});
  const Tensor below = raw::cat({a, raw::transpose(a, 0, 1)}, 0);
  CHECK(below.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 1, 3, 2, 4});
  CHECK(raw::cat({a}, -1).to_vector<float>() == a.to_vector<float>());
  CHECK(raw::cat({zeros({0, 2}), a}, 0).shape() == Shape{2, 2});

  CHECK_THROWS_WITH_AS(raw::cat({a, b}, 0),
                       "cat: tensor 1 has shape (2, 1) but tensor 0 has shape (2, 2); they must match in every dim but "
                       "dim 0",
                       Error);
  CHECK_THROWS_WITH_AS(raw::cat({a, zeros({2, 2}, DType::Float64)}, 0),
                       "cat: tensor 1 has dtype float64 (shape (2, 2)) but tensor 0 has dtype float32 (shape (2, 2))",
                       Error);
  CHECK_THROWS_WITH_AS(raw::cat({}, 0), "cat: needs at least one tensor", Error);
  CHECK_THROWS_WITH_AS(raw::cat({a, zeros({2})}, 0), doctest::Contains("tensor 1 has shape (2,)"), Error);
}

TEST_CASE("split: views by sizes or by chunk") {
  const Tensor x = grid(2, 5);
  const std::vector<Tensor> parts = raw::split(x, {2, 3}, 1);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].to_vector<float>() == std::vector<float>{0, 1, 10, 11});
  CHECK(parts[1].to_vector<float>() == std::vector<float>{2, 3, 4, 12, 13, 14});
  CHECK(parts[1].storage() == x.storage());  // a view, not a copy
  const std::vector<Tensor> chunks = raw::split(x, 2, -1);
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[2].shape() == Shape{2, 1});
  CHECK(raw::cat(chunks, 1).to_vector<float>() == x.to_vector<float>());

  CHECK_THROWS_WITH_AS(raw::split(x, {2, 2}, 1),
                       "split: sizes (2, 2) sum to 4, not to the size 5 of dim 1 (shape (2, 5))", Error);
  CHECK_THROWS_WITH_AS(raw::split(x, 0, 1),
                       "split: chunk size 0 is only allowed for a dim of size 0, not for dim 1 of size 5 (shape (2, 5))",
                       Error);
  CHECK_THROWS_WITH_AS(raw::split(x, -1, 1), doctest::Contains("split: chunk size must not be negative, got -1"), Error);
}

TEST_CASE("split: a dim of size 0 splits into one empty piece, as in torch") {
  const Tensor empty = zeros({0, 3});
  for (const int64_t chunk : {2, 0}) {  // torch allows a chunk of 0 only here
    CAPTURE(chunk);
    const std::vector<Tensor> pieces = raw::split(empty, chunk, 0);
    REQUIRE(pieces.size() == 1);
    CHECK(pieces[0].shape() == Shape{0, 3});
  }
  // With sizes given, one piece per size.
  CHECK(raw::split(empty, {0, 0}, 0).size() == 2);
  CHECK(raw::split(empty, std::vector<int64_t>{}, 0).empty());
}
