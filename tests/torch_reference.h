// What the tests that replay PyTorch's fixtures share: tg's side of the op
// table, and the comparison of a result with torch's.
//
// engine_ops() holds the tg version of every engine op of
// tests/reference/make_op_fixtures.py's TORCH_OPS, under the same key and with
// the same arguments (a JSON object of the fixture): the torch parity test
// (tests/autograd/test_torch_parity.cpp) runs each op on its own, the
// differential test (tests/differential/test_differential.cpp) runs random
// programs of them. Each adds its own entries (compositions, the fused nn ops).
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tinygpt/autograd/ops.h"

namespace tg::testing {

using Json = nlohmann::json;
using Inputs = std::vector<Tensor>;
using OpFn = std::function<std::vector<Tensor>(const Inputs& in, const Json& params)>;
using OpTable = std::map<std::string, OpFn>;

inline int64_t integer(const Json& params, const char* key) { return params.at(key).get<int64_t>(); }
inline bool flag(const Json& params, const char* key) { return params.at(key).get<bool>(); }
inline std::vector<int64_t> integers(const Json& params, const char* key) {
  return params.at(key).get<std::vector<int64_t>>();
}
// A number, or a string such as "-inf" (JSON has no infinities).
inline double real(const Json& params, const char* key) {
  const Json& value = params.at(key);
  return value.is_string() ? std::stod(value.get<std::string>()) : value.get<double>();
}

inline std::vector<Tensor> one(Tensor y) { return {std::move(y)}; }

inline const OpTable& engine_ops() {
  static const OpTable table = {
      // elementwise, binary and unary
      {"add", [](const Inputs& in, const Json&) { return one(add(in[0], in[1])); }},
      {"sub", [](const Inputs& in, const Json&) { return one(sub(in[0], in[1])); }},
      {"mul", [](const Inputs& in, const Json&) { return one(mul(in[0], in[1])); }},
      {"div", [](const Inputs& in, const Json&) { return one(div(in[0], in[1])); }},
      {"pow", [](const Inputs& in, const Json&) { return one(pow(in[0], in[1])); }},
      {"pow_scalar", [](const Inputs& in, const Json& p) { return one(pow(in[0], real(p, "exponent"))); }},
      {"add_scalar", [](const Inputs& in, const Json& p) { return one(in[0] + real(p, "scalar")); }},
      {"sub_scalar", [](const Inputs& in, const Json& p) { return one(in[0] - real(p, "scalar")); }},
      {"mul_scalar", [](const Inputs& in, const Json& p) { return one(in[0] * real(p, "scalar")); }},
      {"div_scalar", [](const Inputs& in, const Json& p) { return one(in[0] / real(p, "scalar")); }},
      {"scalar_add", [](const Inputs& in, const Json& p) { return one(real(p, "scalar") + in[0]); }},
      {"scalar_sub", [](const Inputs& in, const Json& p) { return one(real(p, "scalar") - in[0]); }},
      {"scalar_mul", [](const Inputs& in, const Json& p) { return one(real(p, "scalar") * in[0]); }},
      {"scalar_div", [](const Inputs& in, const Json& p) { return one(real(p, "scalar") / in[0]); }},
      {"neg", [](const Inputs& in, const Json&) { return one(neg(in[0])); }},
      {"exp", [](const Inputs& in, const Json&) { return one(exp(in[0])); }},
      {"log", [](const Inputs& in, const Json&) { return one(log(in[0])); }},
      {"sqrt", [](const Inputs& in, const Json&) { return one(sqrt(in[0])); }},
      {"tanh", [](const Inputs& in, const Json&) { return one(tanh(in[0])); }},
      {"where", [](const Inputs& in, const Json&) { return one(where(in[0], in[1], in[2])); }},
      {"masked_fill", [](const Inputs& in, const Json& p) { return one(masked_fill(in[0], in[1], real(p, "value"))); }},
      {"eq", [](const Inputs& in, const Json&) { return one(eq(in[0], in[1])); }},
      {"ne", [](const Inputs& in, const Json&) { return one(ne(in[0], in[1])); }},
      {"lt", [](const Inputs& in, const Json&) { return one(lt(in[0], in[1])); }},
      {"le", [](const Inputs& in, const Json&) { return one(le(in[0], in[1])); }},
      {"gt", [](const Inputs& in, const Json&) { return one(gt(in[0], in[1])); }},
      {"ge", [](const Inputs& in, const Json&) { return one(ge(in[0], in[1])); }},
      // reductions and softmax
      {"sum", [](const Inputs& in, const Json& p) { return one(sum(in[0], integers(p, "dims"), flag(p, "keepdim"))); }},
      {"mean",
       [](const Inputs& in, const Json& p) { return one(mean(in[0], integers(p, "dims"), flag(p, "keepdim"))); }},
      {"var",
       [](const Inputs& in, const Json& p) {
         return one(var(in[0], integers(p, "dims"), flag(p, "unbiased"), flag(p, "keepdim")));
       }},
      {"max",
       [](const Inputs& in, const Json& p) {
         raw::MaxResult result = max(in[0], integer(p, "dim"), flag(p, "keepdim"));
         return std::vector<Tensor>{result.values, result.indices};
       }},
      {"argmax",
       [](const Inputs& in, const Json& p) { return one(argmax(in[0], integer(p, "dim"), flag(p, "keepdim"))); }},
      {"softmax", [](const Inputs& in, const Json& p) { return one(softmax(in[0], integer(p, "dim"))); }},
      {"log_softmax", [](const Inputs& in, const Json& p) { return one(log_softmax(in[0], integer(p, "dim"))); }},
      // matrix product
      {"matmul", [](const Inputs& in, const Json&) { return one(matmul(in[0], in[1])); }},
      // indexing, joining, splitting
      {"index_select",
       [](const Inputs& in, const Json& p) { return one(index_select(in[0], integer(p, "dim"), in[1])); }},
      {"gather", [](const Inputs& in, const Json& p) { return one(gather(in[0], integer(p, "dim"), in[1])); }},
      {"embedding", [](const Inputs& in, const Json&) { return one(embedding(in[0], in[1])); }},
      {"cat", [](const Inputs& in, const Json& p) { return one(cat(in, integer(p, "dim"))); }},
      {"split_sizes",
       [](const Inputs& in, const Json& p) { return split(in[0], integers(p, "sizes"), integer(p, "dim")); }},
      {"split_chunk",
       [](const Inputs& in, const Json& p) { return split(in[0], integer(p, "chunk"), integer(p, "dim")); }},
      // views
      {"view", [](const Inputs& in, const Json& p) { return one(view(in[0], integers(p, "shape"))); }},
      {"reshape", [](const Inputs& in, const Json& p) { return one(reshape(in[0], integers(p, "shape"))); }},
      {"transpose",
       [](const Inputs& in, const Json& p) { return one(transpose(in[0], integer(p, "dim0"), integer(p, "dim1"))); }},
      {"permute", [](const Inputs& in, const Json& p) { return one(permute(in[0], integers(p, "dims"))); }},
      {"slice",
       [](const Inputs& in, const Json& p) {
         return one(slice(in[0], integer(p, "dim"), integer(p, "start"), integer(p, "end"), integer(p, "step")));
       }},
      {"narrow",
       [](const Inputs& in, const Json& p) {
         return one(narrow(in[0], integer(p, "dim"), integer(p, "start"), integer(p, "length")));
       }},
      {"select",
       [](const Inputs& in, const Json& p) { return one(select(in[0], integer(p, "dim"), integer(p, "index"))); }},
      {"squeeze", [](const Inputs& in, const Json& p) { return one(squeeze(in[0], integer(p, "dim"))); }},
      {"unsqueeze", [](const Inputs& in, const Json& p) { return one(unsqueeze(in[0], integer(p, "dim"))); }},
      {"expand", [](const Inputs& in, const Json& p) { return one(expand(in[0], integers(p, "shape"))); }},
      {"contiguous", [](const Inputs& in, const Json&) { return one(contiguous(in[0])); }},
      {"clone", [](const Inputs& in, const Json&) { return one(clone(in[0])); }},
  };
  return table;
}

inline std::string describe(const Tensor& t) { return std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()); }

