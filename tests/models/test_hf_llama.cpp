// The Llama family in the Hugging Face layout (models/hf_llama.h): the four
// fixtures of tests/reference/make_hf_llama_fixtures.py (Llama with BF16 shards,
// Mistral in F16 with a sliding window, Qwen2 with q/k/v biases and tied
// embeddings, Qwen3 with QK-norm) load and give PyTorch's loss and greedy
// continuation; bfloat16 loading keeps the matrices in bfloat16; export then
// import gives back the same bits; broken directories are refused naming the
// file and the field or tensor.
#include "tinygpt/models/hf_llama.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/generate.h"
#include "tinygpt/models/hf_directory.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/hf_directory_support.h"

using namespace tg;
namespace fs = std::filesystem;
using Json = nlohmann::json;
using tg::testing::read_json;
using tg::testing::ScratchDirectory;
using tg::testing::write_text;

namespace {

const fs::path kFixtures = "tests/fixtures/hf_llama";

double loss_of(GPT& model, const std::vector<int64_t>& ids) {
  NoGradGuard no_grad;
  const int64_t time = static_cast<int64_t>(ids.size()) - 1;
  const std::vector<int64_t> inputs(ids.begin(), ids.end() - 1), targets(ids.begin() + 1, ids.end());
  return model.loss(from_vector<int64_t>(inputs, {1, time}), from_vector<int64_t>(targets, {1, time})).item<double>();
}

std::vector<int64_t> greedy(GPT& model, const std::vector<int64_t>& prompt, int64_t steps) {
  GenerationOptions options;
  options.max_new_tokens = steps;
  options.sampling.greedy = true;
  return generate(model, prompt, options);
}

bool same_values(const Tensor& a, const Tensor& b) {
  const Tensor x = raw::contiguous(a), y = raw::contiguous(b);
  if (x.dtype() != y.dtype() || x.shape() != y.shape()) return false;
  return visit_any(x.dtype(), [&]<class T>() {
    return std::memcmp(x.data<T>(), y.data<T>(), static_cast<size_t>(x.numel()) * sizeof(T)) == 0;
  });
}

// A copy of a fixture with config.json (and the files) edited, loaded: must throw naming `file` and `what`.
void check_refused(const std::string& family, const std::function<void(Json&)>& edit_config,
                   const std::function<void(const fs::path&)>& edit_files, const std::string& file,
                   const std::string& what) {
  ScratchDirectory scratch;
  for (const auto& entry : fs::directory_iterator(kFixtures / family))
    fs::copy_file(entry.path(), scratch.path / entry.path().filename());
  Json config = read_json(scratch.path / "config.json");
  if (edit_config) edit_config(config);
  write_text(scratch.path / "config.json", config.dump(2));
  if (edit_files) edit_files(scratch.path);
  CAPTURE(what);
  try {
    load_hf_model(scratch.path.string());
    FAIL("loading did not throw");
  } catch (const Error& error) {
    const std::string message = error.what();
    CAPTURE(message);
    CHECK(message.find((scratch.path / file).string()) != std::string::npos);
    CHECK(message.find(what) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("hf_llama: each family loads and gives PyTorch's loss and greedy continuation") {
  for (const char* family : {"llama", "mistral", "qwen2", "qwen3"}) {
    CAPTURE(family);
    const Json expected = read_json(kFixtures / family / "expected.json");
    LoadedHfModel loaded = load_hf_model((kFixtures / family).string());
    CHECK(loaded.model->weight_format() == DType::Float32);
    const double loss = loss_of(*loaded.model, expected["ids"].get<std::vector<int64_t>>());
    CHECK(loss == doctest::Approx(expected["loss"].get<double>()).epsilon(1e-5));
    CHECK(greedy(*loaded.model, expected["prompt"].get<std::vector<int64_t>>(), 8) ==
          expected["greedy"].get<std::vector<int64_t>>());
  }
}

TEST_CASE("hf_llama: config.json maps onto the block's options") {
  const LoadedHfModel llama = load_hf_model((kFixtures / "llama").string());
  const GPTConfig& config = llama.model->config();
  CHECK(llama.info.architecture == "LlamaForCausalLM");
  CHECK(config.norm == nn::NormKind::RMSNorm);
  CHECK(config.mlp == nn::MlpKind::SwiGLU);
  CHECK(config.kv_heads() == 2);
  CHECK(config.rope_pairing == nn::RopePairing::Half);
  CHECK(config.rope_scaling.kind == nn::RopeScaling::Kind::Llama3);
  CHECK(config.rope_base == 500000.0);
  CHECK_FALSE(config.tie_embeddings);
  CHECK(llama.info.bos_token_id == 300);
  CHECK(llama.info.eos_token_ids == std::vector<int64_t>{301, 304});

  const LoadedHfModel mistral = load_hf_model((kFixtures / "mistral").string());
  CHECK(mistral.model->config().block_size == 96);  // max_position_embeddings 128, sliding_window 96
  CHECK(mistral.info.note.find("sliding window of 96 tokens") != std::string::npos);
  CHECK(mistral.model->config().kv_heads() == 1);

  const LoadedHfModel qwen2 = load_hf_model((kFixtures / "qwen2").string());
  CHECK(qwen2.model->config().bias == nn::BiasMode::Qkv);
  CHECK(qwen2.model->config().tie_embeddings);
  CHECK(qwen2.model->config().block_size == 128);  // use_sliding_window false: the window (64) is not used

  const LoadedHfModel qwen3 = load_hf_model((kFixtures / "qwen3").string());
  CHECK(qwen3.model->config().qk_norm);
  CHECK(qwen3.model->config().head_size() == 16);  // head_dim, not hidden_size / heads (8)
}

TEST_CASE("hf_llama: bfloat16 loading keeps BF16 matrices as stored, and computes close to float32") {
  for (const char* family : {"llama", "mistral", "qwen2", "qwen3"}) {
    CAPTURE(family);
    const Json expected = read_json(kFixtures / family / "expected.json");
    LoadedHfModel as_float = load_hf_model((kFixtures / family).string());
    LoadedHfModel as_bf16 = load_hf_model((kFixtures / family).string(), DType::BFloat16);
    CHECK(as_bf16.model->weight_format() == DType::BFloat16);
    // Each bfloat16 matrix widens to what the float32 load holds: BF16 files exactly, F16 rounded once.
    const auto floats = as_float.model->named_parameters(), halves = as_bf16.model->named_parameters();
    REQUIRE(floats.size() == halves.size());
    for (size_t i = 0; i < floats.size(); ++i) {
      if (halves[i].second.dtype() != DType::BFloat16) continue;
      if (std::string(family) != "mistral") CHECK(same_values(raw::to_dtype(halves[i].second, DType::Float32), floats[i].second));
      else CHECK(same_values(halves[i].second, raw::to_dtype(floats[i].second, DType::BFloat16)));
    }
    const double loss = loss_of(*as_bf16.model, expected["ids"].get<std::vector<int64_t>>());
    CHECK(loss == doctest::Approx(expected["loss"].get<double>()).epsilon(2e-3));
  }
}

TEST_CASE("hf_llama: export then import gives the same bits, in float32 and bfloat16") {
  for (const char* family : {"llama", "qwen2", "qwen3"}) {
    CAPTURE(family);
    const LoadedHfModel original = load_hf_model((kFixtures / family).string());
    for (DType stored : {DType::Float32, DType::BFloat16}) {
      ScratchDirectory scratch;
      export_hf_model(*original.model, original.info, scratch.path.string(), stored);
      const Json config = read_json(scratch.path / "config.json");
      CHECK(config["architectures"][0] == original.info.architecture);
      const LoadedHfModel back = load_hf_model(scratch.path.string());
      CHECK(back.info.eos_token_ids == original.info.eos_token_ids);
      const auto want = original.model->named_parameters(), got = back.model->named_parameters();
      REQUIRE(want.size() == got.size());
      for (size_t i = 0; i < want.size(); ++i) {
        CAPTURE(want[i].first);
        CHECK(got[i].first == want[i].first);
        // The fixtures' values are BF16 already (Qwen3's final norm F32): a bfloat16 export keeps the matrices.
        if (stored == DType::Float32 || want[i].first != "ln_f.weight" || std::string(family) != "qwen3")
          CHECK(same_values(got[i].second, want[i].second));
      }
    }
  }
}

TEST_CASE("hf_llama: the GPT-2 block and options the layout cannot hold are refused by export") {
  GPTConfig config = GPTConfig::preset_named("llama-small", 64);
  config.rope_pairing = nn::RopePairing::Interleaved;
  GPT model(config, 1);
  ScratchDirectory scratch;
  CHECK_THROWS_WITH_AS(export_hf_llama(model, {}, scratch.path.string(), DType::Float32),
                       doctest::Contains("rotates the two halves of each head"), Error);
}

TEST_CASE("hf_llama: a broken directory is refused naming the file and the field or tensor") {
  check_refused("llama", [](Json& c) { c["architectures"] = {"GemmaForCausalLM"}; }, {}, "config.json",
                "\"GemmaForCausalLM\" is not supported");
  check_refused("llama", [](Json& c) { c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}}; }, {},
                "config.json", "\"rope_scaling\" of type \"yarn\" is not implemented");
  check_refused("qwen2", [](Json& c) { c["use_sliding_window"] = true; }, {}, "config.json",
                "\"use_sliding_window\" with a window of 64 tokens");
  check_refused("llama", [](Json& c) { c["hidden_act"] = "gelu"; }, {}, "config.json", "\"hidden_act\"");
  check_refused("llama", [](Json& c) { c.erase("hidden_size"); }, {}, "config.json", "\"hidden_size\" is missing");
  check_refused("llama", [](Json& c) { c["attention_bias"] = true; }, {}, "config.json", "\"attention_bias\": true");
  check_refused("llama", [](Json& c) { c["num_hidden_layers"] = 3; }, {}, "model.safetensors.index.json",
                "tensor 'model.layers.2.input_layernorm.weight' (32,) is missing");
  check_refused("mistral", [](Json& c) { c["intermediate_size"] = 96; }, {}, "model.safetensors",
                "tensor 'model.layers.0.mlp.gate_proj.weight' is (80, 32) in the file but config.json");
  check_refused("qwen2", [](Json& c) { c["tie_word_embeddings"] = false; }, {}, "model.safetensors",
                "tensor 'lm_head.weight' (320, 32) is missing");
  check_refused("qwen3", [](Json& c) { c["architectures"] = {"LlamaForCausalLM"}; }, {},
                "model.safetensors.index.json", "unexpected tensor 'model.layers.0.self_attn.k_norm.weight'");
  check_refused("llama", {}, [](const fs::path& dir) {
    Json index = read_json(dir / "model.safetensors.index.json");
    index["weight_map"]["model.norm.weight"] = "../elsewhere.safetensors";
    write_text(dir / "model.safetensors.index.json", index.dump());
  }, "model.safetensors.index.json", "'../elsewhere.safetensors', which is not the name of a .safetensors file");
  check_refused("llama", {}, [](const fs::path& dir) { fs::remove(dir / "model-00002-of-00002.safetensors"); },
                "model.safetensors.index.json", "the shard model-00002-of-00002.safetensors it lists is not in");
  check_refused("llama", {}, [](const fs::path& dir) {
    Json index = read_json(dir / "model.safetensors.index.json");
    index["weight_map"].erase("model.norm.weight");
    write_text(dir / "model.safetensors.index.json", index.dump());
  }, "model.safetensors.index.json", "is not listed in \"weight_map\"");
  check_refused("qwen2", {}, [](const fs::path& dir) {
    std::vector<NamedTensor> tensors = load_safetensors((dir / "model.safetensors").string()).tensors;
    for (NamedTensor& named : tensors)
      if (named.name == "model.norm.weight") named.tensor = raw::to_dtype(named.tensor, DType::Float64);
    save_safetensors((dir / "model.safetensors").string(), tensors);
  }, "model.safetensors", "tensor 'model.norm.weight' is float64; weights are read in F32, BF16 or F16");
}
