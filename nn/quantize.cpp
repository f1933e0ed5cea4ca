#include "tinygpt/nn/quantize.h"

#include <map>
#include <optional>

#include "tinygpt/nn/embedding.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/positional.h"

namespace tg::nn {

namespace {

// Calls visit(prefix, module) for `module` and every module under it.
template <class ModuleType, class Visit>
void for_each_module(ModuleType& module, const std::string& prefix, const Visit& visit) {
  visit(prefix, module);
  for (const auto& [name, child] : module.children()) for_each_module<ModuleType>(*child, prefix + name + ".", visit);
}

// The matrix of a module that holds a quantized weight, if it does.
std::optional<QuantizedMatrix> quantized_weight_of(const Module& module) {
  if (const auto* linear = dynamic_cast<const Linear*>(&module); linear && linear->is_quantized())
    return linear->quantized_weight();
  if (const auto* embedding = dynamic_cast<const Embedding*>(&module); embedding && embedding->is_quantized())
    return embedding->quantized_weight();
  if (const auto* positions = dynamic_cast<const LearnedPositions*>(&module); positions && positions->is_quantized())
    return positions->quantized_weight();
  return std::nullopt;
}

}  // namespace

DType parse_weight_format(const std::string& name) {
  if (name == "bf16" || name == "bfloat16") return DType::BFloat16;
  if (name == "int8") return DType::Int8;
  if (name == "f32" || name == "float32") return DType::Float32;
  fail("unknown weight format '", name, "': the choices are float32 (f32), bfloat16 (bf16) and int8");
}

const char* weight_format_name(DType format) {
  check(format == DType::Float32 || is_quantized_format(format), "weight_format_name: ", dtype_name(format),
        " is not a weight format");
  return dtype_name(format);
}

void quantize_weights(Module& module, DType format, QuantizedValues values) {
  check(is_quantized_format(format), "quantize_weights: the formats are bfloat16 and int8, not ", dtype_name(format));
  for_each_module<Module>(module, "", [&](const std::string&, Module& each) {
    if (auto* linear = dynamic_cast<Linear*>(&each); linear && !linear->is_quantized()) linear->quantize(format, values);
    if (auto* embedding = dynamic_cast<Embedding*>(&each); embedding && !embedding->is_quantized())
      embedding->quantize(format, values);
    if (auto* positions = dynamic_cast<LearnedPositions*>(&each); positions && !positions->is_quantized())
      positions->quantize(format, values);
  });
}

std::vector<std::pair<std::string, QuantizedMatrix>> quantized_weights(const Module& module) {
  std::vector<std::pair<std::string, QuantizedMatrix>> matrices;
  for_each_module<const Module>(module, "", [&](const std::string& prefix, const Module& each) {
    if (std::optional<QuantizedMatrix> matrix = quantized_weight_of(each)) matrices.emplace_back(prefix + "weight", *matrix);
  });
  return matrices;
}

std::vector<std::pair<std::string, Tensor>> dequantized_parameters(const Module& module) {
  std::map<std::string, QuantizedMatrix> matrices;
  for (auto& [name, matrix] : quantized_weights(module)) matrices.emplace(name, matrix);
  std::vector<std::pair<std::string, Tensor>> parameters;
  for (const auto& [name, parameter] : module.named_parameters()) {
    if (name.ends_with("_scale") && matrices.contains(name.substr(0, name.size() - 6))) continue;
    const auto matrix = matrices.find(name);
    parameters.emplace_back(name, matrix == matrices.end() ? parameter : dequantize(matrix->second));
  }
  return parameters;
}

}  // namespace tg::nn
