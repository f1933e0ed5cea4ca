#include "nn/optim/adamw.h"

#include "nn/functional/adamw.h"
#include "tensor/factory.h"
#include "tensor/view.h"

namespace tg::nn {

namespace {

bool is_position_table(const std::string& name) {
  const std::string table = "wpe.weight";
  return name == table || (name.size() > table.size() && name.ends_with("." + table));
}

}  // namespace

bool AdamW::decays(const std::string& name, const Tensor& parameter, const AdamWOptions& options) {
  return parameter.dim() >= 2 && (options.decay_position_embeddings || !is_position_table(name));
}

AdamW::AdamW(std::vector<std::pair<std::string, Tensor>> named_parameters, AdamWOptions options) : options_(options) {
  check(options.lr >= 0 && options.eps > 0 && options.weight_decay >= 0, "AdamW: needs lr >= 0, eps > 0, weight_decay >= 0, got ",
        options.lr, ", ", options.eps, ", ", options.weight_decay);
  check(options.beta1 >= 0 && options.beta1 < 1 && options.beta2 >= 0 && options.beta2 < 1,
        "AdamW: betas must be in [0, 1), got (", options.beta1, ", ", options.beta2, ")");
  check(!named_parameters.empty(), "AdamW: no parameters");
  int64_t total = 0;
  for (auto& [name, parameter] : named_parameters) {
    check(parameter.dtype() == DType::Float32 && parameter.is_contiguous(), "AdamW: parameter '", name,
          "' must be a contiguous float32 tensor, got dtype ", dtype_name(parameter.dtype()), " shape ", parameter.shape());
    const bool decayed = decays(name, parameter, options);
    slots_.push_back(Slot{std::move(name), parameter, total, decayed});
    total += parameter.numel();
  }
  state_ = AdamWState{zeros({total}), zeros({total}), 0};
}

AdamW::AdamW(const ParameterArena& arena, AdamWOptions options) : AdamW(arena.named_parameters(), options) {}

void AdamW::step() {
  ++state_.step;
  float* m = state_.m.data<float>();
  float* v = state_.v.data<float>();
  for (const Slot& slot : slots_) {
    const Tensor grad = slot.parameter.grad();
    if (!grad.defined()) continue;
    check(grad.is_contiguous() && grad.dtype() == DType::Float32, "AdamW: the gradient of '", slot.name,
          "' must be a contiguous float32 tensor");
    const AdamWSettings settings{static_cast<float>(options_.lr), static_cast<float>(options_.beta1),
                                 static_cast<float>(options_.beta2), static_cast<float>(options_.eps),
                                 static_cast<float>(slot.decays ? options_.weight_decay : 0.0)};
    adamw_step(slot.parameter.data<float>(), grad.data<float>(), m + slot.offset, v + slot.offset,
               slot.parameter.numel(), settings, state_.step);
  }
}

std::vector<std::string> AdamW::decayed_names() const {
  std::vector<std::string> names;
  for (const Slot& slot : slots_)
    if (slot.decays) names.push_back(slot.name);
  return names;
}

std::vector<std::string> AdamW::undecayed_names() const {
  std::vector<std::string> names;
  for (const Slot& slot : slots_)
    if (!slot.decays) names.push_back(slot.name);
  return names;
}

void AdamW::load_state(const Tensor& m, const Tensor& v, int64_t step) {
  const Shape expected = state_.m.shape();
  check(m.shape() == expected && v.shape() == expected, "AdamW::load_state: m and v must have shape ", expected,
        " (one entry per parameter element), got ", m.shape(), " and ", v.shape());
  check(step >= 0, "AdamW::load_state: step must be non-negative, got ", step);
  raw::copy_(state_.m, m);
  raw::copy_(state_.v, v);
  state_.step = step;
}

}  // namespace tg::nn
