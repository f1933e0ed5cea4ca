// Every differentiable op against PyTorch.
//
// tests/reference/make_op_fixtures.py ran each case through torch 1.13 and saved
// the inputs, the outputs, a random weight w per floating output and the input
// gradients of loss = sum(out * w) in tests/fixtures/ops/<case>.safetensors (see
// the script's docstring for the file layout). Here each fixture is replayed
// through the tg API: the op comes from kOps, keyed by the fixture's "op"
// metadata; a fixture whose op is not in the table fails, so nothing is skipped
// silently, and an op of the table without a fixture fails too.
//
// The criterion, for every element of every output and gradient:
//     |got - expected| <= 1e-5 * max(1, |expected|)
// i.e. absolute near zero, relative above 1. Integer and bool outputs must be equal.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "tensor/safetensors.h"
#include "tensor/view.h"

namespace {

using tg::Tensor;
using Json = nlohmann::json;
using Inputs = std::vector<Tensor>;
using OpFn = std::function<std::vector<Tensor>(const Inputs& in, const Json& params)>;

constexpr double kTolerance = 1e-5;
const char* const kFixtureDirectory = "tests/fixtures/ops";

int64_t integer(const Json& params, const char* key) { return params.at(key).get<int64_t>(); }
bool flag(const Json& params, const char* key) { return params.at(key).get<bool>(); }
std::vector<int64_t> integers(const Json& params, const char* key) {
  return params.at(key).get<std::vector<int64_t>>();
}
// A number, or a string such as "-inf" (JSON has no infinities).
double real(const Json& params, const char* key) {
  const Json& value = params.at(key);
  return value.is_string() ? std::stod(value.get<std::string>()) : value.get<double>();
}

std::vector<Tensor> one(Tensor y) { return {std::move(y)}; }

// The tg version of each op of make_op_fixtures.py's TORCH_OPS, same keys.
const std::map<std::string, OpFn>& ops() {
  using namespace tg;
  static const std::map<std::string, OpFn> table = {
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
      {"operators",
       [](const Inputs& in, const Json&) {
         const Tensor &x = in[0], &y = in[1];
         return one((x + y) * (x - y) / (y * y + 1.0) - (-x));
       }},
      {"neg", [](const Inputs& in, const Json&) { return one(neg(in[0])); }},
      {"exp", [](const Inputs& in, const Json&) { return one(exp(in[0])); }},
      {"log", [](const Inputs& in, const Json&) { return one(log(in[0])); }},
      {"sqrt", [](const Inputs& in, const Json&) { return one(sqrt(in[0])); }},
      {"tanh", [](const Inputs& in, const Json&) { return one(tanh(in[0])); }},
      {"where", [](const Inputs& in, const Json&) { return one(where(in[0], in[1], in[2])); }},
      {"masked_fill",
       [](const Inputs& in, const Json& p) { return one(masked_fill(in[0], in[1], real(p, "value"))); }},
      {"eq", [](const Inputs& in, const Json&) { return one(eq(in[0], in[1])); }},
      {"ne", [](const Inputs& in, const Json&) { return one(ne(in[0], in[1])); }},
      {"lt", [](const Inputs& in, const Json&) { return one(lt(in[0], in[1])); }},
      {"le", [](const Inputs& in, const Json&) { return one(le(in[0], in[1])); }},
      {"gt", [](const Inputs& in, const Json&) { return one(gt(in[0], in[1])); }},
      {"ge", [](const Inputs& in, const Json&) { return one(ge(in[0], in[1])); }},
      // reductions and softmax
      {"sum",
       [](const Inputs& in, const Json& p) { return one(sum(in[0], integers(p, "dims"), flag(p, "keepdim"))); }},
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
      {"to_float64", [](const Inputs& in, const Json&) { return one(to_dtype(in[0], DType::Float64)); }},
      // compositions: views feeding reductions, and small pieces of a transformer
      {"transpose_sum", [](const Inputs& in, const Json&) { return one(sum(transpose(in[0], 0, 1), {1})); }},
      {"views_sum",
       [](const Inputs& in, const Json&) {
         const Tensor rows = slice(transpose(in[0], 0, 1), 0, 1, 4, 2);  // (5, 3) -> (2, 3)
         return one(sum(expand(unsqueeze(rows, 0), {3, -1, -1}), {0, 2}));
       }},
      {"permute_reshape_mean",
       [](const Inputs& in, const Json&) { return one(mean(reshape(permute(in[0], {2, 0, 1}), {4, 6}), {1}, true)); }},
      {"expand_mul_sum",
       [](const Inputs& in, const Json&) { return one(sum(expand(in[0], {2, 3, 4}) * in[1], {0})); }},
      {"select_narrow_softmax",
       [](const Inputs& in, const Json&) { return one(softmax(narrow(select(in[0], 0, 1), 1, 1, 3), -1)); }},
      {"layer_norm",
       [](const Inputs& in, const Json&) {
         const Tensor &x = in[0], &gain = in[1], &bias = in[2];  // x: (B, T, C), gain and bias: (C)
         const Tensor centred = x - mean(x, {-1}, true);
         return one(centred / sqrt(var(x, {-1}, false, true) + 1e-5) * gain + bias);
       }},
      {"cross_entropy",
       [](const Inputs& in, const Json&) {
         const Tensor &logits = in[0], &targets = in[1];  // (N, V), (N)
         return one(-mean(gather(log_softmax(logits, 1), 1, unsqueeze(targets, 1)), {0, 1}));
       }},
      {"attention",
       [](const Inputs& in, const Json& p) {
         const Tensor &q = in[0], &k = in[1], &v = in[2], &future = in[3];  // (B, T, C) x3, (T, T)
         const Tensor scores = matmul(q, transpose(k, -2, -1)) * real(p, "scale");  // (B, T, T)
         return one(matmul(softmax(masked_fill(scores, future, real(p, "value")), -1), v));
       }},
      {"mlp",
       [](const Inputs& in, const Json&) { return one(matmul(tanh(matmul(in[0], in[1]) + in[2]), in[3])); }},
  };
  return table;
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream stream(list);
  for (std::string name; std::getline(stream, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
}

// A leaf holding `values` in the layout the fixture asks for: contiguous, the
// transpose of a contiguous buffer, or every other column of a buffer twice as wide.
Tensor make_leaf(const Tensor& values, const std::string& layout) {
  Tensor leaf;
  if (layout.empty()) {
    leaf = tg::raw::clone(values);
  } else if (layout == "transposed") {
    tg::check(values.dim() >= 2, "layout 'transposed' needs 2 or more dims, got ", values.shape());
    leaf = tg::raw::transpose(tg::raw::clone(tg::raw::transpose(values, -2, -1)), -2, -1);
  } else if (layout == "sliced") {
    tg::check(values.dim() >= 1, "layout 'sliced' needs 1 or more dims");
    tg::Shape wide = values.shape();
    wide.back() *= 2;
    const Tensor buffer = tg::full(wide, -999, values.dtype());  // the skipped columns must not leak in
    leaf = tg::raw::slice(buffer, values.dim() - 1, 0, wide.back(), 2);
    tg::raw::copy_(leaf, values);
  } else {
    tg::fail("unknown layout '", layout, "'");
  }
  tg::check(layout.empty() || !leaf.is_contiguous(), "layout '", layout, "' gave a contiguous leaf");
  return leaf;
}

std::string describe(const Tensor& t) { return std::string(tg::dtype_name(t.dtype())) + " " + tg::shape_str(t.shape()); }

// "" when `got` matches `expected` under the criterion at the top of this file,
// else what differs (the worst element, both values).
std::string compare(const std::string& what, const Tensor& got, const Tensor& expected) {
  if (!got.defined()) return what + ": not computed (undefined)";
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape())
    return what + ": got " + describe(got) + ", expected " + describe(expected);
  const std::vector<double> a = got.to_vector<double>(), b = expected.to_vector<double>();
  const bool exact = !tg::is_floating(expected.dtype());
  size_t worst = 0;
  double worst_excess = 0;  // error / allowed error, > 1 fails
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;  // also equal infinities
    const double allowed = exact ? 0 : kTolerance * std::max(1.0, std::abs(b[i]));
    const double error = std::abs(a[i] - b[i]);
    const double excess = std::isnan(error) ? INFINITY : (allowed == 0 ? INFINITY : error / allowed);
    if (excess > 1 && excess > worst_excess) worst = i, worst_excess = excess;
  }
  if (worst_excess <= 1) return "";
  std::ostringstream message;
  message.precision(9);
  message << what << ": element " << worst << " (row-major) is " << a[worst] << ", torch has " << b[worst]
          << " (|diff| " << std::abs(a[worst] - b[worst]) << ")";
  return message.str();
}

// Replays one fixture; returns every mismatch found (empty when it passes).
std::vector<std::string> run_fixture(const tg::SafetensorsFile& file, std::set<std::string>& ops_seen) {
  const tg::Metadata& meta = file.metadata;
  const auto op_entry = ops().find(meta.at("op"));
  if (op_entry == ops().end()) return {"no entry in the op table for op '" + meta.at("op") + "'"};
  ops_seen.insert(op_entry->first);
  const Json params = Json::parse(meta.at("params"));

  const std::vector<std::string> grad_names = split_names(meta.at("grad_inputs"));
  Inputs inputs;
  std::map<std::string, Tensor> leaves;
  for (const std::string& name : split_names(meta.at("inputs"))) {
    const Tensor values = file.at("in." + name);
    const auto layout = meta.find("layout." + name);
    const bool wants_grad = std::count(grad_names.begin(), grad_names.end(), name) > 0;
    if (!wants_grad && layout == meta.end()) {
      inputs.push_back(values);
      continue;
    }
    Tensor leaf = make_leaf(values, layout == meta.end() ? "" : layout->second);
    if (wants_grad) leaf.set_requires_grad();
    leaves[name] = leaf;
    inputs.push_back(leaf);
  }

  std::vector<std::string> problems;
  const std::vector<Tensor> outputs = op_entry->second(inputs, params);
  std::vector<std::pair<Tensor, Tensor>> weighted;  // (output, w)
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string key = "out." + std::to_string(i);
    const Tensor* expected = file.find(key);
    if (expected == nullptr) {
      problems.push_back("the op returned " + std::to_string(outputs.size()) + " outputs, the fixture has fewer");
      break;
    }
    if (std::string problem = compare(key, outputs[i], *expected); !problem.empty()) problems.push_back(problem);
    if (const Tensor* w = file.find("w." + std::to_string(i))) weighted.emplace_back(outputs[i], *w);
  }
  if (file.find("out." + std::to_string(outputs.size())) != nullptr)
    problems.push_back("the op returned " + std::to_string(outputs.size()) + " outputs, the fixture has more");
  if (!problems.empty()) return problems;  // gradients of a wrong output say nothing new

