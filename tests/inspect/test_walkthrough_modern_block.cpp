// The walk-through of the Llama-style block (issue 35): the stages each switch
// adds (RMSNorm, QK-norm, grouped-query heads, SwiGLU's gate and up, ReLU^2), the
// rotation angles under a base, a scaling and a pairing, and the numbers: the
// traced logits are GPT::forward's, the loss and the gradients per layer are
// GPT::loss's and its backward's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/inspect/format.h"
#include "tinygpt/inspect/html_report.h"
#include "tinygpt/inspect/text_report.h"
#include "tinygpt/inspect/walkthrough.h"
#include "tests/inspect/walkthrough_fixture.h"

using namespace tg;
using namespace tg::inspect;
using tg::testing::tiny_llama_walkthrough_config;
using tg::testing::tiny_nanochat_walkthrough_config;
using tg::testing::tiny_tokenizer;

namespace {

using Shape = std::vector<int64_t>;

const Stage* find_stage(const Walkthrough& walkthrough, const std::string& id) {
  for (const Stage& stage : walkthrough.stages)
    if (stage.id == id) return &stage;
  return nullptr;
}

const Stage& stage_named(const Walkthrough& walkthrough, const std::string& id) {
  const Stage* stage = find_stage(walkthrough, id);
  REQUIRE_MESSAGE(stage, "no stage " << id);
  return *stage;
}

std::vector<std::string> block_ids(const Walkthrough& walkthrough, int64_t block) {
  const std::string prefix = "block" + std::to_string(block) + ".";
  std::vector<std::string> kinds;
  for (const Stage& stage : walkthrough.stages)
    if (stage.id.starts_with(prefix)) kinds.push_back(stage.id.substr(prefix.size()));
  return kinds;
}

Walkthrough explain(GPT& model, const std::string& prompt, WalkthroughOptions options = {}) {
  return walk_through(model, tiny_tokenizer(), prompt, options);
}

// The largest |a - b| over two tensors of the same size.
double max_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  REQUIRE(x.size() == y.size());
  double largest = 0;
  for (size_t i = 0; i < x.size(); ++i) largest = std::max(largest, std::abs(x[i] - y[i]));
  return largest;
}

// The RMS of each row of a (T, D) tensor.
std::vector<double> row_rms(const Tensor& x) {
  const std::vector<double> values = x.to_vector<double>();
  const size_t width = static_cast<size_t>(x.size(-1));
  std::vector<double> rms;
  for (size_t start = 0; start < values.size(); start += width) {
    double square = 0;
    for (size_t c = 0; c < width; ++c) square += values[start + c] * values[start + c];
    rms.push_back(std::sqrt(square / static_cast<double>(width)));
  }
  return rms;
}

}  // namespace

