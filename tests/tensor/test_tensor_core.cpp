// The Tensor handle: storage, shape, strides, factories, errors.
#include <doctest/doctest.h>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/tensor.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

TEST_CASE("storage is 64-byte aligned and shared by views") {
  Tensor x = zeros({3, 5});
  CHECK(reinterpret_cast<uintptr_t>(x.storage()->data()) % 64 == 0);
  Tensor t = raw::transpose(x, 0, 1);
  CHECK(t.storage() == x.storage());
}

TEST_CASE("storage of 2 MB and more starts on a 2 MB boundary (huge pages), down to its last byte") {
  constexpr uintptr_t kTwoMegabytes = uintptr_t{2} << 20;
  for (const int64_t floats : {int64_t{1} << 19, (int64_t{3} << 19) + 17}) {  // 2 MB exactly; 6 MB and a bit
    CAPTURE(floats);
    for (int round = 0; round < 2; ++round) {  // the second round may get the first one's buffer back
      Tensor x = full({floats}, 3.0);
      CHECK(reinterpret_cast<uintptr_t>(x.storage()->data()) % kTwoMegabytes == 0);
      x.data<float>()[floats - 1] = 5;
      CHECK(x.to_vector<float>().back() == 5);
      CHECK(x.to_vector<float>().front() == 3);
    }
  }
}

TEST_CASE("factories fill shapes and dtypes") {
  CHECK(zeros({2, 3}).to_vector<float>() == std::vector<float>(6, 0.0f));
  CHECK(ones({2}, DType::Float64).to_vector<double>() == std::vector<double>{1, 1});
  CHECK(full({2, 2}, 7, DType::Int64).to_vector<int64_t>() == std::vector<int64_t>{7, 7, 7, 7});
  CHECK(arange(5).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(arange(1, 2, 0.25, DType::Float32).to_vector<float>() == std::vector<float>{1, 1.25f, 1.5f, 1.75f});
  CHECK(arange(3, 0, -1, DType::Int64).to_vector<int64_t>() == std::vector<int64_t>{3, 2, 1});
  Tensor s = scalar(2.5);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.item<float>() == 2.5f);
  Tensor data = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(data.shape() == Shape{2, 3});
  CHECK(data.strides() == Strides{3, 1});
  CHECK(data.is_contiguous());
  CHECK(zeros({0, 4}).numel() == 0);
}

TEST_CASE("factory misuse throws with the shapes in the message") {
  CHECK_THROWS_WITH_AS(from_vector<float>({1, 2, 3}, {2, 2}), doctest::Contains("3 values cannot fill shape (2, 2)"),
                       Error);
  CHECK_THROWS_WITH_AS(zeros({2, -1}), doctest::Contains("negative size"), Error);
  CHECK_THROWS_WITH_AS(arange(0, 1, 0), doctest::Contains("step must not be zero"), Error);
  CHECK_THROWS_WITH_AS(ones({2, 2}).item<float>(), doctest::Contains("has 4 elements"), Error);
  CHECK_THROWS_WITH_AS(ones({2}).data<double>(), doctest::Contains("tensor has dtype float32"), Error);
  CHECK_THROWS_WITH_AS(Tensor().shape(), doctest::Contains("undefined"), Error);
}

TEST_CASE("requires_grad only on floating leaves") {
  Tensor x = ones({2});
  x.set_requires_grad();
  CHECK(x.requires_grad());
  CHECK(x.is_leaf());
  CHECK_THROWS_WITH_AS(arange(3).set_requires_grad(), doctest::Contains("only floating-point"), Error);
  Tensor d = x.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.storage() == x.storage());
}

