// The whole model against PyTorch: logits, loss, every gradient, and the weights
// after gradient clipping and one AdamW step, for each positional encoding.
// The fixtures are written by tests/reference/make_gpt_fixtures.py (a GPT written
// from scratch in PyTorch 1.13) and committed, so this test needs no Python.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/optim/adamw.h"
#include "tinygpt/nn/optim/clip.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/view.h"

#include "torch_model_match.h"

using namespace tg;
using tg::testing::check_matches;

namespace {

double metadata_number(const SafetensorsFile& fixture, const std::string& key) {
  return std::stod(fixture.metadata.at(key));
}

GPTConfig fixture_config(const SafetensorsFile& fixture) {
  const auto json = nlohmann::json::parse(fixture.metadata.at("config"));
  GPTConfig config;
  config.preset = "torch-fixture";
  config.vocab_size = json.at("vocab_size");
  config.block_size = json.at("block_size");
  config.n_layer = json.at("n_layer");
  config.n_head = json.at("n_head");
  config.n_embd = json.at("n_embd");
  config.positional = positional_encoding_named(json.at("positional"));
  config.rope_base = json.at("rope_base");
  config.dropout = 0;
  config.bias = nn::BiasMode::All;
  config.gelu = nn::GeluApproximation::Tanh;
  config.norm_eps = 1e-5;
  config.tie_embeddings = true;
  config.validate();
  return config;
}

}  // namespace

TEST_CASE("GPT matches PyTorch: logits, loss, gradients and one clipped AdamW step") {
  for (const std::string kind : {"learned", "sinusoidal", "rope"}) {
    CAPTURE(kind);
    const SafetensorsFile fixture = load_safetensors("tests/fixtures/gpt/" + kind + ".safetensors");
    GPT model(fixture_config(fixture), 0, DType::Float32, /*initialize=*/false);

    // The fixture names exactly our parameters.
    std::set<std::string> fixture_names, model_names;
    for (const NamedTensor& tensor : fixture.tensors)
      if (tensor.name.starts_with("param.")) fixture_names.insert(tensor.name.substr(6));
    for (const auto& [name, parameter] : model.named_parameters()) {
      model_names.insert(name);
      raw::copy_(parameter, fixture.at("param." + name));
    }
    CHECK(model_names == fixture_names);
    nn::ParameterArena arena(model);

    const Tensor inputs = fixture.at("inputs"), targets = fixture.at("targets");
    check_matches(model.forward(inputs), fixture.at("logits"), "logits");
    const Tensor loss = model.loss(inputs, targets);
    check_matches(loss, fixture.at("loss"), "loss");

    backward(loss);
    for (const auto& [name, parameter] : model.named_parameters()) {
      check_matches(parameter.grad(), fixture.at("grad." + name), "grad." + name);
    }

    // The step starts from PyTorch's gradients, so that it is checked on its own: Adam
    // divides each gradient by its own magnitude, and for the few gradients near eps
    // (1e-8) that turns our last-bit differences into visible ones.
    for (const auto& [name, parameter] : model.named_parameters()) {
      raw::copy_(parameter.grad(), fixture.at("grad." + name));
    }
    const double norm = nn::clip_grad_norm(arena, metadata_number(fixture, "grad_clip"));
    CHECK(norm == doctest::Approx(metadata_number(fixture, "grad_norm")).epsilon(1e-5));
    nn::AdamWOptions options;
    options.lr = metadata_number(fixture, "lr");
    options.beta1 = metadata_number(fixture, "beta1");
    options.beta2 = metadata_number(fixture, "beta2");
    options.eps = metadata_number(fixture, "eps");
    options.weight_decay = metadata_number(fixture, "weight_decay");
    options.decay_position_embeddings = true;  // the fixture decays every 2-D weight, as nanoGPT
    nn::AdamW optimizer(arena, options);
    optimizer.step();
    for (const auto& [name, parameter] : model.named_parameters()) {
      check_matches(parameter, fixture.at("updated." + name), "updated." + name);
    }
  }
}
