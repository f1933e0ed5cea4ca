// Shapes and strides. Strides count elements, not bytes. A size-1 dim may have
// any stride; a broadcast (expanded) dim has stride 0.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tg {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

int64_t numel(const Shape& shape);
Strides contiguous_strides(const Shape& shape);  // row-major: last dim has stride 1

// "(2, 3)"; one dim is "(4,)" (a Python tuple) and a 0-d shape "()".
std::string shape_str(const Shape& shape);

// NumPy broadcasting: align on the right; each pair of sizes must be equal or 1.
// Throws naming `op` and both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Turns a possibly negative dim into 0..ndim-1, or throws naming `op`.
int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace tg
