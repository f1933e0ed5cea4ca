// Errors are part of the API: every misuse throws tg::Error with a message that
// names the operation and the shapes or values involved.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

#include "tinygpt/tensor/shape.h"

namespace tg {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

// One part of a message as fail() writes it: a shape (or strides) as "(2, 3)",
// anything else as operator<< does.
template <class Part>
void write_part(std::ostringstream& message, const Part& part) {
  message << part;
}
inline void write_part(std::ostringstream& message, const Shape& shape) { message << shape_str(shape); }

}  // namespace detail

// fail("matmul: shapes ", a.shape(), " and ", b.shape(), " do not match")
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream message;
  (detail::write_part(message, parts), ...);
  throw Error(message.str());
}

// The message parts are only formatted when the check fails.
template <class... Parts>
void check(bool condition, const Parts&... parts) {
  if (!condition) fail(parts...);
}

}  // namespace tg
