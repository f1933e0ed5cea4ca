// Causal attention: the op (its checks, the recorded backward), the causal
// mask and the reference composition. The kernels, with the formulas of forward
// and backward: tensor/cpu/attention_kernels.h.
#include "tinygpt/nn/functional/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/cpu/attention_kernels_avx512_bf16.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "tinygpt/tensor/cpu/kernel_arguments.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

// A view the kernels can read in place as rows of HS: last dim contiguous and
// rows at least HS apart (rows that overlap are not rows). Anything else is copied first.
Tensor kernel_readable_head_rows(const Tensor& x) {
  const int64_t head_size = x.size(3);
  const bool rows_ok = x.size(2) == 1 || x.stride(2) >= head_size;
  const bool last_ok = x.size(3) == 1 || x.stride(3) == 1;
  return rows_ok && last_ok ? x : raw::contiguous(x);
}

// x (B, NH, T, HS), readable in place, as the kernels take it.
template <class T>
cpu::HeadRows<T> head_rows(const Tensor& x) {
  return {x.data<T>(), x.stride(0), x.stride(1), std::max(x.stride(2), x.size(3))};
}

template <class T>
T* data_or_null(const Tensor& x) {
  return x.defined() ? x.data<T>() : nullptr;
}

cpu::AttentionShape check_arguments(const char* op, const Tensor& q, const Tensor& k, const Tensor& v) {
  check(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, op, ": q, k, v must be (B, NH, T, HS), got q ", q.shape(),
        ", k ", k.shape(), ", v ", v.shape());
  check(q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3), op, ": q ", q.shape(), " and k ",
        k.shape(), " must agree in B, NH and HS");
  check(v.shape() == k.shape(), op, ": k ", k.shape(), " and v ", v.shape(), " must have the same shape");
  check(k.size(2) >= q.size(2), op, ": needs at least as many keys as queries, got q ", q.shape(), " and k ",
        k.shape());
  check(is_floating(q.dtype()) && k.dtype() == q.dtype() && v.dtype() == q.dtype(), op,
        ": q, k, v must share one floating dtype, got ", dtype_name(q.dtype()), ", ", dtype_name(k.dtype()), ", ",
        dtype_name(v.dtype()));
  return {q.size(0), q.size(1), q.size(2), k.size(2), q.size(3)};
}

// Whether the products run on the bfloat16 kernels: asked for, float32
// operands, and a CPU with AVX512-BF16 (elsewhere they would be widened back
// to float32, no faster than float32's own kernels).
bool bfloat16_products(const char* op, DType products, DType operands) {
  check(products == DType::Float32 || (products == DType::BFloat16 && operands == DType::Float32), op,
        ": products in ", dtype_name(products), " take float32 q, k, v, got ", dtype_name(operands));
  return products == DType::BFloat16 && cpu::bf16_gemm_kernel() == cpu::Bf16GemmKernel::avx512_bf16;
}

// A (B, T, NH, HS) contiguous buffer seen as (B, NH, T, HS): the layout of the
// gradients returned (any layout is allowed; this one matches how q, k, v are
// usually carved out of a (B, T, 3C) projection, so the permute back is free).
Tensor head_major_gradient(const cpu::AttentionShape& shape, int64_t positions, DType dtype) {
  return raw::permute(Tensor::empty({shape.batch, positions, shape.heads, shape.head_size}, dtype), {0, 2, 1, 3});
}

// Where the backward writes dq, dk and dv: into one of `returned` (the
// gradients the op's inputs get) at an element offset, rows row_stride apart.
struct GradientPart {
  int index = -1;  // into `returned`; -1: not wanted
  int64_t offset = 0;
  bool wanted() const { return index >= 0; }
};
struct AttentionGradients {
  Grads returned;
  GradientPart dq, dk, dv;
  int64_t row_stride = 0;
  template <class T>
  T* data(const GradientPart& part) const {
    return part.wanted() ? returned[part.index].data<T>() + part.offset : nullptr;
  }
};

