#include "tinygpt/nn/functional/rope_frequencies.h"

#include <cmath>
#include <numbers>
#include <sstream>

#include "tinygpt/tensor/cpu/rope_kernels.h"
#include "tinygpt/tensor/error.h"

namespace tg::nn {

namespace {

// "8,1,4,8192" -> {8, 1, 4, 8192}; each a finite number, else empty.
std::vector<double> numbers_in(const std::string& text) {
  std::vector<double> values;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(part, &used);
    } catch (const std::exception&) {
      return {};
    }
    if (used != part.size() || !std::isfinite(value)) return {};
    values.push_back(value);
  }
  return values;
}

std::string number_text(double value) {
  std::ostringstream text;
  text.precision(17);
  text << value;
  return text.str();
}

}  // namespace

RopeScaling RopeScaling::parse(const std::string& text) {
  const std::string grammar = " (none, linear:F or llama3:F,low,high,original, e.g. llama3:8,1,4,8192)";
  if (text == "none") return {};
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::vector<double> values = colon == std::string::npos ? std::vector<double>{} : numbers_in(text.substr(colon + 1));
  RopeScaling scaling;
  if (kind == "linear" && values.size() == 1) {
    scaling.kind = Kind::Linear;
    scaling.factor = values[0];
    check(scaling.factor > 0, "rope scaling '", text, "': the factor must be positive");
    return scaling;
  }
  if (kind == "llama3" && values.size() == 4) {
    scaling = {Kind::Llama3, values[0], values[1], values[2], values[3]};
    check(scaling.factor > 0 && scaling.low_freq_factor > 0 && scaling.original_context > 0 &&
              scaling.high_freq_factor > scaling.low_freq_factor,
          "rope scaling '", text, "': needs a positive factor, low and original, and high above low");
    return scaling;
  }
  fail("rope scaling '", text, "' is not one of the known forms", grammar);
}

std::string RopeScaling::text() const {
  switch (kind) {
    case Kind::None: return "none";
    case Kind::Linear: return "linear:" + number_text(factor);
    case Kind::Llama3:
      return "llama3:" + number_text(factor) + "," + number_text(low_freq_factor) + "," + number_text(high_freq_factor) +
             "," + number_text(original_context);
  }
  return "none";
}

std::vector<double> Rotary::inverse_frequencies(int64_t head_size) const {
  std::vector<double> frequencies(head_size / 2);
  for (int64_t i = 0; i < head_size / 2; ++i) {
    const double unscaled = cpu::rope_inverse_frequency(i, head_size, base);
    double value = unscaled;
    if (scaling.kind == RopeScaling::Kind::Linear) {
      value = unscaled / scaling.factor;
    } else if (scaling.kind == RopeScaling::Kind::Llama3) {
      const double wavelength = 2 * std::numbers::pi / unscaled;
      const double fast_limit = scaling.original_context / scaling.high_freq_factor;
      const double slow_limit = scaling.original_context / scaling.low_freq_factor;
      if (wavelength > slow_limit) {
        value = unscaled / scaling.factor;
      } else if (wavelength >= fast_limit) {
        const double blend = (scaling.original_context / wavelength - scaling.low_freq_factor) /
                             (scaling.high_freq_factor - scaling.low_freq_factor);
        value = (1 - blend) * unscaled / scaling.factor + blend * unscaled;
      }
    }
    frequencies[i] = value;
  }
  return frequencies;
}

const char* rope_pairing_name(RopePairing pairing) {
  return pairing == RopePairing::Interleaved ? "interleaved" : "half";
}

RopePairing rope_pairing_named(const std::string& name) {
  if (name == "interleaved") return RopePairing::Interleaved;
  if (name == "half") return RopePairing::Half;
  fail("unknown rope pairing '", name, "' (known: interleaved, half)");
}

}  // namespace tg::nn
