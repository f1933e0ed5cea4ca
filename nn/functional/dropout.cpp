// Dropout: the masked scaling kernel (forward and backward are the same
// function: dx = dy * mask / (1 - p)), and the op.
#include "nn/functional/dropout.h"

#include <cmath>

#include "autograd/elementwise_ops.h"
#include "autograd/node.h"
#include "tensor/threads.h"
#include "tensor/view.h"

namespace tg::nn {

namespace {

// in (n) -> out (n): out_i = in_i * scale if element i is kept, else 0. Element i
// uses 32 bits of the generator's value at counter first + i/2 (the low half for
// even i, the high half for odd i): one 64-bit hash serves two elements.
template <class T>
void dropout_kernel(const T* in, T* out, int64_t count, const Generator& generator, uint64_t first, double p) {
  // Kept when the 32-bit draw is >= p * 2^32, which happens with probability 1 - p
  // (up to 2^-32 rounding).
  const uint64_t threshold = static_cast<uint64_t>(std::ldexp(p, 32));
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  const int64_t pairs = (count + 1) / 2;
#pragma omp parallel for schedule(static) if (count >= kParallelThreshold)
  for (int64_t pair = 0; pair < pairs; ++pair) {
    const uint64_t bits = generator.bits(first + static_cast<uint64_t>(pair));
    const int64_t i = 2 * pair;
    out[i] = (bits & 0xFFFFFFFFu) >= threshold ? in[i] * scale : T(0);
    if (i + 1 < count) out[i + 1] = (bits >> 32) >= threshold ? in[i + 1] * scale : T(0);
  }
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator& generator) {
  check(p >= 0 && p <= 1, "dropout: p must be in [0, 1], got ", p, " (x of shape ", x.shape(), ")");
  check(is_floating(x.dtype()), "dropout: needs a floating-point tensor, got ", dtype_name(x.dtype()), " of shape ",
        x.shape());
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;  // everything dropped (and 1 / (1 - p) would be infinite)
  const Tensor x_contiguous = raw::contiguous(x);
  const int64_t count = x.numel();
  const uint64_t first = generator.advance(static_cast<uint64_t>((count + 1) / 2));
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  visit_floating(x.dtype(), "dropout", [&]<class T>() {
    dropout_kernel<T>(x_contiguous.data<T>(), y.data<T>(), count, generator, first, p);
  });
  // The backward regenerates the same mask from a copy of the generator's seed.
  return record("dropout", {x}, y, [mask_source = Generator(generator.seed()), first, p](const Tensor& dy, auto&) {
    const Tensor dy_contiguous = raw::contiguous(dy);
    Tensor dx = Tensor::empty(dy.shape(), dy.dtype());
    visit_floating(dy.dtype(), "dropout backward", [&]<class T>() {
      dropout_kernel<T>(dy_contiguous.data<T>(), dx.data<T>(), dy.numel(), mask_source, first, p);
    });
    return std::vector<Tensor>{dx};
  });
}

}  // namespace tg::nn
