// Dropout: the masked scaling kernel (forward and backward are the same
// function: dx = dy * mask / (1 - p)), the op, and its reference composition.
#include "tinygpt/nn/functional/dropout.h"

#include <cmath>
#include <optional>
#include <vector>

#include "tinygpt/autograd/elementwise_ops.h"
#include "tinygpt/autograd/node.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

// The generator values a draw over `count` elements uses: one per two elements.
uint64_t draws_for(int64_t count) { return static_cast<uint64_t>((count + 1) / 2); }

// in (n) -> out (n): out_i = in_i * scale if element i is kept, else 0. Element i
// uses 32 bits of the generator's value at counter first + i/2 (the low half for
// even i, the high half for odd i): one 64-bit hash serves two elements.
template <class T>
void dropout_kernel(const T* in, T* out, int64_t count, const Generator& generator, uint64_t first, double p,
                    T scale) {
  // Kept when the 32-bit draw is >= p * 2^32, which happens with probability 1 - p
  // (up to 2^-32 rounding).
  const uint64_t threshold = static_cast<uint64_t>(std::ldexp(p, 32));
  const int64_t draws = static_cast<int64_t>(draws_for(count));
#pragma omp parallel for schedule(static) if (count >= kParallelThreshold)
  for (int64_t draw = 0; draw < draws; ++draw) {
    const uint64_t bits = generator.bits(first + static_cast<uint64_t>(draw));
    const int64_t i = 2 * draw;
    out[i] = (bits & 0xFFFFFFFFu) >= threshold ? in[i] * scale : T(0);
    if (i + 1 < count) out[i + 1] = (bits >> 32) >= threshold ? in[i + 1] * scale : T(0);
  }
}

// Checks the arguments; returns the result when no mask is drawn (evaluation,
// p = 0: the identity; p = 1: everything dropped, where 1 / (1 - p) would be infinite).
std::optional<Tensor> result_without_mask(const Tensor& x, double p, bool training) {
  check(p >= 0 && p <= 1, "dropout: p must be in [0, 1], got ", p, " (x of shape ", x.shape(), ")");
  check(is_floating(x.dtype()), "dropout: needs a floating-point tensor, got ", dtype_name(x.dtype()), " of shape ",
        x.shape());
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  return std::nullopt;
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator& generator) {
  if (std::optional<Tensor> result = result_without_mask(x, p, training)) return *result;
  ProfileScope scope(ProfileFamily::dropout);
  const Tensor x_contiguous = raw::contiguous(x);
  const int64_t count = x.numel();
  const uint64_t first = generator.advance(draws_for(count));
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  visit_floating(x.dtype(), "dropout", [&]<class T>() {
    dropout_kernel<T>(x_contiguous.data<T>(), y.data<T>(), count, generator, first, p,
                      static_cast<T>(1.0 / (1.0 - p)));
  });
  scope.add_bytes_of(x, y);
  // The backward regenerates the same mask from a copy of the generator's seed.
  return record("dropout", {x}, y, [mask_source = Generator(generator.seed()), first, p](const Tensor& dy, auto&) {
    ProfileScope scope(ProfileFamily::dropout);
    const Tensor dy_contiguous = raw::contiguous(dy);
    Tensor dx = Tensor::empty(dy.shape(), dy.dtype());
    visit_floating(dy.dtype(), "dropout backward", [&]<class T>() {
      dropout_kernel<T>(dy_contiguous.data<T>(), dx.data<T>(), dy.numel(), mask_source, first, p,
                        static_cast<T>(1.0 / (1.0 - p)));
    });
    scope.add_bytes_of(dy, dx);
    return Grads{dx};
  });
}

Tensor dropout_reference(const Tensor& x, double p, bool training, Generator& generator) {
  if (std::optional<Tensor> result = result_without_mask(x, p, training)) return *result;
  const int64_t count = x.numel();
  const uint64_t first = generator.advance(draws_for(count));
  // The mask, 1 where kept and 0 where dropped (a constant, in x's element order):
  // the kernel run on ones with scale 1, so it is the fused op's mask by construction.
  Tensor mask = Tensor::empty(x.shape(), x.dtype());
  visit_floating(x.dtype(), "dropout", [&]<class T>() {
    const std::vector<T> ones(static_cast<size_t>(count), T(1));
    dropout_kernel<T>(ones.data(), mask.data<T>(), count, generator, first, p, T(1));
  });
  return x * mask * (1.0 / (1.0 - p));
}

}  // namespace tg::nn
