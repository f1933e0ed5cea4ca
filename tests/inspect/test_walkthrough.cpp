// The walk-through: every stage in data-flow order with the right shapes, facts
// a person can check by hand at each one, agreement with GPT::forward, GPT::loss
// and its backward, the filters and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/inspect/walkthrough.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/view.h"
#include "tests/inspect/walkthrough_fixture.h"
#include "tinygpt/tokenizer/errors.h"

using namespace tg;
using namespace tg::inspect;
using tg::testing::tiny_tokenizer;
using tg::testing::tiny_walkthrough_config;

namespace {

const std::vector<std::string> kBlockStages = {"ln_1",   "q",      "k",      "v",          "scores",
                                               "mask",   "weights", "attend", "concat",     "c_proj",
                                               "residual_1", "ln_2", "c_fc",  "gelu",       "c_proj_mlp",
                                               "residual_2"};

std::vector<std::string> expected_ids(const GPTConfig& config, const std::vector<int64_t>& blocks) {
  std::vector<std::string> ids = {"tokens", "embed.tokens"};
  if (config.positional == PositionalEncoding::Rope) {
    ids.push_back("embed.rope");
  } else {
    ids.push_back("embed.positions");
    ids.push_back("embed.sum");
  }
  for (int64_t block : blocks)
    for (const std::string& kind : kBlockStages) ids.push_back("block" + std::to_string(block) + "." + kind);
  for (const char* id : {"ln_f", "logits", "probabilities"}) ids.push_back(id);
  return ids;
}

std::vector<std::string> ids_of(const Walkthrough& walkthrough) {
  std::vector<std::string> ids;
  for (const Stage& stage : walkthrough.stages) ids.push_back(stage.id);
  return ids;
}

const Stage& stage_named(const Walkthrough& walkthrough, const std::string& id) {
  for (const Stage& stage : walkthrough.stages)
    if (stage.id == id) return stage;
  FAIL("no stage " << id);
  throw;
}

using Shape = std::vector<int64_t>;

Walkthrough explain(GPT& model, const std::string& prompt, WalkthroughOptions options = {}) {
  return walk_through(model, tiny_tokenizer(), prompt, options);
}

}  // namespace

