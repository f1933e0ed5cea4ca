#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/print.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

TEST_CASE("print: a float matrix with 4 decimals and a common width") {
  const Tensor x = from_vector<float>({0.1f, -2, 3.14159f, 4, 5, 6}, {2, 3});
  CHECK(to_string(x) ==
        "tensor([[ 0.1000, -2.0000,  3.1416],\n"
        "        [ 4.0000,  5.0000,  6.0000]], shape=(2, 3), dtype=float32)");
  std::ostringstream stream;
  stream << raw::transpose(x, 0, 1);  // printed in logical order, whatever the strides
  CHECK(stream.str() ==
        "tensor([[ 0.1000,  4.0000],\n"
        "        [-2.0000,  5.0000],\n"
        "        [ 3.1416,  6.0000]], shape=(3, 2), dtype=float32)");
}

TEST_CASE("print: int64, bool, 0-d, empty, float64") {
  CHECK(to_string(arange(5)) == "tensor([0, 1, 2, 3, 4], shape=(5,), dtype=int64)");
  CHECK(to_string(from_vector<int64_t>({-7, 120})) == "tensor([ -7, 120], shape=(2,), dtype=int64)");
  CHECK(to_string(from_vector<bool>({true, false})) == "tensor([ True, False], shape=(2,), dtype=bool)");
  CHECK(to_string(scalar(2.5)) == "tensor(2.5000, shape=(), dtype=float32)");
  CHECK(to_string(zeros({0, 3})) == "tensor([], shape=(0, 3), dtype=float32)");
  CHECK(to_string(from_vector<double>({1.0 / 3})) == "tensor([0.3333], shape=(1,), dtype=float64)");
  CHECK(to_string(Tensor()) == "tensor(undefined)");
}

TEST_CASE("print: name and requires_grad are shown when set") {
  Tensor w = ones({1});
  w.set_name("wq");
  CHECK(to_string(w) == "tensor([1.0000], shape=(1,), dtype=float32, name=wq)");
  w.set_requires_grad();
  CHECK(to_string(w) == "tensor([1.0000], shape=(1,), dtype=float32, name=wq, requires_grad=True)");
}

TEST_CASE("print: 3-D tensors leave a blank line between matrices") {
  CHECK(to_string(zeros({2, 1, 2}, DType::Int64)) ==
        "tensor([[[0, 0]],\n"
        "\n"
        "        [[0, 0]]], shape=(2, 1, 2), dtype=int64)");
}

TEST_CASE("print: scientific notation when values span a wide range; nan and inf") {
  CHECK(to_string(from_vector<float>({1e-5f, 1})) == "tensor([1.0000e-05, 1.0000e+00], shape=(2,), dtype=float32)");
  CHECK(to_string(from_vector<float>({-1, 1000})) == "tensor([  -1.0000, 1000.0000], shape=(2,), dtype=float32)");
  CHECK(to_string(from_vector<float>({NAN, INFINITY, -INFINITY, 0.5f})) ==
        "tensor([   nan,    inf,   -inf, 0.5000], shape=(4,), dtype=float32)");
}

TEST_CASE("print: long rows wrap at 80 columns") {
  // Cells of width 6 ("0.0000") plus ", ": 9 per line fit after "tensor([".
  CHECK(to_string(zeros({10})) ==
        "tensor([0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000,\n"
        "        0.0000], shape=(10,), dtype=float32)");
}

TEST_CASE("print: over 1000 elements only the edges of each dim are shown") {
  CHECK(to_string(arange(2000)) == "tensor([   0,    1,    2, ..., 1997, 1998, 1999], shape=(2000,), dtype=int64)");
  CHECK(to_string(raw::view(arange(1600), {40, 40})) ==
        "tensor([[   0,    1,    2, ...,   37,   38,   39],\n"
        "        [  40,   41,   42, ...,   77,   78,   79],\n"
        "        [  80,   81,   82, ...,  117,  118,  119],\n"
        "        ...,\n"
        "        [1480, 1481, 1482, ..., 1517, 1518, 1519],\n"
        "        [1520, 1521, 1522, ..., 1557, 1558, 1559],\n"
        "        [1560, 1561, 1562, ..., 1597, 1598, 1599]], shape=(40, 40), dtype=int64)");
  // Exactly 1000 elements: printed in full.
  CHECK(to_string(arange(1000)).find("...") == std::string::npos);
}
