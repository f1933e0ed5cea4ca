// Errors are part of the API: every misuse throws tg::Error with a message that
// names the operation and the shapes or values involved.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tg {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// fail("matmul: shapes ", a.shape(), " and ", b.shape(), " do not match")
template <class... Parts>
[[noreturn]] void fail(Parts&&... parts) {
  std::ostringstream message;
  (message << ... << std::forward<Parts>(parts));
  throw Error(message.str());
}

// The message parts are only formatted when the check fails.
template <class... Parts>
void check(bool condition, Parts&&... parts) {
  if (!condition) fail(std::forward<Parts>(parts)...);
}

}  // namespace tg
