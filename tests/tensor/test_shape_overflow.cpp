// Shape, stride, offset and byte arithmetic that would leave int64 is an error
// naming the op and the sizes: never a wrapped size (undefined behaviour, which
// the sanitize build's UBSan turns into an abort), never a crash.
#include <doctest/doctest.h>

#include <limits>

#include "tinygpt/tensor/concat.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/storage.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kHuge = int64_t{1} << 62;  // 4611686018427387904
Tensor counting(const Shape& shape) { return raw::reshape(arange(0, static_cast<double>(numel(shape)), 1, DType::Float32), shape); }
}  // namespace

TEST_CASE("numel: a count past INT64_MAX is an error naming the shape") {
  CHECK(numel({kHuge, 1}) == kHuge);
  CHECK(numel({kHuge, 0}) == 0);
  CHECK_THROWS_WITH_AS(numel({kHuge, 2}), doctest::Contains("shape (4611686018427387904, 2) is too large"), Error);
  // A 0 does not excuse the other sizes, wherever it stands (torch refuses (2^62, 8, 0) too).
  CHECK_THROWS_WITH_AS(numel({kHuge, 8, 0}), doctest::Contains("shape (4611686018427387904, 8, 0) is too large"), Error);
  CHECK_THROWS_WITH_AS(numel({0, kHuge, 8}), doctest::Contains("shape (0, 4611686018427387904, 8) is too large"), Error);
}

TEST_CASE("checked_mul, checked_add and contiguous_strides name the op and the operands") {
  CHECK(checked_mul(-3, 4, "test") == -12);
  CHECK(checked_add(kMax - 1, 1, "test") == kMax);
  CHECK_THROWS_WITH_AS(checked_mul(kHuge, 2, "test"), doctest::Contains("test: 4611686018427387904 * 2 overflows int64"),
                       Error);
  CHECK_THROWS_WITH_AS(checked_add(kMax, 1, "test"), doctest::Contains("test: 9223372036854775807 + 1 overflows int64"),
                       Error);
  CHECK(contiguous_strides({kHuge, 0, 8}) == Strides{0, 8, 1});
  CHECK_THROWS_WITH_AS(contiguous_strides({0, kHuge, 8}),
                       doctest::Contains("contiguous_strides: 8 * 4611686018427387904 overflows int64"), Error);
}

TEST_CASE("narrow: start INT64_MAX is out of range, not wrapped into it") {
  const Tensor x = zeros({3, 4});
  CHECK_THROWS_WITH_AS(raw::narrow(x, 1, kMax, 2),
                       doctest::Contains("narrow: start 9223372036854775807 + length 2 is out of range for dim 1 of size 4"),
                       Error);
  CHECK_THROWS_WITH_AS(raw::narrow(x, 1, 2, kMax), doctest::Contains("start 2 + length 9223372036854775807"), Error);
}

TEST_CASE("expand: to more than INT64_MAX elements is an error, not a tensor of 0 elements") {
  CHECK_THROWS_WITH_AS(raw::expand(zeros({1, 1}), {kHuge, kHuge}),
                       doctest::Contains("expand: shape (4611686018427387904, 4611686018427387904) is too large"), Error);
  // (2^62, 0) holds nothing and its nonzero sizes fit: a valid empty view, as in torch.
  CHECK(raw::expand(zeros({1, 0}), {kHuge, 0}).numel() == 0);
}

TEST_CASE("slice: a step of INT64_MAX keeps the first element of the range") {
  const Tensor x = counting({3, 4});
  const Tensor columns = raw::slice(x, 1, 1, 4, kMax);
  CHECK(columns.shape() == Shape{3, 1});
  CHECK(columns.to_vector<float>() == std::vector<float>{1, 5, 9});
  // Along dim 0, stride 4 * step does not fit in int64; a dim of one element keeps its stride.
  const Tensor rows = raw::slice(x, 0, 1, 3, kMax);
  CHECK(rows.shape() == Shape{1, 4});
  CHECK(rows.to_vector<float>() == std::vector<float>{4, 5, 6, 7});
  CHECK(raw::slice(x, 1, 2, 2, kMax).shape() == Shape{3, 0});
  CHECK(raw::slice(x, 1, kMax, kMax, kMax).shape() == Shape{3, 0});
}

