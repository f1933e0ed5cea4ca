// Factories: fresh contiguous tensors filled with constants, ranges or data.
#pragma once
#include <cstdint>
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg {

Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
Tensor ones(const Shape& shape, DType dtype = DType::Float32);
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32);
Tensor scalar(double value, DType dtype = DType::Float32);  // a 0-d tensor
Tensor ones_like(const Tensor& like);

// start, start + step, ... (stopping before `end`), as in torch.arange.
Tensor arange(double start, double end, double step = 1, DType dtype = DType::Int64);
inline Tensor arange(int64_t end, DType dtype = DType::Int64) { return arange(0, static_cast<double>(end), 1, dtype); }

// Copies `values` (row-major) into a new tensor of `shape`; sizes must agree.
template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape);
// A 1-D tensor of the values.
template <class T>
Tensor from_vector(const std::vector<T>& values) { return from_vector(values, {static_cast<int64_t>(values.size())}); }

// Fills every element of `out` (any view) with `value`, in place.
void fill_(const Tensor& out, double value);

}  // namespace tg
