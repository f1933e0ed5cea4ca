#include "tinygpt/nn/mlp.h"

namespace tg::nn {

MLP::MLP(const TransformerOptions& options, std::shared_ptr<Generator> dropout_generator) {
  options.validate();
  const int64_t channels = options.n_embd, hidden = 4 * options.n_embd;
  c_fc_ = register_module("c_fc", std::make_shared<Linear>(channels, hidden, options.bias, options.dtype));
  gelu_ = register_module("gelu", std::make_shared<GELU>(options.gelu));
  c_proj_ = register_module("c_proj", std::make_shared<Linear>(hidden, channels, options.bias, options.dtype));
  dropout_ = register_module("dropout", std::make_shared<Dropout>(options.dropout, std::move(dropout_generator)));
  c_fc_->set_profile_role("mlp.c_fc");
  c_proj_->set_profile_role("mlp.c_proj");
}

Tensor MLP::forward(const Tensor& x) const {
  const Tensor hidden = gelu_->forward(c_fc_->forward(x));  // (B, T, 4C)
  return dropout_->forward(c_proj_->forward(hidden));      // (B, T, C)
}

}  // namespace tg::nn