TEST_CASE("walk_through: every stage in data-flow order, with its shapes, for each positional encoding") {
  for (PositionalEncoding positional :
       {PositionalEncoding::Learned, PositionalEncoding::Sinusoidal, PositionalEncoding::Rope}) {
    CAPTURE(positional_encoding_name(positional));
    const GPTConfig config = tiny_walkthrough_config(positional);
    GPT model(config, 7);
    const Walkthrough walkthrough = explain(model, "bad cafe");  // 8 tokens: T = 8, C = 8, NH = 2, HS = 4
    CHECK(ids_of(walkthrough) == expected_ids(config, {0, 1}));
    CHECK(walkthrough.tokens.size() == 8);
    CHECK(walkthrough.prompt_tokens == 8);

    const int64_t vocab = config.vocab_size;
    CHECK(stage_named(walkthrough, "tokens").output_shape == Shape{1, 8});
    CHECK(stage_named(walkthrough, "embed.tokens").output_shape == Shape{1, 8, 8});
    CHECK(stage_named(walkthrough, "embed.tokens").input_shapes == std::vector<Shape>{{1, 8}, {vocab, 8}});
    if (positional == PositionalEncoding::Rope) {
      CHECK(stage_named(walkthrough, "embed.rope").output_shape == Shape{8, 2});
      CHECK(stage_named(walkthrough, "embed.rope").input_shapes == std::vector<Shape>{{8}});
      // Pair i of position t turns by t * 10000^(-2i/HS): HS = 4, so pair 1 by t / 100.
      const std::vector<float> angles = stage_named(walkthrough, "embed.rope").tensors[0].value.to_vector<float>();
      CHECK(angles[3 * 2 + 0] == doctest::Approx(3.0));
      CHECK(angles[3 * 2 + 1] == doctest::Approx(0.03));
    } else {
      CHECK(stage_named(walkthrough, "embed.positions").output_shape == Shape{8, 8});
      CHECK(stage_named(walkthrough, "embed.sum").output_shape == Shape{1, 8, 8});
    }
    for (const char* kind : {"q", "k", "v", "attend"}) {
      const Stage& stage = stage_named(walkthrough, std::string("block1.") + kind);
      CHECK(stage.output_shape == Shape{1, 2, 8, 4});
      REQUIRE(stage.tensors.size() == 2);
      CHECK(stage.tensors[1].label == "head 1");
      CHECK(stage.tensors[1].value.shape() == Shape{8, 4});
    }
    for (const char* kind : {"scores", "mask", "weights"}) {
      const Stage& stage = stage_named(walkthrough, std::string("block0.") + kind);
      CHECK(stage.view == StageView::Attention);
      CHECK(stage.output_shape == Shape{1, 2, 8, 8});
      REQUIRE(stage.tensors.size() == 2);
      CHECK(stage.tensors[0].value.shape() == Shape{8, 8});
    }
    CHECK(stage_named(walkthrough, "block0.concat").output_shape == Shape{1, 8, 8});
    CHECK(stage_named(walkthrough, "block0.c_fc").output_shape == Shape{1, 8, 32});
    CHECK(stage_named(walkthrough, "block0.gelu").output_shape == Shape{1, 8, 32});
    CHECK(stage_named(walkthrough, "block0.c_proj_mlp").output_shape == Shape{1, 8, 8});
    CHECK(stage_named(walkthrough, "logits").output_shape == Shape{1, 8, vocab});
    CHECK(stage_named(walkthrough, "probabilities").output_shape == Shape{1, 8, vocab});
    tg::testing::check_stages_well_formed(walkthrough);
    CHECK(walkthrough.forward_match < 1e-5);
  }
}

TEST_CASE("walk_through: the tokens, the embedding rows and the positions are the model's") {
  GPT model(tiny_walkthrough_config(), 3);
  const Walkthrough walkthrough = explain(model, "ha!");
  REQUIRE(walkthrough.tokens.size() == 3);
  const std::vector<int64_t> ids = tiny_tokenizer().encode("ha!");
  for (size_t t = 0; t < 3; ++t) {
    CHECK(walkthrough.tokens[t].position == static_cast<int64_t>(t));
    CHECK(walkthrough.tokens[t].id == ids[t]);
  }
  CHECK(walkthrough.tokens[1].text == "a");
  CHECK(stage_named(walkthrough, "tokens").tensors[0].value.to_vector<float>() ==
        std::vector<float>(ids.begin(), ids.end()));
  // Row t of the token embeddings is row ids[t] of wte.
  const std::vector<float> rows = stage_named(walkthrough, "embed.tokens").tensors[0].value.to_vector<float>();
  const std::vector<float> table = model.wte().weight().to_vector<float>();
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t c = 0; c < 8; ++c) CHECK(rows[t * 8 + c] == table[ids[t] * 8 + c]);
}

TEST_CASE("walk_through: LayerNorm rows have mean 0 and variance 1 before the affine") {
  GPTConfig config = tiny_walkthrough_config();
  config.init = InitScheme::XavierNormal;  // rows of variance >> eps (GPT-2's 0.02 gives ~4e-4: var / (var + eps) ~ 0.98)
  GPT model(config, 5);
  const Walkthrough walkthrough = explain(model, "feed cab");
  for (const std::string id : {"block0.ln_1", "block1.ln_2", "ln_f"}) {
    CAPTURE(id);
    const Stage& stage = stage_named(walkthrough, id);
    REQUIRE(stage.tensors.size() == 3);
    CHECK(stage.tensors[2].label == "input");
    CHECK(stage.notes.size() == 2);
    const std::vector<float> normalised = stage.tensors[1].value.to_vector<float>();
    for (size_t row = 0; row < normalised.size() / 8; ++row) {
      double mean = 0, square = 0;
      for (size_t c = 0; c < 8; ++c) mean += normalised[row * 8 + c] / 8.0;
      for (size_t c = 0; c < 8; ++c) square += (normalised[row * 8 + c] - mean) * (normalised[row * 8 + c] - mean) / 8.0;
      CHECK(std::abs(mean) < 1e-5);
      CHECK(square == doctest::Approx(1.0).epsilon(1e-3));
    }
  }
}

