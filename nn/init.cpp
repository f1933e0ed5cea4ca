#include "tinygpt/nn/init.h"

#include <cmath>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn::init {

namespace {

// fan_in + fan_out of a 2-D weight.
double fan_sum(const Tensor& tensor, const char* op) {
  check(tensor.dim() == 2, op, ": needs a 2-D weight, got shape ", tensor.shape());
  return static_cast<double>(tensor.size(0) + tensor.size(1));
}

}  // namespace

void normal_(const Tensor& tensor, double mean, double std, Generator& generator) {
  raw::copy_(tensor, normal(tensor.shape(), mean, std, generator, tensor.dtype()));
}

void xavier_uniform_(const Tensor& tensor, Generator& generator) {
  const double bound = std::sqrt(6.0 / fan_sum(tensor, "xavier_uniform_"));
  raw::copy_(tensor, uniform(tensor.shape(), -bound, bound, generator, tensor.dtype()));
}

void xavier_normal_(const Tensor& tensor, Generator& generator) {
  const double std = std::sqrt(2.0 / fan_sum(tensor, "xavier_normal_"));
  raw::copy_(tensor, normal(tensor.shape(), 0, std, generator, tensor.dtype()));
}

void constant_(const Tensor& tensor, double value) { fill_(tensor, value); }

}  // namespace tg::nn::init
