#include "tinygpt/nn/transformer_options.h"

#include <string>

#include "tinygpt/nn/enum_names.h"
#include "tinygpt/tensor/shape.h"

namespace tg::nn {

namespace {

constexpr Named<NormKind> kNormNames[] = {{NormKind::LayerNorm, "layernorm"}, {NormKind::RMSNorm, "rmsnorm"}};
constexpr Named<MlpKind> kMlpNames[] = {{MlpKind::Gelu, "gelu"}, {MlpKind::SwiGLU, "swiglu"}, {MlpKind::ReLU2, "relu2"},
                                         {MlpKind::None, "none"}};
constexpr Named<BiasMode> kBiasNames[] = {{BiasMode::All, "all"}, {BiasMode::None, "none"}, {BiasMode::Qkv, "qkv"}};

constexpr const char* kSizes = "TransformerOptions";

// 8/3 C rounded up to a multiple of 64: SwiGLU's three matrices then hold about
// as many weights as GELU's two of 4C (Llama's rule). Sizes come from files:
// checked, as every product of them.
int64_t swiglu_default_hidden(int64_t channels) {
  return checked_add(checked_mul(8, channels, kSizes) / 3, 63, kSizes) / 64 * 64;
}

}  // namespace

const char* norm_kind_name(NormKind kind) { return name_in(kNormNames, kind); }
const char* mlp_kind_name(MlpKind kind) { return name_in(kMlpNames, kind); }
const char* bias_mode_name(BiasMode mode) { return name_in(kBiasNames, mode); }
NormKind norm_kind_named(const std::string& name) { return value_in(kNormNames, name, "norm"); }
MlpKind mlp_kind_named(const std::string& name) { return value_in(kMlpNames, name, "mlp"); }
BiasMode bias_mode_named(const std::string& name) { return value_in(kBiasNames, name, "bias mode"); }

int64_t TransformerOptions::hidden_size() const {
  if (mlp == MlpKind::None) return 0;
  if (mlp_hidden > 0) return mlp_hidden;
  return mlp == MlpKind::SwiGLU ? swiglu_default_hidden(n_embd) : checked_mul(4, n_embd, kSizes);
}

int64_t TransformerOptions::attention_width() const { return checked_mul(n_head, head_size(), kSizes); }

int64_t TransformerOptions::qkv_width() const {
  return checked_mul(checked_add(n_head, checked_mul(2, kv_heads(), kSizes), kSizes), head_size(), kSizes);
}

void TransformerOptions::validate() const {
  check(n_embd > 0 && n_head > 0, "TransformerOptions: n_embd and n_head must be positive, got ", n_embd, " and ",
        n_head);
  check(n_kv_head >= 0 && head_dim >= 0 && mlp_hidden >= 0, "TransformerOptions: n_kv_head, head_dim and mlp_hidden "
        "must be positive (or 0 for their defaults), got ", n_kv_head, ", ", head_dim, " and ", mlp_hidden);
  check(mlp != MlpKind::None || mlp_hidden == 0, "TransformerOptions: mlp_hidden ", mlp_hidden,
        " sizes an MLP, and mlp is none");
  check(head_dim > 0 || n_embd % n_head == 0, "TransformerOptions: n_embd ", n_embd, " is not divisible by n_head ",
        n_head, " (give head_dim to size heads on their own)");
  check(n_head % kv_heads() == 0, "TransformerOptions: n_head ", n_head, " is not divisible by n_kv_head ",
        kv_heads(), " (each KV head serves an equal group of query heads)");
  check(!rope || head_size() % 2 == 0, "TransformerOptions: RoPE rotates channel pairs, so the head size ", head_size(),
        " must be even");
  check(dropout >= 0 && dropout < 1, "TransformerOptions: dropout must be in [0, 1), got ", dropout);
  check(norm_eps > 0, "TransformerOptions: norm_eps must be positive, got ", norm_eps);
  check(norm_weight || norm == NormKind::RMSNorm, "TransformerOptions: a norm without weight is RMSNorm's "
        "option (norm_weight off needs norm rmsnorm)");
  check(rotary.base > 0, "TransformerOptions: rope_base must be positive, got ", rotary.base);
  check(is_floating(dtype), "TransformerOptions: dtype must be floating, got ", dtype_name(dtype));
}

}  // namespace tg::nn
