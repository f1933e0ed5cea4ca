// GPT-2 in the Hugging Face layout: the fixture made by
// tests/reference/make_hf_gpt2_fixture.py (a random 2-layer GPT-2 and what
// PyTorch computes with it) loads and computes the same; export then import
// gives back the same bits; every broken directory is refused naming the
// file and the tensor or key.
#include "tinygpt/models/hf_gpt2.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/generate.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/hf_directory_support.h"
#include "tinygpt/tokenizer/gpt2_tokenizer.h"

using namespace tg;
namespace fs = std::filesystem;
using Json = nlohmann::json;
using tg::testing::read_json;
using tg::testing::ScratchDirectory;
using tg::testing::write_text;

namespace {

const fs::path kFixture = "tests/fixtures/hf_gpt2";
const fs::path kGpt2Vocab = "../shared/data/gpt2";



// A copy of the fixture in `directory`, with its tensors and config.json edited first.
void write_variant(const fs::path& directory, const std::function<void(std::vector<NamedTensor>&)>& edit_tensors,
                   const std::function<void(Json&)>& edit_config = {}) {
  std::vector<NamedTensor> tensors = load_safetensors((kFixture / "model.safetensors").string()).tensors;
  if (edit_tensors) edit_tensors(tensors);
  save_safetensors((directory / "model.safetensors").string(), tensors, {{"format", "pt"}});
  Json config = read_json(kFixture / "config.json");
  if (edit_config) edit_config(config);
  write_text(directory / "config.json", config.dump(2));
}

NamedTensor& named(std::vector<NamedTensor>& tensors, const std::string& name) {
  auto found = std::find_if(tensors.begin(), tensors.end(), [&](const NamedTensor& t) { return t.name == name; });
  REQUIRE(found != tensors.end());
  return *found;
}

void remove_tensor(std::vector<NamedTensor>& tensors, const std::string& name) {
  std::erase_if(tensors, [&](const NamedTensor& t) { return t.name == name; });
}

// Loading the edited fixture must fail naming the file it is about and saying `what`.
void check_refused(const std::function<void(std::vector<NamedTensor>&)>& edit_tensors,
                   const std::function<void(Json&)>& edit_config, const std::string& file, const std::string& what) {
  ScratchDirectory scratch;
  write_variant(scratch.path, edit_tensors, edit_config);
  CAPTURE(what);
  try {
    load_hf_gpt2(scratch.path.string());
    FAIL("loading did not throw");
  } catch (const Error& error) {
    const std::string message = error.what();
    CAPTURE(message);
    CHECK(message.find("load_hf_gpt2: " + (scratch.path / file).string()) != std::string::npos);
    CHECK(message.find(what) != std::string::npos);
  }
}

void check_bad_tensors(const std::function<void(std::vector<NamedTensor>&)>& edit, const std::string& what) {
  check_refused(edit, {}, "model.safetensors", what);
}

void check_bad_config(const std::function<void(Json&)>& edit, const std::string& what) {
  check_refused({}, edit, "config.json", what);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  const Tensor x = raw::contiguous(a), y = raw::contiguous(b);
  return x.dtype() == y.dtype() && x.shape() == y.shape() &&
         std::memcmp(x.data<float>(), y.data<float>(), static_cast<size_t>(x.numel()) * sizeof(float)) == 0;
}

void check_same_parameters(const GPT& expected, const GPT& actual) {
  const auto want = expected.named_parameters(), got = actual.named_parameters();
  REQUIRE(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(want[i].first);
    CHECK(got[i].first == want[i].first);
    CHECK(same_bits(got[i].second, want[i].second));
  }
}

std::vector<int64_t> ids_of(const Json& json) { return json.get<std::vector<int64_t>>(); }

Tensor row_of(const std::vector<int64_t>& ids) {
  return from_vector<int64_t>(ids, {1, static_cast<int64_t>(ids.size())});
}

}  // namespace

