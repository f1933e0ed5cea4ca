// The differential test: a few thousand random programs against PyTorch.
//
// tests/reference/make_differential_fixtures.py drew each program (1 to 4 ops
// over 1 to 4 leaves: broadcasting, reductions over dim subsets, softmax at
// large magnitudes, batched and transposed matmul, index ops, cat and split,
// views of non-contiguous leaves, sizes 0 and 1, tails of 1, 3, 17 and 129, the
// fused nn kernels and their references; float32 and float64) and saved
// torch's output and the leaves' gradients of sum(output * w) in
// tests/fixtures/differential/ (the script's docstring describes the files).
// Here each program is rebuilt from its description, leaf values from the same
// formula, and run through tg: the engine's ops from engine_ops()
// (tests/torch_reference.h), the fused nn ops from nn_ops() below.
//
// The criterion, for every element of the output and of every gradient
// (compare() in tests/torch_reference.h):
//     |got - expected| <= tolerance * max(1, |expected|)
// with tolerance 1e-5 for float32 programs and 1e-10 for float64 ones. Below
// magnitude 1 the bound is absolute, the same number: a leaf's values lie in
// [-1, 1) or thereabouts (a few programs scale them up on purpose, and their
// results are large, so relative), and an element near 0 is then a difference
// of terms of order 1, whose rounding error is absolute: relative to itself
// it could be anything. The generator kept only programs whose float32 and
// float64 runs in torch agree to a tenth of that, so torch's own rounding uses
// up at most a tenth of the tolerance. (Measured: every program that passes
// stays within 15% of the tolerance, in the Release and the sanitizer build,
// whose float32 sums round differently.)
//
// A mismatch names the program (its id in programs.json and its ops) and the
// worst element.
//
// Programs 3000 to 3599 start with one of issue 35's ops (RMSNorm with and
// without weight, SwiGLU, ReLU^2, RoPE with both pairings and its rescalings).
//
// tests/reference/make_differential_edge_fixtures.py adds 800 programs of the
// classes issue 33 found wrong (frozen inputs, 0-d tensors through dim ops, extreme
// values through the fused ops, in-place writes between forward and backward,
// integer tensors with fractional scalars; the last 200 through issue 35's ops)
// in edge_programs.json, whose format the script's docstring gives.
//
// The programs are too small for the kernels to use a second thread; the last
// test case runs issue 35's ops past that size on 1 and 2 threads (kThreadPrograms).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/nn/functional/gelu.h"
#include "tinygpt/nn/functional/layer_norm.h"
#include "tinygpt/nn/functional/relu_squared.h"
#include "tinygpt/nn/functional/rms_norm.h"
#include "tinygpt/nn/functional/rope.h"
#include "tinygpt/nn/functional/swiglu.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"
#include "torch_reference.h"

