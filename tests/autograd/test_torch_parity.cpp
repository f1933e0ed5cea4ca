// Every differentiable op against PyTorch.
//
// tests/reference/make_op_fixtures.py ran each case through torch 1.13 and saved
// the inputs, the outputs, a random weight w per floating output and the input
// gradients of loss = sum(out * w) in tests/fixtures/ops/<case>.safetensors (see
// the script's docstring for the file layout). Here each fixture is replayed
// through the tg API: the op comes from engine_ops() (tests/torch_reference.h)
// or composition_ops() below, keyed by the fixture's "op" metadata; a fixture
// whose op is in neither table fails, so nothing is skipped silently, and an op
// of the tables without a fixture fails too.
//
// The criterion, for every element of every output and gradient (compare() in
// tests/torch_reference.h):
//     |got - expected| <= 1e-5 * max(1, |expected|)
// i.e. absolute near zero, relative above 1. Integer and bool outputs must be equal.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/view.h"
#include "torch_reference.h"

namespace {

using tg::Tensor;
using namespace tg::testing;

constexpr double kTolerance = 1e-5;
const char* const kFixtureDirectory = "tests/fixtures/ops";

// The cases of make_op_fixtures.py that are not one engine op: a dtype
// conversion, and compositions (views feeding reductions, small pieces of a
// transformer). Every other op comes from engine_ops().
const OpTable& composition_ops() {
  using namespace tg;
  static const OpTable table = {
      {"operators",
       [](const Inputs& in, const Json&) {
         const Tensor &x = in[0], &y = in[1];
         return one((x + y) * (x - y) / (y * y + 1.0) - (-x));
       }},
      {"to_float64", [](const Inputs& in, const Json&) { return one(to_dtype(in[0], DType::Float64)); }},
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

const OpFn* find_op(const std::string& name) {
  for (const OpTable* table : {&engine_ops(), &composition_ops()})
    if (const auto entry = table->find(name); entry != table->end()) return &entry->second;
  return nullptr;
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

// Replays one fixture; returns every mismatch found (empty when it passes).
std::vector<std::string> run_fixture(const tg::SafetensorsFile& file, std::set<std::string>& ops_seen) {
  const tg::Metadata& meta = file.metadata;
  const OpFn* op = find_op(meta.at("op"));
  if (op == nullptr) return {"no entry in the op table for op '" + meta.at("op") + "'"};
  ops_seen.insert(meta.at("op"));
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
  const std::vector<Tensor> outputs = (*op)(inputs, params);
  std::vector<std::pair<Tensor, Tensor>> weighted;  // (output, w)
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string key = "out." + std::to_string(i);
    const Tensor* expected = file.find(key);
    if (expected == nullptr) {
      problems.push_back("the op returned " + std::to_string(outputs.size()) + " outputs, the fixture has fewer");
      break;
    }
    if (std::string problem = compare(key, outputs[i], *expected, kTolerance); !problem.empty())
      problems.push_back(problem);
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
    if (std::string problem = compare("grad." + name, leaves.at(name).grad(), file.at("grad." + name), kTolerance);
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
  for (const OpTable* table : {&engine_ops(), &composition_ops()})
    for (const auto& [op, fn] : *table)
      CHECK_MESSAGE(ops_seen.count(op) == 1, ("op '" + op + "' is in the table but no fixture exercises it"));
}
