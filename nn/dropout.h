// Dropout: the module over nn::dropout (nn/functional/dropout.h). Active only in
// training mode; the identity in eval mode or with p == 0.
//
// The Generator is shared (one per model), so a whole model's dropout state is
// one (seed, counter) pair that a checkpoint can save and restore.
#pragma once
#include <memory>

#include "tinygpt/nn/module.h"
#include "tinygpt/tensor/random.h"

namespace tg::nn {

class Dropout : public Module {
 public:
  Dropout(double p, std::shared_ptr<Generator> generator);

  Tensor forward(const Tensor& x) const;

  double p() const { return p_; }
  std::string describe() const override;

 private:
  double p_;
  std::shared_ptr<Generator> generator_;
};

}  // namespace tg::nn
