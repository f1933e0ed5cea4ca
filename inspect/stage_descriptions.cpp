#include "tinygpt/inspect/stage_descriptions.h"

#include "tinygpt/tensor/error.h"

namespace tg::inspect {

namespace {

constexpr const char* kLayerNormFormula = "y = (x - mean) / sqrt(var + eps) * weight + bias   (each position, over C)";
constexpr const char* kLayerNormFile = "tensor/cpu/layer_norm_kernels.h";
constexpr const char* kLinearFile = "nn/linear.cpp";
constexpr const char* kAttentionFile = "tensor/cpu/attention_kernels.h";

std::string rope_suffix(const GPTConfig& config) {
  return config.positional == PositionalEncoding::Rope ? ", then rotated by RoPE" : "";
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
    return {"Rotary position angles (RoPE)", "angle[t, i] = t * base^(-2i / HS)   (pairs of channels 2i, 2i+1)",
            "With RoPE nothing is added to the embeddings: inside every attention layer each pair of query and key "
            "channels at position t is rotated by this angle, so q . k depends on how far apart two positions are.",
            "tensor/cpu/rope_kernels.h"};
  fail("describe_stage: unknown stage '", kind, "'");
}

StageDescription attention_stage(const std::string& kind, const GPTConfig& config) {
  if (kind == "ln_1")
    return {"LayerNorm 1", kLayerNormFormula,
            "Before attention each position's vector is normalised to mean 0 and variance 1, then scaled and "
            "shifted by learned weights. The residual stream itself is left untouched (pre-LayerNorm).",
            kLayerNormFile};
  if (kind == "q")
    return {"Queries", "q = ln_1(x) W_q^T + b_q, split into NH heads of HS channels" + rope_suffix(config),
            "What each position is looking for: the first C outputs of the fused qkv projection, cut into heads.",
            "nn/attention.cpp"};
  if (kind == "k")
    return {"Keys", "k = ln_1(x) W_k^T + b_k, split into NH heads of HS channels" + rope_suffix(config),
            "What each position offers to be found by: the next C outputs of the qkv projection.",
            "nn/attention.cpp"};
  if (kind == "v")
    return {"Values", "v = ln_1(x) W_v^T + b_v, split into NH heads of HS channels",
            "What each position passes on when another attends to it: the last C outputs of the qkv projection.",
            "nn/attention.cpp"};
  if (kind == "scores")
    return {"Attention scores", "scores[i, j] = q_i . k_j / sqrt(HS)",
            "How well query i matches key j, in each head. Dividing by sqrt(HS) keeps the scores' spread "
            "independent of the head size, so the softmax does not saturate.",
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
    return {"Weighted sum of values", "y_i = sum_j w[i, j] v_j   (each head)",
            "Each position's output in each head is the average of the value vectors, weighted by attention.",
            kAttentionFile};
  if (kind == "concat")
    return {"Heads concatenated", "y = [head_0 | head_1 | ... | head_NH-1]   (NH x HS = C channels)",
            "The heads' outputs side by side give back one C-channel vector per position.", kAttentionFile};
  if (kind == "c_proj")
    return {"Attention output projection", "a = y W_o^T + b_o",
            "A Linear layer mixes the heads' outputs into the residual stream's channels.", kLinearFile};
  if (kind == "residual_1")
    return {"Residual add (attention)", "x = x + a",
            "The attention's result is added to the residual stream, not substituted for it: the gradient passes "
            "through the addition unchanged, which keeps deep stacks trainable.",
            "nn/block.cpp"};
  fail("describe_stage: unknown stage '", kind, "'");
}

StageDescription mlp_stage(const std::string& kind, const GPTConfig& config) {
  if (kind == "ln_2")
    return {"LayerNorm 2", kLayerNormFormula, "The stream is normalised again before the MLP reads it.",
            kLayerNormFile};
  if (kind == "c_fc")
    return {"MLP expansion", "h = ln_2(x) W_fc^T + b_fc   (C -> 4C)",
            "Each position, on its own, is projected up to 4C channels.", kLinearFile};
  if (kind == "gelu")
    return {"GELU",
            config.gelu == nn::GeluApproximation::Tanh ? "g = 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3)))"
                                                       : "g = 0.5 h (1 + erf(h / sqrt(2)))",
            "A smooth non-linearity: about 0 for negative inputs, about the identity for positive ones. Without it "
            "the MLP would be a single linear map.",
            "tensor/cpu/gelu_kernels.h"};
  if (kind == "c_proj_mlp")
    return {"MLP contraction", "m = g W_proj^T + b_proj   (4C -> C)", "Projects back down to the C channels.",
            kLinearFile};
  if (kind == "residual_2")
    return {"Residual add (MLP)", "x = x + m",
            "The MLP's result joins the residual stream: the block's output, and the next block's input.",
            "nn/block.cpp"};
  fail("describe_stage: unknown stage '", kind, "'");
}

StageDescription output_stage(const std::string& kind, const GPTConfig& config) {
  if (kind == "ln_f")
    return {"Final LayerNorm", kLayerNormFormula, "The last block's output is normalised once more before it is read out.",
            kLayerNormFile};
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
  if (kind == "ln_2" || kind == "c_fc" || kind == "gelu" || kind == "c_proj_mlp" || kind == "residual_2")
    return mlp_stage(kind, config);
  return attention_stage(kind, config);
}

}  // namespace tg::inspect