TEST_CASE("view and reshape: an empty tensor as (2^62, 8, 0) is refused, as torch does") {
  const Tensor empty = zeros({0});
  CHECK_THROWS_WITH_AS(raw::reshape(empty, {kHuge, 8, 0}),
                       doctest::Contains("reshape: shape (4611686018427387904, 8, 0) is too large"), Error);
  CHECK_THROWS_WITH_AS(raw::view(empty, {kHuge, 8, 0}),
                       doctest::Contains("view: shape (4611686018427387904, 8, 0) is too large"), Error);
  CHECK_THROWS_WITH_AS(raw::reshape(empty, {kHuge, 8, -1}), doctest::Contains("reshape: 4611686018427387904 * 8 overflows int64"),
                       Error);
  CHECK(raw::reshape(empty, {kHuge, 0}).shape() == Shape{kHuge, 0});
}

TEST_CASE("empty: a huge shape is a clear error, not bad_alloc or a crash") {
  CHECK_THROWS_WITH_AS(Tensor::empty({int64_t{1} << 40, int64_t{1} << 30}),
                       doctest::Contains("empty: shape (1099511627776, 1073741824) is too large"), Error);
  CHECK_THROWS_WITH_AS(Tensor::empty({int64_t{1} << 61}),  // 2^63 bytes of float32
                       doctest::Contains("empty: shape (2305843009213693952,) of float32 needs more than INT64_MAX bytes"),
                       Error);
  // 2^62 bytes fit in int64 but in no address space.
  CHECK_THROWS_WITH_AS(Tensor::empty({int64_t{1} << 60}), doctest::Contains("cannot allocate 4611686018427387904 bytes"),
                       Error);
  CHECK_THROWS_WITH_AS(Storage::allocate(std::numeric_limits<size_t>::max()),
                       doctest::Contains("allocate: 18446744073709551615 bytes is more than INT64_MAX"), Error);
}

TEST_CASE("arange: a count past INT64_MAX or an infinite range is an error") {
  CHECK_THROWS_WITH_AS(arange(0, 1e30), doctest::Contains("arange: [0, 1e+30) in steps of 1 has too many elements"), Error);
  CHECK_THROWS_WITH_AS(arange(0, std::numeric_limits<double>::infinity()), doctest::Contains("arange: unsupported range"),
                       Error);
  CHECK_THROWS_WITH_AS(arange(0, 5, std::numeric_limits<double>::quiet_NaN()),
                       doctest::Contains("arange: step must not be zero or NaN, got nan"), Error);
}

TEST_CASE("cat and split: sizes that sum past INT64_MAX are an error") {
  const Tensor half = raw::expand(zeros({1, 0}), {kHuge, 0});
  CHECK_THROWS_WITH_AS(raw::cat({half, half}, 0),
                       doctest::Contains("cat: 4611686018427387904 + 4611686018427387904 overflows int64"), Error);
  CHECK_THROWS_WITH_AS(raw::split(raw::expand(zeros({1}), {kMax}), {kMax, 1}, 0),
                       doctest::Contains("split: 9223372036854775807 + 1 overflows int64"), Error);
}

TEST_CASE("split: a chunk past half of INT64_MAX") {
  const Tensor row = raw::expand(zeros({1}), {kMax});  // kMax = 2 * 2^62 - 1
  const std::vector<Tensor> pieces = raw::split(row, kHuge, 0);
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[0].shape() == Shape{kHuge});
  CHECK(pieces[1].shape() == Shape{kHuge - 1});
}

TEST_CASE("view_of: an extent or offset past INT64_MAX is an error") {
  const auto storage = Storage::allocate(64);
  CHECK_THROWS_WITH_AS(Tensor::view_of(storage, DType::Float32, {3}, {kMax}, 0),
                       doctest::Contains("view: 2 * 9223372036854775807 overflows int64"), Error);
  // An empty view touches nothing, so its strides are free; ops on it still check their arithmetic.
  const Tensor empty = Tensor::view_of(storage, DType::Float32, {0, 3}, {1, kMax}, 0);
  CHECK_THROWS_WITH_AS(raw::select(empty, 1, 2), doctest::Contains("select: 2 * 9223372036854775807 overflows int64"), Error);
  CHECK_THROWS_WITH_AS(raw::unsqueeze(empty, 1), doctest::Contains("unsqueeze: 9223372036854775807 * 3 overflows int64"),
                       Error);
  // Elementwise loops merge dims by comparing stride * size: 9223372036854775807 * 3 here.
  CHECK(raw::clone(empty).shape() == Shape{0, 3});
  CHECK_THROWS_WITH_AS(Tensor::view_of(storage, DType::Float32, {0, kHuge, 8}, {0, 8, 1}, 0),
                       doctest::Contains("view: shape (0, 4611686018427387904, 8) is too large"), Error);
}