// The op on q, k, v read in place; its backward writes dq, dk, dv through
// `gradient_parts` (which allocates them, as buffers of their own or as parts of
// one) and returns what the op's inputs get.
template <class GradientParts>
Tensor attention_op(const char* op, const std::vector<Tensor>& inputs, const Tensor& q, const Tensor& k,
                    const Tensor& v, const cpu::AttentionShape& shape, bool bf16, const GradientParts& gradient_parts) {
  ProfileScope scope(ProfileFamily::attention);
  const Tensor q_rows = kernel_readable_head_rows(q), k_rows = kernel_readable_head_rows(k);
  const Tensor v_rows = kernel_readable_head_rows(v);
  const bool save_weights = any_requires_grad(inputs);
  Tensor y = Tensor::empty({shape.batch, shape.queries, shape.channels()}, q.dtype());
  // The softmax weights, saved for the backward: in bfloat16 with bfloat16 products (the formulas:
  // tensor/cpu/attention_kernels_avx512_bf16.h).
  Tensor weights = save_weights ? Tensor::empty({shape.batch, shape.heads, shape.queries, shape.keys},
                                                bf16 ? DType::BFloat16 : q.dtype())
                                : Tensor();
  if (bf16) {
    cpu::isa_avx512_bf16::attention_forward_bf16(head_rows<float>(q_rows), head_rows<float>(k_rows),
                                                 head_rows<float>(v_rows), y.data<float>(),
                                                 data_or_null<bfloat16>(weights), shape);
  } else {
    visit_floating(q.dtype(), op, [&]<class T>() {
      cpu::functional_kernels<T>().attention_forward(head_rows<T>(q_rows), head_rows<T>(k_rows), head_rows<T>(v_rows),
                                                y.data<T>(), data_or_null<T>(weights), shape);
    });
  }
  scope.add_flops(2 * 2 * cpu::attention_block_multiply_adds(shape, cpu::kQueryBlock));  // scores and y
  return record(op, inputs, y,
                [q = q_rows.detach(), k = k_rows.detach(), v = v_rows.detach(), weights, shape, bf16, gradient_parts](
                    const Tensor& dy, const Needs& needs_grad) {
                  ProfileScope scope(ProfileFamily::attention);
                  const Tensor dy_contiguous = raw::contiguous(dy);
                  const AttentionGradients grads = gradient_parts(needs_grad);
                  if (bf16) {
                    cpu::isa_avx512_bf16::attention_backward_bf16(
                        dy_contiguous.data<float>(), weights.data<bfloat16>(), head_rows<float>(q), head_rows<float>(k),
                        head_rows<float>(v), grads.data<float>(grads.dq), grads.data<float>(grads.dk),
                        grads.data<float>(grads.dv), grads.row_stride, shape);
                  } else {
                    visit_floating(q.dtype(), "causal_attention backward", [&]<class T>() {
                      cpu::functional_kernels<T>().attention_backward(
                          dy_contiguous.data<T>(), weights.data<T>(), head_rows<T>(q), head_rows<T>(k),
                          head_rows<T>(v), grads.template data<T>(grads.dq), grads.template data<T>(grads.dk),
                          grads.template data<T>(grads.dv), grads.row_stride, shape);
                    });
                  }
                  const bool dq = grads.dq.wanted(), dk = grads.dk.wanted(), dv = grads.dv.wanted();
                  const int products = (dv ? 1 : 0) + (dq || dk ? 1 : 0) + (dq ? 1 : 0) + (dk ? 1 : 0);  // dv, dP, dq, dk
                  scope.add_flops(2.0 * products * cpu::attention_block_multiply_adds(shape, cpu::kBackwardQueryBlock));
                  return grads.returned;
                }, {q_rows, k_rows, v_rows});
}

}  // namespace

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, DType products) {
  const cpu::AttentionShape shape = check_arguments("causal_attention", q, k, v);
  const bool bf16 = bfloat16_products("causal_attention", products, q.dtype());
  // dq (B, NH, Tq, HS), dk, dv (B, NH, Tk, HS): each (B, T, NH, HS) contiguous, rows C apart.
  const auto gradient_parts = [shape, dtype = q.dtype()](const Needs& needs) {
    AttentionGradients grads;
    grads.returned = {needs[0] ? head_major_gradient(shape, shape.queries, dtype) : Tensor(),
                      needs[1] ? head_major_gradient(shape, shape.keys, dtype) : Tensor(),
                      needs[2] ? head_major_gradient(shape, shape.keys, dtype) : Tensor()};
    grads.dq.index = needs[0] ? 0 : -1;
    grads.dk.index = needs[1] ? 1 : -1;
    grads.dv.index = needs[2] ? 2 : -1;
    grads.row_stride = shape.channels();
    return grads;
  };
  return attention_op("causal_attention", {q, k, v}, q, k, v, shape, bf16, gradient_parts);
}