TEST_CASE("hf_gpt2: the fixture's logits and loss match PyTorch's") {
  const Json expected = read_json(kFixture / "expected.json");
  const std::vector<int64_t> ids = ids_of(expected["prompt_ids"]);
  const auto model = load_hf_gpt2(kFixture.string());
  CHECK(model->config().n_layer == 2);
  CHECK(model->config().n_head == 4);
  CHECK(model->config().n_embd == 16);
  CHECK(model->config().block_size == 128);
  CHECK(model->config().vocab_size == 50257);
  CHECK(model->config().tie_embeddings);
  CHECK(model->config().dropout == 0);
  model->eval();
  NoGradGuard no_grad;

  const Tensor logits = model->forward(row_of(ids));  // (1, T, V)
  const int64_t time = static_cast<int64_t>(ids.size()), vocab = 50257;
  const std::vector<float> values = logits.to_vector<float>();
  const std::vector<int64_t> columns = ids_of(expected["logit_columns"]);
  double worst = 0;
  for (int64_t t = 0; t < time; ++t) {
    const float* row = values.data() + t * vocab;
    double scale = 0, total = 0;
    for (int64_t v = 0; v < vocab; ++v) scale = std::max(scale, std::abs(double{row[v]}));
    for (size_t c = 0; c < columns.size(); ++c)
      worst = std::max(worst, std::abs(row[columns[c]] - expected["logits"][t][c].get<double>()) / scale);
    for (int64_t v = 0; v < vocab; ++v) total += std::exp(double{row[v]} - scale);
    const double logsumexp = scale + std::log(total);
    CHECK(logsumexp == doctest::Approx(expected["logsumexp"][t].get<double>()).epsilon(1e-5));
  }
  CHECK(worst < 1e-5);

  const std::vector<int64_t> inputs(ids.begin(), ids.end() - 1), targets(ids.begin() + 1, ids.end());
  const double loss = model->loss(row_of(inputs), row_of(targets)).item<double>();
  CHECK(loss == doctest::Approx(expected["loss"].get<double>()).epsilon(1e-5));
}

TEST_CASE("hf_gpt2: the fixture's prompt tokenises to the same ids with tinygpt's GPT-2 BPE") {
  if (!fs::exists(kGpt2Vocab / "encoder.json") || !fs::exists(kGpt2Vocab / "vocab.bpe")) {
    MESSAGE("skipped: no GPT-2 vocabulary files in " << kGpt2Vocab);
    return;
  }
  const Json expected = read_json(kFixture / "expected.json");
  const auto tokenizer = tokenizer::Gpt2Tokenizer::load(kGpt2Vocab);
  const auto ids = tokenizer.encode(expected["prompt"].get<std::string>());
  CHECK(std::vector<int64_t>(ids.begin(), ids.end()) == ids_of(expected["prompt_ids"]));
}

TEST_CASE("hf_gpt2: greedy generation gives PyTorch's tokens, with and without the KV cache") {
  const Json expected = read_json(kFixture / "expected.json");
  const auto model = load_hf_gpt2(kFixture.string());
  GenerationOptions options;
  options.max_new_tokens = 20;
  options.sampling.greedy = true;
  for (bool use_cache : {true, false}) {
    CAPTURE(use_cache);
    options.use_cache = use_cache;
    CHECK(generate(*model, ids_of(expected["prompt_ids"]), options) == ids_of(expected["greedy_ids"]));
  }
}

TEST_CASE("hf_gpt2: export writes GPT-2's names and shapes, and import gives back the same bits") {
  ScratchDirectory scratch;
  const auto model = load_hf_gpt2(kFixture.string());
  export_hf_gpt2(*model, scratch.path.string());
  CHECK(is_hf_gpt2_directory(scratch.path.string()));

  const SafetensorsFile file = load_safetensors((scratch.path / "model.safetensors").string());
  CHECK(file.metadata == Metadata{{"format", "pt"}});
  CHECK(file.find("lm_head.weight") == nullptr);  // tied: not stored
  CHECK(file.find("transformer.wte.weight") == nullptr);
  // Conv1D weights are (in, out): the transpose of tinygpt's (out, in) Linear weights.
  CHECK(file.at("h.1.attn.c_attn.weight").shape() == Shape{16, 48});
  CHECK(same_bits(file.at("h.1.attn.c_attn.weight"), raw::transpose(model->block(1).attn().qkv().weight(), 0, 1)));
  CHECK(file.at("h.0.mlp.c_proj.weight").shape() == Shape{64, 16});
  // Every tensor of the fixture comes back under the same name (minus the prefix), bit for bit.
  const SafetensorsFile original = load_safetensors((kFixture / "model.safetensors").string());
  CHECK(file.tensors.size() == original.tensors.size());
  for (const NamedTensor& tensor : original.tensors) {
    CAPTURE(tensor.name);
    CHECK(same_bits(file.at(tensor.name.substr(std::strlen("transformer."))), tensor.tensor));
  }

  const Json config = read_json(scratch.path / "config.json");
  CHECK(config["model_type"] == "gpt2");
  CHECK(config["architectures"] == Json::array({"GPT2LMHeadModel"}));
  CHECK(config["n_positions"] == 128);
  CHECK(config["n_ctx"] == 128);
  CHECK(config["activation_function"] == "gelu_new");
  CHECK(config["bos_token_id"] == 50256);
  CHECK(config["eos_token_id"] == 50256);
  CHECK(config["tie_word_embeddings"] == true);
  CHECK(config["layer_norm_epsilon"] == 1e-5);

  check_same_parameters(*model, *load_hf_gpt2(scratch.path.string()));
}

