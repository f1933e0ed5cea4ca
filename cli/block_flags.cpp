#include "cli/block_flags.h"

#include <sstream>

#include "cli/flag_checks.h"
#include "cli/usage_errors.h"

namespace tg::cli {

const std::vector<std::string>& block_flag_names() {
  static const std::vector<std::string> names = {"--norm",       "--norm-weight",  "--mlp",          "--mlp-hidden",
                                                 "--kv-heads",   "--head-dim",     "--rope-theta",   "--rope-scaling",
                                                 "--rope-pairing", "--qk-norm",    "--bias",         "--tie-embeddings"};
  return names;
}

void add_block_flags(CLI::App& command, BlockFlags& flags) {
  const auto on_off = CLI::IsMember({"on", "off"});
  command.add_option("--norm", flags.norm, "The block's norms: layernorm (GPT-2) or rmsnorm (Llama)")
      ->check(CLI::IsMember({"layernorm", "rmsnorm"}));
  command.add_option("--norm-weight", flags.norm_weight, "off: RMSNorm without a learnable weight (nanochat)")
      ->check(on_off);
  command.add_option("--mlp", flags.mlp, "The MLP: gelu (GPT-2), swiglu (Llama), relu2 (nanochat) or none "
                     "(attention only)")
      ->check(CLI::IsMember({"gelu", "swiglu", "relu2", "none"}));
  command.add_option("--mlp-hidden", flags.mlp_hidden,
                     "The MLP's hidden size (default 4C; 8/3 C rounded up to 64 for swiglu)")
      ->check(positive_integer());
  command.add_option("--kv-heads", flags.kv_heads,
                     "Key/value heads, dividing --heads: grouped-query attention (1: multi-query)")
      ->check(positive_integer());
  command.add_option("--head-dim", flags.head_dim, "Channels per head, apart from dims / heads (Qwen3, Gemma)")
      ->check(positive_integer());
  command.add_option("--rope-theta", flags.rope_theta, "RoPE's base: pair i turns by theta^(-2i/HD) per position")
      ->check(CLI::PositiveNumber);
  command.add_option("--rope-scaling", flags.rope_scaling,
                     "RoPE's rescaled frequencies: none, linear:F or llama3:F,low,high,original");
  command.add_option("--rope-pairing", flags.rope_pairing,
                     "Which channels RoPE turns together: interleaved (2i, 2i+1) or half (i, i+HD/2, Hugging Face's)")
      ->check(CLI::IsMember({"interleaved", "half"}));
  command.add_flag("--qk-norm", flags.qk_norm, "RMSNorm over each head's queries and keys before RoPE (Qwen3, nanochat)");
  command.add_option("--bias", flags.bias, "Which Linears have biases: all (GPT-2), none, or qkv (Qwen2)")
      ->check(CLI::IsMember({"all", "none", "qkv"}));
  command.add_option("--tie-embeddings", flags.tie_embeddings, "off: a separate output head instead of the token "
                     "embedding table")
      ->check(on_off);
}

void apply_block_flags(const CLI::App& command, const BlockFlags& flags, GPTConfig& config) {
  const auto given = [&](const char* flag) { return command.count(flag) > 0; };
  if (given("--norm")) config.norm = nn::norm_kind_named(flags.norm);
  if (given("--norm-weight")) config.norm_weight = flags.norm_weight == "on";
  if (given("--mlp")) config.mlp = nn::mlp_kind_named(flags.mlp);
  if (given("--mlp-hidden")) config.mlp_hidden = flags.mlp_hidden;
  if (given("--kv-heads")) config.n_kv_head = flags.kv_heads;
  if (given("--head-dim")) config.head_dim = flags.head_dim;
  if (given("--rope-theta")) config.rope_base = flags.rope_theta;
  if (given("--rope-pairing")) config.rope_pairing = nn::rope_pairing_named(flags.rope_pairing);
  if (given("--qk-norm")) config.qk_norm = flags.qk_norm;
  if (given("--bias")) config.bias = nn::bias_mode_named(flags.bias);
  if (given("--tie-embeddings")) config.tie_embeddings = flags.tie_embeddings == "on";
  if (given("--rope-scaling")) {
    try {
      config.rope_scaling = nn::RopeScaling::parse(flags.rope_scaling);
    } catch (const Error& error) {
      // "rope scaling 'yarn:4' is not ..." said of the flag: "--rope-scaling yarn:4 is not ..."
      const std::string named = "rope scaling '" + flags.rope_scaling + "'";
      std::string message = error.what();
      if (message.starts_with(named)) message.erase(0, named.size());
      check_usage(false, "--rope-scaling ", flags.rope_scaling, message);
    }
  }
  check_usage(config.mlp != nn::MlpKind::None || config.mlp_hidden == 0,
              "--mlp-hidden sizes an MLP, and --mlp none has none");
  check_usage(config.kv_heads() <= config.n_head && config.n_head % config.kv_heads() == 0, "--kv-heads ",
              config.kv_heads(), " does not divide the ", config.n_head,
              " heads (each key/value head serves an equal group of query heads)");
  check_usage(config.norm_weight || config.norm == nn::NormKind::RMSNorm,
              "--norm-weight off needs --norm rmsnorm (LayerNorm keeps its weight)");
  const bool rope_flags = given("--rope-theta") || given("--rope-scaling") || given("--rope-pairing");
  check_usage(!rope_flags || config.positional == PositionalEncoding::Rope,
              "--rope-theta, --rope-scaling and --rope-pairing need --positional rope (this model's positions are ",
              positional_encoding_name(config.positional), ")");
}

bool block_flag_keeps(const std::string& flag, const BlockFlags& flags, const GPTConfig& config) {
  if (flag == "--norm") return flags.norm == nn::norm_kind_name(config.norm);
  if (flag == "--norm-weight") return (flags.norm_weight == "on") == config.norm_weight;
  if (flag == "--mlp") return flags.mlp == nn::mlp_kind_name(config.mlp);
  if (flag == "--mlp-hidden") return flags.mlp_hidden == config.transformer_options().hidden_size();
  if (flag == "--kv-heads") return flags.kv_heads == config.kv_heads();
  if (flag == "--head-dim") return flags.head_dim == config.head_size();
  if (flag == "--rope-theta") return flags.rope_theta == config.rope_base;
  if (flag == "--rope-scaling") return flags.rope_scaling == config.rope_scaling.text();
  if (flag == "--rope-pairing") return flags.rope_pairing == nn::rope_pairing_name(config.rope_pairing);
  if (flag == "--qk-norm") return flags.qk_norm == config.qk_norm;
  if (flag == "--bias") return flags.bias == nn::bias_mode_name(config.bias);
  if (flag == "--tie-embeddings") return (flags.tie_embeddings == "on") == config.tie_embeddings;
  return false;
}

std::string block_summary(const GPTConfig& config) {
  const nn::TransformerOptions options = config.transformer_options();
  std::ostringstream text;
  if (config.norm == nn::NormKind::RMSNorm) text << ", RMSNorm" << (config.norm_weight ? "" : " without weights");
  if (config.mlp == nn::MlpKind::None) text << ", no MLP";
  else if (config.mlp != nn::MlpKind::Gelu) text << ", " << nn::mlp_kind_name(config.mlp) << " MLP";
  if (config.mlp != nn::MlpKind::None && (config.mlp != nn::MlpKind::Gelu || config.mlp_hidden > 0))
    text << " (hidden " << options.hidden_size() << ")";
  if (config.kv_heads() != config.n_head) text << ", " << config.kv_heads() << " KV heads";
  if (options.attention_width() != config.n_embd) text << ", head size " << options.head_size();
  if (config.qk_norm) text << ", QK-norm";
  if (config.positional == PositionalEncoding::Rope)
    text << ", RoPE theta " << config.rope_base << " (" << nn::rope_pairing_name(config.rope_pairing) << " pairs"
         << (config.rope_scaling.kind == nn::RopeScaling::Kind::None ? "" : ", " + config.rope_scaling.text()) << ")";
  if (config.bias != nn::BiasMode::All) text << ", biases " << nn::bias_mode_name(config.bias);
  if (!config.tie_embeddings) text << ", untied head";
  return text.str();
}

}  // namespace tg::cli
