// Muon: the Newton-Schulz map, one optimiser step against PyTorch, and Muon in a
// training run (its groups, resuming bit for bit, gradient accumulation).
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/functional/muon.h"
#include "tinygpt/nn/optim/optimizer.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/training/optimizer_setup.h"
#include "tinygpt/training/train.h"
#include "tests/models/test_train_helpers.h"
#include "tests/models/torch_model_match.h"

using namespace tg;
using tg::testing::ScratchDir;

namespace {

// The scalar quintic a x + b x^3 + c x^5, iterated: what Newton-Schulz does to each singular value.
double quintic_iterated(double x, int steps) {
  for (int step = 0; step < steps; ++step)
    x = nn::kNewtonSchulzA * x + nn::kNewtonSchulzB * x * x * x + nn::kNewtonSchulzC * x * x * x * x * x;
  return x;
}

TrainSettings muon_settings(int64_t iters) {
  TrainSettings settings = tg::testing::tiny_settings(iters);
  settings.optimizer = "muon";
  settings.muon_lr = 0.02;
  return settings;
}

}  // namespace

TEST_CASE("orthogonalize: each singular value goes through the iterated quintic; tall matrices the wide way round") {
  // A matrix with orthogonal rows of lengths 3 and 4 has singular values 3 and 4:
  // after normalising by |G|_F = 5 they are 0.6 and 0.8, and the singular vectors stay.
  const std::vector<float> wide = {3, 0, 0, 0, 0, 4};  // (2, 3)
  std::vector<float> result = wide;
  nn::orthogonalize(result.data(), 2, 3, 5);
  CHECK(result[0] == doctest::Approx(quintic_iterated(0.6, 5)).epsilon(1e-5));
  CHECK(result[5] == doctest::Approx(quintic_iterated(0.8, 5)).epsilon(1e-5));
  for (int i : {1, 2, 3, 4}) CHECK(std::abs(result[i]) < 1e-6);
  // Five steps bring both into the band the coefficients aim at, not to exactly 1.
  for (int i : {0, 5}) CHECK((result[i] > 0.65 && result[i] < 1.25));

  // A tall matrix is orthogonalised as its transpose: the result is the transposed result.
  Generator generator(3);
  const std::vector<float> tall = randn({7, 3}, generator).to_vector<float>();  // (7, 3)
  std::vector<float> tall_result = tall, transposed(21);
  for (int64_t r = 0; r < 7; ++r)
    for (int64_t c = 0; c < 3; ++c) transposed[c * 7 + r] = tall[r * 3 + c];  // (3, 7)
  nn::orthogonalize(tall_result.data(), 7, 3, 5);
  nn::orthogonalize(transposed.data(), 3, 7, 5);
  for (int64_t r = 0; r < 7; ++r)
    for (int64_t c = 0; c < 3; ++c) CHECK(tall_result[r * 3 + c] == transposed[c * 7 + r]);

  // A random matrix: O O^T is near the identity (singular values in the band), for any scale of the input.
  const Tensor g = randn({24, 40}, generator);
  std::vector<float> o = g.to_vector<float>();
  for (float& value : o) value *= 1000.0f;
  nn::orthogonalize(o.data(), 24, 40, 5);
  for (int64_t i = 0; i < 24; ++i) {
    double diagonal = 0;
    for (int64_t k = 0; k < 40; ++k) diagonal += static_cast<double>(o[i * 40 + k]) * o[i * 40 + k];
    CHECK((diagonal > 0.4 && diagonal < 1.6));
  }
  CHECK_THROWS_WITH_AS(nn::orthogonalize(o.data(), 0, 40, 5), doctest::Contains("needs rows, cols > 0"), Error);

  // With bfloat16 operands (8 significant bits) the result is float32's to about 2% (relative 2-norm):
  // each step's rounding moves the singular values within the band, not out of it.
  std::vector<float> f32 = g.to_vector<float>(), bf16 = f32;
  nn::orthogonalize(f32.data(), 24, 40, 5);
  nn::orthogonalize(bf16.data(), 24, 40, 5, /*bf16_products=*/true);
  double difference = 0, size = 0;
  for (size_t i = 0; i < f32.size(); ++i) {
    difference += (f32[i] - bf16[i]) * (f32[i] - bf16[i]);
    size += f32[i] * f32[i];
  }
  CHECK(std::sqrt(difference / size) < 0.04);
  CHECK(std::sqrt(difference / size) > 0);  // the products really were rounded
}

