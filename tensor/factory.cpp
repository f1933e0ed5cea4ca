#include "tinygpt/tensor/factory.h"

#include <cmath>

#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/strided_loop.h"
#include "tinygpt/tensor/view.h"

namespace tg {

void fill_(const Tensor& out, double value) {
  raw::begin_in_place_write(out, "fill_");
  ProfileScope scope(ProfileFamily::elementwise);
  scope.add_bytes_of(out);
  visit_any(out.dtype(), [&]<class T>() {
    T* base = out.data<T>();
    const T filler = static_cast<T>(value);
    StridedLoop<1>(out.shape(), {out.strides()}).run([&](auto offsets, int64_t count, auto steps) {
      T* run = base + offsets[0];
      for (int64_t i = 0; i < count; ++i) run[i * steps[0]] = filler;
    });
  });
}

Tensor full(const Shape& shape, double value, DType dtype) {
  Tensor out = Tensor::empty(shape, dtype);
  fill_(out, value);
  return out;
}

Tensor zeros(const Shape& shape, DType dtype) { return Tensor::zeroed(shape, dtype); }
Tensor ones(const Shape& shape, DType dtype) { return full(shape, 1, dtype); }
Tensor scalar(double value, DType dtype) { return full({}, value, dtype); }
Tensor ones_like(const Tensor& like) { return ones(like.shape(), like.dtype()); }

Tensor arange(double start, double end, double step, DType dtype) {
  check(step != 0 && !std::isnan(step), "arange: step must not be zero or NaN, got ", step);
  check(std::isfinite(start) && std::isfinite(end), "arange: unsupported range ", start, " -> ", end);
  const double span = std::ceil((end - start) / step);
  // 2^63 is the first double past INT64_MAX; converting one beyond is undefined.
  check(span < 0x1p63, "arange: [", start, ", ", end, ") in steps of ", step, " has too many elements");
  const int64_t count = span > 0 ? static_cast<int64_t>(span) : 0;
  Tensor out = Tensor::empty({count}, dtype);
  visit_numeric(dtype, "arange", [&]<class T>() {
    T* values = out.data<T>();
    for (int64_t i = 0; i < count; ++i) values[i] = static_cast<T>(start + static_cast<double>(i) * step);
  });
  return out;
}

template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape) {
  check(static_cast<int64_t>(values.size()) == numel(shape, "from_vector"), "from_vector: ", values.size(),
        " values cannot fill shape ", shape, " (", numel(shape), " elements)");
  Tensor out = Tensor::empty(shape, dtype_of<T>());
  std::copy(values.begin(), values.end(), out.data<T>());
  return out;
}

template Tensor from_vector<float>(const std::vector<float>&, const Shape&);
template Tensor from_vector<double>(const std::vector<double>&, const Shape&);
template Tensor from_vector<int64_t>(const std::vector<int64_t>&, const Shape&);

template <>
Tensor from_vector<bool>(const std::vector<bool>& values, const Shape& shape) {
  check(static_cast<int64_t>(values.size()) == numel(shape, "from_vector"), "from_vector: ", values.size(),
        " values cannot fill shape ", shape, " (", numel(shape), " elements)");
  Tensor out = Tensor::empty(shape, DType::Bool);
  bool* data = out.data<bool>();
  for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
  return out;
}

}  // namespace tg
