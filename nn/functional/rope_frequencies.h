// How fast each channel pair of RoPE turns: the base (theta), the published
// rescalings for longer contexts, and which channels pair up.
//
//   inv_freq_i = base^(-2i / HS),  i in [0, HS/2)       (RoFormer; Llama's rope_theta)
//
// Rescalings (Hugging Face's rope_scaling, "rope_type"):
//   linear:F                        inv_freq_i / F: positions squeezed F times (Chen et al. 2023)
//   llama3:F,low,high,original      Llama 3.1's: with wavelength w_i = 2 pi / inv_freq_i and
//                                   the context the model was trained on, `original`,
//                                     w_i < original / high   kept          (fast pairs: local order)
//                                     w_i > original / low    divided by F  (slow pairs: long range)
//                                     between                 a blend, s = (original / w_i - low) / (high - low):
//                                                             (1 - s) inv_freq_i / F + s inv_freq_i
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tinygpt/tensor/cpu/rope_pairing.h"

namespace tg::nn {

struct RopeScaling {
  enum class Kind { None, Linear, Llama3 };
  Kind kind = Kind::None;
  double factor = 1;             // F
  double low_freq_factor = 1;    // llama3 only
  double high_freq_factor = 4;   // llama3 only
  double original_context = 0;   // llama3 only: the context length before scaling

  // "none", "linear:F" or "llama3:F,low,high,original"; anything else throws,
  // naming the text and the grammar.
  static RopeScaling parse(const std::string& text);
  std::string text() const;  // the form parse reads
  bool operator==(const RopeScaling&) const = default;
};

struct Rotary {
  double base = 10000.0;  // theta
  RopeScaling scaling;
  RopePairing pairing = RopePairing::Interleaved;

  // (HS/2) radians per position, rescaled.
  std::vector<double> inverse_frequencies(int64_t head_size) const;
};

const char* rope_pairing_name(RopePairing pairing);  // "interleaved", "half"
RopePairing rope_pairing_named(const std::string& name);

}  // namespace tg::nn
