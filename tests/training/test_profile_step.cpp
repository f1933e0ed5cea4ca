// The profile of a training run (TrainOutputs::profile, tensor/runtime/profile.h): the
// first step and the evaluations are left out; every GEMM role of the GPT gets
// exactly its 2 M N K FLOPs per step forward and twice that backward; the other
// families of a step are there. Counts only, no timing.
#include <doctest/doctest.h>

#include <sstream>

#include "tinygpt/datasets/data.h"
#include "tinygpt/training/train.h"
#include "tests/models/test_train_helpers.h"

using namespace tg;

TEST_CASE("train with profile: each GEMM role's FLOPs per step, forward and backward, and every family") {
  tg::testing::ScratchDir dir;
  TrainOutputs outputs = tg::testing::outputs_in(dir.path());
  outputs.profile = true;
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(),
                                tg::testing::tiny_settings(3));
  std::ostringstream progress;
  const ProfileRecord record = run->train(outputs, progress).profile;
  REQUIRE(record.steps == 2);  // the first of the 3 steps warms up

  const GPTConfig& config = run->state().config;
  const double layers = static_cast<double>(config.n_layer), channels = static_cast<double>(config.n_embd);
  const double rows = static_cast<double>(config.batch_size * config.block_size);  // N = B * T
  const double steps = 2;
  const struct {
    const char* role;
    double out_features, in_features, per_step;  // per_step: how many such Linears a forward runs
  } roles[] = {{"attn.qkv", 3 * channels, channels, layers},
               {"attn.c_proj", channels, channels, layers},
               {"mlp.c_fc", 4 * channels, channels, layers},
               {"mlp.c_proj", channels, 4 * channels, layers},
               {"lm_head", static_cast<double>(config.vocab_size), channels, 1}};
  for (const auto& role : roles) {
    CAPTURE(role.role);
    const double forward_flops = role.per_step * 2 * rows * role.in_features * role.out_features;
    const ProfileRow* forward = record.row(ProfileFamily::gemm, ProfilePass::forward, role.role);
    const ProfileRow* backward = record.row(ProfileFamily::gemm, ProfilePass::backward, role.role);
    REQUIRE(forward);
    REQUIRE(backward);
    CHECK(forward->calls == steps * role.per_step);  // the evaluations' forwards are not in the profile
    CHECK(forward->flops == steps * forward_flops);
    CHECK(backward->calls == steps * role.per_step * 2);
    CHECK(backward->flops == steps * 2 * forward_flops);
  }
  CHECK(record.row(ProfileFamily::gemm, ProfilePass::forward) == nullptr);  // nothing unlabelled

  // Attention, one query block (T = 8): T * T * HS multiply-adds per head and product.
  const double head_size = channels / static_cast<double>(config.n_head);
  const double multiply_adds = static_cast<double>(config.block_size * config.block_size) * head_size *
                               static_cast<double>(config.batch_size * config.n_head) * layers;
  CHECK(record.row(ProfileFamily::attention, ProfilePass::forward)->flops == steps * 2 * 2 * multiply_adds);
  CHECK(record.row(ProfileFamily::attention, ProfilePass::backward)->flops == steps * 4 * 2 * multiply_adds);

  for (const ProfileFamily family : {ProfileFamily::layer_norm, ProfileFamily::gelu, ProfileFamily::cross_entropy,
                                     ProfileFamily::embedding, ProfileFamily::elementwise, ProfileFamily::allocation}) {
    CAPTURE(profile_family_name(family));
    CHECK(record.row(family, ProfilePass::forward));
    CHECK(record.row(family, ProfilePass::backward));
  }
  CHECK(record.row(ProfileFamily::adamw, ProfilePass::update)->calls > 0);
  CHECK(record.row(ProfileFamily::reduce, ProfilePass::update));       // the gradient norm
  CHECK(record.row(ProfileFamily::elementwise, ProfilePass::update));  // zeroing the gradients
  CHECK(record.covered_nanoseconds() <= record.step_nanoseconds);
}

TEST_CASE("train without profile: the record is empty") {
  tg::testing::ScratchDir dir;
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(),
                                tg::testing::tiny_settings(2));
  std::ostringstream progress;
  const ProfileRecord record = run->train(tg::testing::outputs_in(dir.path()), progress).profile;
  CHECK(record.steps == 0);
  CHECK(record.rows.empty());
}
