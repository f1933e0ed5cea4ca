#include "tinygpt/nn/transformer_options.h"

#include "tinygpt/tensor/error.h"

namespace tg::nn {

void TransformerOptions::validate() const {
  check(n_embd > 0 && n_head > 0, "TransformerOptions: n_embd and n_head must be positive, got ", n_embd, " and ",
        n_head);
  check(n_embd % n_head == 0, "TransformerOptions: n_embd ", n_embd, " is not divisible by n_head ", n_head);
  check(!rope || head_size() % 2 == 0, "TransformerOptions: RoPE rotates channel pairs, so the head size ", head_size(),
        " (n_embd / n_head) must be even");
  check(dropout >= 0 && dropout < 1, "TransformerOptions: dropout must be in [0, 1), got ", dropout);
  check(layer_norm_eps > 0, "TransformerOptions: layer_norm_eps must be positive, got ", layer_norm_eps);
  check(rope_base > 0, "TransformerOptions: rope_base must be positive, got ", rope_base);
  check(is_floating(dtype), "TransformerOptions: dtype must be floating, got ", dtype_name(dtype));
}

}  // namespace tg::nn
