// A readable printout, abridged like PyTorch's:
//
//   tensor([[ 0.1000, -2.0000,  3.1416],
//           [ 4.0000,  5.0000,  6.0000]], shape=(2, 3), dtype=float32, name=wq)
//
// Tensors over 1000 elements show the first and last 3 entries of each dim.
#pragma once
#include <ostream>
#include <string>

#include "tinygpt/tensor/tensor.h"

namespace tg {

std::string to_string(const Tensor& x);
std::ostream& operator<<(std::ostream& out, const Tensor& x);

}  // namespace tg
