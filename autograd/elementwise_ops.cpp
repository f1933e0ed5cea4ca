// Differentiable elementwise ops: each forward, then its backward.
// Broadcasting: an input that was broadcast receives the sum of the output
// gradient over the broadcast dims (raw::sum_to_shape).
#include "tinygpt/autograd/elementwise_ops.h"

#include "tinygpt/autograd/node.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/reduce.h"

namespace tg {

namespace {

// The gradient for an input of `shape`, or nothing when it is not needed.
Tensor unbroadcast(const Tensor& grad, const Shape& shape, bool needed) {
  return needed ? raw::sum_to_shape(grad, shape) : Tensor();
}

}  // namespace

// c = a + b:  da = dc,  db = dc
Tensor add(const Tensor& a, const Tensor& b) {
  return record("add", {a, b}, raw::add(a, b), [sa = a.shape(), sb = b.shape()](const Tensor& dc, const Needs& needs) {
    return Grads{unbroadcast(dc, sa, needs[0]), unbroadcast(dc, sb, needs[1])};
  });
}

// c = a - b:  da = dc,  db = -dc
Tensor sub(const Tensor& a, const Tensor& b) {
  return record("sub", {a, b}, raw::sub(a, b), [sa = a.shape(), sb = b.shape()](const Tensor& dc, const Needs& needs) {
    return Grads{unbroadcast(dc, sa, needs[0]), needs[1] ? raw::neg(raw::sum_to_shape(dc, sb)) : Tensor()};
  });
}

// c = a * b:  da = dc * b,  db = dc * a
Tensor mul(const Tensor& a, const Tensor& b) {
  const bool save = any_requires_grad({a, b});
  return record("mul", {a, b}, raw::mul(a, b),
                [a = save ? a.detach() : Tensor(), b = save ? b.detach() : Tensor()](const Tensor& dc, const Needs& needs) {
                  return Grads{unbroadcast(needs[0] ? raw::mul(dc, b) : Tensor(), a.shape(), needs[0]),
                               unbroadcast(needs[1] ? raw::mul(dc, a) : Tensor(), b.shape(), needs[1])};
                }, {a, b});
}

// c = a / b:  da = dc / b,  db = -dc * a / b^2 = -dc * c / b
Tensor div(const Tensor& a, const Tensor& b) {
  const Tensor c = raw::div(a, b);
  const bool save = any_requires_grad({a, b});
  return record("div", {a, b}, c,
                [sa = a.shape(), b = save ? b.detach() : Tensor(), c = save ? c.detach() : Tensor()](
                    const Tensor& dc, const Needs& needs) {
                  const Tensor da = needs[0] ? raw::div(dc, b) : Tensor();
                  const Tensor db = needs[1] ? raw::neg(raw::div(raw::mul(dc, c), b)) : Tensor();
                  return Grads{unbroadcast(da, sa, needs[0]), unbroadcast(db, b.shape(), needs[1])};
                }, {b, c});
}

// c = a^b:  da = dc * b * a^(b-1),  db = dc * c * log(a)
// At the two points where those formulas read 0 * inf they are 0, as in
// mathematics and torch: a^0 is constant in a (da = 0 where b = 0, also at
// a = 0), and 0^b is 0 for every b > 0 (db = 0 where a = 0 and b >= 0, the
// limit of c * log(a)).
Tensor pow(const Tensor& base, const Tensor& exponent) {
  const Tensor c = raw::pow(base, exponent);
  const bool save = any_requires_grad({base, exponent});
  return record("pow", {base, exponent}, c,
                [a = save ? base.detach() : Tensor(), b = save ? exponent.detach() : Tensor(),
                 c = save ? c.detach() : Tensor()](const Tensor& dc, const Needs& needs) {
                  const Tensor zero = scalar(0, dc.dtype());
                  Tensor da, db;
                  if (needs[0]) {
                    const Tensor slope = raw::mul(b, raw::pow(a, raw::add(b, -1.0)));
                    da = raw::mul(dc, raw::where(raw::eq(b, zero), zero, slope));
                  }
                  if (needs[1]) {
                    const Tensor slope = raw::mul(c, raw::log(a));
                    db = raw::mul(dc, raw::where(raw::eq(a, zero), raw::where(raw::ge(b, zero), zero, slope), slope));
                  }
                  return Grads{unbroadcast(da, a.shape(), needs[0]), unbroadcast(db, b.shape(), needs[1])};
                }, {base, exponent, c});
}

// c = a^p (p a constant):  da = dc * p * a^(p-1), and 0 for p = 0 (a^0 is
// constant; the formula would read 0 * 0^-1 = NaN at a = 0).
Tensor pow(const Tensor& base, double exponent) {
  const bool save = any_requires_grad({base});
  return record("pow", {base}, raw::pow(base, exponent),
                [a = save ? base.detach() : Tensor(), exponent](const Tensor& dc, const Needs&) {
                  if (exponent == 0) return Grads{raw::mul(dc, 0.0)};
                  const Tensor slope = exponent == 2 ? raw::mul(a, 2.0) : raw::mul(raw::pow(a, exponent - 1), exponent);
                  return Grads{raw::mul(dc, slope)};
                }, {base});
}

// y = -x:  dx = -dy
Tensor neg(const Tensor& x) {
  return record("neg", {x}, raw::neg(x), [](const Tensor& dy, const Needs&) { return Grads{raw::neg(dy)}; });
}

// y = e^x:  dx = dy * y
Tensor exp(const Tensor& x) {
  const Tensor y = raw::exp(x);
  return record("exp", {x}, y, [y = y.detach()](const Tensor& dy, const Needs&) { return Grads{raw::mul(dy, y)}; }, {y});
}

// y = log x:  dx = dy / x
Tensor log(const Tensor& x) {
  return record(
      "log", {x}, raw::log(x), [x = x.detach()](const Tensor& dy, const Needs&) { return Grads{raw::div(dy, x)}; }, {x});
}

// y = sqrt x:  dx = dy / (2 y)
Tensor sqrt(const Tensor& x) {
  const Tensor y = raw::sqrt(x);
  return record("sqrt", {x}, y,
                [y = y.detach()](const Tensor& dy, const Needs&) { return Grads{raw::div(dy, raw::mul(y, 2.0))}; }, {y});
}

// y = tanh x:  dx = dy * (1 - y^2)
Tensor tanh(const Tensor& x) {
  const Tensor y = raw::tanh(x);
  return record("tanh", {x}, y, [y = y.detach()](const Tensor& dy, const Needs&) {
    return Grads{raw::mul(dy, raw::rsub(1.0, raw::mul(y, y)))};
  }, {y});
}

// c = cond ? a : b:  da = cond ? dc : 0,  db = cond ? 0 : dc
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  return record("where", {condition, a, b}, raw::where(condition, a, b),
                [condition = condition.detach(), sa = a.shape(), sb = b.shape()](const Tensor& dc, const Needs& needs) {
                  const Tensor zero = zeros({}, dc.dtype());
                  const Tensor da = needs[1] ? raw::where(condition, dc, zero) : Tensor();
                  const Tensor db = needs[2] ? raw::where(condition, zero, dc) : Tensor();
                  return Grads{Tensor(), unbroadcast(da, sa, needs[1]), unbroadcast(db, sb, needs[2])};
                }, {condition});
}