namespace {

using tg::DType;
using tg::Shape;
using tg::Tensor;
using namespace tg::testing;

const char* const kPrograms = "tests/fixtures/differential/programs.json";
const char* const kExpected = "tests/fixtures/differential/expected.safetensors";
const char* const kEdgePrograms = "tests/fixtures/differential/edge_programs.json";
const char* const kEdgeExpected = "tests/fixtures/differential/edge_expected.safetensors";

// ---- leaf values, as the generator computes them

// SplitMix64's output for the state seed + (i + 1) * golden.
uint64_t mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr int64_t kWeightSlot = 15;  // leaf seeds are 16 * id + slot, the weight's 16 * id + 15

// "every" and "value" of a leaf's "special": every element i with i % every == 0 gets value.
struct Special {
  int64_t every = 0;
  double value = 0;
};

Special special_of(const Json& spec) {
  if (!spec.contains("special")) return {};
  const Json& special = spec.at("special");
  const Json& value = special.at(1);
  return {special.at(0).get<int64_t>(), value.is_string() ? std::stod(value.get<std::string>()) : value.get<double>()};
}

// L + k * (S / 2^24), k the top 24 bits of mix: the product is exact (S is a
// power of two), so the one rounding is the sum's, the same as numpy's.
Tensor float_values(uint64_t seed, const Json& spec, DType dtype) {
  const Shape shape = spec.at("shape").get<Shape>();
  const double low = spec.value("low", -1.0), step = spec.value("span", 2.0) / 16777216.0;
  const bool round_down = spec.value("round", false);
  const Special special = special_of(spec);
  std::vector<double> values(static_cast<size_t>(tg::numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) {
    const double value = low + static_cast<double>(mix(seed, i) >> 40) * step;
    values[i] = round_down ? std::floor(value) : value;
    if (special.every > 0 && static_cast<int64_t>(i) % special.every == 0) values[i] = special.value;
  }
  return tg::raw::to_dtype(tg::from_vector(values, shape), dtype);
}

Tensor index_values(uint64_t seed, const Json& spec) {
  const Shape shape = spec.at("shape").get<Shape>();
  const int64_t low = spec.at("low").get<int64_t>(), count = spec.at("high").get<int64_t>() - low;
  const Special special = special_of(spec);
  std::vector<int64_t> values(static_cast<size_t>(tg::numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = low + static_cast<int64_t>(mix(seed, i) % static_cast<uint64_t>(count));
    if (special.every > 0 && static_cast<int64_t>(i) % special.every == 0)
      values[i] = static_cast<int64_t>(special.value);
  }
  return tg::from_vector(values, shape);
}

Tensor apply_view(const Tensor& x, const Json& view) {
  const std::string name = view.at(0).get<std::string>();
  if (name == "transpose") return tg::raw::transpose(x, view.at(1).get<int64_t>(), view.at(2).get<int64_t>());
  if (name == "permute") return tg::raw::permute(x, view.at(1).get<std::vector<int64_t>>());
  if (name == "slice")
    return tg::raw::slice(x, view.at(1).get<int64_t>(), view.at(2).get<int64_t>(), view.at(3).get<int64_t>(),
                          view.at(4).get<int64_t>());
  if (name == "expand") return tg::raw::expand(x, view.at(1).get<Shape>());
  tg::fail("unknown view '", name, "'");
}

// A leaf as the program describes it: a contiguous base of its values, seen
// through its views (so it may be transposed, strided or expanded).
Tensor make_leaf(int64_t program_id, int64_t slot, const Json& spec, DType dtype) {
  const uint64_t seed = static_cast<uint64_t>(16 * program_id + slot);
  if (spec.value("index", false)) return index_values(seed, spec);
  Tensor leaf = float_values(seed, spec, dtype);
  for (const Json& view : spec.value("views", Json::array())) leaf = apply_view(leaf, view);
  return spec.value("frozen", false) ? leaf : leaf.set_requires_grad();
}

// ---- the fused nn ops, each compared with torch's own function

tg::nn::GeluApproximation approximation(const Json& params) {
  const std::string name = params.at("approximation").get<std::string>();
  tg::check(name == "tanh" || name == "erf", "unknown GELU approximation '", name, "'");
  return name == "tanh" ? tg::nn::GeluApproximation::Tanh : tg::nn::GeluApproximation::Erf;
}

// nn.rope's "pairing" and "scaling", "interleaved" and "none" when absent (the programs before issue 35).
tg::nn::Rotary rotary(const Json& params) {
  return {real(params, "base"), tg::nn::RopeScaling::parse(params.value("scaling", "none")),
          tg::nn::rope_pairing_named(params.value("pairing", "interleaved"))};
}

// nn.rms_norm's weight, an optional second input (none: an undefined tensor, as nanochat's).
Tensor optional_input(const Inputs& in, size_t i) { return i < in.size() ? in[i] : Tensor(); }

const OpTable& nn_ops() {
  using namespace tg::nn;
  static const OpTable table = {
      {"nn.causal_attention", [](const Inputs& in, const Json&) { return one(causal_attention(in[0], in[1], in[2])); }},
      {"nn.causal_attention_reference",
       [](const Inputs& in, const Json&) { return one(causal_attention_reference(in[0], in[1], in[2])); }},
      {"nn.cross_entropy",
       [](const Inputs& in, const Json& p) { return one(cross_entropy(in[0], in[1], integer(p, "ignore_index"))); }},
      {"nn.cross_entropy_reference",
       [](const Inputs& in, const Json& p) {
         return one(cross_entropy_reference(in[0], in[1], integer(p, "ignore_index")));
       }},
      {"nn.gelu", [](const Inputs& in, const Json& p) { return one(gelu(in[0], approximation(p))); }},
      {"nn.gelu_reference",
       [](const Inputs& in, const Json& p) { return one(gelu_reference(in[0], approximation(p))); }},
      {"nn.linear_product", [](const Inputs& in, const Json&) { return one(tg::linear_product(in[0], in[1], in[2])); }},
      {"nn.layer_norm",
       [](const Inputs& in, const Json& p) { return one(layer_norm(in[0], in[1], in[2], real(p, "eps"))); }},
      {"nn.layer_norm_reference",
       [](const Inputs& in, const Json& p) { return one(layer_norm_reference(in[0], in[1], in[2], real(p, "eps"))); }},
      {"nn.relu_squared", [](const Inputs& in, const Json&) { return one(relu_squared(in[0])); }},
      {"nn.relu_squared_reference", [](const Inputs& in, const Json&) { return one(relu_squared_reference(in[0])); }},
      {"nn.rms_norm",
       [](const Inputs& in, const Json& p) { return one(rms_norm(in[0], optional_input(in, 1), real(p, "eps"))); }},
      {"nn.rms_norm_reference",
       [](const Inputs& in, const Json& p) {
         return one(rms_norm_reference(in[0], optional_input(in, 1), real(p, "eps")));
       }},
      {"nn.rope",
       [](const Inputs& in, const Json& p) { return one(rope(in[0], integer(p, "position_offset"), rotary(p))); }},
      {"nn.rope_reference",
       [](const Inputs& in, const Json& p) {
         return one(rope_reference(in[0], integer(p, "position_offset"), rotary(p)));
       }},
      {"nn.swiglu", [](const Inputs& in, const Json&) { return one(swiglu(in[0])); }},
      {"nn.swiglu_reference", [](const Inputs& in, const Json&) { return one(swiglu_reference(in[0])); }},
  };
  return table;
}

const OpFn& find_op(const std::string& name) {
  for (const OpTable* table : {&engine_ops(), &nn_ops()})
    if (const auto entry = table->find(name); entry != table->end()) return entry->second;
  tg::fail("no entry in the op table for op '", name, "'");
}

// ---- replaying a program

// How many values torch's op gave (max and split give several).
int64_t output_count(const Json& op) { return op.value("outputs", int64_t{1}); }

// "v2 = matmul(v0, v1); v3 = sum(v2; {"dims":[0],"keepdim":true})": what a failure prints.
std::string describe_ops(const Json& program) {
  std::ostringstream text;
  const int64_t leaf_count = static_cast<int64_t>(program.at("leaves").size());
  int64_t next = leaf_count;
  for (const Json& op : program.at("ops")) {
    if (next > leaf_count) text << "; ";
    const int64_t outputs = output_count(op);
    text << "v" << next;
    if (outputs != 1) text << "..v" << next + outputs - 1;
    next += outputs;
    text << " = " << op.at("op").get<std::string>() << "(";
    const Json& inputs = op.at("in");
    for (size_t i = 0; i < inputs.size(); ++i) text << (i ? ", v" : "v") << inputs[i].get<int64_t>();
    Json params = op;
    params.erase("op");
    params.erase("in");
    params.erase("outputs");
    if (!params.empty()) text << "; " << params.dump();
    text << ")";
  }
  text << " -> output v" << program.at("out").get<int64_t>();
  return text.str();
}

// The program's expected numbers, in order: the output, then each gradient.
struct ExpectedStream {
  Tensor flat;  // (count) of the program's dtype
  int64_t offset;

  Tensor next(const Shape& shape) {
    const int64_t count = tg::numel(shape);
    tg::check(offset + count <= flat.numel(), "expected.safetensors ends before this program's numbers do");
    const Tensor values = tg::raw::view(tg::raw::narrow(flat, 0, offset, count), shape);
    offset += count;
    return values;
  }
};

// The edge programs' in-place write after the forward, as raw ops (never recorded).
void write_in_place(const Tensor& target, const Json& write) {
  const std::string op = write.at("op").get<std::string>();
  const double scalar = write.at("scalar").get<double>();
  if (op == "mul_") tg::raw::mul_(target, scalar);
  else if (op == "fill_") tg::fill_(target, scalar);
  else if (op == "add_") tg::raw::add_(target, tg::full({}, scalar, target.dtype()));
  else tg::fail("unknown in-place op '", op, "'");
}

// What a replay saw, for the checks over all programs.
struct ReplayCounts {
  int64_t backward_refused = 0;  // in-place programs whose backward tg refused
  int64_t exact_after_write = 0;  // in-place programs whose gradients came out exact
  int64_t refused = 0;            // programs tg must refuse, and did
};

// Replays one program; returns every mismatch found (empty when it passes).
std::vector<std::string> replay(const Json& program, const tg::SafetensorsFile& expected, ReplayCounts& counts) {
  const int64_t id = program.at("id").get<int64_t>();
  const std::string dtype_name = program.at("dtype").get<std::string>();
  const DType dtype = dtype_name == "float64" ? DType::Float64 : DType::Float32;
  const double tolerance = dtype == DType::Float64 ? 1e-10 : 1e-5;
  ExpectedStream stream{expected.at(dtype_name), program.at("offset").get<int64_t>()};

  std::vector<Tensor> values;
  const Json& leaf_specs = program.at("leaves");
  for (size_t slot = 0; slot < leaf_specs.size(); ++slot)
    values.push_back(make_leaf(id, static_cast<int64_t>(slot), leaf_specs[slot], dtype));
  const std::vector<Tensor> leaves = values;
  for (const Json& op : program.at("ops")) {
    Inputs inputs;
    for (const Json& input : op.at("in")) inputs.push_back(values.at(input.get<size_t>()));
    const std::string name = op.at("op").get<std::string>();
    if (program.contains("refused")) {
      const std::string words = program.at("refused").get<std::string>();
      try {
        find_op(name)(inputs, op);
      } catch (const tg::Error& error) {
        if (std::string(error.what()).find(words) == std::string::npos)
          return {name + " was refused with \"" + error.what() + "\", not for \"" + words + "\""};
        ++counts.refused;
        return {};
      }
      return {name + " was not refused (it must say \"" + words + "\")"};
    }
    std::vector<Tensor> outputs = find_op(name)(inputs, op);
    if (static_cast<int64_t>(outputs.size()) != output_count(op))
      return {name + " gave " + std::to_string(outputs.size()) + " values, torch's " +
              std::to_string(output_count(op))};
    for (Tensor& output : outputs) values.push_back(std::move(output));
  }
  const Tensor output = values.at(program.at("out").get<size_t>());
  const std::string problem = compare("output", output, stream.next(program.at("out_shape").get<Shape>()), tolerance);
  if (!problem.empty()) return {problem};  // gradients of a wrong output say nothing new

  const Tensor weight =
      float_values(static_cast<uint64_t>(16 * id + kWeightSlot), Json{{"shape", output.shape()}}, dtype);
  if (program.contains("inplace")) {
    // Refused, or exactly the gradients of the forward as it ran: never silently others.
    write_in_place(values.at(program.at("inplace").at("value").get<size_t>()), program.at("inplace"));
    try {
      tg::backward(output, weight);
    } catch (const tg::Error& error) {
      if (std::string(error.what()).find("was changed in place after it ran") == std::string::npos)
        return {std::string("backward after the write threw: ") + error.what()};
      ++counts.backward_refused;
      return {};
    }
  } else {
    tg::backward(output, weight);
  }
  std::vector<std::string> problems;
  for (size_t slot = 0; slot < leaves.size(); ++slot) {
    const Json& spec = leaf_specs[slot];
    if (spec.value("index", false)) continue;
    const Tensor& leaf = leaves[slot];
    // No gradient is a gradient of zeros: torch has none when a leaf only feeds comparisons.
    const Tensor grad = leaf.grad().defined() ? leaf.grad() : tg::zeros(leaf.shape(), dtype);
    const Tensor wanted = spec.at("grad").get<bool>() ? stream.next(leaf.shape()) : tg::zeros(leaf.shape(), dtype);
    if (std::string mismatch = compare("gradient of leaf v" + std::to_string(slot), grad, wanted, tolerance);
        !mismatch.empty())
      problems.push_back(mismatch + (leaf.grad().defined() ? "" : " (tg computed no gradient)"));
  }
  if (program.contains("inplace") && problems.empty()) ++counts.exact_after_write;
  return problems;
}

Json load_programs(const char* path) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), "cannot open " << path);
  return Json::parse(file);
}