TEST_CASE("walk_through: attention weights are causal and each row sums to 1") {
  GPT model(tiny_walkthrough_config(), 11);
  const Walkthrough walkthrough = explain(model, "a bag.");
  const int64_t time = 6;
  for (const ShownTensor& head : stage_named(walkthrough, "block1.weights").tensors) {
    const std::vector<float> weights = head.value.to_vector<float>();
    for (int64_t i = 0; i < time; ++i) {
      double row_sum = 0;
      for (int64_t j = 0; j < time; ++j) {
        if (j > i) CHECK(weights[i * time + j] == 0.0f);
        row_sum += weights[i * time + j];
      }
      CHECK(row_sum == doctest::Approx(1.0).epsilon(1e-6));
    }
    CHECK(weights[0] == doctest::Approx(1.0));  // the first position can only attend to itself
  }
  const std::vector<float> masked = stage_named(walkthrough, "block1.mask").tensors[0].value.to_vector<float>();
  const std::vector<float> scores = stage_named(walkthrough, "block1.scores").tensors[0].value.to_vector<float>();
  for (int64_t i = 0; i < time; ++i)
    for (int64_t j = 0; j < time; ++j) {
      if (j > i) CHECK(masked[i * time + j] == -INFINITY);
      else CHECK(masked[i * time + j] == scores[i * time + j]);
    }
  // Statistics skip the -inf markers.
  CHECK(std::isfinite(stage_named(walkthrough, "block1.mask").statistics.min));
}

TEST_CASE("walk_through: probabilities are the softmax of the logits, and the top-k their largest") {
  GPT model(tiny_walkthrough_config(PositionalEncoding::Rope), 13);
  WalkthroughOptions options;
  options.top_k = 3;
  const Walkthrough walkthrough = explain(model, "chef", options);
  const int64_t vocab = walkthrough.config.vocab_size;
  const std::vector<float> logits = stage_named(walkthrough, "logits").tensors[0].value.to_vector<float>();
  const std::vector<float> probabilities = stage_named(walkthrough, "probabilities").tensors[0].value.to_vector<float>();
  REQUIRE(walkthrough.predictions.size() == 4);
  for (int64_t t = 0; t < 4; ++t) {
    double normaliser = 0;
    for (int64_t v = 0; v < vocab; ++v) normaliser += std::exp(static_cast<double>(logits[t * vocab + v]));
    for (int64_t v = 0; v < vocab; ++v)
      CHECK(probabilities[t * vocab + v] == doctest::Approx(std::exp(logits[t * vocab + v]) / normaliser).epsilon(1e-5));
    const PositionPredictions& position = walkthrough.predictions[t];
    CHECK(position.position == t);
    CHECK(position.token == walkthrough.tokens[t].text);
    REQUIRE(position.top.size() == 3);
    const auto row = probabilities.begin() + t * vocab;
    CHECK(position.top[0].id == std::max_element(row, row + vocab) - row);
    CHECK(position.top[0].probability >= position.top[1].probability);
    CHECK(position.top[1].probability >= position.top[2].probability);
    CHECK(position.top[0].probability == doctest::Approx(probabilities[t * vocab + position.top[0].id]));
    CHECK(position.top[0].text == tiny_tokenizer().display(position.top[0].id));
  }
}