// "" when `got` matches `expected`, else what differs (the worst element, both values).
// The criterion, per element: |got - expected| <= tolerance * max(1, |expected|),
// i.e. absolute near zero, relative above 1; NaN where torch has NaN and the same
// infinities. Integer and bool results must be equal.
inline std::string compare(const std::string& what, const Tensor& got, const Tensor& expected, double tolerance) {
  if (!got.defined()) return what + ": not computed (undefined)";
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape())
    return what + ": got " + describe(got) + ", expected " + describe(expected);
  const std::vector<double> a = got.to_vector<double>(), b = expected.to_vector<double>();
  const bool exact = !is_floating(expected.dtype());
  size_t worst = 0;
  double worst_excess = 0;  // error / allowed error, > 1 fails
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) continue;  // also equal infinities
    const double allowed = exact ? 0 : tolerance * std::max(1.0, std::abs(b[i]));
    const double error = std::abs(a[i] - b[i]);
    const double excess = std::isnan(error) ? INFINITY : (allowed == 0 ? INFINITY : error / allowed);
    if (excess > 1 && excess > worst_excess) worst = i, worst_excess = excess;
  }
  if (worst_excess <= 1) return "";
  std::ostringstream message;
  message.precision(expected.dtype() == DType::Float64 ? 17 : 9);  // enough digits to tell the two apart
  message << what << ": element " << worst << " (row-major) is " << a[worst] << ", torch has " << b[worst]
          << " (|diff| " << std::abs(a[worst] - b[worst]) << ")";
  return message.str();
}

}  // namespace tg::testing
