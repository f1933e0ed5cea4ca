#include "tinygpt/nn/normalization.h"

#include "tinygpt/nn/layer_norm.h"
#include "tinygpt/nn/rms_norm.h"

namespace tg::nn {

std::shared_ptr<Normalization> make_normalization(const TransformerOptions& options, int64_t channels) {
  if (options.norm == NormKind::RMSNorm)
    return std::make_shared<RMSNorm>(channels, options.norm_weight, options.norm_eps, options.dtype);
  return std::make_shared<LayerNorm>(channels, options.bias == BiasMode::All, options.norm_eps, options.dtype);
}

}  // namespace tg::nn