TEST_CASE("walk_through, Llama-style block: the stages of RMSNorm, GQA, QK-norm and SwiGLU, in data-flow order") {
  GPTConfig config = tiny_llama_walkthrough_config();
  config.init = InitScheme::XavierNormal;  // rows of RMS >> eps, so a normalised row's RMS is 1 to 1e-3
  GPT model(config, 41);
  const Walkthrough walkthrough = explain(model, "bad cafe");  // T = 8, C = 8, NH = 4, KVH = 2, HS = 4, H = 12
  const std::vector<std::string> expected = {"ln_1",   "q",      "k",          "v",    "q_norm", "k_norm",
                                             "scores", "mask",   "weights",    "attend", "concat", "c_proj",
                                             "residual_1", "ln_2", "c_fc",     "gate", "up",     "swiglu",
                                             "c_proj_mlp", "residual_2"};
  CHECK(block_ids(walkthrough, 0) == expected);
  CHECK(block_ids(walkthrough, 1) == expected);
  CHECK(find_stage(walkthrough, "embed.rope"));
  CHECK(!find_stage(walkthrough, "embed.positions"));
  CHECK(walkthrough.forward_match < 1e-5);

  // Widths from the config: q has NH heads, k and v KVH; NH HS = 16 channels concatenated.
  CHECK(stage_named(walkthrough, "block0.q").output_shape == Shape{1, 4, 8, 4});
  CHECK(stage_named(walkthrough, "block0.q").input_shapes == std::vector<Shape>{{1, 8, 8}, {16, 8}, {16}});
  for (const char* kind : {"k", "v", "k_norm"}) {
    const Stage& stage = stage_named(walkthrough, std::string("block1.") + kind);
    CAPTURE(kind);
    CHECK(stage.output_shape == Shape{1, 2, 8, 4});
    REQUIRE(stage.tensors.size() == 2);
    CHECK(stage.tensors[0].label == "KV head 0 (query heads 0..1)");
    CHECK(stage.tensors[1].label == "KV head 1 (query heads 2..3)");
    CHECK(stage.tensors[1].value.shape() == Shape{8, 4});
  }
  CHECK(stage_named(walkthrough, "block0.q_norm").output_shape == Shape{1, 4, 8, 4});
  CHECK(stage_named(walkthrough, "block0.q_norm").input_shapes == std::vector<Shape>{{1, 4, 8, 4}, {4}});
  CHECK(stage_named(walkthrough, "block0.scores").output_shape == Shape{1, 4, 8, 8});
  CHECK(stage_named(walkthrough, "block0.scores").input_shapes == std::vector<Shape>{{1, 4, 8, 4}, {1, 2, 8, 4}});
  CHECK(stage_named(walkthrough, "block0.concat").output_shape == Shape{1, 8, 16});
  // No bias on c_proj and the MLP (bias mode qkv).
  CHECK(stage_named(walkthrough, "block0.c_proj").input_shapes == std::vector<Shape>{{1, 8, 16}, {8, 16}});
  CHECK(stage_named(walkthrough, "block0.c_fc").input_shapes == std::vector<Shape>{{1, 8, 8}, {24, 8}});
  CHECK(stage_named(walkthrough, "block0.c_fc").output_shape == Shape{1, 8, 24});
  for (const char* kind : {"gate", "up", "swiglu"})
    CHECK(stage_named(walkthrough, std::string("block0.") + kind).output_shape == Shape{1, 8, 12});
  CHECK(stage_named(walkthrough, "block0.c_proj_mlp").input_shapes == std::vector<Shape>{{1, 8, 12}, {8, 12}});

  // The gate and up are c_fc's halves; swiglu is silu(gate) * up.
  const std::vector<float> expanded = stage_named(walkthrough, "block0.c_fc").tensors[0].value.to_vector<float>();
  const std::vector<float> gate = stage_named(walkthrough, "block0.gate").tensors[0].value.to_vector<float>();
  const std::vector<float> up = stage_named(walkthrough, "block0.up").tensors[0].value.to_vector<float>();
  const Stage& swiglu = stage_named(walkthrough, "block0.swiglu");
  REQUIRE(swiglu.tensors.size() == 2);
  CHECK(swiglu.tensors[1].label == "silu(gate)");
  const std::vector<float> gated = swiglu.tensors[0].value.to_vector<float>();
  for (size_t t = 0; t < 8; ++t)
    for (size_t h = 0; h < 12; ++h) {
      CHECK(gate[t * 12 + h] == expanded[t * 24 + h]);
      CHECK(up[t * 12 + h] == expanded[t * 24 + 12 + h]);
      const double g = gate[t * 12 + h];
      CHECK(gated[t * 12 + h] == doctest::Approx(g / (1 + std::exp(-g)) * up[t * 12 + h]).epsilon(1e-5));
    }

  // RMSNorm: the normalised rows (before the weight) have RMS 1, and each row's RMS is noted.
  for (const std::string id : {"block0.ln_1", "block1.ln_2", "ln_f"}) {
    CAPTURE(id);
    const Stage& stage = stage_named(walkthrough, id);
    CHECK(stage.title.find("RMSNorm") != std::string::npos);
    REQUIRE(stage.tensors.size() == 3);
    CHECK(stage.tensors[1].label == "normalised (before weight)");
    CHECK(stage.tensors[2].label == "input");
    for (double rms : row_rms(stage.tensors[1].value)) CHECK(rms == doctest::Approx(1.0).epsilon(1e-3));
    REQUIRE(!stage.notes.empty());
    const std::vector<double> input_rms = row_rms(stage.tensors[2].value);
    CHECK(stage.notes[0].starts_with("input RMS per position: " + number(input_rms[0], 3) + ", "));
  }
  // QK-norm: each head's vector normalised (the weight starts at 1), then rotated: still RMS 1.
  for (const ShownTensor& head : stage_named(walkthrough, "block0.q_norm").tensors)
    for (double rms : row_rms(head.value)) CHECK(rms == doctest::Approx(1.0).epsilon(1e-3));

  // The notes say how the KV heads are shared and how the pairs turn.
  const Stage& keys = stage_named(walkthrough, "block0.k");
  CHECK(std::find(keys.notes.begin(), keys.notes.end(),
                  "2 KV heads for 4 query heads: KV head 0 serves query heads 0..1; KV head 1 serves query heads 2..3") !=
        keys.notes.end());
  const Stage& rope = stage_named(walkthrough, "embed.rope");
  CHECK(rope.output_shape == Shape{8, 2});
  CHECK(rope.formula.find("i, i + HS/2") != std::string::npos);
  bool scaling_noted = false;
  for (const std::string& note : rope.notes) scaling_noted |= note.starts_with("rescaled (llama3:4,1,4,8)");
  CHECK(scaling_noted);
  // The angles are t * the rescaled inverse frequencies.
  const std::vector<double> frequencies = config.transformer_options().rotary.inverse_frequencies(4);
  CHECK(frequencies[1] != doctest::Approx(std::pow(500.0, -0.5)));  // the slow pair was rescaled
  const std::vector<float> angles = rope.tensors[0].value.to_vector<float>();
  for (int64_t t = 0; t < 8; ++t)
    for (int64_t i = 0; i < 2; ++i) CHECK(angles[t * 2 + i] == doctest::Approx(t * frequencies[i]));

  tg::testing::check_stages_well_formed(walkthrough);
}

