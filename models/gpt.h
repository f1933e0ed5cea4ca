// GPT: a decoder-only transformer language model: GPT-2's architecture, and
// with GPTConfig's switches the Llama-style block (nn/transformer_options.h).
//
//   ids (B, T) int64
//     -> wte(ids) (B, T, C)  [* sqrt(C) if scale_embeddings]
//        + wpe positions (T, C)  [learned or sinusoidal; RoPE instead rotates q, k in attention]
//     -> dropout -> L blocks (B, T, C) -> ln_f (B, T, C)   [LayerNorm or RMSNorm]
//     -> rows (B*T, C) @ wte.weight^T (C, V) -> logits (B, T, V)   [tied; else lm_head]
//
// Parameter names (GPT-2's, with blocks for h and qkv for c_attn):
//   wte.weight (V, C), wpe.weight (block_size, C) [learned only],
//   blocks.{i}.ln_1.{weight,bias} (C), blocks.{i}.attn.qkv.weight (3C, C), .bias (3C),
//   blocks.{i}.attn.c_proj.weight (C, C), .bias (C), blocks.{i}.ln_2.{weight,bias} (C),
//   blocks.{i}.mlp.c_fc.weight (4C, C), .bias (4C), blocks.{i}.mlp.c_proj.weight (C, 4C), .bias (C),
//   ln_f.{weight,bias} (C), lm_head.weight (V, C) [untied only].
// With the Llama-style switches the shapes follow nn/attention.h and nn/mlp.h
// (qkv ((NH + 2 KVH) HD, C), attn.q_norm/k_norm (HD), mlp.c_fc (2H, C) for SwiGLU),
// RMSNorm has only a weight (or nothing), and each bias exists only where the bias mode keeps it.
// Linear weights are (out, in) as torch.nn.Linear (GPT-2's Conv1D files store (in, out)).
// With tied embeddings the LM head multiplies by wte.weight itself: one tensor,
// whose gradient gets both uses' contributions.
//
// Initialisation ("gpt2", as nanoGPT): Linear and Embedding weights N(0, 0.02),
// the residual projections (attn.c_proj, mlp.c_proj) N(0, 0.02 / sqrt(2 L)), biases 0,
// LayerNorm weights 1. "xavier_uniform" / "xavier_normal": every 2-D weight Xavier,
// biases 0, LayerNorm weights 1. Drawn in named_parameters() order from
// Generator(seed): the same values for any thread count.
#pragma once
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "tinygpt/models/gpt_config.h"
#include "tinygpt/models/lora_config.h"
#include "tinygpt/nn/block.h"
#include "tinygpt/nn/embedding.h"
#include "tinygpt/nn/normalization.h"
#include "tinygpt/nn/positional.h"

namespace tg {

class GPT : public nn::Module {
 public:
  // dtype: float32 to train; float64 for gradient checks. initialize = false skips
  // the random draws (weights stay 0, LayerNorm weights 1): for loading a checkpoint
  // right after, or to count the parameters of a big model cheaply.
  GPT(const GPTConfig& config, uint64_t seed, DType dtype = DType::Float32, bool initialize = true);

  const GPTConfig& config() const { return config_; }
  DType dtype() const { return dtype_; }

  // Reduced-precision weights for inference (nn/quantize.h): bfloat16 or int8.
  // A float32 model only; from then on the model generates, evaluates and is
  // saved in that format, and cannot be trained. QuantizedValues::Zeros: zeros
  // for a loader to fill (the float32 weights are not read).
  void quantize(DType format, QuantizedValues values = QuantizedValues::FromWeights);
  // float32 (or float64) until quantize(), then bfloat16 or int8.
  DType weight_format() const { return wte_->weight().dtype(); }
  // Throws tg::Error naming the weight unless every quantized matrix is well
  // formed (tensor/quantized_matrix.h's check_quantized_matrix): after loading one.
  void check_quantized_weights() const;

  // LoRA (models/gpt_lora.cpp): freezes every parameter and attaches an adapter
  // (nn/lora.h) to each projection config.targets names, A drawn from
  // Generator(seed) in parameter order, B zero, so the model computes what it
  // computed before. The adapters' parameters follow their Linear's in
  // named_parameters() (blocks.0.attn.qkv.lora.A_q). Once; the base may be quantized
  // (QLoRA: its products read the int8 or bfloat16 weights, the adapters are float).
  void attach_lora(const LoraConfig& config, uint64_t seed);
  const std::optional<LoraConfig>& lora() const { return lora_; }
  // Folds every adapter into its float weight and removes it (nn::Linear::merge_lora):
  // what `export --merge` writes, and what sampling runs, through the fused decode step.
  void merge_lora();
  // The Linear a LoRA module names ("blocks.0.attn.qkv"); throws when there is none.
  nn::Linear& linear_named(const std::string& name);
  const nn::Linear& linear_named(const std::string& name) const;

  // Which positions get logits. Generation needs only the last one, and the LM
  // head (a V x C matmul per row) is a third of a 64-token gpt2 forward.
  enum class LogitPositions { All, Last };

  // ids (B, T) int64, T <= block_size -> logits (B, T, V), or (B, 1, V) for the
  // last position only. Training forward: no cache.
  Tensor forward(const Tensor& ids, LogitPositions positions = LogitPositions::All);
  // Mean cross-entropy of forward(ids) against targets (B, T) int64 (nn::cross_entropy
  // on the (B*T, V) rows; targets equal to -100 are ignored, as in torch).
  Tensor loss(const Tensor& ids, const Tensor& targets);

