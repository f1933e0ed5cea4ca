#include "tinygpt/nn/mlp.h"

#include "tinygpt/nn/functional/relu_squared.h"
#include "tinygpt/nn/functional/swiglu.h"

namespace tg::nn {

MLP::MLP(const TransformerOptions& options, std::shared_ptr<Generator> dropout_generator) : kind_(options.mlp) {
  options.validate();
  check(kind_ != MlpKind::None, "MLP: mlp is none (a block without an MLP makes none)");
  const int64_t channels = options.n_embd, hidden = options.hidden_size();
  const int64_t projected = kind_ == MlpKind::SwiGLU ? 2 * hidden : hidden;
  const bool bias = options.bias == BiasMode::All;
  c_fc_ = register_module("c_fc", std::make_shared<Linear>(channels, projected, bias, options.dtype));
  if (kind_ == MlpKind::Gelu) gelu_ = register_module("gelu", std::make_shared<GELU>(options.gelu));
  c_proj_ = register_module("c_proj", std::make_shared<Linear>(hidden, channels, bias, options.dtype));
  dropout_ = register_module("dropout", std::make_shared<Dropout>(options.dropout, std::move(dropout_generator)));
  c_fc_->set_profile_role("mlp.c_fc");
  c_proj_->set_profile_role("mlp.c_proj");
}

Tensor MLP::activation(const Tensor& projected) const {
  switch (kind_) {
    case MlpKind::SwiGLU: return swiglu(projected);       // (B, T, 2H) -> (B, T, H)
    case MlpKind::ReLU2: return relu_squared(projected);  // (B, T, H)
    case MlpKind::Gelu:
    case MlpKind::None: break;  // None never gets here: the constructor refuses it
  }
  return gelu_->forward(projected);  // (B, T, H)
}

Tensor MLP::forward(const Tensor& x) const {
  const Tensor hidden = activation(c_fc_->forward(x));  // (B, T, H)
  return dropout_->forward(c_proj_->forward(hidden));  // (B, T, C)
}

std::string MLP::describe() const { return std::string("MLP(") + mlp_kind_name(kind_) + ")"; }

}  // namespace tg::nn
