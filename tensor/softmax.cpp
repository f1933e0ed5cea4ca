// Softmax and log-softmax along one dim, and their backward rules.
//
// Each op is one kernel over a contiguous line of n elements (a "row"). Along
// the last dim of a contiguous tensor the rows are used in place; along any
// other dim (or for other strides) lines are gathered into a per-thread buffer,
// run through the same kernel and scattered back (see for_each_line). Lines are
// independent, so the result never depends on the thread count.
//
// Stability: softmax(x) = exp(x - m) / sum(exp(x - m)) with m the row max, so
// no exp overflows and the largest term is exactly 1. A row of all -inf gives
// -inf - -inf = NaN everywhere, as in PyTorch. Sums accumulate in double (the
// accumulation policy of every softmax: softmax.h).
#include "tinygpt/tensor/softmax.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/cpu/vector_math.h"
#include "tinygpt/tensor/view.h"

namespace tg::raw {

namespace {

constexpr int64_t kLanes = 16;  // independent partial results per row, so the compiler vectorises

// out[i] = exp(x[i] - shift)
template <class T>
void exp_shifted(const T* __restrict__ x, T shift, T* __restrict__ out, int64_t n) {
  // exp_fast (tensor/cpu/vector_math.h) vectorises; std::exp would be a libm call per element.
  for (int64_t i = 0; i < n; ++i) out[i] = cpu::exp_fast(x[i] - shift);
}

template <class T>
T row_max(const T* x, int64_t n) {
  std::array<T, kLanes> lanes;
  lanes.fill(-std::numeric_limits<T>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t lane = 0; lane < kLanes; ++lane) lanes[lane] = x[i + lane] > lanes[lane] ? x[i + lane] : lanes[lane];
  for (int64_t lane = 0; i < n; ++i, ++lane) lanes[lane] = x[i] > lanes[lane] ? x[i] : lanes[lane];
  T best = lanes[0];
  for (int64_t lane = 1; lane < kLanes; ++lane) best = lanes[lane] > best ? lanes[lane] : best;
  // A NaN is skipped above; it still reaches every output through exp(NaN - m) in the sum.
  return best;
}

// Sum of term(i) for i < n, in double, kLanes interleaved partial sums.
template <class Term>
double row_sum(int64_t n, const Term& term) {
  std::array<double, kLanes> lanes{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t lane = 0; lane < kLanes; ++lane) lanes[lane] += static_cast<double>(term(i + lane));
  for (int64_t lane = 0; i < n; ++i, ++lane) lanes[lane] += static_cast<double>(term(i));
  for (int64_t width = kLanes / 2; width > 0; width /= 2)
    for (int64_t lane = 0; lane < width; ++lane) lanes[lane] += lanes[lane + width];
  return lanes[0];
}

// y = exp(x - m) / sum(exp(x - m))
template <class T>
void softmax_row(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const T m = row_max(x, n);
  exp_shifted(x, m, y, n);
  const T scale = static_cast<T>(1.0 / row_sum(n, [&](int64_t i) { return y[i]; }));
  for (int64_t i = 0; i < n; ++i) y[i] *= scale;
}

// y = (x - m) - log(sum(exp(x - m)))
template <class T>
void log_softmax_row(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const T m = row_max(x, n);
  exp_shifted(x, m, y, n);  // y holds the exps until the last loop
  const T log_total = static_cast<T>(std::log(row_sum(n, [&](int64_t i) { return y[i]; })));
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_total;
}

// dx = y * (dy - sum(dy * y)): the Jacobian of softmax is diag(y) - y y^T.
template <class T>
void softmax_backward_row(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx, int64_t n) {
  const T dot = static_cast<T>(row_sum(n, [&](int64_t i) { return dy[i] * y[i]; }));
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] * (dy[i] - dot);
}

// dx = dy - softmax * sum(dy), with softmax = exp(y) recovered from the output.
template <class T>
void log_softmax_backward_row(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx, int64_t n) {
  const T total = static_cast<T>(row_sum(n, [&](int64_t i) { return dy[i]; }));
  exp_shifted(y, T(0), dx, n);  // dx holds softmax = exp(y) until the last loop
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] - dx[i] * total;
}

constexpr int64_t kTile = 16;  // neighbouring lines gathered together when a line is strided