TEST_CASE("walk_through: forward_match and causality against GPT::forward") {
  for (PositionalEncoding positional : {PositionalEncoding::Learned, PositionalEncoding::Rope}) {
    GPTConfig config = tiny_walkthrough_config(positional);
    config.init = InitScheme::XavierNormal;  // larger weights than GPT-2's 0.02: any leak would show
    GPT model(config, 17);
    const Walkthrough walkthrough = explain(model, "a cab h");
    CHECK(walkthrough.forward_match < 1e-5);
    const CausalityCheck& causality = walkthrough.causality;
    CHECK(causality.changed_position == 6);
    CHECK(causality.original == "h");
    CHECK(causality.replacement != causality.original);
    CHECK(causality.max_change_earlier == 0.0);
    CHECK(causality.max_change_last > 0.0);
  }
}

TEST_CASE("walk_through: the loss, the target probabilities and the gradients match GPT::loss and its backward") {
  GPTConfig config = tiny_walkthrough_config();
  config.init = InitScheme::XavierNormal;
  GPT model(config, 19);
  WalkthroughOptions options;
  options.target = "fed";
  const Walkthrough walkthrough = explain(model, "a bad", options);
  REQUIRE(walkthrough.loss.has_value());
  CHECK(walkthrough.prompt_tokens == 5);
  CHECK(walkthrough.tokens.size() == 8);

  // The same ids, with the targets being the next token from the prompt's last one on.
  const std::vector<int64_t> ids = tiny_tokenizer().encode("a badfed");
  const Tensor loss = tg::testing::target_loss(model, "a badfed", 5);
  const LossReport& report = *walkthrough.loss;
  CHECK(report.loss == doctest::Approx(loss.item<double>()).epsilon(1e-6));
  CHECK(report.perplexity == doctest::Approx(std::exp(report.loss)));
  REQUIRE(report.targets.size() == 3);
  double mean_surprise = 0;
  for (size_t i = 0; i < 3; ++i) {
    CHECK(report.targets[i].position == static_cast<int64_t>(5 + i));
    CHECK(report.targets[i].id == ids[5 + i]);
    CHECK(report.targets[i].text == std::string(1, "fed"[i]));
    mean_surprise -= std::log(report.targets[i].probability) / 3;
  }
  CHECK(mean_surprise == doctest::Approx(report.loss).epsilon(1e-5));

  // The walk-through never touched the model's gradients: they come from this backward alone.
  for (const Tensor& parameter : model.parameters()) CHECK(!parameter.grad().defined());
  backward(loss);
  auto norm_of = [&](const std::vector<std::string>& prefixes) { return tg::testing::gradient_norm_of(model, prefixes); };
  REQUIRE(report.gradients.size() == 4);
  CHECK(report.gradients[0].layer == "ln_f");
  CHECK(report.gradients[0].parameter_norm == doctest::Approx(norm_of({"ln_f."})).epsilon(1e-4));
  CHECK(report.gradients[1].layer == "block 1");
  CHECK(report.gradients[1].parameter_norm == doctest::Approx(norm_of({"blocks.1."})).epsilon(1e-4));
  CHECK(report.gradients[2].layer == "block 0");
  CHECK(report.gradients[2].parameter_norm == doctest::Approx(norm_of({"blocks.0."})).epsilon(1e-4));
  CHECK(report.gradients[3].layer == "embeddings");
  CHECK(report.gradients[3].parameter_norm == doctest::Approx(norm_of({"wte.", "wpe."})).epsilon(1e-4));
  for (const GradientNorm& gradient : report.gradients) {
    CHECK(gradient.activation_norm > 0);
    CHECK(std::isfinite(gradient.activation_norm));
  }
  // No scaling of the embeddings: the stream entering block 0 is the token rows plus positions.
  CHECK(report.gradients[3].activation_norm == doctest::Approx(report.gradients[2].activation_norm).epsilon(1e-6));
  model.zero_grad();
}

