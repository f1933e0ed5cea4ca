#include "tinygpt/nn/dropout.h"

#include <sstream>

#include "tinygpt/nn/functional/dropout.h"

namespace tg::nn {

Dropout::Dropout(double p, std::shared_ptr<Generator> generator) : p_(p), generator_(std::move(generator)) {
  check(p >= 0 && p < 1, "Dropout: p must be in [0, 1), got ", p);
  check(generator_ != nullptr, "Dropout: needs a Generator");
}

Tensor Dropout::forward(const Tensor& x) const {
  if (!is_training() || p_ == 0) return x;
  return dropout(x, p_, true, *generator_);
}

std::string Dropout::describe() const {
  std::ostringstream text;
  text << "Dropout(p=" << p_ << ")";
  return text.str();
}

}  // namespace tg::nn