TEST_CASE("hf_gpt2: an untied model with the erf GELU round trips too") {
  GPTConfig config = GPTConfig::preset_named("cpu-small", 11);
  config.n_layer = 2;
  config.n_embd = 32;
  config.block_size = 8;
  config.tie_embeddings = false;
  config.gelu = nn::GeluApproximation::Erf;
  config.norm_eps = 1e-6;
  const GPT model(config, 3);
  ScratchDirectory scratch;
  export_hf_gpt2(model, scratch.path.string());

  const Json json = read_json(scratch.path / "config.json");
  CHECK(json["activation_function"] == "gelu");
  CHECK(json["tie_word_embeddings"] == false);
  CHECK_FALSE(json.contains("bos_token_id"));  // not the GPT-2 vocabulary
  CHECK(load_safetensors((scratch.path / "model.safetensors").string()).at("lm_head.weight").shape() == Shape{11, 32});

  const auto loaded = load_hf_gpt2(scratch.path.string());
  CHECK(loaded->config().gelu == nn::GeluApproximation::Erf);
  CHECK(loaded->config().norm_eps == 1e-6);
  CHECK_FALSE(loaded->config().tie_embeddings);
  check_same_parameters(model, *loaded);
}

TEST_CASE("hf_gpt2: names with or without the prefix, attention buffers and a tied lm_head copy are accepted") {
  ScratchDirectory scratch;
  const auto reference = load_hf_gpt2(kFixture.string());
  write_variant(scratch.path, [](std::vector<NamedTensor>& tensors) {
    named(tensors, "transformer.wte.weight").name = "wte.weight";  // a mix of both spellings
    const Tensor wte = named(tensors, "wte.weight").tensor;
    tensors.push_back({"lm_head.weight", raw::clone(wte)});
    tensors.push_back({"transformer.h.0.attn.bias", zeros({1, 1, 128, 128})});
    tensors.push_back({"h.1.attn.masked_bias", full({}, -1e4)});
  });
  check_same_parameters(*reference, *load_hf_gpt2(scratch.path.string()));

  // n_ctx alone (very old configs) sizes the positions.
  write_variant(scratch.path, {}, [](Json& config) { config.erase("n_positions"); });
  CHECK(load_hf_gpt2(scratch.path.string())->config().block_size == 128);
}

TEST_CASE("hf_gpt2: wrong tensors are refused naming the tensor") {
  SUBCASE("missing") {
    check_bad_tensors([](auto& tensors) { remove_tensor(tensors, "transformer.h.1.mlp.c_fc.bias"); },
                      "tensor 'h.1.mlp.c_fc.bias' (64,) is missing");
  }
  SUBCASE("unexpected") {
    check_bad_tensors([](auto& tensors) { tensors.push_back({"transformer.h.0.attn.rotary", ones({4})}); },
                      "unexpected tensor 'transformer.h.0.attn.rotary' (4,)");
  }
  SUBCASE("stored twice, with and without the prefix") {
    check_bad_tensors([](auto& tensors) { tensors.push_back({"ln_f.bias", zeros({16})}); },
                      "tensor 'ln_f.bias' is stored twice");
  }
  SUBCASE("misshapen") {
    check_bad_tensors([](auto& tensors) { named(tensors, "transformer.ln_f.weight").tensor = ones({17}); },
                      "tensor 'ln_f.weight' is (17,) in the file but config.json");
    check_bad_tensors(
        [](auto& tensors) {
          auto& weight = named(tensors, "transformer.h.0.attn.c_attn.weight");
          weight.tensor = raw::clone(raw::transpose(weight.tensor, 0, 1));  // stored (out, in) by mistake
        },
        "tensor 'h.0.attn.c_attn.weight' is (48, 16) in the file but config.json");
  }
  SUBCASE("wrong dtype") {
    check_bad_tensors(
        [](auto& tensors) { named(tensors, "transformer.wpe.weight").tensor = zeros({128, 16}, DType::Float64); },
        "tensor 'wpe.weight' is float64; tinygpt reads GPT-2 weights in F32, BF16 or F16");
  }
  SUBCASE("a tied lm_head that is not a copy of wte") {
    check_bad_tensors([](auto& tensors) { tensors.push_back({"lm_head.weight", zeros({50257, 16})}); },
                      "tensor 'lm_head.weight' differs from 'wte.weight'");
  }
}

