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

// A value as the walk-through's tables print it: 4 decimals, or 2 significant
// digits with an exponent when it is very large or very small ("0.2500",
// "1.5e-05"); the terminal pads it to a column (text_report.cpp), the web page's
// heatmap cells show it as it is.
std::string table_value(double value);

// "(2, 3)"; one dim is "(8)" (not Python's "(8,)": these label pictures).
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace tg::inspect