TEST_CASE("Muon with AdamW matches PyTorch over two steps (GQA qkv blocks, SwiGLU gate and up)") {
  const SafetensorsFile fixture = load_safetensors("tests/fixtures/muon/llama3.safetensors");
  GPTConfig config = GPTConfig::from_json(nlohmann::json::parse(fixture.metadata.at("config")));
  const nlohmann::json hyper = nlohmann::json::parse(fixture.metadata.at("hyperparameters"));
  GPT model(config, 0, DType::Float32, /*initialize=*/false);
  for (const auto& [name, parameter] : model.named_parameters()) raw::copy_(parameter, fixture.at("param." + name));
  nn::ParameterArena arena(model);
  TrainSettings settings;
  settings.optimizer = "muon";
  settings.lr = hyper["lr"];
  settings.beta1 = hyper["beta1"];
  settings.beta2 = hyper["beta2"];
  settings.eps = hyper["eps"];
  settings.weight_decay = hyper["weight_decay"];
  settings.muon_lr = hyper["muon_lr"];
  settings.muon_momentum = hyper["muon_momentum"];
  settings.muon_weight_decay = hyper["muon_weight_decay"];
  settings.muon_ns_steps = hyper["muon_ns_steps"];
  const auto optimizer = make_optimizer(arena, config, settings);
  REQUIRE(optimizer->muon() != nullptr);
  CHECK(optimizer->muon()->matrices().size() == 8);  // 4 per block
  CHECK(optimizer->muon()->matrices()[0].row_blocks == std::vector<int64_t>{32, 16, 16});
  for (int step = 1; step <= 2; ++step) {
    CAPTURE(step);
    for (const auto& [name, parameter] : model.named_parameters())
      raw::copy_(parameter.grad(), fixture.at("grad" + std::to_string(step - 1) + "." + name));
    optimizer->set_lr(settings.lr);
    optimizer->step();
    for (const auto& [name, parameter] : model.named_parameters())
      tg::testing::check_matches(parameter, fixture.at("step" + std::to_string(step) + "." + name),
                                 "step" + std::to_string(step) + "." + name);
  }
}

TEST_CASE("Muon's groups: the blocks' matrices are Muon's, the rest AdamW's; the schedule scales both") {
  const GPTConfig config = tg::testing::tiny_config();
  GPT model(config, 1);
  nn::ParameterArena arena(model);
  const auto optimizer = make_optimizer(arena, config, muon_settings(10));
  CHECK(std::string(optimizer->name()) == "muon");
  const std::set<std::string> muon = optimizer->muon()->names();
  int64_t muon_elements = 0, adamw_elements = 0;
  for (const auto& [name, parameter] : model.named_parameters()) {
    const bool hidden = name.starts_with("blocks.") && parameter.dim() == 2;
    CHECK(muon.count(name) == (hidden ? 1u : 0u));
    (hidden ? muon_elements : adamw_elements) += parameter.numel();
  }
  CHECK(optimizer->muon()->element_count() == muon_elements);
  CHECK(optimizer->adamw().state().m.numel() == adamw_elements);
  CHECK(describe_optimizer(*optimizer).find("Muon (lr 0.02") != std::string::npos);
  optimizer->set_lr(3e-3 / 2);  // half of AdamW's peak: Muon's rate is halved too
  CHECK(optimizer->muon()->options().lr == doctest::Approx(0.01));
}

TEST_CASE("train --optimizer muon: learns, and a resumed run continues with exactly the same losses and weights") {
  const GPTConfig config = tg::testing::tiny_config(PositionalEncoding::Learned, 0.1);
  const TrainSettings settings = muon_settings(12);
  std::ostringstream progress;
  ScratchDir straight_dir;
  auto straight = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, settings);
  const TrainResult uninterrupted = straight->train(tg::testing::outputs_in(straight_dir.path()), progress);
  CHECK(uninterrupted.step_losses.back() < uninterrupted.step_losses.front() - 0.1);

  ScratchDir dir;
  const TrainResult before = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, settings)
                                 ->train(tg::testing::outputs_in(dir.path(), 6), progress);
  const Checkpoint checkpoint = load_checkpoint(dir.file("model.safetensors"));
  CHECK(checkpoint.optimizer == "muon");
  CHECK(checkpoint.file.find("optimizer.momentum.blocks.0.attn.qkv.weight") != nullptr);
  CHECK(checkpoint.file.find("optimizer.v.blocks.0.attn.qkv.weight") == nullptr);  // no AdamW state for Muon's
  CHECK(checkpoint.file.find("optimizer.v.wte.weight") != nullptr);
  auto resumed = TrainingRun::resume(checkpoint, char_level_data(tg::testing::tiny_corpus()), checkpoint.header.settings);
  const TrainResult after = resumed->train(tg::testing::outputs_in(dir.path()), progress);
  std::vector<double> losses = before.step_losses;
  losses.insert(losses.end(), after.step_losses.begin(), after.step_losses.end());
  CHECK(losses == uninterrupted.step_losses);  // bitwise
  const auto final_weights = resumed->model().named_parameters(), expected = straight->model().named_parameters();
  for (size_t i = 0; i < final_weights.size(); ++i) {
    CAPTURE(final_weights[i].first);
    CHECK(final_weights[i].second.to_vector<float>() == expected[i].second.to_vector<float>());
  }

  // A checkpoint of one optimiser does not resume another.
  GPT model(config, 0, DType::Float32, false);
  nn::ParameterArena arena(model);
  nn::Optimizer adamw(arena, nn::AdamWOptions{});
  CHECK_THROWS_WITH_AS(restore_optimizer(checkpoint, adamw), doctest::Contains("holds the state of muon, not of adamw"),
                       Error);
}