TEST_CASE("walk_through, Llama-style and nanochat-like blocks: the traced logits are GPT::forward's") {
  for (GPTConfig config : {tiny_llama_walkthrough_config(), tiny_nanochat_walkthrough_config()}) {
    CAPTURE(config.n_kv_head);
    config.init = InitScheme::XavierNormal;  // large weights: a wrong stage would show
    GPT model(config, 43);
    const Walkthrough walkthrough = explain(model, "a cab h");
    NoGradGuard no_grad;
    const Tensor logits = model.forward(from_vector(tiny_tokenizer().encode("a cab h"), {1, 7}));  // (1, T, V)
    CHECK(max_difference(stage_named(walkthrough, "logits").tensors[0].value, logits) < 1e-5);
    CHECK(walkthrough.forward_match < 1e-5);
    CHECK(walkthrough.causality.max_change_earlier == 0.0);
    CHECK(walkthrough.causality.max_change_last > 0.0);
  }
}

TEST_CASE("walk_through, nanochat-like block: RMSNorm without weights, multi-query heads, ReLU^2") {
  GPTConfig config = tiny_nanochat_walkthrough_config();
  config.init = InitScheme::XavierNormal;
  GPT model(config, 47);
  WalkthroughOptions options;
  options.head = 1;
  const Walkthrough walkthrough = explain(model, "bead", options);
  const std::vector<std::string> expected = {"ln_1",    "q",      "k",      "v",          "q_norm", "k_norm", "scores",
                                             "mask",    "weights", "attend", "concat",     "c_proj", "residual_1",
                                             "ln_2",    "c_fc",   "relu2",  "c_proj_mlp", "residual_2"};
  CHECK(block_ids(walkthrough, 1) == expected);
  // No norm weight: no "normalised (before weight)" view, the output is the normalised rows.
  const Stage& ln_1 = stage_named(walkthrough, "block0.ln_1");
  CHECK(ln_1.input_shapes == std::vector<Shape>{{1, 4, 8}});
  REQUIRE(ln_1.tensors.size() == 2);
  CHECK(ln_1.tensors[1].label == "input");
  for (double rms : row_rms(ln_1.tensors[0].value)) CHECK(rms == doctest::Approx(1.0).epsilon(1e-3));
  CHECK(ln_1.formula.find("no weight") != std::string::npos);
  CHECK(stage_named(walkthrough, "block0.q_norm").input_shapes == std::vector<Shape>{{1, 2, 4, 4}});
  // --head 1: query head 1, and the one KV head it reads.
  CHECK(stage_named(walkthrough, "block0.q").tensors.at(0).label == "head 1");
  const Stage& values = stage_named(walkthrough, "block0.v");
  REQUIRE(values.tensors.size() == 1);
  CHECK(values.tensors[0].label == "KV head 0 (query heads 0..1)");
  // ReLU^2: max(h, 0)^2 of c_fc's output, which it shows as "input".
  const Stage& relu2 = stage_named(walkthrough, "block0.relu2");
  REQUIRE(relu2.tensors.size() == 2);
  const std::vector<float> inputs = relu2.tensors[1].value.to_vector<float>();
  const std::vector<float> outputs = relu2.tensors[0].value.to_vector<float>();
  CHECK(inputs == stage_named(walkthrough, "block0.c_fc").tensors[0].value.to_vector<float>());
  for (size_t i = 0; i < inputs.size(); ++i)
    CHECK(outputs[i] == doctest::Approx(inputs[i] > 0 ? inputs[i] * inputs[i] : 0.0));
  CHECK(stage_named(walkthrough, "block0.c_fc").output_shape == Shape{1, 4, 32});  // H = 4C
}