  // Generation (models/gpt_cached.cpp): runs only the new positions ids (B, Tnew),
  // given the caches of the earlier ones (one per layer, all of the same length),
  // appending their keys and values; returns logits (B, Tnew, V), or (B, 1, V) for
  // the last new position only. Records no graph.
  // One new token of one sequence (every step of batch-1 generation after the
  // prompt) takes the fused decode step (models/gpt_decode.cpp) unless it is
  // turned off: the same numbers, in one parallel region instead of one per
  // weight matrix (49 for gpt2).
  Tensor forward_cached(const Tensor& ids, std::vector<nn::KVCache>& caches,
                        LogitPositions positions = LogitPositions::All);
  // On by default. Off, every step runs module by module (to step through the
  // layers in a debugger; the tests compare the two paths).
  void set_fused_decode(bool enabled) { fused_decode_ = enabled; }
  // The fused step itself: ids (1, 1) at position caches' length -> logits
  // (1, 1, V), filling each cache's next slot. Throws, saying why, where it
  // cannot run (a float64 model, dropout while training, a cache that is full
  // or not from make_caches(1, ...)); forward_cached then takes the general path.
  Tensor decode_step(const Tensor& ids, std::vector<nn::KVCache>& caches);
  // One new token for each of B sequences at once (what a server decoding many
  // requests runs): ids[b] at position caches[b]'s length, each sequence with its
  // own caches from make_caches(1, ...), their lengths free to differ -> logits
  // (B, V). Each weight is read from memory once for all B, and row b equals
  // decode_step's logits for that sequence alone, bit for bit. Where the fused
  // step cannot run, each sequence takes forward_cached in turn.
  Tensor decode_batch(const std::vector<int64_t>& ids, const std::vector<std::vector<nn::KVCache>*>& caches);
  // One empty cache per layer, room for `capacity` <= block_size positions.
  std::vector<nn::KVCache> make_caches(int64_t batch, int64_t capacity) const;

  // Activation checkpointing, a training option (off by default; not part of the
  // config, which describes the model, not how it is trained): in a forward that
  // records a graph, each block keeps only its input (B, T, C) and recomputes its
  // internals during the backward (autograd/activation_checkpoint.h), redrawing
  // the same dropout masks. Losses and gradients are those of the plain path to
  // the bit; the cost is one more forward of the blocks per step.
  void set_activation_checkpointing(bool enabled) { activation_checkpointing_ = enabled; }

  // Mixed-precision training, another training option: BFloat16 runs every
  // Linear's and the LM head's products with bfloat16 inputs and float32 sums,
  // keeping their inputs in bfloat16 for the backward (autograd/linear_op.h);
  // the weights, gradients and optimiser state stay float32. Float32 (the
  // default) turns it off. A float32 model only.
  void set_matmul_dtype(DType dtype);
  DType matmul_dtype() const { return matmul_dtype_; }

  // The generator every dropout layer draws from (seeded from `seed`); a checkpoint
  // that saves its state resumes dropout exactly.
  Generator& dropout_generator() { return *dropout_generator_; }
  // Restarts that stream where GPT(config, seed) starts it: a training run that adopts a loaded model.
  void reseed_dropout(uint64_t seed);

  const nn::Embedding& wte() const { return *wte_; }
  const nn::Block& block(int64_t index) const { return *blocks_.at(index); }
  const nn::Normalization& ln_f() const { return *ln_f_; }
  std::string describe() const override;

 private:
  // ids (B, T) at absolute positions offset.. -> x (B, T, C) entering the first block.
  Tensor embed(const Tensor& ids, int64_t offset) const;
  // x (B, T, C) after the blocks -> logits (B*T, V).
  Tensor logits_rows(const Tensor& x) const;
  // x (B, T, C) after the blocks -> logits (B, T, V) or (B, 1, V) of the last position.
  Tensor logits(const Tensor& x, LogitPositions positions) const;
  void check_ids(const Tensor& ids, const char* op) const;
  // The checks forward_cached and decode_step share.
  void check_cached_step(const Tensor& ids, const std::vector<nn::KVCache>& caches, const char* op) const;
  static int64_t cached_length(const std::vector<nn::KVCache>& caches);  // positions the caches hold
  // Empty when decode_step can run on these (checked) ids and caches, else why not.
  std::string why_not_fused(const Tensor& ids, const std::vector<nn::KVCache>& caches) const;
  // decode_step after its checks (forward_cached has made them already).
  Tensor fused_step(const Tensor& ids, std::vector<nn::KVCache>& caches);
  // The fused step of B sequences (decode_batch after its checks) -> logits (B, V).
  Tensor fused_steps(const std::vector<int64_t>& ids, const std::vector<std::vector<nn::KVCache>*>& caches);
  void initialize_parameters(uint64_t seed);

  GPTConfig config_;
  DType dtype_;
  std::shared_ptr<Generator> dropout_generator_;
  std::shared_ptr<nn::Embedding> wte_;
  std::shared_ptr<nn::AbsolutePositions> wpe_;  // null with RoPE
  std::shared_ptr<nn::Dropout> dropout_;
  std::vector<std::shared_ptr<nn::Block>> blocks_;
  std::shared_ptr<nn::Normalization> ln_f_;
  std::shared_ptr<nn::Linear> lm_head_;  // null when tied
  std::optional<LoraConfig> lora_;  // the adapters attached and not merged
  bool fused_decode_ = true;
  bool activation_checkpointing_ = false;
  DType matmul_dtype_ = DType::Float32;
};

// The module tree with shapes, then the parameter count.
std::ostream& operator<<(std::ostream& out, const GPT& model);

}  // namespace tg
