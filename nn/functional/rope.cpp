// Rotary position embedding: the op (its checks, the recorded backward) and
// its reference composition. The kernels, with the formulas: tensor/cpu/rope_kernels.h.
#include "tinygpt/nn/functional/rope.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/cpu/rope_kernels.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

void check_arguments(const Tensor& x) {
  check(x.dim() == 4 && x.size(3) % 2 == 0 && is_floating(x.dtype()),
        "rope: x must be floating (B, NH, T, HS) with HS even, got ", dtype_name(x.dtype()), " of shape ", x.shape());
}

}  // namespace

Tensor rope(const Tensor& x, int64_t position_offset, double base) { return rope(x, position_offset, Rotary{base}); }

Tensor rope_reference(const Tensor& x, int64_t position_offset, double base) {
  return rope_reference(x, position_offset, Rotary{base});
}

Tensor rope(const Tensor& x, int64_t position_offset, const Rotary& rotary) {
  ProfileScope scope(ProfileFamily::rope);
  check_arguments(x);
  // The last position, offset + T - 1, must be an int64 (past it the sum is undefined behaviour).
  check(position_offset >= 0 && position_offset <= std::numeric_limits<int64_t>::max() - x.size(2), "rope: position "
        "offset ", position_offset, " with ", x.size(2), " positions runs past the largest position");
  const Tensor x_rows = x.size(3) <= 1 || x.stride(3) == 1 ? x : raw::contiguous(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  const std::vector<double> frequencies = rotary.inverse_frequencies(x.size(3));
  const RopePairing pairing = rotary.pairing;
  visit_floating(x.dtype(), "rope", [&]<class T>() {
    std::vector<T> cosines, sines;
    cpu::rope_tables(x.size(2), position_offset, frequencies, cosines, sines);
    cpu::functional_kernels<T>().rope(x_rows.data<T>(), x_rows.strides(), y.data<T>(), x.shape(), cosines, sines, T(1),
                                 pairing);
  });
  scope.add_bytes_of(x, y);
  return record("rope", {x}, y, [position_offset, frequencies, pairing](const Tensor& dy, const Needs&) {
    ProfileScope scope(ProfileFamily::rope);
    const Tensor dy_rows = dy.stride(3) == 1 ? dy : raw::contiguous(dy);
    Tensor dx = Tensor::empty(dy.shape(), dy.dtype());
    visit_floating(dy.dtype(), "rope backward", [&]<class T>() {
      std::vector<T> cosines, sines;
      cpu::rope_tables(dy.size(2), position_offset, frequencies, cosines, sines);
      cpu::functional_kernels<T>().rope(dy_rows.data<T>(), dy_rows.strides(), dx.data<T>(), dy.shape(), cosines, sines, T(-1),
                                   pairing);
    });
    scope.add_bytes_of(dy, dx);
    return Grads{dx};
  });
}

Tensor rope_reference(const Tensor& x, int64_t position_offset, const Rotary& rotary) {
  check_arguments(x);
  const int64_t positions = x.size(2), head_size = x.size(3), pairs = head_size / 2;
  Tensor cosines = Tensor::empty({positions, pairs}, x.dtype());  // (T, HS/2), constants
  Tensor sines = Tensor::empty({positions, pairs}, x.dtype());
  visit_floating(x.dtype(), "rope", [&]<class T>() {
    std::vector<T> cosine_table, sine_table;
    cpu::rope_tables(positions, position_offset, rotary.inverse_frequencies(head_size), cosine_table, sine_table);
    std::copy(cosine_table.begin(), cosine_table.end(), cosines.data<T>());
    std::copy(sine_table.begin(), sine_table.end(), sines.data<T>());
  });
  if (rotary.pairing == RopePairing::Half) {
    const Tensor first = tg::narrow(x, 3, 0, pairs);       // (B, NH, T, HS/2): x_i
    const Tensor second = tg::narrow(x, 3, pairs, pairs);  // (B, NH, T, HS/2): x_i+HS/2
    return tg::cat({first * cosines - second * sines, first * sines + second * cosines}, 3);
  }
  const Tensor even = tg::slice(x, 3, 0, head_size, 2);  // (B, NH, T, HS/2): x_2i
  const Tensor odd = tg::slice(x, 3, 1, head_size, 2);   // (B, NH, T, HS/2): x_2i+1
  const Tensor rotated_even = even * cosines - odd * sines;
  const Tensor rotated_odd = even * sines + odd * cosines;
  // Interleave back: (B, NH, T, HS/2, 2) -> (B, NH, T, HS).
  const Tensor pairs_last = tg::cat({tg::unsqueeze(rotated_even, 4), tg::unsqueeze(rotated_odd, 4)}, 4);
  return tg::reshape(pairs_last, x.shape());
}

}  // namespace tg::nn