// y = mask ? value : x:  dx = mask ? 0 : dy
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  return record("masked_fill", {x, mask}, raw::masked_fill(x, mask, value),
                [mask = mask.detach()](const Tensor& dy, const Needs&) {
                  return Grads{raw::masked_fill(dy, mask, 0.0), Tensor()};
                }, {mask});
}

Tensor eq(const Tensor& a, const Tensor& b) { return raw::eq(a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return raw::ne(a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return raw::lt(a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return raw::le(a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return raw::gt(a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return raw::ge(a, b); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }
Tensor operator+(const Tensor& a, double b) { return add(a, raw::scalar_like(b, a, "add")); }
Tensor operator-(const Tensor& a, double b) { return sub(a, raw::scalar_like(b, a, "sub")); }
Tensor operator*(const Tensor& a, double b) { return mul(a, raw::scalar_like(b, a, "mul")); }
Tensor operator/(const Tensor& a, double b) { return div(a, raw::scalar_like(b, a, "div")); }
Tensor operator+(double a, const Tensor& b) { return add(raw::scalar_like(a, b, "add"), b); }
Tensor operator-(double a, const Tensor& b) { return sub(raw::scalar_like(a, b, "sub"), b); }
Tensor operator*(double a, const Tensor& b) { return mul(raw::scalar_like(a, b, "mul"), b); }
Tensor operator/(double a, const Tensor& b) { return div(raw::scalar_like(a, b, "div"), b); }

}  // namespace tg