TEST_CASE("hf_gpt2: BF16 and F16 files load, widened exactly to float32") {
  for (DType stored : {DType::BFloat16, DType::Float16}) {
    CAPTURE(dtype_name(stored));
    ScratchDirectory scratch;
    write_variant(scratch.path, [&](auto& tensors) {
      for (NamedTensor& named : tensors) named.tensor = raw::to_dtype(named.tensor, stored);
    });
    const std::unique_ptr<GPT> halves = load_hf_gpt2(scratch.path.string());
    const std::unique_ptr<GPT> floats = load_hf_gpt2(kFixture.string());
    const auto want = floats->named_parameters(), got = halves->named_parameters();
    REQUIRE(want.size() == got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      CAPTURE(want[i].first);
      CHECK(same_bits(got[i].second, raw::to_dtype(raw::to_dtype(want[i].second, stored), DType::Float32)));
    }
  }
}

TEST_CASE("hf_gpt2: a config.json that disagrees with the weights is refused naming the tensor and both shapes") {
  check_refused({}, [](Json& config) { config["n_embd"] = 32; }, "model.safetensors",
                "tensor 'wte.weight' is (50257, 16) in the file but config.json (n_layer 2, n_head 4, n_embd 32, "
                "n_positions 128, vocab_size 50257) makes it (50257, 32)");
  check_refused({}, [](Json& config) { config["vocab_size"] = 50000; }, "model.safetensors",
                "tensor 'wte.weight' is (50257, 16) in the file but config.json");
  check_refused({}, [](Json& config) { config["n_layer"] = 3; }, "model.safetensors",
                "tensor 'h.2.ln_1.weight' (16,) is missing");
  check_refused({}, [](Json& config) { config["n_layer"] = 1; }, "model.safetensors",
                "unexpected tensor 'transformer.h.1.");
  check_refused({}, [](Json& config) { config["tie_word_embeddings"] = false; }, "model.safetensors",
                "tensor 'lm_head.weight' (50257, 16) is missing");
  // Far more than the file holds: refused before anything is allocated (GPT-2 XL's layers and width).
  check_refused({}, [](Json& config) {
        config["n_layer"] = 48;
        config["n_embd"] = 1600;
        config["n_head"] = 25;
      }, "model.safetensors", "describes 1556177600 parameters, 6224.71 MB of float32, far more than the file's");
}

