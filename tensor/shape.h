// Shapes and strides. Strides count elements, not bytes. A size-1 dim may have
// any stride; a broadcast (expanded) dim has stride 0.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tg {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

// The number of elements. Throws naming `op` and the shape when its nonzero
// sizes multiply past INT64_MAX, even if a 0 among them empties it (torch
// refuses (2^62, 8, 0) too): then every partial product of a valid shape (its
// strides, the outer and inner sizes around a dim) fits in int64 as well, and
// validity does not depend on where the 0 stands.
int64_t numel(const Shape& shape, const char* op = "numel");
// Row-major: the last dim has stride 1. Throws when a stride does not fit in int64.
Strides contiguous_strides(const Shape& shape);

// a * b and a + b for shape, stride, offset and byte arithmetic (once per op,
// never per element): throws naming `op` and both operands when the result
// does not fit in int64.
int64_t checked_mul(int64_t a, int64_t b, const char* op);
int64_t checked_add(int64_t a, int64_t b, const char* op);

// "(2, 3)"; one dim is "(4,)" (a Python tuple) and a 0-d shape "()".
std::string shape_str(const Shape& shape);

// NumPy broadcasting: align on the right; each pair of sizes must be equal or 1.
// Throws naming `op` and both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Turns a possibly negative dim into 0..ndim-1, or throws naming `op`.
int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace tg