// Replays every program of a file, failing a check per mismatch; adds the ops it used to ops_seen.
ReplayCounts replay_file(const char* programs_path, const char* expected_path, std::set<std::string>& ops_seen) {
  const Json programs = load_programs(programs_path).at("programs");
  const tg::SafetensorsFile expected = tg::load_safetensors(expected_path);
  ReplayCounts counts;
  for (const Json& program : programs) {
    const int64_t id = program.at("id").get<int64_t>();
    for (const Json& op : program.at("ops")) ops_seen.insert(op.at("op").get<std::string>());
    std::vector<std::string> problems;
    try {
      problems = replay(program, expected, counts);
    } catch (const std::exception& error) {
      problems = {std::string("threw: ") + error.what()};
    }
    for (const std::string& problem : problems)
      FAIL_CHECK("program " << id << " (" << program.at("dtype").get<std::string>() << ", " << describe_ops(program)
                            << "): " << problem);
  }
  MESSAGE(programs.size() << " programs of " << std::string(programs_path) << " replayed");
  return counts;
}

// ---- 1 and 2 threads
//
// The kernels split their rows over the threads only from kParallelThreshold
// (32768) elements on, and the programs above stay below 2000 elements.
// So issue 35's ops run once more here, fused and composed, on leaves past the
// threshold (the same leaf formula, odd row counts, non-contiguous layouts),
// on 1 thread and on 2: the output and every gradient must be the same bits.
// Each entry is one op over its leaves, its arguments beside them.
const char* const kThreadPrograms = R"([
  {"op": "nn.rms_norm", "eps": 1e-6,
   "leaves": [{"shape": [3, 129, 131], "views": [["transpose", 1, 2]]}, {"shape": [129], "low": 0.5, "span": 1.0}]},
  {"op": "nn.rms_norm", "eps": 1e-5, "leaves": [{"shape": [257, 261], "views": [["slice", 1, 1, 261, 2]]}]},
  {"op": "nn.swiglu", "leaves": [{"shape": [129, 2, 258], "low": -4.0, "span": 8.0, "views": [["permute", [1, 0, 2]]]}]},
  {"op": "nn.relu_squared", "leaves": [{"shape": [181, 183], "low": -4.0, "span": 8.0, "views": [["transpose", 0, 1]]}]},
  {"op": "nn.rope", "position_offset": 5, "base": 10000.0, "pairing": "half", "scaling": "llama3:8,1,4,64",
   "leaves": [{"shape": [2, 129, 4, 32], "views": [["permute", [0, 2, 1, 3]]]}]},
  {"op": "nn.rope", "position_offset": 1000, "base": 500000.0, "pairing": "interleaved", "scaling": "linear:2",
   "leaves": [{"shape": [2, 129, 4, 32], "views": [["permute", [0, 2, 1, 3]]]}]}
])";