// Runs kernel(input rows..., output row, n) on every line along `dim`, writing a
// fresh contiguous tensor of the inputs' shape.
//
// Lines are taken in tiles of up to kTile neighbours along the innermost other
// dim. When an operand's line is strided (softmax over a dim that is not the
// last), its tile is gathered into a per-thread buffer of kTile rows: for each
// position along `dim` the tile's elements are usually adjacent in memory, so
// the gather reads whole cache lines instead of one element per line.
template <class T, size_t N, class Kernel>
Tensor for_each_line(const std::array<Tensor, N>& inputs, int64_t dim, const Kernel& kernel) {
  const Tensor& first = inputs[0];
  Tensor out = Tensor::empty(first.shape(), first.dtype());
  if (first.numel() == 0) return out;
  constexpr size_t kOperands = N + 1;  // inputs..., out
  std::array<const Tensor*, kOperands> operands;
  for (size_t k = 0; k < N; ++k) operands[k] = &inputs[k];
  operands[N] = &out;

  // A 0-d tensor is one line of one element.
  const int64_t n = first.dim() == 0 ? 1 : first.shape()[dim];
  std::array<int64_t, kOperands> along;  // stride along `dim`
  // The other dims, to turn a line number into each operand's offset; never empty.
  Shape line_shape;
  std::array<Strides, kOperands> line_strides;
  for (size_t k = 0; k < kOperands; ++k) along[k] = first.dim() == 0 ? 1 : operands[k]->strides()[dim];
  for (int64_t d = 0; d < first.dim(); ++d) {
    if (d == dim) continue;
    line_shape.push_back(first.shape()[d]);
    for (size_t k = 0; k < kOperands; ++k) line_strides[k].push_back(operands[k]->strides()[d]);
  }
  if (line_shape.empty()) {
    line_shape.push_back(1);
    for (size_t k = 0; k < kOperands; ++k) line_strides[k].push_back(0);
  }
  const int64_t tile_dim = static_cast<int64_t>(line_shape.size()) - 1;
  const int64_t tile_run = line_shape[tile_dim];  // lines along the innermost other dim
  const int64_t tiles_per_run = (tile_run + kTile - 1) / kTile;
  const int64_t tiles = first.numel() / n / tile_run * tiles_per_run;

  std::array<T*, kOperands> data;
  // One pointer type for all so a tile is one array; the inputs are only read.
  for (size_t k = 0; k < kOperands; ++k) data[k] = const_cast<T*>(operands[k]->template data<T>());
  bool strided = false;
  for (size_t k = 0; k < kOperands; ++k) strided |= along[k] != 1;

  const int threads = first.numel() >= kParallelThreshold ? omp_get_max_threads() : 1;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::array<std::vector<T>, kOperands> buffers;  // kTile rows of n for each strided operand
    if (strided)
      for (size_t k = 0; k < kOperands; ++k)
        if (along[k] != 1) buffers[k].resize(kTile * n);
#pragma omp for schedule(static)
    for (int64_t tile = 0; tile < tiles; ++tile) {
      const int64_t run = tile / tiles_per_run, start = (tile % tiles_per_run) * kTile;
      const int64_t width = std::min(kTile, tile_run - start);
      std::array<int64_t, kOperands> base{};  // offset of the tile's first line
      for (int64_t d = tile_dim - 1, rest = run; d >= 0; --d) {
        const int64_t index = rest % line_shape[d];
        rest /= line_shape[d];
        for (size_t k = 0; k < kOperands; ++k) base[k] += index * line_strides[k][d];
      }
      for (size_t k = 0; k < kOperands; ++k) base[k] += start * line_strides[k][tile_dim];

      // Gather the strided inputs: row w of the buffer is line start + w.
      for (size_t k = 0; k < N; ++k) {
        if (along[k] == 1) continue;
        const T* source = data[k] + base[k];
        const int64_t step = line_strides[k][tile_dim];
        for (int64_t i = 0; i < n; ++i)
          for (int64_t w = 0; w < width; ++w) buffers[k][w * n + i] = source[i * along[k] + w * step];
      }
      for (int64_t w = 0; w < width; ++w) {
        std::array<T*, kOperands> rows;
        for (size_t k = 0; k < kOperands; ++k)
          rows[k] = along[k] == 1 ? data[k] + base[k] + w * line_strides[k][tile_dim] : buffers[k].data() + w * n;
        std::apply([&](auto*... row) { kernel(row..., n); }, rows);
      }
      if (along[N] != 1) {  // scatter the output tile
        T* target = data[N] + base[N];
        const int64_t step = line_strides[N][tile_dim];
        for (int64_t i = 0; i < n; ++i)
          for (int64_t w = 0; w < width; ++w) target[i * along[N] + w * step] = buffers[N][w * n + i];
      }
    }
  }
  return out;
}

void check_backward_operands(const Tensor& y, const Tensor& dy, const char* op) {
  check(y.shape() == dy.shape(), op, ": output of shape ", y.shape(), " and gradient of shape ", dy.shape(), " differ");
  check(y.dtype() == dy.dtype(), op, ": output dtype ", dtype_name(y.dtype()), " and gradient dtype ",
        dtype_name(dy.dtype()), " differ");
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  dim = normalize_dim(dim, x.dim(), "softmax");
  return visit_floating(x.dtype(), "softmax", [&]<class T>() {
    return for_each_line<T, 1>({x}, dim, [](const T* in, T* out, int64_t n) { softmax_row(in, out, n); });
  });
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  dim = normalize_dim(dim, x.dim(), "log_softmax");
  return visit_floating(x.dtype(), "log_softmax", [&]<class T>() {
    return for_each_line<T, 1>({x}, dim, [](const T* in, T* out, int64_t n) { log_softmax_row(in, out, n); });
  });
}

Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim) {
  check_backward_operands(y, dy, "softmax_backward");
  dim = normalize_dim(dim, y.dim(), "softmax_backward");
  return visit_floating(y.dtype(), "softmax_backward", [&]<class T>() {
    return for_each_line<T, 2>({y, dy}, dim, [](const T* out, const T* grad, T* grad_in, int64_t n) {
      softmax_backward_row(out, grad, grad_in, n);
    });
  });
}

Tensor log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim) {
  check_backward_operands(y, dy, "log_softmax_backward");
  dim = normalize_dim(dim, y.dim(), "log_softmax_backward");
  return visit_floating(y.dtype(), "log_softmax_backward", [&]<class T>() {
    return for_each_line<T, 2>({y, dy}, dim, [](const T* out, const T* grad, T* grad_in, int64_t n) {
      log_softmax_backward_row(out, grad, grad_in, n);
    });
  });
}

}  // namespace tg::raw
