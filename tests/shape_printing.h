// How doctest prints a Shape (a std::vector<int64_t>) in a failed check:
// "(2, 3)", as error messages do (tg::shape_str). doctest cannot print a
// std::vector by itself, and operator<< may not be added to namespace std, so
// tests/CMakeLists.txt includes this header first in every test source: each one
// then sees the same StringMaker.
#pragma once
#include <doctest/doctest.h>

#include "tinygpt/tensor/shape.h"

namespace doctest {

template <>
struct StringMaker<tg::Shape> {
  static String convert(const tg::Shape& shape) { return tg::shape_str(shape).c_str(); }
};

}  // namespace doctest
