#include "tinygpt/inspect/stage_descriptions.h"

#include <vector>

#include "tinygpt/inspect/format.h"
#include "tinygpt/tensor/error.h"

namespace tg::inspect {

namespace {

constexpr const char* kLayerNormFile = "tensor/cpu/layer_norm_kernels.h";
constexpr const char* kRmsNormFile = "tensor/cpu/rms_norm_kernels.h";
constexpr const char* kLinearFile = "nn/linear.cpp";
constexpr const char* kAttentionFile = "tensor/cpu/attention_kernels.h";
constexpr const char* kActivationFile = "tensor/cpu/gated_activation_kernels.h";

bool rms_norm(const GPTConfig& config) { return config.norm == nn::NormKind::RMSNorm; }
bool grouped(const GPTConfig& config) { return config.kv_heads() != config.n_head; }

// ln_1, ln_2 and ln_f: the model's norm, its weight and bias as the model has them.
std::string norm_formula(const GPTConfig& config) {
  if (rms_norm(config))
    return config.norm_weight ? "y = x / sqrt(mean(x^2) + eps) * weight   (each position, over C)"
                              : "y = x / sqrt(mean(x^2) + eps)   (each position, over C; no weight)";
  return config.bias == nn::BiasMode::All ? "y = (x - mean) / sqrt(var + eps) * weight + bias   (each position, over C)"
                                          : "y = (x - mean) / sqrt(var + eps) * weight   (each position, over C)";
}

StageDescription norm_stage(const std::string& title, const std::string& explanation, const GPTConfig& config) {
  return {(rms_norm(config) ? "RMSNorm" : "LayerNorm") + title, norm_formula(config), explanation,
          rms_norm(config) ? kRmsNormFile : kLayerNormFile};
}

// Where q and k are rotated: in their own stages, or after QK-norm in q_norm and k_norm.
std::string rope_suffix(const GPTConfig& config) {
  return config.positional == PositionalEncoding::Rope && !config.qk_norm ? ", then rotated by RoPE" : "";
}

// " + b_q" when the qkv projection has biases.
std::string qkv_bias(const GPTConfig& config, const std::string& name) {
  return config.bias == nn::BiasMode::None ? "" : " + b_" + name;
}

// "4C", or "H = 352" when the hidden size is not 4C.
std::string hidden_text(const GPTConfig& config) {
  const int64_t hidden = config.transformer_options().hidden_size();
  return hidden == 4 * config.n_embd ? "4C" : "H = " + std::to_string(hidden);
}

StageDescription embedding_stage(const std::string& kind, const GPTConfig& config) {
  if (kind == "embed.tokens")
    return {"Token embeddings",
            config.scale_embeddings ? "x_tok[t] = wte[ids[t]] * sqrt(C)" : "x_tok[t] = wte[ids[t]]",
            "Each id picks one row of the (V, C) embedding table: the model's learned vector for that token. "
            "The backward adds each row's gradient back into the table row it came from.",
            "autograd/index_ops.cpp"};
  if (kind == "embed.positions" && config.positional == PositionalEncoding::Sinusoidal)
    return {"Positional encoding (sinusoidal)",
            "p[t, 2i] = sin(t / 10000^(2i/C)),  p[t, 2i+1] = cos(t / 10000^(2i/C))",
            "Attention by itself ignores order, so every position gets a vector of its own: here a fixed table of "
            "sines and cosines at geometrically spaced frequencies. Nothing in it is learned.",
            "nn/positional.cpp"};
  if (kind == "embed.positions")
    return {"Positional embeddings (learned)", "p[t] = wpe[t]",
            "Attention by itself ignores order, so every position gets a vector of its own: row t of the learned "
            "(block_size, C) table wpe.",
            "nn/positional.cpp"};
  if (kind == "embed.sum")
    return {"Embeddings summed", "x = x_tok + p",
            "Token and position vectors are added. The result is the residual stream: every block reads from it "
            "and adds its output back into it.",
            "autograd/elementwise_ops.cpp"};
  if (kind == "embed.rope")
    return {"Rotary position angles (RoPE)",
            std::string(config.rope_scaling.kind == nn::RopeScaling::Kind::None
                             ? "angle[t, i] = t * base^(-2i / HS)"
                             : "angle[t, i] = t * rescale(base^(-2i / HS))") +
                (config.rope_pairing == nn::RopePairing::Half ? "   (pairs of channels i, i + HS/2)"
                                                              : "   (pairs of channels 2i, 2i+1)"),
            "With RoPE nothing is added to the embeddings: inside every attention layer each pair of query and key "
            "channels at position t is rotated by this angle, so q . k depends on how far apart two positions are." +
                std::string(config.rope_scaling.kind == nn::RopeScaling::Kind::None
                                ? ""
                                : " The rescaling slows the slow pairs down, so that positions beyond the context "
                                  "the model was trained on turn them by angles it has seen."),
            "nn/functional/rope_frequencies.cpp"};
  fail("describe_stage: unknown stage '", kind, "'");
}

StageDescription attention_stage(const std::string& kind, const GPTConfig& config) {
  if (kind == "ln_1")
    return norm_stage(" 1",
                      rms_norm(config)
                          ? "Before attention each position's vector is divided by its root mean square, then scaled "
                            "by a learned weight: unlike LayerNorm no mean is subtracted and no bias added, one "
                            "statistic per row instead of two. The residual stream itself is left untouched (pre-norm)."
                          : "Before attention each position's vector is normalised to mean 0 and variance 1, then "
                            "scaled and shifted by learned weights. The residual stream itself is left untouched "
                            "(pre-LayerNorm).",
                      config);
  const std::string kv_heads = grouped(config) ? "KVH" : "NH";
  if (kind == "q")
    return {"Queries", "q = ln_1(x) W_q^T" + qkv_bias(config, "q") + ", split into NH heads of HS channels" + rope_suffix(config),
            "What each position is looking for: the first NH x HS outputs of the fused qkv projection, cut into heads.",
            "nn/attention.cpp"};
  if (kind == "k")
    return {"Keys", "k = ln_1(x) W_k^T" + qkv_bias(config, "k") + ", split into " + kv_heads + " heads of HS channels" +
                        rope_suffix(config),
            grouped(config) ? "What each position offers to be found by: the next KVH x HS outputs of the qkv "
                              "projection. Grouped-query attention has fewer key heads than query heads: each KV "
                              "head serves a group of NH / KVH query heads, which shrinks the KV cache as much."
                            : "What each position offers to be found by: the next C outputs of the qkv projection.",
            "nn/attention.cpp"};
  if (kind == "v")
    return {"Values", "v = ln_1(x) W_v^T" + qkv_bias(config, "v") + ", split into " + kv_heads + " heads of HS channels",
            grouped(config) ? "What each position passes on when another attends to it: the last KVH x HS outputs "
                              "of the qkv projection, each KV head shared by its group of query heads."
                            : "What each position passes on when another attends to it: the last C outputs of the "
                              "qkv projection.",
            "nn/attention.cpp"};
  if (kind == "q_norm" || kind == "k_norm") {
    const std::string name = kind.substr(0, 1);
    return {kind == "q_norm" ? "QK-norm of the queries" : "QK-norm of the keys",
            name + " = " + name + " / sqrt(mean(" + name + "^2) + eps)" + (config.norm_weight ? " * w_" + name : "") +
                "   (each head, each position, over HS)" +
                (config.positional == PositionalEncoding::Rope ? ", then rotated by RoPE" : ""),
            "Each head's vector is brought to RMS 1 before the scores are taken (Qwen3, nanochat), so q . k cannot "
            "grow without bound as the projections' weights grow: the logits of the softmax stay in a range the "
            "learned weight sets. The rotation comes after, on the normalised vectors.",
            kRmsNormFile};
  }
  if (kind == "scores")
    return {"Attention scores",
            grouped(config) ? "scores[i, j] = q_i . k_j / sqrt(HS)   (query head h with KV head h / (NH / KVH))"
                            : "scores[i, j] = q_i . k_j / sqrt(HS)",
            "How well query i matches key j, in each head. Dividing by sqrt(HS) keeps the scores' spread "
            "independent of the head size, so the softmax does not saturate." +
                std::string(grouped(config) ? " The query heads of one group all read the same keys." : ""),
            kAttentionFile};
  if (kind == "mask")
    return {"Causal mask", "masked[i, j] = scores[i, j] if j <= i, else -inf",
            "A position may look only at itself and earlier positions: later keys get -inf, which the softmax "
            "turns into weight 0. This is what lets one forward pass train on every position at once.",
            kAttentionFile};
  if (kind == "weights")
    return {"Attention weights", "w[i, :] = softmax(masked[i, :])   (over the keys j)",
            "Each row becomes a probability distribution over the visible positions: how much of each one's value "
            "this position takes.",
            kAttentionFile};
  if (kind == "attend")
    return {"Weighted sum of values",
            grouped(config) ? "y_i = sum_j w[i, j] v_j   (each head; v of KV head h / (NH / KVH))"
                            : "y_i = sum_j w[i, j] v_j   (each head)",
            "Each position's output in each head is the average of the value vectors, weighted by attention.",
            kAttentionFile};
  if (kind == "concat")
    return config.transformer_options().attention_width() == config.n_embd
               ? StageDescription{"Heads concatenated", "y = [head_0 | head_1 | ... | head_NH-1]   (NH x HS = C channels)",
                                  "The heads' outputs side by side give back one C-channel vector per position.",
                                  kAttentionFile}
               : StageDescription{"Heads concatenated", "y = [head_0 | head_1 | ... | head_NH-1]   (NH x HS channels)",
                                  "The heads' outputs side by side: NH x HS channels per position, which the "
                                  "output projection maps back to C (the head size is chosen apart from C / NH).",
                                  kAttentionFile};
  if (kind == "c_proj")
    return {"Attention output projection",
            config.bias == nn::BiasMode::All ? "a = y W_o^T + b_o" : "a = y W_o^T",
            "A Linear layer mixes the heads' outputs into the residual stream's channels.", kLinearFile};
  if (kind == "residual_1")
    return {"Residual add (attention)", "x = x + a",
            "The attention's result is added to the residual stream, not substituted for it: the gradient passes "
            "through the addition unchanged, which keeps deep stacks trainable.",
            "nn/block.cpp"};
  fail("describe_stage: unknown stage '", kind, "'");
}

StageDescription mlp_stage(const std::string& kind, const GPTConfig& config) {
  const bool bias = config.bias == nn::BiasMode::All;
  if (kind == "ln_2") return norm_stage(" 2", "The stream is normalised again before the MLP reads it.", config);
  if (kind == "c_fc" && config.mlp == nn::MlpKind::SwiGLU)
    return {"MLP expansion (gate and up)",
            "[gate | up] = ln_2(x) W_fc^T" + std::string(bias ? " + b_fc" : "") + "   (C -> 2H, H = " +
                std::to_string(config.transformer_options().hidden_size()) + ")",
            "Each position, on its own, is projected twice side by side: W_fc's rows are [W_gate; W_up]. SwiGLU's "
            "hidden size H is about 8/3 C, so that its three matrices cost what GELU's two of 4C do.",
            kLinearFile};
  if (kind == "c_fc")
    return {"MLP expansion", "h = ln_2(x) W_fc^T" + std::string(bias ? " + b_fc" : "") + "   (C -> " + hidden_text(config) + ")",
            "Each position, on its own, is projected up to " + hidden_text(config) + " channels.", kLinearFile};
  if (kind == "gate")
    return {"SwiGLU gate", "gate = h[..., 0:H]   (the first H channels of c_fc's output)",
            "The half of the expansion that decides, channel by channel, how much of up passes: silu(gate) is "
            "about 0 for a negative gate and about the gate itself for a positive one.",
            "nn/mlp.cpp"};
  if (kind == "up")
    return {"SwiGLU up", "up = h[..., H:2H]   (the last H channels of c_fc's output)",
            "The half of the expansion that carries the values the gate lets through: a second linear map of the "
            "same input, with no non-linearity of its own.",
            "nn/mlp.cpp"};
  if (kind == "swiglu")
    return {"SwiGLU", "g = silu(gate) * up,   silu(x) = x / (1 + exp(-x))",
            "A gated linear unit (Shazeer 2020): the product of two projections, one of them through SiLU, is the "
            "non-linearity. Llama, Mistral and Qwen use it in place of GELU.",
            kActivationFile};
  if (kind == "relu2")
    return {"ReLU squared", "g = max(h, 0)^2",
            "Negative inputs give exactly 0, positive ones their square (So et al. 2021, Primer): a sparse and "
            "sharper non-linearity that nanochat and modded-nanogpt use in place of GELU.",
            kActivationFile};
  if (kind == "gelu")
    return {"GELU",
            config.gelu == nn::GeluApproximation::Tanh ? "g = 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3)))"
                                                       : "g = 0.5 h (1 + erf(h / sqrt(2)))",
            "A smooth non-linearity: about 0 for negative inputs, about the identity for positive ones. Without it "
            "the MLP would be a single linear map.",
            "tensor/cpu/gelu_kernels.h"};
  if (kind == "c_proj_mlp")
    return {"MLP contraction",
            "m = g W_proj^T" + std::string(bias ? " + b_proj" : "") + "   (" +
                (config.mlp == nn::MlpKind::SwiGLU ? std::string("H") : hidden_text(config)) + " -> C)",
            "Projects back down to the C channels.", kLinearFile};
  if (kind == "residual_2")
    return {"Residual add (MLP)", "x = x + m",
            "The MLP's result joins the residual stream: the block's output, and the next block's input.",
            "nn/block.cpp"};
  fail("describe_stage: unknown stage '", kind, "'");
}

StageDescription output_stage(const std::string& kind, const GPTConfig& config) {
  if (kind == "ln_f")
    return {rms_norm(config) ? "Final RMSNorm" : "Final LayerNorm", norm_formula(config),
            "The last block's output is normalised once more before it is read out.",
            rms_norm(config) ? kRmsNormFile : kLayerNormFile};
  if (kind == "logits")
    return {"Logits",
            config.tie_embeddings ? "logits = ln_f(x) wte^T   (the head is the token embedding table)"
                                  : "logits = ln_f(x) W_head^T",
            config.tie_embeddings
                ? "One score per vocabulary token for what comes next, at each position. The head reuses the token "
                  "embeddings, so a token scores high when the final vector points the way its embedding does."
                : "One score per vocabulary token for what comes next, at each position.",
            "models/gpt.cpp"};
  if (kind == "probabilities")
    return {"Next-token probabilities", "p[t, :] = softmax(logits[t, :])",
            "The softmax turns the scores into a distribution over the vocabulary for the token after each "
            "position. Training minimises -log p of the token that actually came next.",
            "autograd/reduce_ops.cpp"};
  fail("describe_stage: unknown stage '", kind, "'");
}

}  // namespace

StageDescription describe_stage(const std::string& kind, const GPTConfig& config, const std::string& tokenizer_kind) {
  if (kind == "tokens")
    return {"Tokenisation", "ids = encode(text)",
            tokenizer_kind == "char"
                ? "The text is cut into tokens, one per character, and each becomes its index in the vocabulary."
                : "The text is cut into GPT-2's byte-pair-encoded tokens (frequent words whole, rare ones in pieces; "
                  "a leading space belongs to the word), and each becomes its id in the vocabulary.",
            tokenizer_kind == "char" ? "tokenizer/char_tokenizer.cpp" : "tokenizer/gpt2_tokenizer.cpp"};
  if (kind.starts_with("embed.")) return embedding_stage(kind, config);
  if (kind == "ln_f" || kind == "logits" || kind == "probabilities") return output_stage(kind, config);
  if (kind == "ln_2" || kind == "c_fc" || kind == "gelu" || kind == "gate" || kind == "up" || kind == "swiglu" ||
      kind == "relu2" || kind == "c_proj_mlp" || kind == "residual_2")
    return mlp_stage(kind, config);
  return attention_stage(kind, config);
}

std::string block_description(const GPTConfig& config) {
  const nn::TransformerOptions options = config.transformer_options();
  std::vector<std::string> parts;
  if (rms_norm(config)) parts.push_back(config.norm_weight ? "RMSNorm" : "RMSNorm without weights");
  if (config.mlp == nn::MlpKind::None)
    parts.push_back("no MLP: attention only");
  else if (config.mlp != nn::MlpKind::Gelu)
    parts.push_back(std::string(nn::mlp_kind_name(config.mlp)) + " MLP (H = " + std::to_string(options.hidden_size()) + ")");
  if (grouped(config))
    parts.push_back(std::to_string(config.kv_heads()) + (config.kv_heads() == 1 ? " KV head for " : " KV heads for ") +
                    std::to_string(config.n_head) +
                    " query heads (groups of " + std::to_string(config.n_head / config.kv_heads()) + ")");
  if (options.attention_width() != config.n_embd) parts.push_back("HS = " + std::to_string(options.head_size()));
  if (config.qk_norm) parts.push_back("QK-norm");
  if (config.positional == PositionalEncoding::Rope &&
      (config.rope_pairing != nn::RopePairing::Interleaved || config.rope_scaling.kind != nn::RopeScaling::Kind::None ||
       config.rope_base != nn::Rotary{}.base))
    parts.push_back("RoPE base " + number(config.rope_base, 8) + " (" + nn::rope_pairing_name(config.rope_pairing) +
                    " pairs" +
                    (config.rope_scaling.kind == nn::RopeScaling::Kind::None ? "" : ", " + config.rope_scaling.text()) +
                    ")");
  if (config.bias != nn::BiasMode::All) parts.push_back(std::string("biases: ") + nn::bias_mode_name(config.bias));
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

}  // namespace tg::inspect