TEST_CASE("walk_through: every stage's gradient, consistent with the logits, the attention and the stream's norms") {
  GPTConfig config = tiny_walkthrough_config();
  config.init = InitScheme::XavierNormal;
  GPT model(config, 23);
  const Walkthrough walkthrough = explain(model, "a bad", {.target = "fed"});
  const int64_t time = 8, vocab = config.vocab_size, head_size = config.n_embd / config.n_head;
  auto values_of = [](const ShownTensor& shown) { return shown.value.to_vector<double>(); };

  // dLoss/dlogits = (softmax - one-hot) / targets at the 3 positions predicting the target, 0 before.
  const std::vector<int64_t> ids = tiny_tokenizer().encode("a badfed");
  const std::vector<double> probabilities = values_of(stage_named(walkthrough, "probabilities").tensors[0]);
  REQUIRE(stage_named(walkthrough, "logits").gradients.size() == 1);
  const std::vector<double> logits_gradient = values_of(stage_named(walkthrough, "logits").gradients[0]);
  for (int64_t t = 0; t < time; ++t)
    for (int64_t v = 0; v < vocab; ++v) {
      const bool predicts = t >= 4 && t < 7;
      const double expected = predicts ? (probabilities[t * vocab + v] - (ids[t + 1] == v ? 1.0 : 0.0)) / 3 : 0.0;
      CHECK(logits_gradient[t * vocab + v] == doctest::Approx(expected).epsilon(1e-5).scale(1e-6));
    }

  // Attention's weighted sum y = w v, per head: dLoss/dw = dy v^T and dLoss/dv = w^T dy.
  for (int64_t layer = 0; layer < config.n_layer; ++layer) {
    const std::string block = "block" + std::to_string(layer) + ".";
    const Stage& weights = stage_named(walkthrough, block + "weights");
    const Stage& v = stage_named(walkthrough, block + "v");
    const Stage& attend = stage_named(walkthrough, block + "attend");
    REQUIRE(weights.gradients.size() == 2);
    REQUIRE(v.gradients.size() == 2);
    REQUIRE(attend.gradients.size() == 2);
    for (int64_t head = 0; head < config.n_head; ++head) {
      CAPTURE(layer);
      CAPTURE(head);
      CHECK(weights.gradients[head].label == "head " + std::to_string(head));
      const std::vector<double> w = values_of(weights.tensors[head]), values = values_of(v.tensors[head]);
      const std::vector<double> dy = values_of(attend.gradients[head]), dw = values_of(weights.gradients[head]),
                                dv = values_of(v.gradients[head]);
      for (int64_t i = 0; i < time; ++i)
        for (int64_t j = 0; j < time; ++j) {
          double expected = 0;
          for (int64_t d = 0; d < head_size; ++d) expected += dy[i * head_size + d] * values[j * head_size + d];
          CHECK(dw[i * time + j] == doctest::Approx(expected).epsilon(1e-4).scale(1e-6));
        }
      for (int64_t j = 0; j < time; ++j)
        for (int64_t d = 0; d < head_size; ++d) {
          double expected = 0;
          for (int64_t i = 0; i < time; ++i) expected += w[i * time + j] * dy[i * head_size + d];
          CHECK(dv[j * head_size + d] == doctest::Approx(expected).epsilon(1e-4).scale(1e-6));
        }
    }
  }

  // The stream leaving block i is the one entering block i + 1 (or ln_f): its gradient's norm is the report's.
  auto norm_of = [&](const Stage& stage) {
    double squares = 0;
    for (double value : values_of(stage.gradients.at(0))) squares += value * value;
    return std::sqrt(squares);
  };
  const LossReport& report = *walkthrough.loss;
  CHECK(norm_of(stage_named(walkthrough, "block1.residual_2")) ==
        doctest::Approx(report.gradients[0].activation_norm).epsilon(1e-6));
  CHECK(norm_of(stage_named(walkthrough, "block0.residual_2")) ==
        doctest::Approx(report.gradients[1].activation_norm).epsilon(1e-6));
  CHECK(norm_of(stage_named(walkthrough, "embed.sum")) ==
        doctest::Approx(report.gradients[2].activation_norm).epsilon(1e-6));
  // By position: the stream entering block 0, block 1, then ln_f; the positions' norms make up the layer's.
  REQUIRE(report.stream_gradient_norms.size() == 3);
  for (size_t cut = 0; cut < 3; ++cut) {
    CAPTURE(cut);
    REQUIRE(report.stream_gradient_norms[cut].size() == static_cast<size_t>(time));
    double squares = 0;
    for (double norm : report.stream_gradient_norms[cut]) squares += norm * norm;
    CHECK(std::sqrt(squares) == doctest::Approx(report.gradients[2 - cut].activation_norm).epsilon(1e-6));
  }
  CHECK(report.stream_gradient_norms[2][0] == 0);  // entering ln_f, position 0 feeds no target's prediction

  // Nothing reaches the tokens or the probabilities (computed beside the loss); without a target, nothing at all.
  CHECK(stage_named(walkthrough, "tokens").gradients.empty());
  CHECK(stage_named(walkthrough, "probabilities").gradients.empty());
  for (const Stage& stage : explain(model, "a bad", {}).stages) CHECK(stage.gradients.empty());
}