TEST_CASE("contiguity flag follows the strides") {
  Tensor x = zeros({2, 3, 4});
  CHECK(x.is_contiguous());
  CHECK_FALSE(raw::transpose(x, 1, 2).is_contiguous());
  CHECK(raw::slice(x, 0, 0, 1).is_contiguous());       // size-1 leading dim: still contiguous
  CHECK_FALSE(raw::slice(x, 2, 0, 2).is_contiguous());  // a column block is not
  CHECK(raw::unsqueeze(x, 0).is_contiguous());
  CHECK_FALSE(raw::expand(zeros({1, 4}), {3, 4}).is_contiguous());
}

TEST_CASE("shape helpers") {
  CHECK(shape_str({}) == "()");
  CHECK(shape_str({3}) == "(3,)");
  CHECK(shape_str({2, 3}) == "(2, 3)");
  CHECK(broadcast_shapes({2, 1, 4}, {3, 1}, "t") == Shape{2, 3, 4});
  CHECK(broadcast_shapes({}, {5}, "t") == Shape{5});
  CHECK_THROWS_WITH_AS(broadcast_shapes({2, 3}, {4}, "add"),
                       doctest::Contains("add: shapes (2, 3) and (4,) cannot be broadcast"), Error);
  CHECK(normalize_dim(-1, 3, "t") == 2);
  CHECK_THROWS_WITH_AS(normalize_dim(3, 3, "sum"), doctest::Contains("sum: dim 3 is out of range"), Error);
}

TEST_CASE("rebind_to moves every handle of a leaf onto a buffer and keeps the contiguity flag right") {
  const Tensor base = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor leaf = raw::transpose(base, 0, 1);  // (3, 2), not contiguous
  const Tensor other_handle = leaf;
  REQUIRE_FALSE(leaf.is_contiguous());
  const Tensor buffer = from_vector<float>({0, 10, 20, 30, 40, 50, 60, 70});
  leaf.rebind_to(buffer, 2);
  CHECK(other_handle.shape() == Shape{3, 2});
  CHECK(other_handle.is_contiguous());
  CHECK(other_handle.strides() == Strides{2, 1});
  CHECK(other_handle.storage() == buffer.storage());
  CHECK(other_handle.offset() == 2);
  CHECK(other_handle.to_vector<float>() == std::vector<float>{20, 30, 40, 50, 60, 70});
  CHECK(base.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});  // the old storage is untouched
}

TEST_CASE("rebind_to refuses what would break the view") {
  Tensor leaf = zeros({2, 2});
  CHECK_THROWS_WITH_AS(leaf.rebind_to(zeros({3}), 0), doctest::Contains("4 elements from element 0 do not fit a buffer of 3"), Error);
  CHECK_THROWS_WITH_AS(leaf.rebind_to(zeros({8}), 5), doctest::Contains("from element 5 do not fit"), Error);
  CHECK_THROWS_WITH_AS(leaf.rebind_to(zeros({8}), -1), doctest::Contains("do not fit"), Error);
  CHECK_THROWS_WITH_AS(leaf.rebind_to(zeros({8}, DType::Float64), 0), doctest::Contains("contiguous 1-D float32"), Error);
  CHECK_THROWS_WITH_AS(leaf.rebind_to(zeros({2, 4}), 0), doctest::Contains("got float32 of shape (2, 4)"), Error);
  CHECK_THROWS_WITH_AS(leaf.rebind_to(raw::slice(zeros({8}), 0, 0, 8, 2), 0), doctest::Contains("contiguous 1-D"),
                       Error);
  CHECK(leaf.storage() != nullptr);
  CHECK(leaf.offset() == 0);
}

TEST_CASE("a 0-d tensor has no size or stride to read (they read past the shape's end)") {
  const Tensor scalar = zeros({});
  CHECK(scalar.dim() == 0);
  CHECK_THROWS_WITH_AS(scalar.size(0), doctest::Contains("size: dim 0 of a 0-d tensor, which has no dims"), Error);
  CHECK_THROWS_WITH_AS(scalar.stride(-1), doctest::Contains("stride: dim -1 of a 0-d tensor"), Error);
  CHECK(zeros({3}).size(-1) == 3);
}
