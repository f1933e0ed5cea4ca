#include "tinygpt/nn/module.h"

#include <algorithm>
#include <unordered_set>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/quantized_matrix.h"

namespace tg::nn {

void Module::remove_module(const std::string& name) {
  const auto found = std::find_if(children_.begin(), children_.end(), [&](const auto& child) { return child.first == name; });
  check(found != children_.end(), "Module: no child named '", name, "' to remove");
  children_.erase(found);
}

void Module::check_new_name(const std::string& name) const {
  check(!name.empty() && name.find('.') == std::string::npos, "Module: name '", name,
        "' must be non-empty and contain no '.' (dots separate the levels of a path)");
  for (const auto& [existing, parameter] : parameters_)
    check(existing != name, "Module: a parameter named '", name, "' is already registered");
  for (const auto& [existing, child] : children_)
    check(existing != name, "Module: a child module named '", name, "' is already registered");
}

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  check_new_name(name);
  check(value.defined() && is_floating(value.dtype()), "Module: parameter '", name, "' must be a floating-point tensor");
  value.set_requires_grad(true);
  parameters_.emplace_back(name, value);
  return value;
}

QuantizedMatrix Module::quantize_parameter(const std::string& name, DType format, QuantizedValues values) {
  auto entry = std::find_if(parameters_.begin(), parameters_.end(), [&](const auto& named) { return named.first == name; });
  check(entry != parameters_.end(), "Module: no parameter named '", name, "' to quantize");
  check(entry->second.dtype() == DType::Float32, "Module: parameter '", name, "' is ", dtype_name(entry->second.dtype()),
        "; only float32 weights are quantized");
  const QuantizedMatrix matrix = values == QuantizedValues::Zeros
                                     ? zero_quantized_matrix(entry->second.size(0), entry->second.size(1), format)
                                     : quantize_matrix(entry->second, format);
  entry->second = matrix.values;
  if (matrix.scales.defined()) {
    check_new_name(name + "_scale");
    parameters_.insert(entry + 1, {name + "_scale", matrix.scales});
  }
  return matrix;
}

void Module::collect_parameters(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, parameter] : parameters_) out.emplace_back(prefix + name, parameter);
  for (const auto& [name, child] : children_) child->collect_parameters(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> all;
  collect_parameters("", all);
  // A tensor reachable under two names (a tied weight) is one parameter.
  std::unordered_set<const TensorImpl*> seen;
  std::vector<std::pair<std::string, Tensor>> unique;
  for (auto& entry : all)
    if (seen.insert(entry.second.impl_ptr().get()).second) unique.push_back(std::move(entry));
  return unique;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> tensors;
  for (auto& [name, parameter] : named_parameters()) tensors.push_back(parameter);
  return tensors;
}

int64_t Module::parameter_count() const {
  int64_t count = 0;
  for (const auto& [name, parameter] : named_parameters()) count += parameter.numel();
  return count;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (const auto& [name, parameter] : named_parameters())
    if (parameter.grad().defined()) fill_(parameter.grad(), 0);
}

namespace {

void print_line(std::ostream& out, const std::string& path, const Module& module) {
  out << path << module.describe();
  const char* separator = "  ";
  for (const auto& [name, parameter] : module.own_parameters()) {
    out << separator << name << " " << shape_str(parameter.shape());
    if (is_quantized_format(parameter.dtype())) out << " " << dtype_name(parameter.dtype());
    separator = ", ";
  }
  out << "\n";
}

void print_subtree(std::ostream& out, const Module& module, const std::string& prefix) {
  for (const auto& [name, child] : module.children()) {
    print_line(out, "  " + prefix + name + ": ", *child);
    print_subtree(out, *child, prefix + name + ".");
  }
}

}  // namespace

void print_tree(std::ostream& out, const Module& module) {
  print_line(out, "", module);
  print_subtree(out, module, "");
}

}  // namespace tg::nn