TEST_CASE("train --optimizer muon: grad_accum micro-batches take the step of one batch of their total") {
  // One batch of 6 windows, or 3 micro-batches of 2: the generator draws the same 6 windows in
  // the same order either way, and the mean gradient is the same up to the order of the sums.
  GPTConfig whole_config = tg::testing::tiny_config();
  whole_config.batch_size = 6;
  GPTConfig micro_config = whole_config;
  micro_config.batch_size = 2;
  const TrainSettings whole_settings = muon_settings(6);
  TrainSettings micro_settings = whole_settings;
  micro_settings.grad_accum = 3;
  std::ostringstream progress;
  ScratchDir whole_dir, micro_dir;
  auto whole = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), whole_config, whole_settings);
  const TrainResult whole_result = whole->train(tg::testing::outputs_in(whole_dir.path()), progress);
  auto micro = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), micro_config, micro_settings);
  const TrainResult micro_result = micro->train(tg::testing::outputs_in(micro_dir.path()), progress);
  REQUIRE(whole_result.step_losses.size() == micro_result.step_losses.size());
  for (size_t step = 0; step < whole_result.step_losses.size(); ++step)
    CHECK(micro_result.step_losses[step] == doctest::Approx(whole_result.step_losses[step]).epsilon(1e-5));
  // Muon's matrices within 1e-4 of each one's largest value. AdamW's parameters are left to the losses
  // above: Adam divides each near-zero gradient by its own size, so a bias element whose gradient is
  // rounding noise moves by up to lr either way, in any build.
  const std::set<std::string> muon = micro->optimizer().muon()->names();
  const auto micro_weights = micro->model().named_parameters(), whole_weights = whole->model().named_parameters();
  for (size_t i = 0; i < micro_weights.size(); ++i) {
    if (!muon.count(micro_weights[i].first)) continue;
    CAPTURE(micro_weights[i].first);
    const std::vector<float> a = micro_weights[i].second.to_vector<float>(), b = whole_weights[i].second.to_vector<float>();
    float largest = 0, difference = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      largest = std::max(largest, std::abs(b[k]));
      difference = std::max(difference, std::abs(a[k] - b[k]));
    }
    CHECK(difference <= 1e-4f * largest);
  }
}

TEST_CASE("train --optimizer muon --profile: the update's Newton-Schulz products are the muon row, with their FLOPs") {
  const GPTConfig config = tg::testing::tiny_config();
  std::ostringstream progress;
  ScratchDir dir;
  TrainOutputs outputs = tg::testing::outputs_in(dir.path());
  outputs.profile = true;
  const TrainResult result = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, muon_settings(3))
                                 ->train(outputs, progress);
  const ProfileRow* muon = result.profile.row(ProfileFamily::muon, ProfilePass::update);
  REQUIRE(muon != nullptr);
  CHECK(muon->calls == 2);  // the first step is the warm-up, not profiled
  // Per layer (C = 16, head size 8): q, k, v and c_proj are (16, 16); c_fc (64, 16) and c_proj (16, 64) are
  // (16, 64) the wide way round. A step of 5 iterations: 2 m^2 n + 2 m^3 + 2 m^2 n each.
  const auto flops = [](double m, double n) { return 5 * (4 * m * m * n + 2 * m * m * m); };
  CHECK(muon->flops == doctest::Approx(2 * 2 * (4 * flops(16, 16) + 2 * flops(16, 64))));
}
