#include "tinygpt/nn/lora.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/functional/dropout.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

LoraAdapter::LoraAdapter(int64_t in_features, std::vector<LoraPart> parts, const LoraSettings& settings,
                         std::shared_ptr<Generator> dropout_generator, DType dtype)
    : in_features_(in_features),
      parts_(std::move(parts)),
      settings_(settings),
      dropout_generator_(std::move(dropout_generator)) {
  check(in_features > 0 && !parts_.empty(), "LoRA: needs input features and at least one row block");
  check(settings.rank > 0, "LoRA: the rank must be a positive integer, got ", settings.rank);
  check(settings.alpha > 0, "LoRA: alpha must be a number > 0, got ", settings.alpha);
  check(settings.dropout >= 0 && settings.dropout < 1, "LoRA: dropout must be in [0, 1), got ", settings.dropout);
  check(settings.dropout == 0 || dropout_generator_, "LoRA: dropout needs a generator");
  check(std::any_of(parts_.begin(), parts_.end(), [](const LoraPart& part) { return part.adapted; }),
        "LoRA: no row block is adapted");
  for (const LoraPart& part : parts_) {
    check(part.rows > 0, "LoRA: row block '", part.name, "' has ", part.rows, " rows");
    if (!part.adapted) continue;
    const std::string suffix = part.name.empty() ? "" : "_" + part.name;
    a_.push_back(register_parameter("A" + suffix, zeros({settings.rank, in_features}, dtype)));
    b_.push_back(register_parameter("B" + suffix, zeros({part.rows, settings.rank}, dtype)));
  }
}

void LoraAdapter::initialize(Generator& generator) {
  // PEFT: kaiming_uniform_(A, a=sqrt(5)): gain sqrt(2 / (1 + 5)), bound gain sqrt(3 / fan_in) = 1 / sqrt(in).
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features_));
  for (const Tensor& a : a_) raw::copy_(a, uniform(a.shape(), -bound, bound, generator, a.dtype()));
  for (const Tensor& b : b_) fill_(b, 0);
}

int64_t LoraAdapter::out_features() const {
  int64_t rows = 0;
  for (const LoraPart& part : parts_) rows += part.rows;
  return rows;
}

Tensor LoraAdapter::forward(const Tensor& x) const {
  check(x.dim() >= 1 && x.size(-1) == in_features_, "LoRA: input of shape ", x.shape(), " needs a last dim of ",
        in_features_);
  Shape out_shape = x.shape();
  out_shape.back() = out_features();
  const Tensor rows = reshape(x, {-1, in_features_});  // (N, in)
  const Tensor u = settings_.dropout > 0 ? dropout(rows, settings_.dropout, is_training(), *dropout_generator_) : rows;
  const Tensor stacked_a = a_.size() == 1 ? a_[0] : cat(a_, 0);   // (P r, in)
  const Tensor h = linear_product(u, stacked_a, "lora.A");          // (N, P r)
  const std::vector<Tensor> h_parts = split(h, settings_.rank, 1);  // P x (N, r)
  std::vector<Tensor> updates;
  size_t adapted = 0;
  for (const LoraPart& part : parts_) {
    if (part.adapted) {
      updates.push_back(linear_product(h_parts[adapted], b_[adapted], "lora.B"));  // (N, rows)
      ++adapted;
    } else {
      updates.push_back(zeros({rows.size(0), part.rows}, x.dtype()));             // (N, rows): no update
    }
  }
  const Tensor update = updates.size() == 1 ? updates[0] : cat(updates, 1);  // (N, out)
  return view(update * scale(), out_shape);                                   // (..., out)
}

std::string LoraAdapter::describe() const {
  std::ostringstream text;
  text << "LoRA(rank=" << settings_.rank << ", alpha=" << settings_.alpha << ", dropout=" << settings_.dropout;
  if (parts_.size() > 1) {
    text << ", blocks";
    for (const LoraPart& part : parts_) text << " " << part.name << (part.adapted ? "" : " (left out)");
  }
  text << ")";
  return text.str();
}

}  // namespace tg::nn