TEST_CASE("hf_gpt2: bad config.json keys are refused naming the key") {
  check_bad_config([](Json& c) { c["n_layer"] = "2"; }, "\"n_layer\" must be a positive integer, got \"2\"");
  check_bad_config([](Json& c) { c["n_head"] = 0; }, "\"n_head\" must be a positive integer, got 0");
  check_bad_config([](Json& c) { c.erase("n_embd"); }, "\"n_embd\" is missing");
  check_bad_config(
      [](Json& c) {
        c.erase("n_positions");
        c.erase("n_ctx");
      },
      "\"n_ctx\" is missing");
  check_bad_config([](Json& c) { c["n_head"] = 3; }, "n_embd 16 is not divisible by n_head 3");
  check_bad_config([](Json& c) { c["model_type"] = "gpt_neo"; }, "\"model_type\" is \"gpt_neo\"");
  check_bad_config([](Json& c) { c["activation_function"] = "relu"; }, "\"activation_function\": \"relu\" is not supported");
  check_bad_config([](Json& c) { c["layer_norm_epsilon"] = "small"; }, "\"layer_norm_epsilon\" must be a number");
  check_bad_config([](Json& c) { c["layer_norm_epsilon"] = -1; }, "\"layer_norm_epsilon\" must be positive");
  check_bad_config([](Json& c) { c["tie_word_embeddings"] = 1; }, "\"tie_word_embeddings\" must be true or false");
  check_bad_config([](Json& c) { c["n_inner"] = 32; }, "\"n_inner\": 32 is not supported");
  check_bad_config(  // 4 * n_embd wraps around to 4 in int64 (found by tests/fuzz/fuzz_hf_config)
      [](Json& c) {
        c["n_embd"] = (int64_t{1} << 62) + 1;
        c["n_head"] = 1;
        c["n_inner"] = 4;
      },
      "\"n_inner\": 4 is not supported");
  check_bad_config([](Json& c) { c["scale_attn_weights"] = false; }, "\"scale_attn_weights\": false is not supported");
  check_bad_config([](Json& c) { c["scale_attn_by_inverse_layer_idx"] = true; },
                   "\"scale_attn_by_inverse_layer_idx\": true is not supported");
  check_bad_config([](Json& c) { c["add_cross_attention"] = true; }, "\"add_cross_attention\": true is not supported");
  check_bad_config([](Json& c) { c = Json::array({1}); }, "config.json must hold a JSON object, got array");

  ScratchDirectory scratch;  // harmless keys of any value are ignored; so is the numerics-only reorder_and_upcast_attn
  write_variant(scratch.path, {}, [](Json& c) {
    c["reorder_and_upcast_attn"] = true;
    c["summary_type"] = 7;
    c["something_new"] = {{"nested", true}};
  });
  CHECK(load_hf_gpt2(scratch.path.string())->config().n_layer == 2);
  // Nested 70,000 deep: refused before anything prints it (printing recurses per level).
  write_text(scratch.path / "config.json",
             "{\"n_inner\": " + std::string(70000, '[') + std::string(70000, ']') + ", \"n_layer\": 2}");
  CHECK_THROWS_WITH_AS(load_hf_gpt2(scratch.path.string()), doctest::Contains("nests deeper than 64 levels"), Error);
  write_text(scratch.path / "config.json", "{\"n_layer\": ");
  CHECK_THROWS_WITH_AS(load_hf_gpt2(scratch.path.string()),
                       doctest::Contains(("load_hf_gpt2: " + (scratch.path / "config.json").string() +
                                          ": not valid JSON").c_str()),
                       Error);
}

TEST_CASE("hf_gpt2: missing files are refused naming them") {
  ScratchDirectory scratch;
  const std::string directory = scratch.path.string();
  CHECK_FALSE(is_hf_gpt2_directory(directory));
  CHECK_THROWS_WITH_AS(load_hf_gpt2(directory + "/nope"), doctest::Contains("is not a directory"), Error);
  CHECK_THROWS_WITH_AS(load_hf_gpt2(directory), doctest::Contains((directory + "/config.json is missing").c_str()),
                       Error);
  fs::copy_file(kFixture / "config.json", scratch.path / "config.json");
  CHECK_THROWS_WITH_AS(load_hf_gpt2(directory),
                       doctest::Contains((directory + "/model.safetensors is missing").c_str()), Error);
  write_text(scratch.path / "pytorch_model.bin", "pickle");
  CHECK_THROWS_WITH_AS(load_hf_gpt2(directory), doctest::Contains("not pytorch_model.bin"), Error);
  CHECK_FALSE(is_hf_gpt2_directory(directory));
}

TEST_CASE("hf_gpt2: export refuses models GPT-2's layout cannot hold") {
  GPTConfig config = GPTConfig::preset_named("cpu-small", 11);
  config.n_layer = 1;
  config.n_embd = 8;
  config.n_head = 2;
  ScratchDirectory scratch;
  const std::string directory = (scratch.path / "out").string();
  auto refused = [&](GPTConfig changed, DType dtype, const std::string& what) {
    CAPTURE(what);
    CHECK_THROWS_WITH_AS(export_hf_gpt2(GPT(changed, 0, dtype), directory),
                         doctest::Contains(("export_hf_gpt2: " + directory + ": " + what).c_str()), Error);
  };
  GPTConfig rope = config;
  rope.positional = PositionalEncoding::Rope;
  refused(rope, DType::Float32, "GPT-2's layout has learned positions; this model's are rope");
  GPTConfig no_bias = config;
  no_bias.bias = nn::BiasMode::None;
  refused(no_bias, DType::Float32, "GPT-2's layout has biases");
  GPTConfig scaled = config;
  scaled.scale_embeddings = true;
  refused(scaled, DType::Float32, "GPT-2 does not scale token embeddings by sqrt(C)");
  refused(config, DType::Float64, "GPT-2's layout holds float32; this model is float64");
  CHECK_FALSE(fs::exists(directory));
}
