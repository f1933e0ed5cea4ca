#include "tinygpt/tensor/elementwise.h"

#include <cmath>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/strided_loop.h"
#include "tinygpt/tensor/cpu/vector_math.h"
#include "tinygpt/tensor/view.h"

namespace tg::raw {

namespace {

// out = fn(a, b) over the broadcast shape. The inner loop is written four
// times so the compiler vectorises the common layouts: all contiguous, either
// operand a scalar (step 0), and the general strided case.
template <class In, class Out, class Fn>
Tensor binary(const Tensor& a, const Tensor& b, const char* op, Fn fn) {
  check(a.dtype() == b.dtype(), op, ": dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
        " differ (shapes ", a.shape(), " and ", b.shape(), ")");
  ProfileScope scope(ProfileFamily::elementwise);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  const Tensor left = expand(a, shape), right = expand(b, shape);
  Tensor out = Tensor::empty(shape, dtype_of<Out>());
  scope.add_bytes_of(a, b, out);
  const In* left_data = left.data<In>();
  const In* right_data = right.data<In>();
  Out* out_data = out.data<Out>();
  StridedLoop<3>(shape, {out.strides(), left.strides(), right.strides()})
      .run([&](const auto& offsets, int64_t count, const auto& steps) {
        Out* __restrict__ o = out_data + offsets[0];
        const In* __restrict__ x = left_data + offsets[1];
        const In* __restrict__ y = right_data + offsets[2];
        if (steps[0] == 1 && steps[1] == 1 && steps[2] == 1) {
          for (int64_t i = 0; i < count; ++i) o[i] = fn(x[i], y[i]);
        } else if (steps[0] == 1 && steps[1] == 1 && steps[2] == 0) {
          const In y0 = *y;
          for (int64_t i = 0; i < count; ++i) o[i] = fn(x[i], y0);
        } else if (steps[0] == 1 && steps[1] == 0 && steps[2] == 1) {
          const In x0 = *x;
          for (int64_t i = 0; i < count; ++i) o[i] = fn(x0, y[i]);
        } else {
          for (int64_t i = 0; i < count; ++i) o[i * steps[0]] = fn(x[i * steps[1]], y[i * steps[2]]);
        }
      });
  return out;
}

template <class In, class Out, class Fn>
Tensor unary(const Tensor& x, Fn fn) {
  ProfileScope scope(ProfileFamily::elementwise);
  Tensor out = Tensor::empty(x.shape(), dtype_of<Out>());
  scope.add_bytes_of(x, out);
  const In* in_data = x.data<In>();
  Out* out_data = out.data<Out>();
  StridedLoop<2>(x.shape(), {out.strides(), x.strides()}).run([&](const auto& offsets, int64_t count, const auto& steps) {
    Out* __restrict__ o = out_data + offsets[0];
    const In* __restrict__ in = in_data + offsets[1];
    if (steps[0] == 1 && steps[1] == 1) {
      for (int64_t i = 0; i < count; ++i) o[i] = fn(in[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) o[i * steps[0]] = fn(in[i * steps[1]]);
    }
  });
  return out;
}

// Arithmetic keeps the dtype; `visit` picks which dtypes are allowed.
#define TG_ARITHMETIC(name, visit, expression)                                                  \
  Tensor name(const Tensor& a, const Tensor& b) {                                               \
    return visit(a.dtype(), #name, [&]<class T>() {                                             \
      return binary<T, T>(a, b, #name, [](T x, T y) -> T { return expression; });               \
    });                                                                                         \
  }

#define TG_COMPARISON(name, expression)                                                         \
  Tensor name(const Tensor& a, const Tensor& b) {                                               \
    return visit_numeric(a.dtype(), #name, [&]<class T>() {                                     \
      return binary<T, bool>(a, b, #name, [](T x, T y) -> bool { return expression; });         \
    });                                                                                         \
  }

#define TG_UNARY(name, expression)                                                              \
  Tensor name(const Tensor& a) {                                                                \
    return visit_floating(a.dtype(), #name, [&]<class T>() {                                    \
      return unary<T, T>(a, [](T x) -> T { return expression; });                               \
    });                                                                                         \
  }

}  // namespace

TG_ARITHMETIC(add, visit_numeric, x + y)
TG_ARITHMETIC(sub, visit_numeric, x - y)
TG_ARITHMETIC(mul, visit_numeric, x * y)
TG_ARITHMETIC(div, visit_floating, x / y)
TG_ARITHMETIC(pow, visit_floating, std::pow(x, y))
// NaN wins, as in torch.maximum.
TG_ARITHMETIC(maximum, visit_numeric, (x != x || x > y) ? x : y)

TG_COMPARISON(eq, x == y)
TG_COMPARISON(ne, x != y)
TG_COMPARISON(lt, x < y)
TG_COMPARISON(le, x <= y)
TG_COMPARISON(gt, x > y)
TG_COMPARISON(ge, x >= y)

TG_UNARY(neg, -x)
TG_UNARY(exp, cpu::exp_fast(x))  // vectorised, within 2 ulp of std::exp (tensor/cpu/vector_math.h)
TG_UNARY(log, std::log(x))
TG_UNARY(sqrt, std::sqrt(x))
TG_UNARY(tanh, std::tanh(x))
TG_UNARY(sign, static_cast<T>((x > 0) - (x < 0)))

Tensor scalar_like(double value, const Tensor& like, const char* op) {
  check(is_floating(like.dtype()) || (std::isfinite(value) && value == std::trunc(value)), op, ": the scalar ",
        value, " is not a whole number, which a ", dtype_name(like.dtype()), " tensor cannot hold; make the tensor "
        "floating point first (to_dtype)");
  return scalar(value, like.dtype());
}

Tensor add(const Tensor& a, double b) { return add(a, scalar_like(b, a, "add")); }
Tensor mul(const Tensor& a, double b) { return mul(a, scalar_like(b, a, "mul")); }
Tensor rsub(double a, const Tensor& b) { return sub(scalar_like(a, b, "sub"), b); }
Tensor gt(const Tensor& a, double b) { return gt(a, scalar_like(b, a, "gt")); }

Tensor pow(const Tensor& base, double exponent) {
  // Squares are the common case (variance, L2 norms): avoid std::pow there.
  if (exponent == 2) return mul(base, base);
  return pow(base, scalar(exponent, base.dtype()));
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  check(condition.dtype() == DType::Bool, "where: condition must be bool, got ", dtype_name(condition.dtype()));
  check(a.dtype() == b.dtype(), "where: dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()), " differ");
  const Shape shape = broadcast_shapes(broadcast_shapes(condition.shape(), a.shape(), "where"), b.shape(), "where");
  ProfileScope scope(ProfileFamily::elementwise);
  const Tensor mask = expand(condition, shape), left = expand(a, shape), right = expand(b, shape);
  Tensor out = Tensor::empty(shape, a.dtype());
  scope.add_bytes_of(condition, a, b, out);
  visit_any(a.dtype(), [&]<class T>() {
    const bool* m = mask.data<bool>();
    const T* x = left.data<T>();
    const T* y = right.data<T>();
    T* o = out.data<T>();
    StridedLoop<4>(shape, {out.strides(), mask.strides(), left.strides(), right.strides()})
        .run([&](const auto& offsets, int64_t count, const auto& steps) {
          for (int64_t i = 0; i < count; ++i)
            o[offsets[0] + i * steps[0]] = m[offsets[1] + i * steps[1]] ? x[offsets[2] + i * steps[2]]
                                                                        : y[offsets[3] + i * steps[3]];
        });
  });
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  check(mask.dtype() == DType::Bool, "masked_fill: mask must be bool, got ", dtype_name(mask.dtype()));
  const Shape shape = broadcast_shapes(x.shape(), mask.shape(), "masked_fill");
  check(shape == x.shape(), "masked_fill: mask of shape ", mask.shape(), " does not broadcast to the input's shape ",
        x.shape());
  return where(mask, scalar(value, x.dtype()), x);
}

void add_(const Tensor& dst, const Tensor& src) {
  check(dst.dtype() == src.dtype(), "add_: dtypes ", dtype_name(dst.dtype()), " and ", dtype_name(src.dtype()), " differ");
  check(broadcast_shapes(dst.shape(), src.shape(), "add_") == dst.shape(), "add_: shape ", src.shape(),
        " does not broadcast to the destination's shape ", dst.shape());
  begin_in_place_write(dst, "add_");
  ProfileScope scope(ProfileFamily::elementwise);
  scope.add_bytes_of(dst, dst, src);  // dst read and written
  const Tensor source = expand(src, dst.shape());
  visit_numeric(dst.dtype(), "add_", [&]<class T>() {
    T* out = dst.data<T>();
    const T* in = source.data<T>();
    StridedLoop<2>(dst.shape(), {dst.strides(), source.strides()}).run([&](const auto& offsets, int64_t count, const auto& steps) {
      T* __restrict__ o = out + offsets[0];
      const T* __restrict__ s = in + offsets[1];
      if (steps[0] == 1 && steps[1] == 1) {
        for (int64_t i = 0; i < count; ++i) o[i] += s[i];
      } else {
        for (int64_t i = 0; i < count; ++i) o[i * steps[0]] += s[i * steps[1]];
      }
    });
  });
}

void mul_(const Tensor& dst, double factor) {
  begin_in_place_write(dst, "mul_");
  ProfileScope scope(ProfileFamily::elementwise);
  scope.add_bytes_of(dst, dst);  // read and written
  visit_floating(dst.dtype(), "mul_", [&]<class T>() {
    T* out = dst.data<T>();
    const T scale = static_cast<T>(factor);
    StridedLoop<1>(dst.shape(), {dst.strides()}).run([&](const auto& offsets, int64_t count, const auto& steps) {
      T* o = out + offsets[0];
      for (int64_t i = 0; i < count; ++i) o[i * steps[0]] *= scale;
    });
  });
}

}  // namespace tg::raw
