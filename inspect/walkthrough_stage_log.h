// What the walk-through's forward (inspect/walkthrough_forward.cpp) and its
// block (inspect/walkthrough_block.cpp) share: the log that records a stage as
// it is computed, a block's parameters by name, and the row statistics the
// stages' notes quote. Internal to inspect/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tinygpt/inspect/walkthrough_forward.h"

namespace tg::inspect {

using Shapes = std::vector<std::vector<int64_t>>;

// The values of x (..., D) as rows of D, in double.
std::vector<std::vector<double>> rows_of(const Tensor& x);
double mean_of(const std::vector<double>& values);
// "row means in [a, b], row variances in [c, d]" of x (..., C).
std::string row_moments(const Tensor& x);
// The root mean square of each row of x (..., C): what RMSNorm divides by (without eps).
std::vector<double> row_rms(const Tensor& x);
double mean_row_norm(const Tensor& x);
// "[low, high]" of values.
std::string range_text(const std::vector<double>& values);
// The percentage of x's values below 0, as "37.5%".
std::string negative_share(const Tensor& x);

// Appends the stages the options keep; the others still run, unrecorded.
class StageLog {
 public:
  StageLog(const GPTConfig& config, const WalkthroughOptions& options, const std::string& tokenizer_kind,
           std::vector<Stage>& stages, std::vector<StageOutput>& outputs)
      : config_(config), options_(options), tokenizer_kind_(tokenizer_kind), stages_(stages), outputs_(outputs) {}

  // The stages that follow belong to `group`, with ids prefixed by `id_prefix`.
  void enter(const std::string& group, const std::string& id_prefix, bool shown);
  void enter_block(int64_t layer);

  // A stage whose tensors[0] is its output; null when not shown.
  Stage* add_values(const std::string& kind, const Shapes& inputs, const Tensor& output,
                    std::vector<ShownTensor> extra_views = {});

  // A stage whose output (1, heads, T, X) is shown as one (T, X) tensor per shown
  // head: "head h" for NH heads; for KVH < NH key/value heads, "KV head g
  // (query heads ...)", the one options.head reads when it is set.
  Stage* add_per_head(const std::string& kind, const Shapes& inputs, const Tensor& output, StageView view);

 private:
  Stage* add(const std::string& kind, const Shapes& inputs, const Tensor& output, StageView view);

  const GPTConfig& config_;
  const WalkthroughOptions& options_;
  const std::string& tokenizer_kind_;
  std::vector<Stage>& stages_;
  std::vector<StageOutput>& outputs_;
  std::string group_, id_prefix_;
  bool shown_ = true;
};

// One block's parameters, by their name inside the block ("attn.qkv.weight").
class BlockParameters {
 public:
  BlockParameters(const ParameterLeaves& parameters, int64_t layer)
      : parameters_(parameters), prefix_("blocks." + std::to_string(layer) + ".") {}
  // Undefined when the model has no such parameter (a bias the bias mode drops,
  // a norm without weight).
  Tensor operator[](const std::string& name) const;

 private:
  const ParameterLeaves& parameters_;
  std::string prefix_;
};

// ln_1, ln_2 or ln_f as the model's norm (nn::LayerNorm or nn::RMSNorm) computes
// it; weight or bias may be undefined (none in the model). x (1, T, C) -> (1, T, C).
Tensor traced_norm(const std::string& kind, const Tensor& x, const Tensor& weight, const Tensor& bias,
                   const GPTConfig& config, StageLog& log);

// x (1, T, C) -> (1, T, C), as nn::Block: the norms, the attention and the MLP
// of the model's kind, stage by stage.
Tensor traced_block(const Tensor& x, const BlockParameters& parameters, const GPTConfig& config, StageLog& log);

}  // namespace tg::inspect