// Bit patterns (a float32 widens to double exactly, its sign and NaN kept).
std::vector<uint64_t> bits_of(const Tensor& t) {
  std::vector<uint64_t> bits;
  for (const double value : t.to_vector<double>()) bits.push_back(std::bit_cast<uint64_t>(value));
  return bits;
}

// The output of `op` over the program's leaves, then every leaf's gradient of sum(output * w), as bits.
std::vector<std::vector<uint64_t>> run_on_threads(int64_t id, const Json& program, const std::string& op, DType dtype,
                                                  int threads) {
  tg::set_num_threads(threads);
  Inputs leaves;
  const Json& specs = program.at("leaves");
  for (size_t slot = 0; slot < specs.size(); ++slot)
    leaves.push_back(make_leaf(id, static_cast<int64_t>(slot), specs[slot], dtype));
  const Tensor output = find_op(op)(leaves, program).at(0);
  CHECK_MESSAGE(output.numel() >= tg::kParallelThreshold, op << " gives " << output.numel()
                                                             << " elements: too few to run on two threads");
  tg::backward(output, float_values(static_cast<uint64_t>(16 * id + kWeightSlot), Json{{"shape", output.shape()}}, dtype));
  std::vector<std::vector<uint64_t>> bits{bits_of(output)};
  for (const Tensor& leaf : leaves) bits.push_back(bits_of(leaf.grad()));
  return bits;
}

}  // namespace

