// tinygpt quantize: writes a model's weights in bfloat16 or int8, for inference.
//
//   tinygpt quantize --ckpt runs/shakespeare --to int8 --out runs/shakespeare-int8
//   tinygpt quantize --weights gpt2/ --to bf16 --out gpt2-bf16
//
// Every weight matrix and embedding table goes into the chosen format
// (nn/quantize.h: bfloat16, or int8 in blocks of 32 weights with a float32
// scale each); biases and LayerNorm parameters stay float32. The result is a
// checkpoint without optimiser state (training/checkpoint.h), written atomically
// to OUT/model.safetensors (or to OUT itself when it ends in .safetensors), so
// sample, eval and explain read it with --ckpt OUT. It carries the tokenizer,
// and from a --ckpt the step and training settings too.
//
// stderr gets the sizes before and after and how far the weights moved: the
// root-mean-square rounding error over all quantized weights, relative to their
// root-mean-square value.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/error.h"

namespace tg::cli {

namespace {

struct QuantizeArguments {
  ModelSourceArguments source;
  std::string format;
  std::string out;
};

// The file to write: OUT itself when it names a .safetensors file, else OUT/model.safetensors.
std::string output_file(const std::string& out) {
  namespace fs = std::filesystem;
  if (fs::path(out).extension() == ".safetensors") return out;
  check(!fs::exists(out) || fs::is_directory(out), "quantize: --out ", out, " is a file; give a directory or a .safetensors path");
  fs::create_directories(out);
  return (fs::path(out) / kLatestCheckpointFile).string();
}

// Refuses to write over the model being read, or over a training checkpoint (one with optimiser state).
void check_safe_to_write(const std::string& target, const std::string& source) {
  namespace fs = std::filesystem;
  if (!fs::exists(target)) return;
  check(source.empty() || !fs::equivalent(target, source), "quantize: --out ", target, " is the model being quantized");
  bool training_checkpoint = false;
  try {
    training_checkpoint = load_checkpoint(target).has_optimizer_state;
  } catch (const Error&) {
    // Not a checkpoint of ours: an earlier output of a failed run, or another file; it is replaced.
  }
  check(!training_checkpoint, "quantize: --out ", target, " is a training checkpoint (it has optimiser state); ",
        "write the quantized model elsewhere");
}

// sqrt(sum (w - q(w))^2 / sum w^2) over every quantized weight: how far, relative
// to their size, quantizing moved them. float_weights are the parameters before.
double relative_rounding_error(const GPT& model, const std::vector<std::pair<std::string, Tensor>>& float_weights) {
  double error = 0, size = 0;
  for (const auto& [name, matrix] : nn::quantized_weights(model)) {
    const auto original = std::find_if(float_weights.begin(), float_weights.end(),
                                       [&](const auto& named) { return named.first == name; });
    const std::vector<float> before = original->second.to_vector<float>();
    const std::vector<float> after = dequantize(matrix).to_vector<float>();
    for (size_t index = 0; index < before.size(); ++index) {
      error += std::pow(static_cast<double>(before[index]) - after[index], 2);
      size += std::pow(static_cast<double>(before[index]), 2);
    }
  }
  return size > 0 ? std::sqrt(error / size) : 0.0;
}

int64_t parameter_bytes(const GPT& model) {
  int64_t bytes = 0;
  for (const auto& [name, parameter] : model.named_parameters())
    bytes += parameter.numel() * static_cast<int64_t>(dtype_size(parameter.dtype()));
  return bytes;
}

void run_quantize(const QuantizeArguments& arguments) {
  check(arguments.source.quantize.empty(), "quantize: --to names the format; --quantize is for sample, eval and explain");
  const DType format = nn::parse_weight_format(arguments.format);
  LoadedModel loaded = load_model(arguments.source, "quantize");
  GPT& model = *loaded.model;
  check(model.weight_format() == DType::Float32, "quantize: the model's weights are ",
        dtype_name(model.weight_format()), " already; quantize the float32 model");

  CheckpointHeader header;
  std::string source_file;
  if (!arguments.source.checkpoint.empty()) {
    source_file = find_checkpoint_for_sampling(arguments.source.checkpoint);
    header = load_checkpoint(source_file).header;
  } else {
    header.config = model.config();
    header.tokenizer = loaded.tokenizer->to_json();
  }
  const std::string target = output_file(arguments.out);
  check_safe_to_write(target, source_file);

  const int64_t bytes_before = parameter_bytes(model);
  const auto float_weights = model.named_parameters();  // the handles keep the float32 tensors alive
  model.quantize(format);
  const double error = relative_rounding_error(model, float_weights);
  save_checkpoint(target, header, model);

  const int64_t bytes_after = parameter_bytes(model);
  std::cerr << std::fixed << std::setprecision(2) << "quantize: " << loaded.description << "\n"
            << "quantize: " << nn::quantized_weights(model).size() << " weight matrices to " << dtype_name(format)
            << ": parameters " << bytes_before / 1e6 << " MB -> " << bytes_after / 1e6 << " MB ("
            << static_cast<double>(bytes_before) / static_cast<double>(bytes_after) << "x smaller); rounding error "
            << std::setprecision(3) << 100 * error << "% of the weights' RMS\n"
            << "quantize: wrote " << target << " (sample, eval and explain read it with --ckpt)\n";
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto arguments = std::make_shared<QuantizeArguments>();
  CLI::App* command =
      app.add_subcommand("quantize", "Write a model's weights in bf16 or int8 for faster, smaller inference");
  add_model_source_options(*command, arguments->source, /*fresh_models=*/false);
  command->add_option("--to", arguments->format, "bf16 (2 bytes a weight) or int8 (blocks of 32 with a scale: 1.125 bytes)")
      ->required()
      ->check(CLI::IsMember({"bf16", "bfloat16", "int8"}));
  command->add_option("--out", arguments->out, "Directory to write model.safetensors to (or a .safetensors file)")
      ->required();
  command->callback([arguments] { run_quantize(*arguments); });
}

}  // namespace tg::cli