Tensor causal_attention_qkv(const Tensor& qkv, int64_t heads, DType products) {
  check(qkv.dim() == 3 && heads >= 1 && qkv.size(2) % (3 * heads) == 0, "causal_attention_qkv: qkv of shape ",
        qkv.shape(), " must be (B, T, 3C) with C a multiple of ", heads, " heads");
  const int64_t batch = qkv.size(0), time = qkv.size(1), channels = qkv.size(2) / 3;
  const Tensor parts = raw::view(qkv, {batch, time, 3, heads, channels / heads});  // (B, T, 3, NH, HS)
  const auto part = [&](int64_t index) { return raw::permute(raw::select(parts, 2, index), {0, 2, 1, 3}); };
  const Tensor q = part(0), k = part(1), v = part(2);  // (B, NH, T, HS) views
  const cpu::AttentionShape shape = check_arguments("causal_attention_qkv", q, k, v);
  const bool bf16 = bfloat16_products("causal_attention_qkv", products, qkv.dtype());
  // d_qkv (B, T, 3C): dq, dk, dv written into its three parts, rows 3C apart.
  return attention_op("causal_attention_qkv", {qkv}, q, k, v, shape, bf16, [shape, dtype = qkv.dtype()](const Needs&) {
    AttentionGradients grads;
    grads.returned = {Tensor::empty({shape.batch, shape.queries, 3 * shape.channels()}, dtype)};
    grads.dq = {0, 0};
    grads.dk = {0, shape.channels()};
    grads.dv = {0, 2 * shape.channels()};
    grads.row_stride = 3 * shape.channels();
    return grads;
  });
}

Tensor causal_mask(int64_t queries, int64_t keys) {
  check(queries >= 1 && keys >= queries, "causal_mask: need 1 <= queries <= keys, got ", queries, " and ", keys);
  Tensor mask = Tensor::empty({queries, keys}, DType::Bool);
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j) mask.data<bool>()[i * keys + j] = j > keys - queries + i;
  return mask;
}

Tensor causal_attention_reference(const Tensor& q, const Tensor& k, const Tensor& v) {
  const cpu::AttentionShape shape = check_arguments("causal_attention_reference", q, k, v);
  const Tensor mask = causal_mask(shape.queries, shape.keys);  // (Tq, Tk)
  const double scale = 1.0 / std::sqrt(static_cast<double>(shape.head_size));
  const Tensor scores = tg::matmul(q, tg::transpose(k, -2, -1)) * scale;  // (B, NH, Tq, Tk)
  const Tensor masked_scores = tg::masked_fill(scores, mask, -INFINITY);
  const Tensor weights = tg::softmax(masked_scores, -1);                    // (B, NH, Tq, Tk)
  const Tensor heads = tg::matmul(weights, v);                               // (B, NH, Tq, HS)
  return tg::reshape(tg::permute(heads, {0, 2, 1, 3}), {shape.batch, shape.queries, shape.channels()});
}

}  // namespace tg::nn
