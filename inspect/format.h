// How the reports write numbers and shapes: one place, so the terminal, the web
// page, the SVG pictures and the walk-through's notes agree to the digit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tg::inspect {

// A number in `digits` significant digits without trailing zeros: "0.25",
// "1.5e-05", "1200", "-inf", "nan"; -0 is "0".
std::string number(double value, int digits = 4);

// "(2, 3)"; one dim is "(8)" (not Python's "(8,)": these label pictures).
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace tg::inspect