TEST_CASE("walk_through: the attribution is gradient x input, as scaling one position's stream moves the logit") {
  GPTConfig config = tiny_walkthrough_config();
  config.init = InitScheme::XavierNormal;
  config.tie_embeddings = false;  // then scaling wte's row of a token scales its stream only, not the LM head
  GPT model(config, 29);
  model.eval();
  const std::string prompt = "abcdh";  // each token once: a token's wte row is one position's
  WalkthroughOptions options;
  options.attribute_position = 3;
  const Walkthrough walkthrough = explain(model, prompt, options);
  const Attribution& attribution = walkthrough.attribution;
  REQUIRE(attribution.position == 3);
  CHECK(attribution.id == walkthrough.predictions[3].top[0].id);
  REQUIRE(attribution.scores.size() == 4);

  const std::vector<int64_t> ids = tiny_tokenizer().encode(prompt);
  const int64_t time = static_cast<int64_t>(ids.size()), vocab = config.vocab_size;
  auto logit = [&](GPT& scaled) {
    NoGradGuard no_grad;
    return scaled.forward(from_vector(ids, {1, time})).to_vector<double>()[3 * vocab + attribution.id];
  };
  CHECK(logit(model) == doctest::Approx(attribution.logit).epsilon(1e-5));
  // x[s] -> (1 + e) x[s]: dz/de = sum_c x[s, c] dz/dx[s, c], the score (central difference).
  const double step = 1e-2;
  for (int64_t s = 0; s < 4; ++s) {
    CAPTURE(s);
    double moved[2];
    for (int side = 0; side < 2; ++side) {
      GPT scaled(config, 29);
      scaled.eval();
      const double factor = 1 + (side == 0 ? step : -step);
      for (auto& [name, parameter] : scaled.named_parameters()) {
        if (name == "wte.weight") raw::mul_(raw::select(parameter, 0, ids[s]), factor);
        if (name == "wpe.weight") raw::mul_(raw::select(parameter, 0, s), factor);
      }
      moved[side] = logit(scaled);
    }
    CHECK(attribution.scores[s] == doctest::Approx((moved[0] - moved[1]) / (2 * step)).epsilon(2e-2).scale(1e-3));
  }
  CHECK_THROWS_WITH_AS(explain(model, prompt, {.attribute_position = 5}),
                       doctest::Contains("attribute_position 5 is not a position of the 5 tokens"), tg::Error);
}

