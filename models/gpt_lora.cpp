// GPT's LoRA members: attaching adapters to the projections a LoraConfig names,
// and merging them back into the weights (models/gpt.h, models/lora_config.h).
#include <algorithm>
#include <memory>
#include <utility>

#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/tensor/error.h"

namespace tg {

const nn::Linear& GPT::linear_named(const std::string& name) const {
  // Walks the module tree one dotted component at a time: "blocks" "0" "attn" "qkv".
  const nn::Module* module = this;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('.', start), name.size());
    const std::string component = name.substr(start, end - start);
    const nn::Module* next = nullptr;
    for (const auto& [child_name, child] : module->children())
      if (child_name == component) next = child.get();
    check(next, "GPT: no module '", name, "'");
    module = next;
    start = end + 1;
  }
  const auto* linear = dynamic_cast<const nn::Linear*>(module);
  check(linear, "GPT: '", name, "' is not a Linear");
  return *linear;
}

nn::Linear& GPT::linear_named(const std::string& name) {
  return const_cast<nn::Linear&>(std::as_const(*this).linear_named(name));  // the model owns it: not const here
}

void GPT::attach_lora(const LoraConfig& config, uint64_t seed) {
  check(!lora_, "GPT: the model has LoRA adapters already");
  for (const auto& [name, parameter] : named_parameters()) {
    Tensor frozen = parameter;
    frozen.set_requires_grad(false);
  }
  Generator generator(seed);
  for (const LoraModule& module : lora_modules(config_, config.targets)) {
    nn::Linear& linear = linear_named(module.linear);
    auto adapter = std::make_shared<nn::LoraAdapter>(linear.in_features(), module.parts, config.settings,
                                                     dropout_generator_, dtype_);
    adapter->initialize(generator);
    linear.attach_lora(std::move(adapter));
  }
  lora_ = config;
}

void GPT::merge_lora() {
  check(lora_.has_value(), "GPT: no LoRA adapters to merge");
  for (const LoraModule& module : lora_modules(config_, lora_->targets)) linear_named(module.linear).merge_lora();
  lora_.reset();
}

}  // namespace tg