TEST_CASE("differential: random programs match PyTorch's outputs and gradients") {
  REQUIRE(load_programs(kPrograms).at("programs").size() >= 3600);  // the script writes 3600; fewer means a broken checkout
  std::set<std::string> ops_seen;
  replay_file(kPrograms, kExpected, ops_seen);
}

TEST_CASE("differential: the edge programs (frozen inputs, 0-d, extremes, in-place writes, int scalars)") {
  std::set<std::string> ops_seen;
  const ReplayCounts counts = replay_file(kEdgePrograms, kEdgeExpected, ops_seen);
  // Both outcomes of an in-place write occur, and the int-scalar programs were all refused.
  CHECK(counts.backward_refused >= 20);
  CHECK(counts.exact_after_write >= 20);
  CHECK(counts.refused >= 20);
  MESSAGE(counts.backward_refused << " backwards refused after a write, " << counts.exact_after_write
                                  << " exact after one, " << counts.refused << " programs refused");
}

TEST_CASE("differential: every op of the tables is exercised by some program") {
  std::set<std::string> ops_seen;
  for (const char* path : {kPrograms, kEdgePrograms}) {
    const Json programs = load_programs(path);
    for (const Json& program : programs.at("programs"))
      for (const Json& op : program.at("ops")) ops_seen.insert(op.at("op").get<std::string>());
  }
  for (const OpTable* table : {&engine_ops(), &nn_ops()})
    for (const auto& [op, fn] : *table)
      CHECK_MESSAGE(ops_seen.count(op) == 1, "op '" << op << "' is in the table but no program exercises it");
}

TEST_CASE("differential: issue 35's ops give the same bits on 1 and 2 threads, past the parallel threshold") {
  const int threads_before = tg::thread_ceiling();
  const Json programs = Json::parse(kThreadPrograms);
  for (size_t id = 0; id < programs.size(); ++id) {
    const Json& program = programs[id];
    const std::string fused = program.at("op").get<std::string>();
    for (const std::string& op : {fused, fused + "_reference"})
      for (const DType dtype : {DType::Float32, DType::Float64})
        CHECK_MESSAGE(run_on_threads(static_cast<int64_t>(id), program, op, dtype, 1) ==
                          run_on_threads(static_cast<int64_t>(id), program, op, dtype, 2),
                      op << " (" << tg::dtype_name(dtype) << ", " << program.dump()
                         << "): the output or a gradient differs between 1 and 2 threads");
  }
  tg::set_num_threads(threads_before);
}