TEST_CASE("walk_through: untied head, no biases, scaled embeddings, exact GELU, a model in training mode") {
  GPTConfig config = tiny_walkthrough_config(PositionalEncoding::Sinusoidal);
  config.tie_embeddings = false;
  config.bias = nn::BiasMode::None;
  config.scale_embeddings = true;
  config.gelu = nn::GeluApproximation::Erf;
  config.dropout = 0.5;  // the walk-through and its check run in eval mode
  GPT model(config, 23);
  model.train();
  WalkthroughOptions options;
  options.target = "d";
  const Walkthrough walkthrough = explain(model, "cafe", options);
  CHECK(model.is_training());
  CHECK(walkthrough.forward_match < 1e-5);
  CHECK(walkthrough.causality.max_change_earlier == 0.0);
  REQUIRE(walkthrough.loss.has_value());
  CHECK(walkthrough.loss->gradients.front().layer == "ln_f + lm_head");
  CHECK(stage_named(walkthrough, "embed.tokens").formula.find("sqrt(C)") != std::string::npos);
  CHECK(stage_named(walkthrough, "block0.gelu").formula.find("erf") != std::string::npos);
}

TEST_CASE("walk_through: --layer and --head keep one block's stages and one head") {
  const GPTConfig config = tiny_walkthrough_config();
  GPT model(config, 29);
  WalkthroughOptions options;
  options.layer = 1;
  options.head = 1;
  const Walkthrough walkthrough = explain(model, "bead", options);
  CHECK(ids_of(walkthrough) == expected_ids(config, {1}));
  for (const char* kind : {"q", "k", "v", "scores", "mask", "weights", "attend"}) {
    const Stage& stage = stage_named(walkthrough, std::string("block1.") + kind);
    REQUIRE(stage.tensors.size() == 1);
    CHECK(stage.tensors[0].label == "head 1");
  }
  // Everything still ran: the same logits as without the filters.
  const Walkthrough everything = explain(model, "bead");
  CHECK(stage_named(walkthrough, "logits").tensors[0].value.to_vector<float>() ==
        stage_named(everything, "logits").tensors[0].value.to_vector<float>());
}

TEST_CASE("walk_through: errors name what is wrong") {
  GPT model(tiny_walkthrough_config(), 31);
  CHECK_THROWS_WITH_AS(explain(model, ""), doctest::Contains("prompt is empty"), tg::Error);
  CHECK_THROWS_WITH_AS(explain(model, "abcdefgha"), doctest::Contains("9 tokens, more than the model's block_size of 8"),
                       tg::Error);
  WalkthroughOptions long_target;
  long_target.target = "abcd";
  CHECK_THROWS_WITH_AS(explain(model, "abcde", long_target), doctest::Contains("prompt and target make 9 tokens"),
                       tg::Error);
  WalkthroughOptions bad_layer;
  bad_layer.layer = 2;
  CHECK_THROWS_WITH_AS(explain(model, "ab", bad_layer), doctest::Contains("layer 2 does not exist: the model has 2 blocks"),
                       tg::Error);
  WalkthroughOptions bad_head;
  bad_head.head = -1;
  CHECK_THROWS_WITH_AS(explain(model, "ab", bad_head), doctest::Contains("head -1 does not exist"), tg::Error);
  WalkthroughOptions no_top;
  no_top.top_k = 0;
  CHECK_THROWS_WITH_AS(explain(model, "ab", no_top), doctest::Contains("top_k must be at least 1"), tg::Error);
  CHECK_THROWS_AS(explain(model, "xyz"), tokenizer::TokenizerError);
}

TEST_CASE("statistics_of: population statistics over the finite values") {
  const Statistics statistics = statistics_of(from_vector(std::vector<float>{1, 3, -INFINITY, 2, 6}));
  CHECK(statistics.mean == doctest::Approx(3.0));
  CHECK(statistics.std == doctest::Approx(std::sqrt(3.5)));
  CHECK(statistics.min == 1.0);
  CHECK(statistics.max == 6.0);
}