TEST_CASE("walk_through, Llama-style and nanochat-like blocks: the loss and the gradients per layer are the model's") {
  for (GPTConfig config : {tiny_llama_walkthrough_config(), tiny_nanochat_walkthrough_config()}) {
    CAPTURE(config.n_kv_head);
    config.init = InitScheme::XavierNormal;
    GPT model(config, 53);
    WalkthroughOptions options;
    options.target = "fed";
    const Walkthrough walkthrough = explain(model, "a bad", options);
    REQUIRE(walkthrough.loss.has_value());

    const Tensor loss = tg::testing::target_loss(model, "a badfed", 5);
    const LossReport& report = *walkthrough.loss;
    CHECK(report.loss == doctest::Approx(loss.item<double>()).epsilon(1e-5));
    backward(loss);
    auto norm_of = [&](const std::vector<std::string>& prefixes) { return tg::testing::gradient_norm_of(model, prefixes); };
    REQUIRE(report.gradients.size() == 4);
    CHECK(report.gradients[0].layer == "ln_f + lm_head");
    CHECK(report.gradients[0].parameter_norm == doctest::Approx(norm_of({"ln_f.", "lm_head."})).epsilon(1e-4));
    CHECK(report.gradients[1].parameter_norm == doctest::Approx(norm_of({"blocks.1."})).epsilon(1e-4));
    CHECK(report.gradients[2].parameter_norm == doctest::Approx(norm_of({"blocks.0."})).epsilon(1e-4));
    CHECK(report.gradients[3].parameter_norm == doctest::Approx(norm_of({"wte."})).epsilon(1e-4));
    for (const GradientNorm& gradient : report.gradients) CHECK(gradient.parameter_norm > 0);
    model.zero_grad();
  }
}

TEST_CASE("render_text and render_html show the Llama-style block's stages and switches") {
  GPT model(tiny_llama_walkthrough_config(), 59);
  const Walkthrough walkthrough = explain(model, "cafe");
  const std::string text = render_text(walkthrough);
  for (const char* part : {"[block0.q_norm]", "[block1.k_norm]", "[block0.gate]", "[block0.up]", "[block0.swiglu]",
                           "KV head 1 (query heads 2..3)", "RMSNorm, swiglu MLP (H = 12), 2 KV heads for 4 query heads",
                           "KVH key/value heads"}) {
    CAPTURE(part);
    CHECK(text.find(part) != std::string::npos);
  }
  const std::string page = render_html(walkthrough);
  for (const char* part : {"id=\"block0.q_norm\"", "id=\"block1.swiglu\"", "data-stage=\"block0.gate\"",
                           "before: the input of block0.ln_1", "2 KV heads for 4 query heads"}) {
    CAPTURE(part);
    CHECK(page.find(part) != std::string::npos);
  }
  GPT nanochat(tiny_nanochat_walkthrough_config(), 61);
  const std::string relu2_page = render_html(explain(nanochat, "cafe"));
  CHECK(relu2_page.find("the ReLU^2 curve and this prompt&#39;s inputs") != std::string::npos);
  CHECK(relu2_page.find("RMSNorm without weights, relu2 MLP (H = 32), 1 KV heads") == std::string::npos);
  CHECK(relu2_page.find("RMSNorm without weights, relu2 MLP (H = 32), 1 KV head for 2 query heads") != std::string::npos);
}
