// Errors are part of the API: every misuse throws tg::Error with a message that
// names the operation and the shapes or values involved.
#pragma once
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tg {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

// A shape or strides as "(2, 3)", a 1-d one as "(3,)", as Python writes tuples (shape_str).
inline std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "(";
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d) text += ", ";
    text += std::to_string(dims[d]);
  }
  if (dims.size() == 1) text += ",";
  return text + ")";
}

// One part of a message as fail() writes it: a shape (or strides) as dims_text does,
// anything else as operator<< does.
template <class Part>
void write_part(std::ostringstream& message, const Part& part) {
  message << part;
}
inline void write_part(std::ostringstream& message, const std::vector<int64_t>& dims) { message << dims_text(dims); }

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
