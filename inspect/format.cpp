#include "tinygpt/inspect/format.h"

#include <cmath>
#include <cstdio>

namespace tg::inspect {

std::string table_value(double value) {
  char text[48];
  const bool exponent = std::abs(value) >= 1e4 || (value != 0 && std::abs(value) < 1e-4);
  std::snprintf(text, sizeof text, exponent ? "%.1e" : "%.4f", value);
  return text;
}

std::string number(double value, int digits) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0) return "0";  // also -0
  char text[48];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + ")";
}

}  // namespace tg::inspect
