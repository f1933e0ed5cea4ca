// Views share storage and copy nothing; reshape copies only when it must.
#include <doctest/doctest.h>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {
Tensor counting(const Shape& shape) { return raw::reshape(arange(0, static_cast<double>(numel(shape)), 1, DType::Float32), shape); }
std::vector<float> values(const Tensor& x) { return x.to_vector<float>(); }
}  // namespace

TEST_CASE("transpose and permute swap strides") {
  Tensor x = counting({2, 3});
  Tensor t = raw::transpose(x, 0, 1);
  CHECK(t.shape() == Shape{3, 2});
  CHECK(t.strides() == Strides{1, 3});
  CHECK(values(t) == std::vector<float>{0, 3, 1, 4, 2, 5});
  Tensor p = raw::permute(counting({2, 3, 4}), {2, 0, 1});
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(p.strides() == Strides{1, 12, 4});
  CHECK_THROWS_WITH_AS(raw::permute(x, {0, 0}), doctest::Contains("appears twice"), Error);
  CHECK_THROWS_WITH_AS(raw::permute(x, {0}), doctest::Contains("1 dims given for a tensor of shape (2, 3)"), Error);
}

TEST_CASE("slice, narrow, select") {
  Tensor x = counting({4, 5});
  CHECK(values(raw::slice(x, 1, 1, 4, 2)) == std::vector<float>{1, 3, 6, 8, 11, 13, 16, 18});
  CHECK(values(raw::slice(x, 0, -1, 4)) == std::vector<float>{15, 16, 17, 18, 19});
  CHECK(values(raw::narrow(x, 0, 1, 2)) == std::vector<float>{5, 6, 7, 8, 9, 10, 11, 12, 13, 14});
  CHECK(values(raw::select(x, 1, -1)) == std::vector<float>{4, 9, 14, 19});
  CHECK(raw::select(x, 0, 2).offset() == 10);
  CHECK_THROWS_WITH_AS(raw::narrow(x, 0, 3, 2), doctest::Contains("start 3 + length 2 is out of range for dim 0 of size 4"), Error);
  CHECK_THROWS_WITH_AS(raw::select(x, 0, 4), doctest::Contains("index 4 is out of range"), Error);
  CHECK_THROWS_WITH_AS(raw::slice(x, 0, 0, 2, 0), doctest::Contains("step must be positive"), Error);
}

TEST_CASE("squeeze, unsqueeze, expand") {
  Tensor x = counting({3});
  Tensor column = raw::unsqueeze(x, 1);
  CHECK(column.shape() == Shape{3, 1});
  Tensor grid = raw::expand(column, {3, 4});
  CHECK(grid.strides() == Strides{1, 0});
  CHECK(values(grid) == std::vector<float>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2});
  CHECK(raw::expand(x, {2, -1}).shape() == Shape{2, 3});
  CHECK(raw::squeeze(column, 1).shape() == Shape{3});
  CHECK_THROWS_WITH_AS(raw::squeeze(column, 0), doctest::Contains("dim 0 has size 3, not 1"), Error);
  CHECK_THROWS_WITH_AS(raw::expand(x, {2, 4}), doctest::Contains("shape (3,) cannot be expanded to (2, 4)"), Error);
}

TEST_CASE("view needs compatible strides; reshape copies when it must") {
  Tensor x = counting({2, 3, 4});
  Tensor flat = raw::view(x, {-1});
  CHECK(flat.storage() == x.storage());
  CHECK(raw::view(x, {6, 4}).shape() == Shape{6, 4});
  // Splitting a dim of a transposed tensor is still a view.
  Tensor t = raw::transpose(x, 1, 2);  // (2, 4, 3)
  Tensor split = raw::view(t, {2, 2, 2, 3});
  CHECK(split.storage() == x.storage());
  CHECK(values(split) == values(raw::contiguous(t)));
  // Merging the transposed dims is not.
  CHECK_THROWS_WITH_AS(raw::view(t, {2, 12}), doctest::Contains("cannot be viewed as shape (2, 12) without a copy"),
                       Error);
  Tensor merged = raw::reshape(t, {2, 12});
  CHECK(merged.storage() != x.storage());
  CHECK(values(merged) == values(raw::contiguous(t)));
  CHECK_THROWS_WITH_AS(raw::view(x, {5, -1}), doctest::Contains("shape (5, -1) is invalid for 24 elements"), Error);
  CHECK_THROWS_WITH_AS(raw::view(x, {-1, -1}), doctest::Contains("only one size may be -1"), Error);
}

TEST_CASE("contiguous copies only non-contiguous tensors") {
  Tensor x = counting({3, 2});
  CHECK(raw::contiguous(x).storage() == x.storage());
  Tensor t = raw::contiguous(raw::transpose(x, 0, 1));
  CHECK(t.is_contiguous());
  CHECK(values(t) == std::vector<float>{0, 2, 4, 1, 3, 5});
  CHECK(raw::to_dtype(x, DType::Int64).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("views outside the storage are refused") {
  Tensor x = zeros({4});
  CHECK_THROWS_WITH_AS(Tensor::view_of(x.storage(), DType::Float32, {5}, {1}, 0), doctest::Contains("reaches outside"),
                       Error);
}