  for (size_t i = 0; i < weighted.size(); ++i) {
    const bool more_to_come = i + 1 < weighted.size();  // later outputs may share this graph
    if (!grad_names.empty()) tg::backward(weighted[i].first, weighted[i].second, more_to_come);
  }
  for (const std::string& name : grad_names)
    if (std::string problem = compare("grad." + name, leaves.at(name).grad(), file.at("grad." + name));
        !problem.empty())
      problems.push_back(problem);
  return problems;
}

std::vector<std::filesystem::path> fixture_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtureDirectory))
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("torch parity: every op matches PyTorch's outputs and gradients") {
  const std::vector<std::filesystem::path> files = fixture_files();
  REQUIRE(files.size() >= 100);  // the script writes over a hundred; fewer means a broken checkout
  std::set<std::string> ops_seen;
  for (const std::filesystem::path& path : files) {
    std::vector<std::string> problems;
    try {
      problems = run_fixture(tg::load_safetensors(path.string()), ops_seen);
    } catch (const std::exception& error) {
      problems = {std::string("threw: ") + error.what()};
    }
    for (const std::string& problem : problems) FAIL_CHECK((path.stem().string() + ": " + problem));
  }
  for (const auto& [op, fn] : ops())
    CHECK_MESSAGE(ops_seen.count(op) == 1, ("op '" + op + "' is in the table but no fixture exercises it"));
}
